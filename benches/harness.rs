//! The harness on a large suite: word-stats with 1,000 generated examples (outputs computed
//! by calling `word_stats::run`, so they are exact), run the way `cargo holon-test` runs it, and
//! the official TypeScript SDK replaying the same 1,000 calls against the same server binary.
//!
//! `bash .ci/setup-interop && cargo bench -p holon-kit --bench harness`; `-- report [RUNS]`
//! times the whole run with and without `--report` instead.
//!
//! Figures, each from the harness in a process of its own (this binary again, in the role the
//! `HOLON_BENCH_ROLE` variable names), timed from outside by the JSON line each trial prints,
//! each phase run three times and the middle run kept:
//! - function pass overhead per example: one trial and one call at a time
//!   (`HOLON_CONCURRENCY=1`), from the first trial's start to the last one's end, less what
//!   `word_stats::run` takes inside the harness, divided by the examples; in wall time, and in
//!   CPU time: the whole process's, less a run whose filter matches no trial (the same start,
//!   manifest and checks), less the function's, which a busy machine inflates less;
//! - MCP pass: the median trial, one trial and one call at a time (`HOLON_CONCURRENCY=1`: the
//!   call, the answer judged; with more calls in flight a trial finds its answer ready), in
//!   2026-07-28 (`HOLON_PROTOCOL`);
//! - the MCP pass in both eras against one: every `mcp::` trial at default settings, spawn to
//!   exit, with `HOLON_PROTOCOL=2026-07-28` (1,001 trials) and with the default, each era the
//!   server speaks (2,002 trials: word-stats' runtime speaks both), run alternately, 5 runs
//!   each, medians and their ratio;
//! - whole run: every trial, as `cargo holon-test` runs them (all cores, both eras), spawn to
//!   exit;
//! - the TypeScript SDK (`tests/interop/node/replay.mjs`): the median call, one at a time, its
//!   answer checked, against this binary serving word-stats (word-stats' own `main`), and the
//!   time of its 1,000 calls in all, against which the MCP pass in one era is set (spawn to
//!   exit, so the checks and the server's start are in it; the replay's server is already
//!   running);
//! - the server's floor: the same calls as hand-written HTTP/1.1 on one connection.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

// The example agent's function, compiled into the benchmark rather than depended on (the
// example depends on holon-kit).
#[path = "../examples/word-stats/src/lib.rs"]
mod word_stats;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const EXAMPLES: usize = 1000;

mod common;
#[path = "../tests/it/util/paths.rs"]
mod paths;

use paths::root;

fn main() {
    common::dispatch(harness_role, server_role, bench);
}

/// The harness as an agent's `tests/holon.rs` has it, on the generated manifest.
fn harness_role() -> i32 {
    // The examples only: explore has its own benchmark (benches/explore.rs).
    let code = common::run_harness(|h| h.function(holon_kit::agent(timed_run)).explore_cases(0));
    eprintln!(
        "{FUNCTION_TIME}{}",
        FUNCTION_NS.load(std::sync::atomic::Ordering::Relaxed)
    );
    code
}

/// How long `word_stats::run` itself took inside the harness, all calls together: the part of
/// a function trial that is not the harness's.
static FUNCTION_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
const FUNCTION_TIME: &str = "holon-bench: word_stats::run ns: ";

async fn timed_run(
    input: word_stats::Input,
    ctx: holon_kit::Ctx,
) -> Result<word_stats::Output, holon_kit::Failure> {
    let start = Instant::now();
    let answer = now_or_never(word_stats::run(input, ctx));
    FUNCTION_NS.fetch_add(
        start.elapsed().as_nanos() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    answer
}

/// word-stats' own `main`, serving the manifest in `HOLON_MANIFEST`.
fn server_role() {
    let manifest = holon_kit::manifest!("examples/word-stats/holon.yaml");
    if let Err(e) = holon_kit::serve(manifest, holon_kit::agent(word_stats::run)) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn bench() {
    // `cargo bench --bench harness -- nextest [RUNS]`: one server for a nextest run against one
    // server per trial.
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "nextest") {
        let runs = args.get(at + 1).and_then(|r| r.parse().ok()).unwrap_or(5);
        let parts = args.get(at + 2).and_then(|r| r.parse().ok()).unwrap_or(1);
        return nextest_bench(runs, parts);
    }
    // `cargo bench --bench harness -- report [RUNS]`: what `--report` adds to the whole run.
    if let Some(at) = args.iter().position(|a| a == "report") {
        let runs = args.get(at + 1).and_then(|r| r.parse().ok()).unwrap_or(7);
        return report_bench(runs);
    }
    // `HOLON_BENCH_DIR` keeps the generated manifest, to profile a phase by hand.
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = std::env::var_os("HOLON_BENCH_DIR")
        .map_or_else(|| temp.path().to_path_buf(), PathBuf::from);
    let examples = generate(EXAMPLES);
    let manifest = dir.join("holon.yaml");
    write_manifest(&manifest, &examples);
    let replay = dir.join("replay.json");
    write_replay(&replay, &examples);
    let bare = bare_function_time(&examples);

    // Each phase three times, and the middle run kept: the machine may be shared.
    let modern = Some("2026-07-28");
    let function = middle(
        3,
        || {
            let args = ["function::", "--test-threads", "1"];
            run_harness(&manifest, &args, Some("1"), None)
        },
        |r| r.span,
    );
    let mcp = middle(
        3,
        || {
            run_harness(
                &manifest,
                &["mcp::", "--test-threads", "1"],
                Some("1"),
                modern,
            )
        },
        |r| r.median_call(),
    );
    let whole = middle(3, || run_harness(&manifest, &[], None, None), |r| r.wall);
    let empty = middle(
        3,
        || run_harness(&manifest, &["no-trial-has-this-name"], Some("1"), None),
        |r| r.process_cpu,
    );
    // The MCP pass in one era and in both, alternately, so that the machine's load falls on
    // both alike.
    let (mut one_era, mut both_eras) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let one = run_harness(&manifest, &["mcp::"], None, modern);
        assert_eq!(one.passed, EXAMPLES + 1, "MCP pass, one era");
        one_era.push(one.wall);
        let both = run_harness(&manifest, &["mcp::"], None, None);
        assert_eq!(both.passed, 2 * (EXAMPLES + 1), "MCP pass, both eras");
        both_eras.push(both.wall);
    }
    one_era.sort();
    both_eras.sort();
    let (one_era, both_eras) = (one_era[2], both_eras[2]);
    assert_eq!(function.passed, EXAMPLES, "function pass");
    assert_eq!(mcp.passed, EXAMPLES + 1, "MCP pass");
    assert_eq!(whole.passed, 3 * EXAMPLES + 2, "whole run");
    let (typescript, floor) = middle(
        3,
        || replay_with_typescript(&manifest, &replay, &examples),
        |(r, _)| Duration::from_secs_f64(r["median_us"].as_f64().unwrap_or(f64::NAN) / 1e6),
    );

    // From the first trial's start to the last one's end (dispatch, printing, the gate, the
    // call, the verdict), less the function itself as timed inside the harness; in wall time
    // and in CPU time, which a busy machine inflates less.
    let overhead = function.span.saturating_sub(function.function_time) / EXAMPLES as u32;
    let trials_cpu = function.process_cpu.saturating_sub(empty.process_cpu);
    let overhead_cpu = trials_cpu.saturating_sub(function.function_time) / EXAMPLES as u32;
    let ours = mcp.median_call();
    let ts = Duration::from_secs_f64(typescript["median_us"].as_f64().unwrap_or(f64::NAN) / 1e6);

    println!("harness benchmark: word-stats, {EXAMPLES} examples (middle of 3 runs each)");
    println!(
        "  word_stats::run alone, all examples         {:>9.1} ms   (inside the harness {:.1} ms)",
        ms(bare),
        ms(function.function_time)
    );
    println!(
        "  function pass, first trial to last          {:>9.1} ms",
        ms(function.span)
    );
    println!(
        "  function pass overhead per example, wall    {:>9.1} us   (goal <= 20 us)",
        us(overhead)
    );
    println!(
        "  function pass overhead per example, CPU     {:>9.1} us   (trials' CPU {:.1} ms)",
        us(overhead_cpu),
        ms(trials_cpu)
    );
    println!(
        "  MCP pass, first trial to last               {:>9.1} ms",
        ms(mcp.span)
    );
    println!(
        "  MCP pass median per example                 {:>9.1} us   (p90 {:.1} us; goal <= 1 ms)",
        us(ours),
        us(mcp.call_quantile(0.9))
    );
    println!(
        "  MCP pass, one era (2026-07-28), spawn to exit {:>7.1} ms   (median of 5, {} trials)",
        ms(one_era),
        EXAMPLES + 1
    );
    println!(
        "  MCP pass, both eras, spawn to exit          {:>9.1} ms   (median of 5, {} trials)",
        ms(both_eras),
        2 * (EXAMPLES + 1)
    );
    println!(
        "  ratio, both eras / one era                  {:>9.2}x   (goal <= 1.2x)",
        both_eras.as_secs_f64() / one_era.as_secs_f64()
    );
    println!(
        "  whole run, {} trials, all cores, spawn to exit {:>6.1} ms   (goal < 3 s)",
        3 * EXAMPLES + 2,
        ms(whole.wall)
    );
    println!(
        "  TypeScript SDK replay median per call       {:>9.1} us   (p90 {:.1} us, {} mismatches)",
        us(ts),
        typescript["p90_us"].as_f64().unwrap_or(f64::NAN),
        typescript["mismatches"]
    );
    println!(
        "  ratio, TypeScript SDK / harness median      {:>9.2}x   (goal >= 3x)",
        ts.as_secs_f64() / ours.as_secs_f64()
    );
    // The replay's figure: the whole MCP pass in one era against the time the TypeScript SDK
    // takes for the same calls, one after the other, against a server already running.
    let ts_total =
        Duration::from_secs_f64(typescript["total_us"].as_f64().unwrap_or(f64::NAN) / 1e6);
    println!(
        "  TypeScript SDK, its {EXAMPLES} calls in all       {:>9.1} ms   (mean {:.1} us a call)",
        ms(ts_total),
        typescript["mean_us"].as_f64().unwrap_or(f64::NAN)
    );
    println!(
        "  ratio, MCP pass one era / TypeScript's calls {:>8.2}    (goal <= 0.15)",
        one_era.as_secs_f64() / ts_total.as_secs_f64()
    );
    println!(
        "  server floor: raw HTTP/1.1, no MCP client   {:>9.1} us   (median of the same calls)",
        us(floor)
    );
    println!(
        "  client side, above the floor: harness {:.1} us, TypeScript SDK {:.1} us: {:.2}x",
        us(ours.saturating_sub(floor)),
        us(ts.saturating_sub(floor)),
        ts.saturating_sub(floor).as_secs_f64() / ours.saturating_sub(floor).as_secs_f64()
    );
}

/// The whole run (every trial, all cores, both eras) with and without `--report`
/// (`HOLON_REPORT`), alternately, so that the machine's load falls on both alike; spawn to exit,
/// the page's writing included.
fn report_bench(runs: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let examples = generate(EXAMPLES);
    let manifest = dir.path().join("holon.yaml");
    write_manifest(&manifest, &examples);
    let page = dir.path().join("report.html");
    let whole = |report: bool| {
        let mut command = Command::new(std::env::current_exe().expect("current_exe"));
        command
            .env("HOLON_BENCH_ROLE", "harness")
            .env("HOLON_BENCH_MANIFEST", &manifest)
            .env_remove("HOLON_PROTOCOL")
            .env_remove("HOLON_CONCURRENCY")
            .env_remove("HOLON_REPORT")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if report {
            command.env("HOLON_REPORT", &page);
        }
        let (cpu, start) = (children_cpu(), Instant::now());
        let status = command.status().expect("the harness");
        assert!(status.success(), "the run failed: {status}");
        (start.elapsed(), children_cpu().saturating_sub(cpu))
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    let (mut without_cpu, mut with_cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (wall, cpu) = whole(false);
        without.push(wall);
        without_cpu.push(cpu);
        let (wall, cpu) = whole(true);
        with.push(wall);
        with_cpu.push(cpu);
    }
    for times in [&mut without, &mut with, &mut without_cpu, &mut with_cpu] {
        times.sort();
    }
    let (without, with) = (without[runs / 2], with[runs / 2]);
    let (without_cpu, with_cpu) = (without_cpu[runs / 2], with_cpu[runs / 2]);
    let size = std::fs::metadata(&page).expect("the page").len();
    println!(
        "report benchmark: word-stats, {EXAMPLES} examples, {} trials (median of {runs})",
        3 * EXAMPLES + 2
    );
    println!(
        "  whole run, spawn to exit                   {:>9.1} ms",
        ms(without)
    );
    println!(
        "  whole run with --report, spawn to exit     {:>9.1} ms   (page {} KB)",
        ms(with),
        size / 1024
    );
    println!(
        "  ratio, with / without                      {:>9.3}x   (goal < 1.05x)",
        with.as_secs_f64() / without.as_secs_f64()
    );
    println!(
        "  CPU, without and with                      {:>9.1} ms and {:.1} ms: {:.3}x",
        ms(without_cpu),
        ms(with_cpu),
        with_cpu.as_secs_f64() / without_cpu.as_secs_f64()
    );
}

/// Runs `f` `n` times and keeps the run whose `key` is the median.
fn middle<T, K: Ord>(n: usize, mut f: impl FnMut() -> T, key: impl Fn(&T) -> K) -> T {
    let mut runs: Vec<T> = (0..n).map(|_| f()).collect();
    runs.sort_by_key(|r| key(r));
    runs.swap_remove(n / 2)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

struct Example {
    name: String,
    input: Value,
    expect: Result<Value, String>,
}

/// Texts from a fixed vocabulary with a fixed seed: 3 to 300 words, repeated words, punctuation
/// and capitals, every `top` and a spread of reading speeds; one in 50 is blank (`empty_text`).
fn generate(n: usize) -> Vec<Example> {
    const WORDS: &[&str] = &[
        "holon",
        "agent",
        "registry",
        "call",
        "pays",
        "per",
        "successful",
        "the",
        "a",
        "of",
        "gateway",
        "schema",
        "output",
        "input",
        "text",
        "word",
        "count",
        "reading",
        "time",
        "minute",
        "Agents",
        "Registry",
        "it's",
        "well-known",
        "über",
        "naïve",
        "42",
        "2026",
        "co-op",
        "data",
        "stream",
        "fast",
        "slow",
        "bill",
        "receipt",
        "error",
        "declared",
    ];
    const PUNCTUATION: &[&str] = &["", "", "", ",", ".", ";", "!", "?", " —", ":"];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound as u64) as usize
    };
    (0..n)
        .map(|i| {
            let text = if i % 50 == 49 {
                [" ", "\n\t", "   "][next(3)].to_string()
            } else {
                let len = 3 + next(298);
                let mut text = String::new();
                for w in 0..len {
                    if w > 0 {
                        text.push(' ');
                    }
                    text.push_str(WORDS[next(WORDS.len())]);
                    text.push_str(PUNCTUATION[next(PUNCTUATION.len())]);
                }
                text
            };
            let input = json!({
                "text": text,
                "top": next(51),
                "words_per_minute": 50 + next(951),
            });
            let typed: word_stats::Input = serde_json::from_value(input.clone()).expect("input");
            let expect = match now_or_never(word_stats::run(typed, holon_kit::Ctx::new())) {
                Ok(output) => Ok(serde_json::to_value(output).expect("output")),
                Err(failure) => Err(failure.code().expect("a declared code").to_string()),
            };
            Example {
                name: format!("example {i:04}"),
                input,
                expect,
            }
        })
        .collect()
}

/// `word_stats::run` never awaits: poll it once.
fn now_or_never<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("word_stats::run awaited"),
    }
}

/// word-stats' manifest with the generated examples, written as JSON (a subset of YAML).
fn write_manifest(path: &Path, examples: &[Example]) {
    let source = std::fs::read_to_string(root().join("examples/word-stats/holon.yaml"))
        .expect("word-stats manifest");
    let head = &source[..source.find("\nexamples:").expect("an examples section")];
    let mut text = format!("{head}\nexamples:\n");
    for example in examples {
        let mut entry = json!({ "name": example.name, "input": example.input });
        match &example.expect {
            Ok(output) => entry["output"] = output.clone(),
            Err(code) => entry["error"] = json!(code),
        }
        text.push_str(&format!("  - {entry}\n"));
    }
    std::fs::write(path, text).expect("write manifest");
}

fn write_replay(path: &Path, examples: &[Example]) {
    let calls: Vec<Value> = examples
        .iter()
        .map(|e| match &e.expect {
            Ok(output) => json!({ "arguments": e.input, "output": output }),
            Err(code) => json!({ "arguments": e.input, "error": code }),
        })
        .collect();
    std::fs::write(path, Value::Array(calls).to_string()).expect("write replay");
}

/// What `word_stats::run` alone takes for every example, inputs already typed: the best of
/// 20 rounds.
fn bare_function_time(examples: &[Example]) -> Duration {
    let inputs: Vec<Value> = examples.iter().map(|e| e.input.clone()).collect();
    (0..20)
        .map(|_| {
            let typed: Vec<word_stats::Input> = inputs
                .iter()
                .map(|i| serde_json::from_value(i.clone()).expect("input"))
                .collect();
            let start = Instant::now();
            for input in typed {
                let _ = std::hint::black_box(now_or_never(word_stats::run(
                    input,
                    holon_kit::Ctx::new(),
                )));
            }
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

struct HarnessRun {
    wall: Duration,
    /// From the first trial's `started` line to the last trial's result.
    span: Duration,
    /// CPU time of the whole process (and of any server it waited for), start to exit.
    process_cpu: Duration,
    /// What `word_stats::run` itself took, inside the harness, all trials together.
    function_time: Duration,
    passed: usize,
    /// Each trial, in the order run, with the time from its `started` line to its result.
    trials: Vec<(String, Duration)>,
}

impl HarnessRun {
    /// The example trials only: `mcp::tools/list` also starts the server.
    fn calls(&self) -> Vec<Duration> {
        let mut calls: Vec<Duration> = self
            .trials
            .iter()
            .filter(|(name, _)| !name.ends_with("::tools/list"))
            .map(|(_, d)| *d)
            .collect();
        calls.sort();
        calls
    }

    fn median_call(&self) -> Duration {
        self.call_quantile(0.5)
    }

    fn call_quantile(&self, q: f64) -> Duration {
        let calls = self.calls();
        calls[((calls.len() as f64 * q) as usize).min(calls.len() - 1)]
    }
}

/// One harness process, in the protocol era `protocol` names (each the server speaks when
/// `None`); with `--test-threads 1` the JSON events time each trial.
fn run_harness(
    manifest: &Path,
    args: &[&str],
    concurrency: Option<&str>,
    protocol: Option<&str>,
) -> HarnessRun {
    let exe = std::env::current_exe().expect("current_exe");
    let mut command = Command::new(exe);
    command.env_remove("HOLON_CONCURRENCY");
    if let Some(n) = concurrency {
        command.env("HOLON_CONCURRENCY", n);
    }
    command.env_remove("HOLON_PROTOCOL");
    if let Some(era) = protocol {
        command.env("HOLON_PROTOCOL", era);
    }
    let cpu_before = children_cpu();
    let start = Instant::now();
    let mut child = Kill(
        command
            .args(["--format", "json"])
            .args(args)
            .env("HOLON_BENCH_ROLE", "harness")
            .env("HOLON_BENCH_MANIFEST", manifest)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the harness"),
    );
    let stdout = child.0.stdout.take().expect("stdout");
    let stderr = child.0.stderr.take().expect("stderr");
    // Passed through, less the one line that reports the function's own time.
    let function_time = std::thread::spawn(move || {
        let mut ns = 0;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            match line.strip_prefix(FUNCTION_TIME) {
                Some(n) => ns = n.parse().unwrap_or(0),
                None => eprintln!("{line}"),
            }
        }
        Duration::from_nanos(ns)
    });
    let mut started: Option<Instant> = None;
    let mut first: Option<Instant> = None;
    let mut last = start;
    let mut trials = Vec::new();
    let mut passed = 0;
    for line in BufReader::new(stdout).lines() {
        let at = Instant::now();
        let Ok(event) = serde_json::from_str::<Value>(&line.expect("read")) else {
            continue;
        };
        if event["type"] != "test" {
            continue;
        }
        match event["event"].as_str() {
            Some("started") => {
                started = Some(at);
                if first.is_none() {
                    first = Some(at);
                }
            }
            Some("ok") => {
                passed += 1;
                let name = event["name"].as_str().unwrap_or_default().to_string();
                trials.push((name, started.map_or(Duration::ZERO, |s| at - s)));
                last = at;
            }
            _ => panic!("a trial failed: {event}"),
        }
    }
    let status = child.0.wait().expect("wait");
    let wall = start.elapsed();
    let process_cpu = children_cpu().saturating_sub(cpu_before);
    assert!(status.success(), "the harness run failed: {status}");
    let function_time = function_time.join().unwrap_or_default();
    HarnessRun {
        wall,
        span: last - first.unwrap_or(start),
        process_cpu,
        function_time,
        passed,
        trials,
    }
}

/// The user and system CPU time of every child this process has waited for.
fn children_cpu() -> Duration {
    // SAFETY: getrusage(2) writes only into the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// The TypeScript SDK's replay against this binary serving word-stats, on a port it picks,
/// and the floor: the same calls as bare HTTP requests on one kept-alive connection.
fn replay_with_typescript(
    manifest: &Path,
    replay: &Path,
    examples: &[Example],
) -> (Value, Duration) {
    let node_dir = root().join("tests/interop/node");
    assert!(
        node_dir
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "the TypeScript SDK is missing: run `bash .ci/setup-interop` first"
    );
    let exe = std::env::current_exe().expect("current_exe");
    let mut server = Kill(
        Command::new(exe)
            .env("HOLON_BENCH_ROLE", "server")
            .env("HOLON_MANIFEST", manifest)
            .env("PORT", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server"),
    );
    // The server says where it listens: `... listening on http://127.0.0.1:PORT/mcp ...`.
    let mut lines = BufReader::new(server.0.stderr.take().expect("stderr")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            let from = l.find("http://")?;
            let rest = &l[from..];
            Some(rest[..rest.find(' ').unwrap_or(rest.len())].to_string())
        })
        .expect("the server's address");
    let drain = std::thread::spawn(move || lines.for_each(drop));
    let floor = raw_http(&url, examples);
    let out = Command::new("node")
        .arg(node_dir.join("replay.mjs"))
        .arg(&url)
        .arg("word_stats")
        .arg(replay)
        .stderr(Stdio::inherit())
        .output()
        .expect("run node");
    assert!(out.status.success(), "the TypeScript replay failed");
    drop(server);
    let _ = drain.join();
    let report: Value = serde_json::from_slice(&out.stdout).expect("the replay's JSON line");
    assert_eq!(report["mismatches"], 0, "the TypeScript replay disagreed");
    (report, floor)
}

/// The median of the examples' calls as hand-written HTTP/1.1 requests on one connection: what
/// the server and the loopback cost, with next to nothing on the client's side.
fn raw_http(url: &str, examples: &[Example]) -> Duration {
    use std::io::{Read, Write};
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let stream = std::net::TcpStream::connect(&address).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    let mut times = Vec::with_capacity(examples.len());
    for (id, example) in examples.iter().enumerate() {
        let body = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": { "name": "word_stats", "arguments": example.input },
        })
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let start = Instant::now();
        writer.write_all(request.as_bytes()).expect("send");
        let mut length = None;
        let mut line = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line).expect("read a header");
            if line == "\r\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("a content-length")];
        reader.read_exact(&mut body).expect("read the body");
        times.push(start.elapsed());
        let answer: Value = serde_json::from_slice(&body).expect("a JSON-RPC answer");
        assert!(answer.get("result").is_some(), "the call failed: {answer}");
    }
    times.sort();
    times[times.len() / 2]
}

/// A child killed and reaped on every way out.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The 1,000-example suite under `cargo nextest run`, the MCP trials (`mcp::tools/list` and one
/// per example, each a process of its own): with the scaffold's `.config/nextest.toml` (one
/// server for the run, `HOLON_SERVER_URL`) against without it (each trial's process starts its
/// own), alternating, `runs` times each; the median wall time of each, spawn to exit, the build
/// done before, and the CPU time of the processes waited for (cargo, nextest, the trials and
/// the servers they start; not the one server of the setup script, whose keeper is detached
/// and never waited for here, a single start). With `parts` above 1, one nextest partition of that many (`--partition count:1/N`,
/// every Nth trial): the same trials with the same costs each, fewer of them. The agent is
/// word-stats, copied with the generated manifest into a package of its own (the dev profile,
/// as `cargo nextest run` builds it, at `opt-level = 3`).
fn nextest_bench(runs: usize, parts: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let package = dir.path().join("word-stats");
    for file in ["src/lib.rs", "src/main.rs", "tests/holon.rs"] {
        let to = package.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root().join("examples/word-stats").join(file), &to).unwrap();
    }
    let cargo_toml = std::fs::read_to_string(root().join("examples/word-stats/Cargo.toml"))
        .unwrap()
        .replace(
            "path = \"../..\"",
            &format!("path = {:?}", root().display().to_string()),
        )
        .replace("[lints]\nworkspace = true\n", "[workspace]\n")
        // Optimised, as the other benchmarks are, in the profile both nextest and the setup
        // script's `cargo test` build: the dev one. (Unoptimised, checking the 1,000-example
        // manifest takes seconds in every trial's process.)
        + "\n[profile.dev]\nopt-level = 3\ndebug = false\n";
    std::fs::write(package.join("Cargo.toml"), cargo_toml).unwrap();
    write_manifest(&package.join("holon.yaml"), &generate(EXAMPLES));
    let config = package.join(".config/nextest.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let setup = std::fs::read_to_string(
        root().join("crates/holon-cli/templates/agent/.config/nextest.toml"),
    )
    .unwrap();
    let target = root().join("target/bench-nextest");
    let nextest = |extra: &[&str]| {
        let mut c = paths::cargo();
        c.current_dir(&package)
            .args(["nextest", "run", "-E", "test(/^mcp::/)"])
            .args(extra)
            .env("CARGO_TARGET_DIR", &target)
            .env("HOLON_EXPLORE_CASES", "0")
            .env_remove("HOLON_SERVER_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let built = nextest(&["--no-run"]).output().expect("cargo nextest");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    if runs == 0 {
        // `nextest 0`: the build only, so that the timed runs can wait for a quiet machine.
        return;
    }
    let run = |one_server: bool| -> (Duration, Duration) {
        if one_server {
            std::fs::write(&config, &setup).unwrap();
        } else {
            let _ = std::fs::remove_file(&config);
        }
        let (started, cpu) = (Instant::now(), children_cpu());
        let partition = format!("count:1/{parts}");
        let out = nextest(&["--no-fail-fast", "--partition", &partition])
            .output()
            .expect("cargo nextest");
        let took = (started.elapsed(), children_cpu().saturating_sub(cpu));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}");
        let trials = (EXAMPLES + 1).div_ceil(parts);
        assert!(
            said.contains(&format!("{trials} tests run: {trials} passed")),
            "{said}"
        );
        assert_eq!(said.contains("SETUP PASS"), one_server, "{said}");
        took
    };
    let (mut one, mut each) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        one.push(run(true));
        each.push(run(false));
    }
    let median = |v: &[(Duration, Duration)], cpu: bool| {
        let mut v: Vec<Duration> = v.iter().map(|t| if cpu { t.1 } else { t.0 }).collect();
        v.sort();
        v[v.len() / 2]
    };
    let show = |v: &[(Duration, Duration)]| {
        v.iter()
            .map(|(wall, cpu)| format!("{:.1} ({:.1})", wall.as_secs_f64(), cpu.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "nextest benchmark: word-stats, {EXAMPLES} examples, {} of the {} MCP trials (partition 1/{parts}), {runs} runs each, alternating",
        (EXAMPLES + 1).div_ceil(parts),
        EXAMPLES + 1
    );
    println!(
        "  one server for the run (setup script)   runs, wall (CPU): {} s",
        show(&one)
    );
    println!(
        "  one server per trial                    runs, wall (CPU): {} s",
        show(&each)
    );
    for (what, cpu) in [("wall", false), ("CPU", true)] {
        let (a, b) = (median(&one, cpu), median(&each, cpu));
        println!(
            "  median {what}: one server {:.1} s, one per trial {:.1} s: {:.2}x",
            a.as_secs_f64(),
            b.as_secs_f64(),
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}

//! Slow agents: the MCP pass against a server whose every call takes one second, as an agent
//! with a model or a remote service behind it does.
//!
//! `cargo bench -p holon-kit --bench slow`
//!
//! The server is this binary again (`HOLON_BENCH_ROLE=server`): word-stats served by
//! `holon_kit::serve`, each call awaiting `HOLON_BENCH_SLEEP_S` (default 1) before it answers.
//! The harness is this binary too (`HOLON_BENCH_ROLE=harness`), as `--server-cmd` runs it; each
//! run is timed from spawn to exit, the server's start included. Figures: 16 and 100 examples
//! with default settings, and the peer in the same run: `HOLON_CONCURRENCY=2`, one call per
//! libtest thread on a 2-core machine, which is how the harness ran before calls went out
//! together. Each configuration runs three times; the table gives the median and the range. All
//! in one protocol era (`HOLON_PROTOCOL=2026-07-28`): these figures are of calls in flight.
//!
//! Then a server that hangs on every call (tests/fixtures/servers/py_server.py with
//! `CALL_SLEEP_S=3600`, the official Python SDK) through `cargo-holon-test --server-cmd`, on
//! word-stats' manifest with its two examples and explore at its defaults, at `timeout_s` 3 and
//! 10; the peer in the same run is the same server answering at once (its start, `tools/list`,
//! the calls). `cargo bench -p holon-kit --bench slow -- hang` runs only that part.
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

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
#[path = "../tests/it/util/paths.rs"]
mod paths;

use paths::{BIN, root};

fn main() {
    common::dispatch(
        || common::run_harness(|h| h.explore_cases(0)),
        server_role,
        bench,
    );
}

/// word-stats, each call awaiting `HOLON_BENCH_SLEEP_S` first.
fn server_role() {
    let manifest = holon_kit::manifest!("examples/word-stats/holon.yaml");
    let agent = holon_kit::agent(|input: word_stats::Input, ctx: holon_kit::Ctx| async move {
        tokio::time::sleep(Duration::from_secs_f64(sleep_s())).await;
        word_stats::run(input, ctx).await
    });
    if let Err(e) = holon_kit::serve(manifest, agent) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn sleep_s() -> f64 {
    std::env::var("HOLON_BENCH_SLEEP_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

fn bench() {
    if std::env::args().any(|a| a == "hang") {
        hanging();
        return;
    }
    slow();
    hanging();
}

fn slow() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runs = 3;
    println!(
        "slow-agent benchmark: every call takes {} s; wall time from spawn to exit, server start included ({runs} runs each)",
        sleep_s()
    );
    println!(
        "  {:<10} {:<28} {:>9} {:>9} {:>9}",
        "examples", "settings", "median", "min", "max"
    );
    for (examples, concurrency) in [(16, None), (16, Some(2)), (100, None)] {
        let manifest = dir.path().join(format!("holon-{examples}.yaml"));
        write_manifest(&manifest, examples);
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| run_harness(&manifest, concurrency, examples))
            .collect();
        times.sort();
        let settings = match concurrency {
            None => "default (16 in flight)".to_string(),
            Some(n) => format!("HOLON_CONCURRENCY={n} (peer)"),
        };
        println!(
            "  {examples:<10} {settings:<28} {:>8.2}s {:>8.2}s {:>8.2}s",
            times[runs / 2].as_secs_f64(),
            times[0].as_secs_f64(),
            times[runs - 1].as_secs_f64()
        );
    }
}

/// One whole harness process; every trial must pass.
fn run_harness(manifest: &Path, concurrency: Option<usize>, examples: usize) -> Duration {
    let exe = std::env::current_exe().expect("current_exe");
    let mut command = Command::new(exe);
    command
        .env("HOLON_BENCH_ROLE", "harness")
        .env("HOLON_BENCH_MANIFEST", manifest)
        .env_remove("HOLON_CONCURRENCY")
        // Calls in flight, in one era: word-stats' runtime speaks both, and by default each
        // example would be called once in each (BENCHMARKS.md, "Harness", has both against one).
        .env("HOLON_PROTOCOL", "2026-07-28")
        .args(["--quiet", "--color", "never"]);
    if let Some(n) = concurrency {
        command.env("HOLON_CONCURRENCY", n.to_string());
    }
    let start = Instant::now();
    let output = command.output().expect("run the harness");
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let passed = format!("test result: ok. {} passed;", examples + 1);
    assert!(
        output.status.success() && stdout.contains(&passed),
        "the harness failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    took
}

/// word-stats' manifest with `n` examples, outputs computed by `word_stats::run`.
fn write_manifest(path: &Path, n: usize) {
    let source = std::fs::read_to_string(root().join("examples/word-stats/holon.yaml"))
        .expect("word-stats manifest");
    let head = &source[..source.find("\nexamples:").expect("an examples section")];
    let mut text = format!("{head}\nexamples:\n");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    for i in 1..=n {
        let input =
            json!({ "text": format!("Call {i} of {n}: a slow agent answers in a second.") });
        let typed: word_stats::Input = serde_json::from_value(input.clone()).expect("input");
        let output = runtime
            .block_on(word_stats::run(typed, holon_kit::Ctx::default()))
            .unwrap_or_else(|_| panic!("example {i} fails"));
        let entry = json!({ "name": format!("call {i}"), "input": input, "output": output });
        text.push_str(&format!("  - {entry}\n"));
    }
    std::fs::write(path, text).expect("write manifest");
}

/// The MCP pass and explore against a server that answers no call, beside the same server
/// answering at once: what a hang costs before the run goes red, against `timeout_s`.
fn hanging() {
    let runs = 3;
    let python = root().join("target/interop/python");
    assert!(
        python.join("mcp").is_dir(),
        "the official Python MCP SDK is not in `{}`: run `.ci/setup-interop` first",
        python.display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    println!(
        "hanging server: word-stats' two examples and explore (100 cases), every call sleeping an hour; wall time from spawn to exit, server start included ({runs} runs each)"
    );
    println!(
        "  {:<10} {:<24} {:>9} {:>9} {:>9} {:>14}",
        "timeout_s", "server", "median", "min", "max", "median/timeout"
    );
    let source = std::fs::read_to_string(root().join("tests/fixtures/harness/word-stats.yaml"))
        .expect("the manifest");
    for timeout in [3, 10] {
        let manifest = dir.path().join(format!("holon-{timeout}.yaml"));
        let text = source.replace("timeout_s: 30,", &format!("timeout_s: {timeout},"));
        std::fs::write(&manifest, text).expect("write manifest");
        for (server, hangs) in [
            ("answers at once (peer)", false),
            ("hangs on every call", true),
        ] {
            let mut times: Vec<Duration> = (0..runs)
                .map(|_| run_server_cmd(&manifest, &python, hangs))
                .collect();
            times.sort();
            let median = times[runs / 2].as_secs_f64();
            println!(
                "  {timeout:<10} {server:<24} {median:>8.2}s {:>8.2}s {:>8.2}s {:>13.2}x",
                times[0].as_secs_f64(),
                times[runs - 1].as_secs_f64(),
                median / f64::from(timeout)
            );
        }
    }
}

/// One `cargo-holon-test --server-cmd` run of the Python server; a hanging one must fail, an
/// answering one pass.
fn run_server_cmd(manifest: &Path, python: &Path, hangs: bool) -> Duration {
    let script = root().join("tests/fixtures/servers/py_server.py");
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(manifest)
        .arg("--server-cmd")
        .arg(format!("exec python3 '{}'", script.display()))
        .args(["--", "--quiet", "--color", "never"])
        .env("MODE", "ok")
        .env("PYTHONPATH", python)
        .env_remove("HOLON_EXPLORE_CASES")
        .env_remove("HOLON_CONCURRENCY")
        // In one era, as these figures were measured before the harness spoke two.
        .env("HOLON_PROTOCOL", "2026-07-28");
    if hangs {
        command.env("CALL_SLEEP_S", "3600");
    }
    let start = Instant::now();
    let output = command.output().expect("run cargo-holon-test");
    let took = start.elapsed();
    assert_eq!(
        output.status.code(),
        Some(if hangs { 101 } else { 0 }),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    took
}

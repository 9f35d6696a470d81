//! What a measured run costs, the harness run as an agent's `tests/holon.rs` has it (this binary
//! again, `HOLON_BENCH_ROLE=harness`, its server this binary too, `HOLON_BENCH_ROLE=server`),
//! timed from spawn to exit:
//!
//! - live: `examples/ticket-triage` (compiled in), 3 examples x 20 calls (`--repeat 20`) at the
//!   default settings against a fake model on loopback where 1 call in 10 takes past
//!   `timeout_s` (10 s); the peer is the same run against a model that never stalls;
//! - repeat: word-stats' 2 examples x 100 calls (`--repeat 100`) through the MCP pass against
//!   the ordinary MCP pass over 200 examples called once each, both less the run of the 2
//!   examples called once (the server's start, the checks): the cost of a call each way.
//!
//! `cargo bench -p holon-kit --bench measure [-- RUNS]` (default 5)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

mod common;
#[path = "../tests/it/util/fake_model.rs"]
mod fake_model;
#[path = "../tests/it/util/paths.rs"]
mod paths;
#[path = "../examples/ticket-triage/src/lib.rs"]
mod ticket_triage;
#[path = "common/times.rs"]
mod times;
#[path = "../examples/word-stats/src/lib.rs"]
mod word_stats;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_model::{Behaviour, FakeModel, Kind, Mix};
use serde_json::json;
use times::{max, median, min, ms};

const KEY: &str = "sk-holon-bench-1";

fn main() {
    common::dispatch(harness_role, server_role, bench);
}

/// Which agent the roles are: `HOLON_BENCH_AGENT` (`ticket-triage` or `word-stats`).
fn ticket_triage() -> bool {
    std::env::var("HOLON_BENCH_AGENT").as_deref() == Ok("ticket-triage")
}

fn harness_role() -> i32 {
    if ticket_triage() {
        common::run_harness(|h| h.function(holon_kit::agent(ticket_triage::run)))
    } else {
        common::run_harness(|h| h.function(holon_kit::agent(word_stats::run)))
    }
}

fn server_role() {
    let served = if ticket_triage() {
        holon_kit::serve(
            holon_kit::manifest!("examples/ticket-triage/holon.yaml"),
            holon_kit::agent(ticket_triage::run),
        )
    } else {
        holon_kit::serve(
            holon_kit::manifest!("examples/word-stats/holon.yaml"),
            holon_kit::agent(word_stats::run),
        )
    };
    if let Err(e) = served {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn bench() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    live(runs);
    repeat(runs);
}

/// One run of the harness on `manifest` with `env`, timed; its stderr, for the report.
fn run(agent: &str, manifest: &Path, filter: &str, env: &[(&str, &str)]) -> (Duration, String) {
    let exe = std::env::current_exe().expect("current_exe");
    let mut command = Command::new(exe);
    command
        .args([filter, "-q"])
        .env("HOLON_BENCH_ROLE", "harness")
        .env("HOLON_BENCH_AGENT", agent)
        .env("HOLON_BENCH_MANIFEST", manifest)
        .env("HOLON_EXPLORE_CASES", "0")
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    let started = Instant::now();
    let out = command.output().expect("run the harness");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{filter} {env:?} failed:\n{}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    (took, stderr)
}

/// `examples/ticket-triage` with `n` examples (ticket `i` each, answered as the fake model
/// answers it) and `timeout_s: 10`, and its `holon-test.toml`.
fn triage(dir: &Path, n: usize) -> PathBuf {
    let source = std::fs::read_to_string(paths::root().join("examples/ticket-triage/holon.yaml"))
        .expect("the example's manifest");
    let (head, _) = source.split_once("\nexamples:").expect("examples");
    let head = head.replace("timeout_s: 30", "timeout_s: 10");
    let mut text = format!("{head}\nexamples:\n");
    for i in 0..n {
        text.push_str(&format!(
            "  - name: ticket {i}\n    input: {{ ticket: \"Ticket number {i} about an invoice\" }}\n    output: {{ priority: medium, summary: \"The customer reports Ticket number {i} about an invoice\" }}\n"
        ));
    }
    let manifest = dir.join("holon.yaml");
    std::fs::write(&manifest, text).expect("write the manifest");
    std::fs::copy(
        paths::root().join("examples/ticket-triage/holon-test.toml"),
        dir.join("holon-test.toml"),
    )
    .expect("copy holon-test.toml");
    manifest
}

fn model(mix: Mix) -> FakeModel {
    FakeModel::start(Behaviour {
        mix,
        ..Behaviour::keyed(KEY)
    })
}

fn live(runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let manifest = triage(dir.path(), 3);
    // 1 call in 10 past `timeout_s` (10 s): the agent gives up on it at its own stall timeout.
    let mut stalling = vec![Kind::Valid; 9];
    stalling.push(Kind::Slow(Duration::from_secs(12)));
    let (slow, steady) = (model(Mix::Cycle(stalling)), model(Mix::Plain));
    let env = |model: &FakeModel| -> Vec<(String, String)> {
        vec![
            ("HOLON_UPSTREAM".into(), "live".into()),
            ("HOLON_REPEAT".into(), "20".into()),
            ("OPENAI_BASE_URL".into(), model.url.clone()),
            ("OPENAI_API_KEY".into(), KEY.into()),
        ]
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut report = String::new();
    for _ in 0..runs {
        let vars = env(&slow);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let (took, stderr) = run("ticket-triage", &manifest, "", &vars);
        a.push(took);
        report = stderr;
        let vars = env(&steady);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        b.push(run("ticket-triage", &manifest, "", &vars).0);
    }
    println!(
        "measure benchmark: live, examples/ticket-triage, 3 examples x 20 calls on the MCP pass (and 1 each on the function pass), default settings ({runs} runs each)"
    );
    println!("| Run | Wall median | Min | Max |");
    println!("| --- | --- | --- | --- |");
    for (name, times) in [
        ("1 call in 10 past `timeout_s` (10 s)", &a),
        ("a model that never stalls (peer)", &b),
    ] {
        println!(
            "| {name} | {} | {} | {} |",
            ms(median(times)),
            ms(min(times)),
            ms(max(times))
        );
    }
    println!(
        "ratio: {:.2}x the peer; the report of the last run:",
        median(&a).as_secs_f64() / median(&b).as_secs_f64()
    );
    for line in report.lines().filter(|l| l.starts_with("measure")) {
        println!("    {line}");
    }
    println!();
}

fn repeat(runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (own, many) = (dir.path().join("own.yaml"), dir.path().join("many.yaml"));
    std::fs::copy(paths::root().join("examples/word-stats/holon.yaml"), &own).unwrap();
    word_stats_with(&many, 200);
    let repeat = [("HOLON_REPEAT", "100")];
    let (mut floor, mut ordinary, mut repeated) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        floor.push(run("word-stats", &own, "mcp::", &[]).0);
        ordinary.push(run("word-stats", &many, "mcp::", &[]).0);
        repeated.push(run("word-stats", &own, "mcp::", &repeat).0);
    }
    let (f, o, r) = (median(&floor), median(&ordinary), median(&repeated));
    println!(
        "measure benchmark: repeat, word-stats through the MCP pass, spawn to exit ({runs} runs each)"
    );
    println!("| Run | Calls | Wall median | Min | Max |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, calls, times) in [
        ("word-stats' 2 examples, once (floor)", 2, &floor),
        (
            "200 examples, once each (peer: the ordinary pass)",
            200,
            &ordinary,
        ),
        ("2 examples, `--repeat 100`", 200, &repeated),
    ] {
        println!(
            "| {name} | {calls} | {} | {} | {} |",
            ms(median(times)),
            ms(min(times)),
            ms(max(times))
        );
    }
    let per = |d: Duration| (d.as_secs_f64() - f.as_secs_f64()) * 1e6 / 198.0;
    println!(
        "a call above the floor: the ordinary pass {:.0} us, `--repeat 100` {:.0} us: {:.2}x",
        per(o),
        per(r),
        per(r) / per(o)
    );
}

/// word-stats' manifest with `n` examples, their outputs computed by `word_stats::run`.
fn word_stats_with(path: &Path, n: usize) {
    let source = std::fs::read_to_string(paths::root().join("examples/word-stats/holon.yaml"))
        .expect("word-stats' manifest");
    let head = &source[..source.find("\nexamples:").expect("examples")];
    let mut text = format!("{head}\nexamples:\n");
    for i in 0..n {
        let input = json!({"text": format!("Call number {i} of the ordinary pass, counted once.")});
        let typed: word_stats::Input = serde_json::from_value(input.clone()).unwrap();
        let output = now_or_never(word_stats::run(typed, holon_kit::Ctx::new()))
            .map(|o| serde_json::to_value(o).unwrap())
            .expect("a success");
        let entry = json!({"name": format!("example {i:03}"), "input": input, "output": output});
        text.push_str(&format!("  - {entry}\n"));
    }
    std::fs::write(path, text).unwrap();
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

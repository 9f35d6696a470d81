//! What recorded upstreams cost and save, on `examples/ticket-triage` (a model-backed agent,
//! compiled in) and a fake model on loopback (`tests/it/util/fake_model.rs`), each run the
//! harness as its `tests/holon.rs` has it (this binary again, `HOLON_BENCH_ROLE=harness`),
//! timed from spawn to exit:
//!
//! - per exchange: the function pass over 200 examples of one model call each, one call at a
//!   time, against the fake model directly (the peer: no `holon-test.toml`) and replayed from
//!   recordings; the difference, divided by the calls, is what replay adds to an exchange;
//! - explore: `explore::function` over 100 cases of an agent whose model takes 300 ms, recorded
//!   (16 in flight), replayed, and live one call at a time (the peer: how explore called a
//!   model-backed agent before);
//! - faults: a manifest of 100 success examples, recorded once, both passes (the server is this
//!   binary again, `HOLON_BENCH_ROLE=server`): the examples' replayed passes alone and one
//!   `slow` fault's wait (the peers) against every fault trial (100 examples x 1 exchange x 7
//!   faults x 2 passes), and against one fast fault per example and pass (`HOLON_FAULT=1:429`);
//! - record: the 1,000-example recorded suite (one streamed model call each, in pieces of 4
//!   bytes as a model streams tokens, the key set so every answer is scrubbed), the function
//!   pass one call at a time, recorded into an empty folder (every file written), then again
//!   over those recordings (the same answers with new ids and timestamps: the stability check),
//!   against the same suite live (the peer: the same calls through the proxy, nothing kept).
//!
//! `cargo bench -p holon-kit --bench upstream [-- RUNS]` (default 5); `-- record [RUNS]` runs
//! the last part alone (what `benches/ab-record.sh` runs on two commits), `-- faults [RUNS]`
//! the fault trials alone.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

// The example agent's function, compiled into the benchmark rather than depended on.
mod common;
#[path = "../tests/it/util/fake_model.rs"]
mod fake_model;
#[path = "../tests/it/util/paths.rs"]
mod paths;
#[path = "../examples/ticket-triage/src/lib.rs"]
mod ticket_triage;
#[path = "common/times.rs"]
mod times;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_model::{Behaviour, FakeModel};
use times::{max, median, min, ms};

const KEY: &str = "sk-holon-bench-1";

fn main() {
    common::dispatch(
        || common::run_harness(|h| h.function(holon_kit::agent(ticket_triage::run))),
        server_role,
        bench,
    );
}

/// The example's server, on the manifest the harness gives it (`HOLON_MANIFEST`).
fn server_role() {
    let manifest = holon_kit::manifest!("examples/ticket-triage/holon.yaml");
    if let Err(e) = holon_kit::serve(manifest, holon_kit::agent(ticket_triage::run)) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn bench() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    if std::env::args().any(|a| a == "record") {
        record(runs);
        return;
    }
    if std::env::args().any(|a| a == "faults") {
        faults(runs);
        return;
    }
    per_exchange(runs);
    explore(runs);
    faults(runs);
    record(runs);
}

/// The manifest of `examples/ticket-triage` with `n` examples (ticket `i` each) in `dir`, and
/// its `holon-test.toml` when `upstreams`.
fn agent(dir: &Path, examples: usize, upstreams: bool) -> std::path::PathBuf {
    let source = std::fs::read_to_string(paths::root().join("examples/ticket-triage/holon.yaml"))
        .expect("the example's manifest");
    let (head, _) = source.split_once("\nexamples:").expect("examples");
    let mut text = format!("{head}\nexamples:\n");
    for i in 0..examples {
        // Answered `medium` with the gist of the ticket: the output the fake model gives.
        text.push_str(&format!(
            "  - name: ticket {i}\n    input: {{ ticket: \"Ticket number {i} about an invoice\" }}\n    output: {{ priority: medium, summary: \"The customer reports Ticket number {i} about an invoice\" }}\n"
        ));
    }
    let manifest = dir.join("holon.yaml");
    std::fs::write(&manifest, text).expect("write the manifest");
    if upstreams {
        std::fs::copy(
            paths::root().join("examples/ticket-triage/holon-test.toml"),
            dir.join("holon-test.toml"),
        )
        .expect("copy holon-test.toml");
    }
    manifest
}

/// One run of the harness: the filter, the manifest, the mode, the explore cases, the
/// concurrency, the model.
fn run(
    filter: &str,
    manifest: &Path,
    mode: Option<&str>,
    cases: u32,
    concurrency: usize,
    model: &FakeModel,
    env: &[(&str, &str)],
) -> Duration {
    let exe = std::env::current_exe().expect("current_exe");
    let mut command = Command::new(exe);
    command
        .args([filter, "-q"])
        .env("HOLON_BENCH_ROLE", "harness")
        .env("HOLON_BENCH_MANIFEST", manifest)
        .env("HOLON_EXPLORE_CASES", cases.to_string())
        .env("HOLON_CONCURRENCY", concurrency.to_string())
        .env("OPENAI_BASE_URL", &model.url)
        .env("OPENAI_API_KEY", KEY)
        // The fault trials only where asked for: `function::` also matches `faults::function::`.
        .env("HOLON_FAULTS", "0")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    match mode {
        Some(mode) => command.env("HOLON_UPSTREAM", mode),
        None => command.env_remove("HOLON_UPSTREAM"),
    };
    let started = Instant::now();
    let out = command.output().expect("run the harness");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{filter} {mode:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn per_exchange(runs: usize) {
    const EXAMPLES: usize = 200;
    let model = FakeModel::start(Behaviour::keyed(KEY));
    let (direct_dir, replay_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let direct = agent(direct_dir.path(), EXAMPLES, false);
    let replayed = agent(replay_dir.path(), EXAMPLES, true);
    run("function::", &replayed, Some("record"), 0, 1, &model, &[]);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        a.push(run("function::", &direct, None, 0, 1, &model, &[]));
        b.push(run(
            "function::",
            &replayed,
            Some("replay"),
            0,
            1,
            &model,
            &[],
        ));
    }
    let (ma, mb) = (median(&a), median(&b));
    println!(
        "upstream benchmark: examples/ticket-triage, {EXAMPLES} examples of one model call, one call at a time ({runs} runs each)"
    );
    println!("| Run | Wall median | Min | Max |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| the fake model called directly (peer) | {} | {} | {} |",
        ms(ma),
        ms(min(&a)),
        ms(max(&a))
    );
    println!(
        "| replayed from recordings | {} | {} | {} |",
        ms(mb),
        ms(min(&b)),
        ms(max(&b))
    );
    let per = (mb.as_secs_f64() - ma.as_secs_f64()) / EXAMPLES as f64;
    println!(
        "replay adds {:.3} ms per exchange (median against median, {EXAMPLES} exchanges)",
        per * 1000.0
    );
    println!();
}

fn explore(runs: usize) {
    let model = FakeModel::start(Behaviour {
        delay: Duration::from_millis(300),
        vary: true,
        ..Behaviour::keyed(KEY)
    });
    let dir = tempfile::tempdir().unwrap();
    let manifest = agent(dir.path(), 2, true);
    let filter = "explore::function";
    let (mut record, mut replay) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        record.push(run(filter, &manifest, Some("record"), 100, 16, &model, &[]));
        replay.push(run(filter, &manifest, Some("replay"), 100, 16, &model, &[]));
    }
    let before = run(filter, &manifest, Some("live"), 100, 1, &model, &[]);
    println!(
        "explore::function, 100 cases, a model that takes 300 ms ({runs} runs each, the peer once)"
    );
    println!("| Run | Wall median | Min | Max |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| record, 16 in flight | {} | {} | {} |",
        ms(median(&record)),
        ms(min(&record)),
        ms(max(&record))
    );
    println!(
        "| replay | {} | {} | {} |",
        ms(median(&replay)),
        ms(min(&replay)),
        ms(max(&replay))
    );
    println!(
        "| live, one call at a time (peer: explore before) | {} | | |",
        ms(before)
    );
    println!(
        "ratios: the peer takes {:.1}x the record run and {:.1}x the replay",
        before.as_secs_f64() / median(&record).as_secs_f64(),
        before.as_secs_f64() / median(&replay).as_secs_f64()
    );
}

fn faults(runs: usize) {
    const EXAMPLES: usize = 100;
    let model = FakeModel::start(Behaviour::keyed(KEY));
    let dir = tempfile::tempdir().unwrap();
    let manifest = agent(dir.path(), EXAMPLES, true);
    let off = [("HOLON_FAULTS", "0")];
    run("function::", &manifest, Some("record"), 0, 16, &model, &off);
    let on = [("HOLON_FAULTS", "1")];
    let one_slow = [("HOLON_FAULTS", "1"), ("HOLON_FAULT", "1:slow")];
    let one_fast = [("HOLON_FAULTS", "1"), ("HOLON_FAULT", "1:429")];
    let (mut examples, mut slow, mut all, mut fast) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        // Every trial but the faults': both passes' examples and `mcp::tools/list`.
        examples.push(run("", &manifest, Some("replay"), 0, 16, &model, &off));
        slow.push(run(
            "faults::function::ticket 0",
            &manifest,
            Some("replay"),
            0,
            16,
            &model,
            &one_slow,
        ));
        all.push(run(
            "faults::",
            &manifest,
            Some("replay"),
            0,
            16,
            &model,
            &on,
        ));
        fast.push(run(
            "faults::",
            &manifest,
            Some("replay"),
            0,
            16,
            &model,
            &one_fast,
        ));
    }
    println!();
    println!(
        "faults: {EXAMPLES} success examples of examples/ticket-triage (1 exchange each), both passes, replayed ({runs} runs each)"
    );
    println!("| Run | Calls | Wall median | Min | Max |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, calls, times) in [
        (
            "the examples' replayed passes (peer)",
            2 * EXAMPLES,
            &examples,
        ),
        ("one `slow` fault, alone (peer)", 1, &slow),
        ("every fault trial, `faults::`", 2 * EXAMPLES * 7, &all),
        ("`faults::`, `HOLON_FAULT=1:429`", 2 * EXAMPLES, &fast),
    ] {
        println!(
            "| {name} | {calls} | {} | {} | {} |",
            ms(median(times)),
            ms(min(times)),
            ms(max(times))
        );
    }
    let (e, s, a) = (median(&examples), median(&slow), median(&all));
    println!(
        "ratio: every fault trial takes {:.2}x (the examples' passes + one slow fault's wait), where one slow fault after another would take {EXAMPLES} x 2 x {:.1} s",
        a.as_secs_f64() / (e + s).as_secs_f64(),
        s.as_secs_f64()
    );
}

fn record(runs: usize) {
    const EXAMPLES: usize = 1000;
    let model = FakeModel::start(Behaviour {
        piece: 4,
        ..Behaviour::keyed(KEY)
    });
    let dir = tempfile::tempdir().unwrap();
    let manifest = agent(dir.path(), EXAMPLES, true);
    let recordings = dir.path().join("recordings");
    let once = |mode| run("function::", &manifest, Some(mode), 0, 1, &model, &[]);
    let (mut first, mut again, mut live) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let _ = std::fs::remove_dir_all(&recordings);
        first.push(once("record"));
        again.push(once("record"));
        live.push(once("live"));
    }
    let bytes: u64 = std::fs::read_dir(&recordings)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!();
    println!(
        "record: {EXAMPLES} examples of one streamed model call (pieces of 4 bytes), function pass, one call at a time ({runs} runs each); {bytes} bytes recorded"
    );
    println!("| Run | Wall median | Min | Max |");
    println!("| --- | --- | --- | --- |");
    for (name, times) in [
        ("live, nothing kept (peer)", &live),
        ("record into an empty folder", &first),
        ("record again, the same answers", &again),
    ] {
        println!(
            "| {name} | {} | {} | {} |",
            ms(median(times)),
            ms(min(times)),
            ms(max(times))
        );
    }
}

//! What explore adds to a run of `examples/word-stats`: the harness as its `tests/holon.rs`
//! has it (this binary again, in the role `HOLON_BENCH_ROLE` names, serving word-stats itself),
//! timed from spawn to exit, with explore's cases set by `HOLON_EXPLORE_CASES`.
//!
//! `cargo bench -p holon-kit --bench explore [-- RUNS]`
//!
//! - `explore::mcp`: the run filtered to `mcp` (the three `mcp::` trials, plus `explore::mcp`
//!   when cases > 0) at 100 and 1,000 cases, less the same run at 0 cases (the peer: the MCP
//!   pass alone, server start-up included, measured in the same run);
//! - `explore::function`: the run filtered to `function` at 10,000 cases, less the same run at 0.
//!
//! Each configuration runs RUNS times (default 7), interleaved, and the median is kept.
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

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MANIFEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/word-stats/holon.yaml"
);

fn main() {
    match std::env::var("HOLON_BENCH_ROLE").as_deref() {
        Ok("harness") => {
            let exe = std::env::current_exe().expect("current_exe");
            let harness = holon_kit::harness::Harness::new(MANIFEST)
                .function(holon_kit::agent(word_stats::run))
                .server_command(format!("HOLON_BENCH_ROLE=server exec '{}'", exe.display()));
            let code = holon_harness::command::run_with_arguments(
                harness,
                &libtest_mimic::Arguments::from_args(),
            );
            std::process::exit(i32::from(code));
        }
        Ok("server") => {
            let manifest = holon_kit::manifest!("examples/word-stats/holon.yaml");
            if let Err(e) = holon_kit::serve(manifest, holon_kit::agent(word_stats::run)) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        _ => bench(),
    }
}

/// One configuration: a filter and a case count.
struct Config {
    name: &'static str,
    filter: &'static str,
    cases: u32,
    times: Vec<Duration>,
}

fn bench() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(7);
    let mut configs = vec![
        config("MCP pass alone (peer)", "mcp", 0),
        config("MCP pass + explore::mcp, 100 cases", "mcp", 100),
        config("MCP pass + explore::mcp, 1,000 cases", "mcp", 1000),
        config("function pass alone (peer)", "function", 0),
        config(
            "function pass + explore::function, 10,000 cases",
            "function",
            10_000,
        ),
    ];
    // One warm-up of each, then the runs interleaved so a busy spell hits every configuration.
    for c in &configs {
        run(c);
    }
    for _ in 0..runs {
        for c in &mut configs {
            let t = run(c);
            c.times.push(t);
        }
    }
    println!("| Run | Wall median | Min | Max | Runs |");
    println!("| --- | --- | --- | --- | --- |");
    for c in &configs {
        let (median, min, max) = stats(&c.times);
        println!(
            "| {} | {} | {} | {} | {} |",
            c.name,
            ms(median),
            ms(min),
            ms(max),
            c.times.len()
        );
    }
    let median = |i: usize| stats(&configs[i].times).0;
    println!();
    println!(
        "explore::mcp adds: {} at 100 cases, {} at 1,000 cases",
        ms(median(1).saturating_sub(median(0))),
        ms(median(2).saturating_sub(median(0)))
    );
    println!(
        "explore::function adds: {} at 10,000 cases",
        ms(median(4).saturating_sub(median(3)))
    );
}

fn config(name: &'static str, filter: &'static str, cases: u32) -> Config {
    Config {
        name,
        filter,
        cases,
        times: Vec::new(),
    }
}

fn run(c: &Config) -> Duration {
    let exe = std::env::current_exe().expect("current_exe");
    let started = Instant::now();
    let out = Command::new(exe)
        .args([c.filter, "-q"])
        .env("HOLON_BENCH_ROLE", "harness")
        .env("HOLON_EXPLORE_CASES", c.cases.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run the harness");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{} failed:\n{}\n{}",
        c.name,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = if c.cases > 0 { "explore::" } else { "" };
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(expected),
        "{}: explore did not run",
        c.name
    );
    took
}

fn stats(times: &[Duration]) -> (Duration, Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    (
        sorted[sorted.len() / 2],
        sorted[0],
        sorted[sorted.len() - 1],
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

//! The authoring loop's speed, through the built binary (`holon-test`), against word-stats
//! served by this binary again (`HOLON_BENCH_ROLE=server`):
//!
//! - watch: `holon-test --watch` on word-stats' manifest, its server command this binary; a
//!   file of the agent's folder saved, and the time until the next run's line (`── run N`) is
//!   on stderr: after a run that ended (the folder quiet for 100 ms, then the run started), and
//!   during a run, saved the moment its line appears (that run stopped, its server with it,
//!   first); goal under 500 ms;
//! - call: `holon-test call --url` against a server already running, spawn to exit, beside
//!   `holon-test check` (the same process start and publish checks, no call) and the call's own
//!   `ms` (what the receipt says it took): what `call` adds is one connection and one call.
//!
//! - report: `holon-test report` on 100,000 receipts (word-stats' two examples, 50,000 calls
//!   each), spawn to exit, with `--out` (the page) and without (the `measure:` lines); the
//!   page's size, and headless Chromium's time to load it and give its DOM (`--dump-dom`)
//!   beside its time for an empty page: goal under 2 s, and under 5 MB.
//!
//! `cargo bench -p holon-kit --bench authoring [-- RUNS]` (default 10)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

#[path = "../tests/it/util/paths.rs"]
mod paths;
#[path = "common/times.rs"]
mod times;
#[path = "../examples/word-stats/src/lib.rs"]
mod word_stats;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;
use times::{max, median, min, ms};

fn main() {
    if std::env::var("HOLON_BENCH_ROLE").as_deref() == Ok("server") {
        let manifest = holon_kit::manifest!("examples/word-stats/holon.yaml");
        if let Err(e) = holon_kit::serve(manifest, holon_kit::agent(word_stats::run)) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::copy(
        paths::root().join("examples/word-stats/holon.yaml"),
        dir.path().join("holon.yaml"),
    )
    .expect("the manifest");
    std::fs::write(dir.path().join("agent.txt"), "the agent's source\n").expect("a source");
    let server = format!(
        "HOLON_BENCH_ROLE=server exec '{}'",
        std::env::current_exe().unwrap().display()
    );
    let (after, during) = watch(dir.path(), &server, runs);
    let (call, own, check) = call(dir.path(), runs);
    let (lines, page, size, open, blank) = report(dir.path(), runs.min(5));
    println!("authoring loop benchmark: word-stats, {runs} runs each");
    for (what, times) in [
        ("watch: save to the next run, after a run", &after),
        ("watch: save to the next run, during a run", &during),
    ] {
        println!(
            "  {what:<46} median {}, min {}, max {}   (goal < 500 ms)",
            ms(median(times)),
            ms(min(times)),
            ms(max(times))
        );
    }
    println!(
        "  call --url, spawn to exit                      median {}, min {}, max {}",
        ms(median(&call)),
        ms(min(&call)),
        ms(max(&call))
    );
    println!(
        "  check, spawn to exit (the same start, no call) median {}",
        ms(median(&check))
    );
    println!(
        "  the call itself, as its receipt says (`ms`)     median {}",
        ms(median(&own))
    );
    println!(
        "  call less check                                median {}",
        ms(median(&call).saturating_sub(median(&check)))
    );
    println!(
        "  report, 100,000 receipts, the lines            median {}",
        ms(median(&lines))
    );
    println!(
        "  report --out, 100,000 receipts, the page       median {}   (page {} KB; goal < 5 MB)",
        ms(median(&page)),
        size / 1024
    );
    println!(
        "  Chromium: the page loaded, its DOM given       median {}   (an empty page {}; goal < 2 s)",
        ms(median(&open)),
        ms(median(&blank))
    );
}

/// `report` on 100,000 receipts: the lines' and the page's times, the page's size, and
/// Chromium's time to give the page's DOM and an empty page's.
fn report(
    dir: &Path,
    runs: usize,
) -> (
    Vec<Duration>,
    Vec<Duration>,
    u64,
    Vec<Duration>,
    Vec<Duration>,
) {
    let mut receipts = String::new();
    for i in 0..100_000u64 {
        let (example, status) = match i % 2 {
            0 => ("a short article", "success"),
            _ => ("an empty document", "empty_text"),
        };
        receipts.push_str(&format!(
            "{{\"example\":\"{example}\",\"run\":{},\"status\":\"{status}\",\"billed\":{},\"ms\":{},\"upstream\":[],\"pass\":\"mcp\"}}\n",
            i / 2 + 1,
            status == "success",
            5 + i % 37
        ));
    }
    std::fs::write(dir.join("big.jsonl"), receipts).unwrap();
    std::fs::write(dir.join("blank.html"), "<!DOCTYPE html><title>x</title>").unwrap();
    let timed = |args: &[&str]| {
        let started = Instant::now();
        let out = Command::new(paths::PLAIN_BIN)
            .current_dir(dir)
            .args(args)
            .output()
            .expect("report");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        started.elapsed()
    };
    let chromium = |page: &str| {
        let profile = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .args([
                "--disable-background-networking",
                "--disable-component-update",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--dump-dom")
            .arg(format!("file://{}", dir.join(page).display()))
            .output()
            .expect("chromium (apt-get install -y chromium)");
        assert!(out.status.success() && !out.stdout.is_empty());
        started.elapsed()
    };
    let (mut lines, mut page, mut open, mut blank) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        lines.push(timed(&["report", "big.jsonl"]));
        page.push(timed(&["report", "big.jsonl", "--out", "big.html"]));
        open.push(chromium("big.html"));
        blank.push(chromium("blank.html"));
    }
    let size = std::fs::metadata(dir.join("big.html")).unwrap().len();
    (lines, page, size, open, blank)
}

/// Lines of a stream, each with when it arrived.
fn lines(stream: impl std::io::Read + Send + 'static) -> Receiver<(Instant, String)> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line that starts with `start`; when it came.
fn wait(rx: &Receiver<(Instant, String)>, start: &str) -> Instant {
    loop {
        let (at, line) = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("no line `{start}`: {e}"));
        if line.starts_with(start) {
            return at;
        }
    }
}

/// Save-to-next-run times: after a run that ended, and during a run.
fn watch(dir: &Path, server: &str, runs: usize) -> (Vec<Duration>, Vec<Duration>) {
    let mut watch = Command::new(paths::PLAIN_BIN)
        .current_dir(dir)
        .args(["--watch", "--server-cmd", server])
        .env("HOLON_EXPLORE_CASES", "0")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("holon-test --watch");
    let stderr = lines(watch.stderr.take().unwrap());
    let save = || {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("agent.txt"))
            .unwrap();
        writeln!(f, "# a save").unwrap();
        Instant::now()
    };
    wait(&stderr, "watch: run 1 passed");
    let mut after = Vec::new();
    let mut during = Vec::new();
    let mut n = 1;
    for _ in 0..runs {
        let saved = save();
        n += 1;
        after.push(wait(&stderr, &format!("── run {n}:")) - saved);
        // The run just started: a save now stops it first.
        let saved = save();
        n += 1;
        during.push(wait(&stderr, &format!("── run {n}:")) - saved);
        wait(&stderr, &format!("watch: run {n} passed"));
    }
    watch.stdin.take().unwrap().write_all(b"q\n").unwrap();
    let status = watch.wait().unwrap();
    assert!(status.success(), "the watch ended with {status}");
    (after, during)
}

/// `call --url`'s wall time, the call's own `ms`, and `check`'s wall time.
fn call(dir: &Path, runs: usize) -> (Vec<Duration>, Vec<Duration>, Vec<Duration>) {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let mut server = Command::new(std::env::current_exe().unwrap())
        .env("HOLON_BENCH_ROLE", "server")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let once = || {
        let started = Instant::now();
        let out = Command::new(paths::PLAIN_BIN)
            .current_dir(dir)
            .args([
                "call",
                r#"{"text": "one call, by hand"}"#,
                "--format",
                "json",
            ])
            .args(["--url", &url])
            .output()
            .expect("call");
        (started.elapsed(), out)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !once().1.status.success() {
        assert!(Instant::now() < deadline, "the server never answered");
    }
    let (mut call, mut own, mut check) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (took, out) = once();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let document: Value = serde_json::from_slice(&out.stdout).unwrap();
        call.push(took);
        own.push(Duration::from_millis(document["ms"].as_u64().unwrap()));
        let started = Instant::now();
        let checked = Command::new(paths::PLAIN_BIN)
            .current_dir(dir)
            .arg("check")
            .output()
            .expect("check");
        assert!(checked.status.success());
        check.push(started.elapsed());
    }
    let _ = server.kill();
    let _ = server.wait();
    (call, own, check)
}

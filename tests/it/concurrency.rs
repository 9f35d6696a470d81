//! Calls in flight together, proven with slow calls (each one sleeps, as a model or a remote
//! service would): how many calls the server or the function saw at once follows
//! `--concurrency` (default 16), not libtest's `--test-threads`; a server or a function that
//! takes one call at a time passes, after a retry alone and a note; and servers that refuse a
//! second connection, answer 429 or 503, or close every connection get the right verdicts and
//! leave nothing running.
//!
//! Servers: tests/fixtures/servers/py_server.py (the official Python MCP SDK), whose behaviours
//! for these tests are set by variables (`CALL_SLEEP_S`, `ONE_AT_A_TIME`, `HTTP_STATUS`,
//! `CLOSE_CONNECTIONS`, `ONE_CONNECTION`) and which writes what it saw to the `EVENTS` file.
//! The function pass runs in-process through the public `Harness`, on an agent that records
//! the calls it has in flight.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::harness::Py;
use crate::util::root;

/// Sixteen examples, `timeout_s: 1`.
const SIXTEEN: &str = "word-stats-16.yaml";

/// The Python server's log of one run: `start IN_FLIGHT`, `end`, `cancelled`.
struct Events {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Events {
    fn new() -> Events {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events");
        Events { _dir: dir, path }
    }

    fn path(&self) -> &str {
        self.path.to_str().unwrap()
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The most calls the server had at once.
    fn peak(&self) -> usize {
        (self.lines().iter())
            .filter_map(|l| l.strip_prefix("start ")?.parse().ok())
            .max()
            .unwrap_or(0)
    }

    fn count(&self, event: &str) -> usize {
        self.lines().iter().filter(|l| *l == event).count()
    }
}

/// The trials of a `--server-cmd` run on the sixteen-example manifest.
fn sixteen_trials() -> Vec<String> {
    let mut names = vec!["mcp::tools/list".to_string()];
    names.extend((1..=16).map(|i| format!("mcp::call {i:02}")));
    names.sort();
    names
}

fn slow(sleep_s: &str, events: &Events) -> Py {
    Py::new("ok")
        .manifest(SIXTEEN)
        .env("CALL_SLEEP_S", sleep_s)
        .env("EVENTS", events.path())
}

#[test]
fn sixteen_slow_calls_are_in_flight_together_whatever_the_test_threads() {
    let events = Events::new();
    // One libtest thread: the calls still go out together.
    let run = slow("0.5", &events).libtest(&["--test-threads", "1"]).run();
    run.expect_failed(&[]);
    assert_eq!(
        run.trials().into_keys().collect::<Vec<_>>(),
        sixteen_trials(),
        "{run}"
    );
    assert_eq!(events.peak(), 16, "{:?}\n{run}", events.lines());
    assert_eq!(events.count("end"), 16, "{run}");
}

#[test]
fn holon_concurrency_sets_the_calls_in_flight() {
    let events = Events::new();
    let run = slow("0.5", &events).env("HOLON_CONCURRENCY", "4").run();
    run.expect_failed(&[]);
    assert_eq!(events.peak(), 4, "{:?}\n{run}", events.lines());
}

#[test]
fn more_calls_than_sixteen_are_in_flight_together_when_asked() {
    // The sixteen examples and eight more (the first eight again, under new names): rmcp's
    // client holds a seventeenth POST back unless the harness lifts its bound.
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/fixtures/harness").join(SIXTEEN);
    let mut text = std::fs::read_to_string(source).unwrap();
    let (_, examples) = text.split_once("\nexamples:\n").unwrap();
    let again: Vec<String> = (examples.split("  - name: call ").skip(1).take(8))
        .map(|example| {
            let (number, rest) = example.split_once('\n').unwrap();
            let n: u32 = number.parse().unwrap();
            format!("  - name: call {}\n{rest}", n + 16)
        })
        .collect();
    text.push_str(&again.concat());
    let manifest = dir.path().join("holon.yaml");
    std::fs::write(&manifest, text).unwrap();
    let events = Events::new();
    let run = slow("0.5", &events)
        .manifest_at(&manifest)
        .args(&["--concurrency", "24"])
        .run();
    run.expect_failed(&[]);
    assert_eq!(run.trials().len(), 25, "{run}");
    assert_eq!(events.peak(), 24, "{:?}\n{run}", events.lines());
}

#[test]
fn concurrency_1_sends_one_call_at_a_time() {
    let events = Events::new();
    let run = slow("0.1", &events).args(&["--concurrency", "1"]).run();
    run.expect_failed(&[]);
    assert_eq!(events.peak(), 1, "{:?}\n{run}", events.lines());
    assert_eq!(events.count("end"), 16, "{run}");
    assert!(!run.stderr.contains("tried again alone"), "{run}");
}

#[test]
fn a_bad_concurrency_is_a_usage_error() {
    for bad in ["0", "1025", "many"] {
        let run = Py::new("ok").args(&["--concurrency", bad]).run();
        run.expect_code(2);
        assert!(run.stderr.contains("at least 1"), "{run}");
    }
}

#[test]
fn a_server_that_takes_one_call_at_a_time_passes_with_a_note() {
    // Sixteen calls of 0.4 s behind one lock, `timeout_s: 1`: those still queued when the
    // harness gives up are cancelled, then tried again alone, and pass.
    let events = Events::new();
    let run = slow("0.4", &events).env("ONE_AT_A_TIME", "1").run();
    run.expect_failed(&[]);
    assert!(
        events.count("cancelled") > 0,
        "no call was cancelled: {:?}\n{run}",
        events.lines()
    );
    for needle in [
        "timed out while other calls were in flight (up to 16 at once)",
        "tried again alone",
        "so the server takes calls one at a time; `--concurrency 1` (or `HOLON_CONCURRENCY=1`) matches it",
    ] {
        assert!(run.stderr.contains(needle), "`{needle}`\n{run}");
    }
}

#[test]
fn a_server_that_takes_one_call_at_a_time_passes_at_concurrency_1_with_no_retry() {
    let events = Events::new();
    let run = slow("0.2", &events)
        .env("ONE_AT_A_TIME", "1")
        .args(&["--concurrency", "1"])
        .run();
    run.expect_failed(&[]);
    assert_eq!(events.count("cancelled"), 0, "{:?}\n{run}", events.lines());
    assert!(!run.stderr.contains("tried again alone"), "{run}");
}

/// word-stats' examples and explore, with libtest's `args`, against the Python server with
/// every call sleeping an hour, at `timeout_s: 3`.
fn hanging(args: &[&str]) -> crate::util::Finished {
    let (_dir, manifest) = crate::util::word_stats_with("timeout_s: 30,", "timeout_s: 3,");
    Py::new("ok")
        .manifest_at(&manifest)
        .explore()
        .env("CALL_SLEEP_S", "3600")
        .libtest(args)
        .run()
}

#[test]
fn a_server_that_hangs_on_every_call_is_tried_alone_once() {
    // Every call sleeps an hour, `timeout_s: 3`. The two examples time out together; one is
    // tried again alone and times out too: the server does not answer, so the other is
    // reported without waiting again, and explore, which starts after them on two test
    // threads, sends nothing. (Each call retried alone in turn, explore's too, took 97 s.)
    let started = std::time::Instant::now();
    let run = hanging(&["--test-threads", "2"]);
    let took = started.elapsed();
    run.expect_failed(&[
        (
            "mcp::a short article",
            &[
                "no answer within `runtime.limits.timeout_s` (3 s), even when tried alone",
                "gateway status: timeout",
            ],
        ),
        (
            "mcp::an empty document",
            &[
                "no answer within `runtime.limits.timeout_s` (3 s) among other calls in flight; not tried again alone, since a call tried alone got no answer either",
                "gateway status: timeout",
            ],
        ),
        (
            "explore::mcp",
            &[
                "explore did not send its cases: the server answered none of this run's calls within `runtime.limits.timeout_s` (3 s), and a call tried alone got no answer either",
                "gateway status: timeout",
            ],
        ),
    ]);
    assert!(
        run.stderr.contains(
            "note: 2 calls timed out while other calls were in flight (up to 16 at once), and 1 was tried again alone: none answered alone either, so each is reported as it failed; the other 1 was not tried again, since a call tried alone got no answer in time either: the server does not answer, and each is reported as `timeout`"
        ),
        "{run}"
    );
    // Two rounds of `timeout_s` and the grace, and the server's start: about 10 s. The bound
    // leaves a loaded machine its slack; a retry for each call in turn does not fit in it.
    assert!(took < Duration::from_secs(30), "{took:?}\n{run}");
}

#[test]
fn explore_s_cases_on_a_server_that_hangs_are_tried_alone_once_and_not_shrunk() {
    // `explore::mcp` alone: its first sixteen cases time out together, one is tried again
    // alone and times out too; no other is, and no smaller input is tried.
    let run = hanging(&["--exact", "explore::mcp"]);
    run.expect_failed(&[(
        "explore::mcp",
        &[
            "a paying caller would get `timeout` for",
            "shrunk in 0 steps (none of the 16 calls in flight with it got an answer in time, nor one tried alone: the server does not answer, whatever the input)",
            "gateway status: timeout",
        ],
    )]);
    assert!(
        run.stderr
            .contains("and 1 was tried again alone: none answered alone either, so each is reported as it failed; the other 15 were not tried again"),
        "{run}"
    );
}

#[test]
fn http_429_is_the_server_s_answer_not_a_flake() {
    Py::new("ok")
        .env("HTTP_STATUS", "429")
        .run()
        .expect_failed(&[(
            "mcp::an empty document",
            &[
                "the server answered HTTP 429 Too Many Requests instead of a tool result",
                "not retried",
                "gateway status: agent_error",
            ],
        )]);
}

#[test]
fn http_503_is_the_server_s_answer_not_a_flake() {
    Py::new("ok")
        .env("HTTP_STATUS", "503")
        .run()
        .expect_failed(&[(
            "mcp::an empty document",
            &[
                "the server answered HTTP 503 Service Unavailable",
                "gateway status: agent_error",
            ],
        )]);
}

#[test]
fn a_server_that_closes_every_connection_passes() {
    let events = Events::new();
    let run = slow("0.1", &events).env("CLOSE_CONNECTIONS", "1").run();
    run.expect_failed(&[]);
    assert_eq!(events.count("end"), 16, "{run}");
}

#[test]
fn a_server_that_refuses_a_second_connection_passes_with_a_note() {
    let run = Py::new("ok").env("ONE_CONNECTION", "1").run();
    run.expect_failed(&[]);
    for needle in [
        "could not connect while other calls were in flight",
        "so the server takes calls one at a time; `--concurrency 1`",
    ] {
        assert!(run.stderr.contains(needle), "`{needle}`\n{run}");
    }
}

// ---------------------------------------------------------------------------------------------
// The function pass, through the public `Harness`, on an agent that awaits.

/// An agent that waits `sleep` (behind one lock when `one_at_a_time`), then answers as
/// word-stats does, counting the calls it has at once.
#[derive(Clone, Default)]
struct Counted {
    now: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    calls: Arc<AtomicUsize>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Counted {
    fn agent(&self, sleep: Duration, one_at_a_time: bool) -> Arc<dyn holon_kit::Agent> {
        let counted = self.clone();
        holon_kit::agent(
            move |input: crate::word_stats::Input, ctx: holon_kit::Ctx| {
                let counted = counted.clone();
                async move {
                    counted.calls.fetch_add(1, Ordering::SeqCst);
                    let now = counted.now.fetch_add(1, Ordering::SeqCst) + 1;
                    counted.peak.fetch_max(now, Ordering::SeqCst);
                    let _left = Left(counted.now.clone());
                    if one_at_a_time {
                        let _held = counted.lock.lock().await;
                        tokio::time::sleep(sleep).await;
                    } else {
                        tokio::time::sleep(sleep).await;
                    }
                    crate::word_stats::run(input, ctx).await
                }
            },
        )
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// A call that ends, however it ends (a timeout drops it), is no longer in flight.
struct Left(Arc<AtomicUsize>);

impl Drop for Left {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn sixteen() -> PathBuf {
    crate::util::root()
        .join("tests/fixtures/harness")
        .join(SIXTEEN)
}

fn function_pass(harness: holon_kit::harness::Harness, libtest: &[&str]) -> u8 {
    let args = ["holon"].iter().chain(libtest).chain(&["--quiet"]);
    // The examples' calls only: explore's cases would count too.
    crate::util::seam::run_harness(
        harness.explore_cases(0),
        &libtest_mimic::Arguments::from_iter(args),
    )
}

#[test]
fn an_async_agent_has_sixteen_calls_in_flight_on_one_test_thread() {
    let counted = Counted::default();
    let harness = holon_kit::harness::Harness::new(sixteen())
        .function(counted.agent(Duration::from_millis(300), false));
    assert_eq!(function_pass(harness, &["--test-threads", "1"]), 0);
    assert_eq!(counted.peak(), 16);
    assert_eq!(counted.calls(), 16);
}

#[test]
fn the_concurrency_builder_sets_the_function_calls_in_flight() {
    for (calls, peak) in [(1, 1), (4, 4)] {
        let counted = Counted::default();
        let harness = holon_kit::harness::Harness::new(sixteen())
            .function(counted.agent(Duration::from_millis(100), false))
            .concurrency(calls);
        assert_eq!(function_pass(harness, &[]), 0, "concurrency {calls}");
        assert_eq!(counted.peak(), peak, "concurrency {calls}");
    }
}

#[test]
fn an_agent_that_takes_one_call_at_a_time_passes_after_retries_alone() {
    // 0.2 s a call behind one lock, `timeout_s: 1`: about five answer in time, the others time
    // out among them and pass when tried again alone.
    let counted = Counted::default();
    let harness = holon_kit::harness::Harness::new(sixteen())
        .function(counted.agent(Duration::from_millis(200), true));
    assert_eq!(function_pass(harness, &[]), 0);
    assert!(counted.calls() > 16, "no call was tried again");
}

#[test]
fn a_call_that_started_alone_but_waited_on_later_ones_is_tried_again_alone() {
    // One lock, and the first call comes to it 100 ms late: the fifteen others, 40 ms each, go
    // before it, and it times out at 1 s holding the lock, after all of them have answered.
    // Nothing else was in flight when it started, nor when it ended, but it waited on the
    // others: alone it answers in 0.7 s. (Judged by those two moments only, it was a plain
    // `timeout`, and so was the first call of the test above when it happened to be woken last.)
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    let calls = Arc::new(AtomicUsize::new(0));
    let (held, counted) = (lock.clone(), calls.clone());
    let agent = holon_kit::agent(
        move |input: crate::word_stats::Input, ctx: holon_kit::Ctx| {
            let (lock, calls) = (held.clone(), counted.clone());
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let first = input.text.starts_with("Call one of sixteen");
                if first {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let _one_at_a_time = lock.lock().await;
                let work = if first { 600 } else { 40 };
                tokio::time::sleep(Duration::from_millis(work)).await;
                crate::word_stats::run(input, ctx).await
            }
        },
    );
    let harness = holon_kit::harness::Harness::new(sixteen()).function(agent);
    assert_eq!(function_pass(harness, &[]), 0);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        17,
        "the first call, and only it, is tried again"
    );
}

#[test]
fn an_agent_that_never_answers_is_tried_alone_once() {
    // Sixteen calls that await an hour, `timeout_s: 1`: they time out together, the first is
    // tried again alone and times out too, and the other fifteen are reported as they failed
    // (each retried alone in turn took fifteen more seconds).
    let counted = Counted::default();
    let harness = holon_kit::harness::Harness::new(sixteen())
        .function(counted.agent(Duration::from_secs(3600), false));
    assert_eq!(function_pass(harness, &[]), 101);
    assert_eq!(
        counted.calls(),
        17,
        "one call, and only one, is tried again"
    );
}

#[test]
fn explore_cases_go_out_in_flight_together_too() {
    // `explore::mcp` alone, 32 cases of 0.2 s each, 8 in flight: the batch is judged in plan
    // order, so the verdict does not depend on which call ends first.
    let events = Events::new();
    let run = Py::new("ok")
        .explore()
        .env("CALL_SLEEP_S", "0.2")
        .env("EVENTS", events.path())
        .args(&["--explore-cases", "32", "--concurrency", "8"])
        .libtest(&["--exact", "explore::mcp"])
        .run();
    run.expect_failed(&[]);
    assert_eq!(
        run.trials().into_keys().collect::<Vec<_>>(),
        ["explore::mcp"],
        "{run}"
    );
    assert_eq!(events.peak(), 8, "{:?}\n{run}", events.lines());
    assert_eq!(events.count("end"), 32, "{run}");
}

// ---------------------------------------------------------------------------------------------
// A run's state is the run's.

/// word-stats' manifest in a folder of its own, its first example's `words` set to `words`.
fn word_stats_copy(words: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let source =
        std::fs::read_to_string(crate::util::root().join("examples/word-stats/holon.yaml"))
            .expect("word-stats' manifest");
    let text = source.replacen("words: 11", &format!("words: {words}"), 1);
    assert_ne!(
        words == 11,
        text != source,
        "the first example says `words: 11`"
    );
    let path = dir.path().join("holon.yaml");
    std::fs::write(&path, text).expect("write the manifest");
    (dir, path)
}

#[test]
fn two_harness_runs_in_one_process_are_independent() {
    // At once in one process: a run that passes, and a run with a drifted example that it
    // blesses. Each JUnit report lists its own trials only, and only the drifted manifest is
    // rewritten.
    let (_a, passing) = word_stats_copy(11);
    let (_b, drifted) = word_stats_copy(12);
    let run = |manifest: PathBuf, bless: bool| {
        std::thread::spawn(move || {
            let junit = manifest.with_file_name("junit.xml");
            let harness = holon_kit::harness::Harness::new(&manifest)
                .function(holon_kit::agent(crate::word_stats::run))
                .junit(&junit)
                .bless(bless);
            let code = function_pass(harness, &[]);
            let report = std::fs::read_to_string(&junit).expect("the JUnit report");
            (code, report)
        })
    };
    let (first, second) = (run(passing.clone(), false), run(drifted.clone(), true));
    let (passed, passed_report) = first.join().expect("the first run");
    let (blessed, blessed_report) = second.join().expect("the second run");
    assert_eq!((passed, blessed), (0, 0));
    let examples = crate::util::seam::checked(&passing)
        .expect("the passing manifest")
        .examples
        .len();
    for report in [&passed_report, &blessed_report] {
        assert_eq!(
            report.matches("<testcase ").count(),
            examples,
            "one testcase per example of this run:\n{report}"
        );
    }
    assert!(!passed_report.contains("<failure"), "{passed_report}");
    assert!(blessed_report.contains("<failure"), "{blessed_report}");
    let words = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .expect("a manifest")
            .contains("words: 12")
    };
    assert!(
        !words(&passing) && !words(&drifted),
        "the drift was blessed away"
    );
}

#[test]
fn server_env_reaches_the_server_process() {
    // The server starts only when it finds the variable: with it every trial passes, without it
    // the server exits before it answers.
    let manifest = crate::util::root().join("examples/word-stats/holon.yaml");
    let server = format!(
        "test \"$HOLON_PROBE\" = yes && exec {}",
        crate::util::word_stats_binary().display()
    );
    let args = libtest_mimic::Arguments::from_iter(["holon", "--quiet", "mcp::"]);
    let with = holon_kit::harness::Harness::new(&manifest)
        .server_command(server.clone())
        .server_env("HOLON_PROBE", "yes")
        .explore_cases(0);
    assert_eq!(crate::util::seam::run_harness(with, &args), 0);
    let without = holon_kit::harness::Harness::new(&manifest)
        .server_command(server)
        .explore_cases(0);
    assert_eq!(crate::util::seam::run_harness(without, &args), 101);
}

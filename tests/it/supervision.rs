//! No server outlives the harness, however the harness ends: SIGKILL mid-call of the CLI
//! running `--server-cmd` (a shell that forks the server), of an agent's test binary, and of
//! `cargo holon-test` itself; and servers that resist being stopped (one that ignores SIGTERM,
//! exits at once, closes its output, or whose launcher exits while it lives on).
//!
//! Every process a test starts carries the test's own `HOLON_TEST_MARKER` (see
//! `harness::Marker`): the harness, the watcher it forks per server group (a fork, so the same
//! environment and command line as the harness), the shell, the server, cargo and the test
//! binary under it. A test passes only if none of them is left.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::{Duration, Instant};

use super::harness::{Marker, hanging_call};
use crate::util::{BIN, CARGO_LIMIT, RUN_LIMIT, Running, root, wait_until};

/// How long after the SIGKILL the last process may take to go.
const GONE_WITHIN: Duration = Duration::from_secs(3);

/// SIGKILL to `running`, then every process of `marker` gone within [`GONE_WITHIN`].
fn kill_and_expect_none_left(running: Running, marker: &Marker, what: &str) {
    running.signal(libc::SIGKILL);
    expect_none_left_since(Instant::now(), marker, what);
    drop(running);
}

fn expect_none_left_since(killed: Instant, marker: &Marker, what: &str) {
    let mut left = Vec::new();
    let gone = wait_until(killed + GONE_WITHIN, || {
        left = marker.processes();
        left.is_empty()
    });
    assert!(
        gone,
        "{what}: processes left {GONE_WITHIN:?} after the signal: {left:#?}"
    );
}

/// The process group of `pid`.
fn pgid(pid: u32) -> Option<u32> {
    let out = Command::new("ps")
        .args(["-o", "pgid=", "-p", &pid.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The marker's processes whose command line contains `needle`, split into those that lead
/// their own process group (the watchers) and the others.
fn leaders_and_members(marker: &Marker, needle: &str) -> (Vec<u32>, Vec<u32>) {
    marker
        .processes()
        .into_iter()
        .filter(|(_, cmd)| cmd.contains(needle))
        .map(|(pid, _)| pid)
        .partition(|pid| pgid(*pid) == Some(*pid))
}

// ---------------------------------------------------------------------------------------------
// SIGKILL mid-call.

#[test]
fn sigkill_of_the_harness_mid_call_leaves_no_server_and_no_watcher() {
    // Repeated: the watcher's work races nothing, so every round must come out clean.
    for round in 0..3 {
        // `sh -c` stays the server's parent, so the death signal the kernel sends the shell
        // does not reach the server: only the watcher stops it.
        let (py, running) = hanging_call();
        let (watchers, harness) = leaders_and_members(&py.marker, BIN);
        assert_eq!(
            (watchers.len(), harness.len()),
            (1, 1),
            "round {round}: one harness and one watcher: {:#?}",
            py.marker.processes()
        );
        assert!(
            py.marker.processes().iter().any(|(_, cmd)| cmd
                .split(' ')
                .next()
                .is_some_and(|argv0| argv0.ends_with("python3"))),
            "round {round}: the Python server runs: {:#?}",
            py.marker.processes()
        );
        kill_and_expect_none_left(running, &py.marker, &format!("round {round}"));
    }
}

/// `cargo holon-test -- --exact "mcp::a function that never returns"` in the broken agent,
/// stopped once that call is in flight (it hangs for `timeout_s` and a grace, 3 s).
fn broken_agent_mid_call(marker: &Marker) -> Running {
    let mut command = Command::new(BIN);
    command
        .args([
            "holon-test",
            "--",
            "--test-threads",
            "1",
            "--exact",
            "mcp::a function that never returns",
        ])
        .current_dir(root().join("tests/fixtures/agents/broken-agent"));
    let mut running = marker.spawn(&mut command);
    running.wait_for("the hanging call to start", CARGO_LIMIT, |r| {
        r.stdout()
            .contains("test mcp::a function that never returns")
    });
    running
}

#[test]
fn sigkill_of_an_agent_s_test_binary_mid_call_leaves_no_server_and_no_watcher() {
    let marker = Marker::new();
    let running = broken_agent_mid_call(&marker);
    let server = |m: &Marker| {
        m.processes()
            .iter()
            .any(|(_, cmd)| cmd.contains("/debug/broken-agent"))
    };
    // The test binary is `.../deps/holon-HASH` in cargo's group; its server's watcher is a
    // fork of it, with the same command line, leading the server's group. Waited for: the trial
    // is announced before its server starts, and a fork not yet turned into the server has
    // the test binary's command line too.
    let settled = wait_until(Instant::now() + CARGO_LIMIT, || {
        let (watchers, binaries) = leaders_and_members(&marker, "/deps/holon-");
        server(&marker) && (watchers.len(), binaries.len()) == (1, 1)
    });
    let (watchers, binaries) = leaders_and_members(&marker, "/deps/holon-");
    assert!(
        settled,
        "one test binary, one watcher and the server: {:#?}",
        marker.processes()
    );
    // SAFETY: kill(2) touches no memory; the pid carries this test's marker.
    unsafe {
        libc::kill(binaries[0] as i32, libc::SIGKILL);
    }
    let killed = Instant::now();
    let watcher = watchers[0];
    let gone = wait_until(killed + GONE_WITHIN, || {
        !server(&marker) && !marker.processes().iter().any(|(pid, _)| *pid == watcher)
    });
    assert!(
        gone,
        "the server or its watcher is left {GONE_WITHIN:?} after the test binary's SIGKILL: {:#?}",
        marker.processes()
    );
    // cargo reports the killed test binary; the CLI ends with a failure, leaving nothing.
    let run = running.finish(RUN_LIMIT);
    assert_ne!(run.status.code(), Some(0), "{run}");
    marker.assert_none_left();
}

#[test]
fn sigkill_of_cargo_holon_test_mid_call_ends_cargo_the_tests_and_the_server() {
    let marker = Marker::new();
    let running = broken_agent_mid_call(&marker);
    // Waited for: the trial is announced before its server starts.
    let started = wait_until(Instant::now() + CARGO_LIMIT, || {
        marker
            .processes()
            .iter()
            .any(|(_, cmd)| cmd.contains("/debug/broken-agent"))
    });
    assert!(started, "the server runs: {:#?}", marker.processes());
    kill_and_expect_none_left(running, &marker, "cargo holon-test");
}

#[test]
fn ctrl_c_of_cargo_holon_test_mid_call_ends_cargo_the_tests_and_the_server() {
    // A terminal's Ctrl-C reaches `cargo holon-test`'s group only; cargo runs in a group of its
    // own, which the watcher stops once `cargo holon-test` has ended.
    let marker = Marker::new();
    let running = broken_agent_mid_call(&marker);
    running.signal(libc::SIGINT);
    let interrupted = Instant::now();
    let run = running.finish(RUN_LIMIT);
    assert_eq!(run.status.signal(), Some(libc::SIGINT), "{run}");
    expect_none_left_since(interrupted, &marker, "Ctrl-C of cargo holon-test");
}

/// A server that dies at every call is started again by the run; Ctrl-C while that goes on
/// ends the run with the signal, and no server, old or new, is left (none is started again
/// once the run is stopping).
#[test]
fn ctrl_c_while_a_dying_server_is_started_again_leaves_nothing() {
    let marker = Marker::new();
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let python = root().join("target/interop/python");
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats-11.yaml"))
        .arg("--server-cmd")
        .arg(format!(
            "python3 '{}'",
            root().join("tests/fixtures/servers/py_server.py").display()
        ))
        .env("MODE", "exit-always")
        .env("STARTS", &starts)
        .env("PYTHONPATH", python)
        .env("HOLON_EXPLORE_CASES", "0");
    let running = marker.spawn(&mut command);
    let restarted = wait_until(Instant::now() + RUN_LIMIT, || {
        std::fs::read_to_string(&starts).is_ok_and(|s| s.lines().count() >= 2)
    });
    assert!(restarted, "the server was never started again");
    running.signal(libc::SIGINT);
    let interrupted = Instant::now();
    let run = running.finish(RUN_LIMIT);
    assert!(
        run.status.signal() == Some(libc::SIGINT) || run.status.code() == Some(130),
        "{run}"
    );
    expect_none_left_since(
        interrupted,
        &marker,
        "Ctrl-C while the server is started again",
    );
}

// ---------------------------------------------------------------------------------------------
// Servers that resist: stopped all the same, the harness never hangs, no watcher is left.
// None of these answers MCP, so the harness gives up at a one-second startup limit.

/// `--server-cmd LINE` on word-stats' manifest with a one-second startup limit.
fn server_cmd(marker: &Marker, line: &str) -> Running {
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .args(["--startup-timeout", "1", "--server-cmd", line]);
    marker.spawn(&mut command)
}

/// A normal run ends in failed trials naming `cause`, well within its limit, leaving nothing.
fn expect_stopped(line: &str, cause: &str) {
    let marker = Marker::new();
    let run = server_cmd(&marker, line).finish(RUN_LIMIT);
    run.expect_code(101);
    assert!(run.stdout.contains(cause), "{run}");
    marker.assert_none_left();
}

/// SIGKILL of the harness while it waits for the server: nothing left within 3 s.
fn expect_stopped_after_sigkill(line: &str, started: &str) {
    let marker = Marker::new();
    let mut running = server_cmd(&marker, line);
    running.wait_for(started, RUN_LIMIT, |_| {
        marker
            .processes()
            .iter()
            .any(|(_, cmd)| cmd.starts_with(started))
    });
    kill_and_expect_none_left(running, &marker, line);
}

const IGNORES_SIGTERM: &str = "trap '' TERM; sleep 300; exit";

#[test]
fn a_server_that_ignores_sigterm_is_killed() {
    expect_stopped(IGNORES_SIGTERM, "did not answer an MCP `server/discover`");
}

#[test]
fn a_server_that_ignores_sigterm_is_killed_after_a_sigkill_of_the_harness() {
    expect_stopped_after_sigkill(IGNORES_SIGTERM, "sleep 300");
}

#[test]
fn a_server_that_exits_at_once() {
    expect_stopped(
        "exit 0",
        "the server exited before it answered (exit status: 0)",
    );
}

const CLOSES_ITS_OUTPUT: &str = "exec >&- 2>&-; sleep 300; exit";

#[test]
fn a_server_that_closes_its_stdout() {
    expect_stopped(CLOSES_ITS_OUTPUT, "did not answer an MCP `server/discover`");
}

#[test]
fn a_server_that_closes_its_stdout_after_a_sigkill_of_the_harness() {
    expect_stopped_after_sigkill(CLOSES_ITS_OUTPUT, "sleep 300");
}

#[test]
fn a_server_whose_launcher_exits_while_it_lives_on() {
    // The shell (the group's first process) exits; the `sleep` it started lives on in the
    // group until the harness stops the group.
    expect_stopped(
        "sleep 300 & exit 0",
        "the server exited before it answered (exit status: 0)",
    );
}

/// Linux only: elsewhere a daemonizing server is not tracked (the guide's "Install and platforms").
#[cfg(target_os = "linux")]
#[test]
fn a_server_that_daemonizes_is_stopped_and_named() {
    // Double fork and `setsid`: the `sleep 301` leaves the server's process group and session,
    // so the group's SIGKILL misses it; it comes back to the harness, a child subreaper.
    let marker = Marker::new();
    let run = server_cmd(&marker, "(setsid sleep 301 &); sleep 300; exit").finish(RUN_LIMIT);
    run.expect_code(101);
    assert!(
        run.stderr
            .contains("warning: the server left `sleep` (pid ")
            && run
                .stderr
                .contains("running outside its process group (it daemonized): stopped it"),
        "{run}"
    );
    marker.assert_none_left();
}

/// A server that prints lines of 200 KB (and bytes that are not UTF-8) and never answers: its
/// output is kept a line's start at a time, and the whole report stays under 64 KB.
#[test]
fn a_server_that_prints_a_200_kb_line_still_gives_a_short_report() {
    let marker = Marker::new();
    let line = "python3 -c \"import sys; [sys.stdout.buffer.write(b'\\xff' + b'x' * 200000 + b'\\n') for _ in range(3)]; sys.stdout.flush(); sys.exit(1)\"";
    let run = server_cmd(&marker, line).finish(RUN_LIMIT);
    run.expect_code(101);
    let size = run.stdout.len() + run.stderr.len();
    assert!(size < 64 * 1024, "a report of {size} bytes:\n{run}");
    assert!(
        run.stdout
            .contains("... (197953 more bytes of this line not kept)"),
        "{run}"
    );
    marker.assert_none_left();
}

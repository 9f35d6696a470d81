//! Both MCP protocol eras: the harness speaks 2026-07-28 (`server/discover`, the `_meta`
//! envelope, the headers) and 2025-11-25 (`initialize`), and tests a server in each era it
//! speaks.
//!
//! Servers: tests/interop/eras/server.mjs (the official TypeScript SDK 2.x: 2026-07-28 only,
//! right and with one defect per mode; both eras; both eras with a defect in the 2025 leg only),
//! tests/interop/node/server.mjs (the TypeScript SDK 1.x: 2025 only), and
//! tests/fixtures/servers/eras_bad.mjs (no SDK: each mode breaks one era's rules, and counts the
//! requests it gets).

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::Marker;
use crate::util::{BIN, Finished, RUN_LIMIT, Running, free_port, root, wait_until};

/// The trials of one era (there is no function pass in a `--server-cmd` run).
const ONE_ERA: [&str; 3] = [
    "mcp::tools/list",
    "mcp::a short article",
    "mcp::an empty document",
];

/// The trials of a server that speaks both eras: the newest's, then 2025-11-25's.
const BOTH_ERAS: [&str; 6] = [
    "mcp::tools/list",
    "mcp::a short article",
    "mcp::an empty document",
    "mcp::2025-11-25::tools/list",
    "mcp::2025-11-25::a short article",
    "mcp::2025-11-25::an empty document",
];

/// The folder of the TypeScript SDK 2.x servers, its packages installed.
fn eras_folder() -> PathBuf {
    let dir = root().join("tests/interop/eras");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server")
            .is_dir(),
        "the TypeScript SDK 2.x is not installed in `{}`: run `.ci/setup-interop` first",
        dir.display()
    );
    dir
}

/// The TypeScript SDK 2.x server in `mode`, as a `--server-cmd`.
fn ts2(mode: &str) -> String {
    format!(
        "MODE={mode} node '{}'",
        eras_folder().join("server.mjs").display()
    )
}

/// The server with no SDK in `mode`, appending its requests to `events`, as a `--server-cmd`.
fn bad(mode: &str, events: &std::path::Path) -> String {
    format!(
        "MODE={mode} EVENTS='{}' node '{}'",
        events.display(),
        root().join("tests/fixtures/servers/eras_bad.mjs").display()
    )
}

/// A `--server-cmd` run of `server` on word-stats' manifest, explore off, with `args` before
/// `--` and `libtest` after it (JSON events unless a format is given).
fn run(server: &str, args: &[&str], libtest: &[&str]) -> Finished {
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .args(["--server-cmd", server])
        .args(args)
        .env("HOLON_EXPLORE_CASES", "0")
        .env_remove("HOLON_PROTOCOL")
        .arg("--");
    if !libtest.iter().any(|a| *a == "--format" || *a == "--list") {
        command.args(["--format", "json"]);
    }
    command.args(libtest);
    let run = marker.spawn(&mut command).finish(RUN_LIMIT);
    marker.assert_none_left();
    run
}

/// Every trial in `names` passed, and no other ran.
fn passed(run: &Finished, names: &[&str]) {
    run.expect_code(0);
    let trials = run.trials();
    assert_eq!(trials.len(), names.len(), "{run}");
    for name in names {
        assert_eq!(trials.get(*name), Some(&Ok(())), "`{name}`\n{run}");
    }
}

/// The requests a server with no SDK got, one line each (`initialize 2025-11-25`).
fn requests(events: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(events)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Servers of the official TypeScript SDK 2.x.

#[test]
fn a_server_that_speaks_only_2026_07_28_is_tested_in_it_at_once_and_the_run_says_so() {
    // The strict posture answers `initialize` with HTTP 400 and -32022 within a second: the
    // harness takes that as the answer it is, not as a server still starting.
    let started = Instant::now();
    let run = run(&ts2("strict"), &["--startup-timeout", "120"], &[]);
    passed(&run, &ONE_ERA);
    assert!(
        run.stderr.contains(
            "mcp: the server speaks 2026-07-28 only, and was tested in it (it answered `initialize` (2025-11-25) with UnsupportedProtocolVersion (-32022): it supports 2026-07-28)"
        ),
        "{run}"
    );
    assert!(started.elapsed() < Duration::from_secs(60), "{run}");
}

#[test]
fn each_defect_of_a_2026_07_28_server_is_caught_by_its_trial() {
    for (mode, trial, says) in [
        (
            "drifted",
            "mcp::a short article",
            "the output differs from the example at `/words`",
        ),
        (
            "text-only",
            "mcp::a short article",
            "only text content and no `structuredContent`",
        ),
        (
            "wrong-code",
            "mcp::an empty document",
            "the undeclared code `no_words`",
        ),
        (
            "renamed-tool",
            "mcp::tools/list",
            "the server's tool is named `word_stat`",
        ),
    ] {
        run(&ts2(mode), &[], &[]).expect_failed(&[(trial, &[says])]);
    }
}

#[test]
fn a_server_that_speaks_both_eras_is_tested_in_each_and_the_trial_names_say_which() {
    let both = run(&ts2("dual"), &[], &[]);
    passed(&both, &BOTH_ERAS);
    assert!(
        both.stderr.contains(
            "mcp: the server speaks 2026-07-28 and 2025-11-25: each example's MCP trial ran in both (`mcp::` in 2026-07-28, `mcp::2025-11-25::` in 2025-11-25); explore and the fault trials in 2026-07-28 only"
        ),
        "{both}"
    );
    // Filters pick an era out, or one trial of it, or an example in both.
    passed(&run(&ts2("dual"), &[], &["2025-11-25"]), &BOTH_ERAS[3..]);
    passed(
        &run(
            &ts2("dual"),
            &[],
            &["--exact", "mcp::2025-11-25::tools/list"],
        ),
        &["mcp::2025-11-25::tools/list"],
    );
    passed(
        &run(&ts2("dual"), &[], &["--skip", "2025-11-25", "article"]),
        &["mcp::a short article"],
    );
    passed(
        &run(&ts2("dual"), &[], &["an empty document"]),
        &[
            "mcp::an empty document",
            "mcp::2025-11-25::an empty document",
        ],
    );
}

#[test]
fn a_defect_in_the_2025_leg_alone_is_caught_in_that_era_alone() {
    // `isLegacyRequest` routes 2025-era traffic to other code, which answers text only.
    run(&ts2("dual-legacy-text-only"), &[], &[]).expect_failed(&[(
        "mcp::2025-11-25::a short article",
        &["only text content and no `structuredContent`"],
    )]);
}

#[test]
fn list_names_both_eras_and_starts_nothing_and_an_exact_trial_of_an_era_not_spoken_says_so() {
    // `--list` starts no server, so it cannot know the eras: it lists the second era's too.
    let listed = run(&ts2("strict"), &[], &["--list"]);
    listed.expect_code(0);
    assert_eq!(listed.listed(), BOTH_ERAS, "{listed}");
    // nextest runs each trial it listed with `--exact`: against a server of one era, the
    // second era's trial has nothing to test, and says so instead of passing.
    let alone = run(
        &ts2("strict"),
        &[],
        &[
            "--exact",
            "mcp::2025-11-25::a short article",
            "--format",
            "pretty",
        ],
    );
    alone.expect_code(0);
    assert!(
        alone.stdout.contains(
            "test mcp::2025-11-25::a short article ... ignored (the server speaks 2026-07-28 only, and was tested in it"
        ),
        "{alone}"
    );
    // Without `--exact`, a run against a server of one era has no second era's trials.
    passed(
        &run(&ts2("strict"), &[], &["article"]),
        &["mcp::a short article"],
    );
}

#[test]
fn protocol_pins_one_era_and_a_server_without_it_is_told_what_to_type_at_once() {
    // Pinned to an era the server speaks: today's names, that era only.
    let pinned = run(&ts2("dual"), &["--protocol", "2025-11-25"], &[]);
    passed(&pinned, &ONE_ERA);
    assert!(
        pinned
            .stderr
            .contains("mcp: tested in 2025-11-25 only, as `--protocol 2025-11-25` asks"),
        "{pinned}"
    );
    // The variable does the same.
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .args(["--server-cmd", &ts2("dual")])
        .env("HOLON_EXPLORE_CASES", "0")
        .env("HOLON_PROTOCOL", "2026-07-28")
        .args(["--", "--format", "json"]);
    let by_var = marker.spawn(&mut command).finish(RUN_LIMIT);
    marker.assert_none_left();
    passed(&by_var, &ONE_ERA);
    assert!(
        by_var.stderr.contains("as `--protocol 2026-07-28` asks"),
        "{by_var}"
    );
    // Pinned to an era the server does not speak: one line, what to type, no wait.
    let started = Instant::now();
    let strict = run(
        &ts2("strict"),
        &["--protocol", "2025-11-25", "--startup-timeout", "120"],
        &[],
    );
    let says = "the server speaks only 2026-07-28, which `--protocol 2025-11-25` leaves out (it answered `initialize` (2025-11-25) with UnsupportedProtocolVersion (-32022): it supports 2026-07-28): test it with `--protocol 2026-07-28`, or `--protocol auto` for every era it speaks";
    strict.expect_failed(&[
        ("mcp::tools/list", &[says]),
        ("mcp::a short article", &[says]),
        ("mcp::an empty document", &[says]),
    ]);
    assert!(started.elapsed() < Duration::from_secs(60), "{strict}");
    let legacy = run(&ts1(), &["--protocol", "2026-07-28"], &[]);
    let says = "the server speaks only 2025-11-25, which `--protocol 2026-07-28` leaves out";
    legacy.expect_failed(&[
        (
            "mcp::tools/list",
            &[says, "test it with `--protocol 2025-11-25`"],
        ),
        ("mcp::a short article", &[says]),
        ("mcp::an empty document", &[says]),
    ]);
}

#[test]
fn a_protocol_the_harness_does_not_speak_is_refused_before_anything_runs() {
    let usage = run(&ts2("dual"), &["--protocol", "2025-06-18"], &[]);
    usage.expect_code(2);
    assert!(usage.stderr.contains("--protocol"), "{usage}");
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .args(["--server-cmd", &ts2("dual")])
        .env("HOLON_PROTOCOL", "modern")
        .args(["--", "--list"]);
    let var = marker.spawn(&mut command).finish(RUN_LIMIT);
    var.expect_code(1);
    assert!(
        var.stderr.contains(
            "error: `HOLON_PROTOCOL=modern`: the protocol is `auto`, `2026-07-28` or `2025-11-25`, not `modern`"
        ),
        "{var}"
    );
}

/// The TypeScript SDK 1.x server of the interop tests (2025 only), as a `--server-cmd`.
fn ts1() -> String {
    let node = root().join("tests/interop/node");
    assert!(
        node.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript SDK is not installed: run `.ci/setup-interop` first"
    );
    format!("node '{}'", node.join("server.mjs").display())
}

#[test]
fn a_server_of_the_typescript_sdk_1_is_tested_in_2025_11_25_under_today_s_names() {
    let run = run(&ts1(), &[], &[]);
    passed(&run, &ONE_ERA);
    assert!(
        run.stderr
            .contains("mcp: the server speaks 2025-11-25 only, and was tested in it"),
        "{run}"
    );
}

// ---------------------------------------------------------------------------------------------
// A server already running.

/// A TypeScript SDK 2.x server in `mode` on a free port, until dropped.
fn running_ts2(mode: &str) -> (Running, String) {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(eras_folder().join("server.mjs"))
        .env("MODE", mode)
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let server = Running::spawn(&mut command);
    let listening = wait_until(Instant::now() + RUN_LIMIT, || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(listening, "the server did not listen on {port}");
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

/// A `--url` run of word-stats' manifest against `url`.
fn url_run(url: &str, args: &[&str]) -> Finished {
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .args(["--url", url])
        .args(args)
        .env_remove("HOLON_PROTOCOL")
        .env("NO_COLOR", "1")
        .args(["--", "--format", "json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    Running::spawn(&mut command).finish(RUN_LIMIT)
}

#[test]
fn a_2026_07_28_server_already_running_is_tested_through_its_url() {
    let (_server, url) = running_ts2("strict");
    let run = url_run(&url, &[]);
    let mut names = vec!["mcp::initialize"];
    names.extend(ONE_ERA);
    passed(&run, &names);
    assert!(
        run.stderr.contains(&format!(
            "note: the server at `{url}` announces no `holon/manifest` in its answer to `server/discover` (2026-07-28)"
        )),
        "{run}"
    );
    assert!(
        run.stderr
            .contains("mcp: the server speaks 2026-07-28 only, and was tested in it"),
        "{run}"
    );
    // Both eras of a dual-era server through its URL: an `initialize` trial in each.
    let (_dual, url) = running_ts2("dual");
    let run = url_run(&url, &[]);
    let mut names = vec!["mcp::initialize", "mcp::2025-11-25::initialize"];
    names.extend(BOTH_ERAS);
    passed(&run, &names);
}

// ---------------------------------------------------------------------------------------------
// Servers that break an era's rules.

#[test]
fn a_server_that_keeps_both_eras_rules_passes_and_each_request_carries_its_era_s_headers() {
    // The server refuses any 2026-07-28 request whose `MCP-Protocol-Version`, `Mcp-Method`
    // and `Mcp-Name` headers do not match its body.
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    passed(&run(&bad("ok", &events), &[], &[]), &BOTH_ERAS);
    let mut asked = requests(&events);
    asked.sort();
    assert_eq!(
        asked,
        [
            "initialize 2025-11-25",
            "notifications/initialized 2025-11-25",
            "server/discover 2026-07-28",
            "tools/call 2025-11-25",
            "tools/call 2025-11-25",
            "tools/call 2026-07-28",
            "tools/call 2026-07-28",
            "tools/list 2025-11-25",
            "tools/list 2026-07-28",
        ]
    );
}

#[test]
fn a_2025_server_that_refuses_server_discover_costs_one_request_more() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    let run = run(&bad("discover-404", &events), &[], &[]);
    passed(&run, &ONE_ERA);
    assert!(
        run.stderr.contains(
            "mcp: the server speaks 2025-11-25 only, and was tested in it (it answered `server/discover` (2026-07-28) with HTTP 404 Not Found"
        ),
        "{run}"
    );
    let asked = requests(&events);
    assert_eq!(
        asked
            .iter()
            .filter(|r| r.starts_with("server/discover"))
            .count(),
        1,
        "{asked:?}"
    );
    assert_eq!(
        asked.first().map(String::as_str),
        Some("server/discover 2026-07-28")
    );
}

#[test]
fn a_broken_answer_to_server_discover_fails_the_2026_07_28_trials_in_one_line_and_the_2025_ones_run()
 {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    let says = "the server answered `server/discover` (2026-07-28) with `text/plain` rather than JSON or an event stream";
    run(&bad("discover-garbage", &events), &[], &[]).expect_failed(&[
        ("mcp::tools/list", &[says]),
        ("mcp::a short article", &[says]),
        ("mcp::an empty document", &[says]),
    ]);
    let openings: Vec<String> = (requests(&events).into_iter())
        .filter(|r| r.starts_with("server/discover") || r.starts_with("initialize"))
        .collect();
    assert_eq!(
        openings,
        ["server/discover 2026-07-28", "initialize 2025-11-25"],
        "one fallback, no retry"
    );
}

#[test]
fn a_server_that_breaks_the_envelope_rules_is_named_for_what_it_broke() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    let no_type = "a result that breaks the protocol: its `tools/call` result has no `resultType`, which every 2026-07-28 result carries";
    run(&bad("no-result-type", &events), &[], &[]).expect_failed(&[
        ("mcp::a short article", &[no_type]),
        ("mcp::an empty document", &["has no `resultType`"]),
    ]);
    let mismatch = "HeaderMismatch, though the request's `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers match its body";
    run(&bad("header-mismatch", &events), &[], &[]).expect_failed(&[
        (
            "mcp::a short article",
            &[mismatch, "gateway status: agent_error"],
        ),
        ("mcp::an empty document", &["-32020"]),
    ]);
    let says = "the server answered `server/discover` (2026-07-28) with a result that has no `resultType`, which every 2026-07-28 result carries; it answered `initialize` (2025-11-25) with UnsupportedProtocolVersion (-32022): it supports 2026-07-28; the harness speaks 2026-07-28 and 2025-11-25";
    run(&bad("discover-no-result-type", &events), &[], &[]).expect_failed(&[
        ("mcp::tools/list", &[says]),
        ("mcp::a short article", &[says]),
        ("mcp::an empty document", &[says]),
    ]);
}

#[test]
fn a_server_that_refuses_both_eras_says_so_in_one_line_after_two_requests() {
    for (mode, says) in [
        (
            "all-404",
            "the server answered `server/discover` (2026-07-28) and `initialize` (2025-11-25) with HTTP 404 Not Found: is not an MCP endpoint (is the path right? the kit's runtime serves `/mcp`)",
        ),
        (
            "all-400-html",
            "the server answered `server/discover` (2026-07-28) and `initialize` (2025-11-25) with HTTP 400 Bad Request: 400 Bad Request",
        ),
        (
            "only-2027",
            "the server answered `server/discover` (2026-07-28) listing only 2027-01-01; it answered `initialize` (2025-11-25) with UnsupportedProtocolVersion (-32022): it supports 2027-01-01; the harness speaks 2026-07-28 and 2025-11-25",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events");
        let started = Instant::now();
        let run = run(&bad(mode, &events), &["--startup-timeout", "120"], &[]);
        run.expect_failed(&[
            ("mcp::tools/list", &[says]),
            ("mcp::a short article", &[says]),
            ("mcp::an empty document", &[says]),
        ]);
        assert!(started.elapsed() < Duration::from_secs(60), "{run}");
        assert_eq!(
            requests(&events),
            ["server/discover 2026-07-28", "initialize 2025-11-25"],
            "{mode}: one request each, no retry"
        );
    }
}

#[test]
fn a_server_that_hangs_on_server_discover_costs_the_startup_limit_once() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    let started = Instant::now();
    let run = run(
        &bad("discover-hang", &events),
        &["--startup-timeout", "2"],
        &[],
    );
    let took = started.elapsed();
    let says: &[&str] = &[
        "did not answer an MCP `server/discover` on port",
        "within 2 s (it took the connection but gave no answer to `server/discover` (2026-07-28); a server that speaks only 2025-11-25 and ignores `server/discover` is tested with `--protocol 2025-11-25`)",
    ];
    run.expect_failed(&[
        ("mcp::tools/list", says),
        ("mcp::a short article", says),
        ("mcp::an empty document", says),
    ]);
    // Once: not the limit again for a fallback (the bound is generous, a slow machine's).
    assert!(took < Duration::from_secs(20), "{took:?}\n{run}");
    assert!(
        !requests(&events)
            .iter()
            .any(|r| r.starts_with("initialize")),
        "no fallback after a hang"
    );
}

//! The harness, proven on deliberately broken agents and servers: each defect is caught by the
//! right trial with a message naming its cause, the other trials pass, the harness speaks
//! libtest's arguments (and nextest's protocol), and no process outlives a run.
//!
//! Servers: tests/fixtures/servers/py_server.py (the official Python MCP SDK, one defect per
//! `MODE`, through `--server-cmd`) and tests/fixtures/agents/broken-agent (a Rust agent with one
//! defect per example, through `cargo holon-test`). Every process a test starts carries a
//! unique `HOLON_TEST_MARKER` in its environment; after the run none may be left, and all are
//! killed when the test ends, pass or fail.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{
    BIN, CARGO_LIMIT, Finished, RUN_LIMIT, Running, root, wait_until, word_stats_with,
};

// ---------------------------------------------------------------------------------------------
// The Python server, through `--server-cmd`.

/// The trials of a `--server-cmd` run on word-stats' manifest (there is no function pass).
const PASSING: &[&str] = &[
    "mcp::tools/list",
    "mcp::a short article",
    "mcp::an empty document",
];

#[test]
fn python_sdk_server_passes_in_each_era_it_speaks() {
    let run = Py::new("ok").every_era().run();
    run.expect_code(0);
    let trials = run.trials();
    assert_eq!(trials.len(), 6, "{run}");
    for name in PASSING {
        assert_eq!(trials.get(*name), Some(&Ok(())), "`{name}`\n{run}");
        let legacy = name.replacen("mcp::", "mcp::2025-11-25::", 1);
        assert_eq!(trials.get(&legacy), Some(&Ok(())), "`{legacy}`\n{run}");
    }
    assert!(
        run.stderr
            .contains("mcp: the server speaks 2026-07-28 and 2025-11-25"),
        "{run}"
    );
}

#[test]
fn whole_numbers_as_floats_pass() {
    // `11.0` for `11`: the same JSON number, so not a defect.
    Py::new("float-integers").run().expect_failed(&[]);
}

#[test]
fn tool_renamed_in_the_server() {
    Py::new("renamed-tool").run().expect_failed(&[(
        "mcp::tools/list",
        &[
            "tool is named `word_stat`",
            "`runtime.tool` in the manifest is `word_stats`",
        ],
    )]);
}

#[test]
fn two_tools() {
    Py::new("two-tools").run().expect_failed(&[(
        "mcp::tools/list",
        &["lists 2 tools (`word_stats`, `char_count`)", "exactly one"],
    )]);
}

#[test]
fn output_as_text_only() {
    Py::new("text-only").run().expect_failed(&[(
        "mcp::a short article",
        &[
            "only text content and no `structuredContent`",
            "gateway status: invalid_output",
        ],
    )]);
}

#[test]
fn an_extra_field() {
    Py::new("extra-field").run().expect_failed(&[(
        "mcp::a short article",
        &[
            "the output differs from the example at `/extra` (not in the example)",
            "`/extra`: not in the example; the answer has true",
            "`interface.output` refuses `/extra`",
            "gateway status: invalid_output",
        ],
    )]);
}

#[test]
fn a_number_as_a_string() {
    Py::new("number-as-string").run().expect_failed(&[(
        "mcp::a short article",
        &[
            "the output differs from the example at `/words` (a string where the example has an integer)",
            "`/words`: the answer has \"11\" (a string), the example 11 (an integer)",
            "gateway status: invalid_output",
        ],
    )]);
}

#[test]
fn one_cause_is_reported_in_full_once_and_in_one_line_for_every_other_trial() {
    // Every example's `words` comes back as a string: sixteen trials, one cause. Read as
    // libtest prints the failures, each under its `---- name ----`.
    let run = Py::new("number-as-string")
        .manifest("word-stats-16.yaml")
        .libtest(&["--format", "pretty", "--color", "never"])
        .run();
    run.expect_code(101);
    let section = run
        .stdout
        .split_once("\nfailures:\n\n")
        .and_then(|(_, rest)| rest.split_once("\n\nfailures:\n"))
        .map(|(blocks, _)| blocks)
        .unwrap_or_else(|| panic!("no failures section\n{run}"));
    let failed: Vec<(&str, &str)> = section
        .split("---- ")
        .filter(|b| !b.is_empty())
        .map(|b| {
            let (name, message) = b.split_once(" ----\n").unwrap();
            (name, message.trim_end())
        })
        .collect();
    assert_eq!(failed.len(), 16, "{run}");
    let what = "the output differs from the example at `/words` (a string where the example has an integer)";
    let full: Vec<&(&str, &str)> = (failed.iter())
        .filter(|(_, m)| m.contains("side by side"))
        .collect();
    assert_eq!(full.len(), 1, "one report in full\n{run}");
    let (first, report) = *full[0];
    assert!(report.starts_with(&format!("{what}\n")), "{report}");
    let line = format!(
        "{what}; gateway status: invalid_output (the same cause as `{first}`, reported in full)"
    );
    for (name, message) in &failed {
        if *name != first {
            assert_eq!(*message, line, "`{name}`");
        }
    }
    assert!(
        run.stderr.contains(&format!(
            "\nnote: 16 trials failed for one cause: {what}; gateway status: invalid_output; `{first}` is reported in full, the others in one line each\n"
        )),
        "{run}"
    );
}

#[test]
fn integers_past_2_to_the_53_that_differ_are_told_apart_by_path() {
    // The server answers 2^53 + 64 characters; the example says 2^53 + 63, which a float
    // cannot tell from it. Equality is exact, and so is the diff.
    let (_dir, manifest) = word_stats_with(
        "      characters: 62\n",
        "      characters: 9007199254741055\n",
    );
    Py::new("huge-count")
        .manifest_at(&manifest)
        .run()
        .expect_failed(&[(
            "mcp::a short article",
            &[
                "the output differs from the example at `/characters` (another value)",
                "`/characters`: the answer has 9007199254741056, the example 9007199254741055",
                "gateway status: success",
            ],
        )]);
}

#[test]
fn a_rounded_value() {
    Py::new("rounded").run().expect_failed(&[(
        "mcp::a short article",
        &[
            "the output differs from the example at `/reading_time_s` (another value)",
            "`/reading_time_s`: the answer has 2.9, the example 3",
        ],
    )]);
}

#[test]
fn an_error_result_without_a_code() {
    Py::new("crash").run().expect_failed(&[(
        "mcp::an empty document",
        &[
            "expected the declared failure `empty_text`",
            "no `structuredContent.error.code`",
            "IndexError",
            "gateway status: agent_error",
        ],
    )]);
}

#[test]
fn the_wrong_code() {
    Py::new("wrong-code").run().expect_failed(&[(
        "mcp::an empty document",
        &[
            "expected the declared failure `empty_text`",
            "the undeclared code `no_words`",
            "gateway status: agent_error",
        ],
    )]);
}

#[test]
fn a_json_rpc_error() {
    Py::new("jsonrpc-error").run().expect_failed(&[(
        "mcp::an empty document",
        &[
            "JSON-RPC error (-32602: the text is empty or only whitespace)",
            "`isError: true`",
            "gateway status: agent_error",
        ],
    )]);
}

#[test]
fn a_call_that_hangs_past_timeout_s() {
    let started = Instant::now();
    let run = Py::new("hang").manifest("word-stats-timeout-1s.yaml").run();
    run.expect_failed(&[(
        "mcp::a short article",
        &[
            "no answer within `runtime.limits.timeout_s` (1 s)",
            "gateway status: timeout",
        ],
    )]);
    // The call is given up on, not waited for: 1 s and a grace, not the server's hour.
    assert!(started.elapsed() < Duration::from_secs(30), "{run}");
}

/// A server whose every process ends on its first `tools/call`: each call is a crash, laid on
/// the call that had it, the server started again for the next.
#[test]
fn a_server_that_exits_mid_run() {
    // One call at a time, so the first call is the article's and the order is known.
    let run = Py::new("exit-mid-run").args(&["--concurrency", "1"]).run();
    // The client's error is said in words, without rmcp's Rust type names.
    for (name, outcome) in run.trials() {
        if let Err(message) = outcome {
            assert!(!message.contains("rmcp::"), "`{name}`: {message}");
        }
    }
    let crashed: &[&str] = &[
        "the server exited (exit status: 4) during this call",
        "gateway status: agent_crashed",
    ];
    run.expect_failed(&[
        ("mcp::a short article", crashed),
        ("mcp::an empty document", crashed),
    ]);
}

/// A server that ends on one input, with the calls of every example in flight together (the
/// default concurrency, each call taking half a second so all are in flight when it ends): the
/// calls cut off are made again alone on the server started again, and the one trial that
/// fails is the input's own, named with the exit status and what the server wrote for that call.
#[test]
fn a_server_that_dies_on_one_input_among_others_fails_that_input_alone() {
    let run = Py::new("exit-non-ascii")
        .manifest("word-stats-11.yaml")
        .env("CALL_SLEEP_S", "0.5")
        .run();
    run.expect_failed(&[(
        "mcp::a place abroad",
        &[
            "the server exited (exit status: 5) during this call",
            "naïve café in Zürich, Ærø",
            "| py_server: cannot encode 'naïve café in Zürich, Ærø', exiting",
            "this input ends the server",
            "gateway status: agent_crashed",
        ],
    )]);
    assert!(
        run.stderr
            .contains("note: the server ended while it had other calls too"),
        "{run}"
    );
}

/// A server that ends on its third call, whatever the input: no input is blamed for it. The
/// call that had the crash, made again as the first call of the server started again, is
/// answered, and the trial says the crash came of the calls before it.
#[test]
fn a_server_that_dies_on_its_third_call_blames_no_input() {
    let run = Py::new("exit-third-call")
        .manifest("word-stats-11.yaml")
        .args(&["--concurrency", "1"])
        .run();
    let trials = run.trials();
    let failed: Vec<(&String, &String)> = (trials.iter())
        .filter_map(|(name, outcome)| outcome.as_ref().err().map(|m| (name, m)))
        .collect();
    assert!(!failed.is_empty(), "{run}");
    for (name, message) in failed {
        for needle in [
            "the server exited (exit status: 6) during this call",
            "it was answered",
            "the crash is not this input's doing, but came of the calls the server took before it",
            "gateway status: agent_crashed",
        ] {
            assert!(
                message.contains(needle),
                "`{name}` does not say `{needle}`:\n{message}"
            );
        }
        assert!(
            !message.contains("this input ends the server"),
            "`{name}`: {message}"
        );
    }
}

/// A server that ends on every call: each of the first calls made alone ends a server just
/// started, and after three in a row the rest are not made again, so the run ends in seconds.
#[test]
fn a_server_that_dies_at_every_call_is_said_to_die_whatever_the_input() {
    let run = Py::new("exit-always").manifest("word-stats-11.yaml").run();
    let trials = run.trials();
    let mcp: Vec<&String> = trials
        .keys()
        .filter(|n| n.starts_with("mcp::") && *n != "mcp::tools/list")
        .collect();
    assert_eq!(mcp.len(), 11, "{run}");
    let ends = |needle: &str| {
        mcp.iter()
            .filter(|n| {
                trials[**n]
                    .as_ref()
                    .err()
                    .is_some_and(|m| m.contains(needle))
            })
            .count()
    };
    assert_eq!(ends("this input ends the server"), 3, "{run}");
    assert_eq!(ends("so it dies whatever the input"), 8, "{run}");
}

/// A server that blocks its event loop on one input: every call in flight beside it waits and
/// times out, yet only that input fails, said to block the server; the others, made again alone
/// on the server started again, pass.
#[test]
fn a_server_that_one_input_blocks_fails_that_input_alone() {
    let manifest = timeout_of_one_second("word-stats-11.yaml");
    let run = Py::new("block-non-ascii").manifest_at(&manifest.1).run();
    run.expect_failed(&[(
        "mcp::a place abroad",
        &[
            "made alone, while the server answered nothing else either",
            "this input blocks the server",
            "gateway status: timeout",
        ],
    )]);
}

/// `file` of tests/fixtures/harness with `timeout_s: 1`, in a folder of its own.
fn timeout_of_one_second(file: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/fixtures/harness").join(file)).unwrap();
    let changed = text.replace("timeout_s: 30,", "timeout_s: 1,");
    assert_ne!(changed, text, "`{file}` says `timeout_s: 30,`");
    let path = dir.path().join("holon.yaml");
    std::fs::write(&path, changed).unwrap();
    (dir, path)
}

#[test]
fn a_server_that_never_listens() {
    let run = Py::new("never-listen")
        .args(&["--startup-timeout", "1"])
        .run();
    let cause: &[&str] = &[
        "the server did not start",
        "did not answer an MCP `initialize`",
    ];
    run.expect_failed(&[
        ("mcp::tools/list", cause),
        ("mcp::a short article", cause),
        ("mcp::an empty document", cause),
    ]);
}

#[test]
fn a_server_that_dies_at_start_shows_its_stderr() {
    let cause: &[&str] = &["the server exited before it answered (exit status: 3)"];
    let run = Py::new("die-at-start").run();
    run.expect_failed(&[
        ("mcp::tools/list", cause),
        ("mcp::a short article", cause),
        ("mcp::an empty document", cause),
    ]);
    // One cause, reported in full once (its stderr with it), the others in one line each.
    let trials = run.trials();
    let messages: Vec<&String> = trials.values().filter_map(|o| o.as_ref().err()).collect();
    let full = (messages.iter())
        .filter(|m| {
            m.contains("py_server: cannot load the word list (deliberate failure at start)")
        })
        .count();
    let one_line = (messages.iter())
        .filter(|m| m.contains("gateway status: runtime_unavailable (the same cause as `"))
        .count();
    assert_eq!((full, one_line), (1, 2), "{run}");
}

// ---------------------------------------------------------------------------------------------
// Signals: Ctrl-C or SIGTERM to the harness stops the server, even one a shell started.

/// The Python server as a shell's child, with the article's call in flight: it hangs, and the
/// manifest's 30 s keeps it hanging.
pub(super) fn hanging_call() -> (Py, Running) {
    let py = Py::new("hang")
        .libtest(&["--test-threads", "1", "--format", "pretty"])
        .grandchild();
    let mut running = py.spawn();
    running.wait_for("the article's call to start", RUN_LIMIT, |r| {
        r.stdout().contains("test mcp::a short article")
    });
    (py, running)
}

#[test]
fn sigint_mid_call_stops_the_server() {
    let (py, running) = hanging_call();
    running.signal(libc::SIGINT);
    let run = running.finish(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(130), "{run}");
    py.marker.assert_none_left();
}

#[test]
fn sigterm_while_the_server_starts_stops_it() {
    // The server is a shell's child (`npm start` is): the shell's death signal is not its own.
    let py = Py::new("never-listen").grandchild();
    let mut running = py.spawn();
    running.wait_for("the server to be started", RUN_LIMIT, |_| {
        py.marker.processes().iter().any(|(_, cmd)| {
            cmd.split(' ')
                .next()
                .is_some_and(|argv0| argv0.ends_with("python3"))
        })
    });
    running.signal(libc::SIGTERM);
    let run = running.finish(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(143), "{run}");
    py.marker.assert_none_left();
}

// ---------------------------------------------------------------------------------------------
// libtest's arguments, through `--server-cmd` and through `cargo holon-test`, and nextest.

#[test]
fn list_prints_every_trial_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let evidence = dir.path().join("started");
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .arg("--server-cmd")
        .arg(format!("touch '{}'", evidence.display()))
        .args(["--", "--list"]);
    let run = marker.spawn(&mut command).finish(RUN_LIMIT);
    run.expect_code(0);
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            "mcp::tools/list: test",
            "mcp::a short article: test",
            "mcp::an empty document: test",
            // It cannot know which eras the server speaks without starting it: under
            // `--protocol auto` it lists the second era's trials too (see tests/it/eras.rs).
            "mcp::2025-11-25::tools/list: test",
            "mcp::2025-11-25::a short article: test",
            "mcp::2025-11-25::an empty document: test",
            "explore::mcp: test"
        ],
        "{run}"
    );
    assert!(!evidence.exists(), "`--list` started the server\n{run}");
    marker.assert_none_left();
}

#[test]
fn a_filter_runs_only_what_it_names() {
    let run = Py::new("ok").libtest(&["article"]).run();
    run.expect_code(0);
    assert_eq!(
        run.trials().into_keys().collect::<Vec<_>>(),
        ["mcp::a short article"],
        "{run}"
    );
    let summary = run.summary();
    assert_eq!(summary["filtered_out"], 2, "{run}");
    assert_eq!(summary["passed"], 1, "{run}");
}

#[test]
fn exact_runs_one_trial_in_libtest_s_own_words() {
    let run = Py::new("ok")
        .libtest(&["--exact", "mcp::tools/list", "--format", "pretty"])
        .run();
    run.expect_code(0);
    assert!(run.stdout.contains("running 1 test\n"), "{run}");
    assert!(run.stdout.contains("test mcp::tools/list ... ok"), "{run}");
    assert!(
        run.stdout
            .contains("test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 2 filtered out"),
        "{run}"
    );
}

#[test]
fn a_failure_is_reported_in_libtest_s_own_words() {
    let run = Py::new("two-tools")
        .libtest(&["--format", "pretty", "--color", "never"])
        .run();
    run.expect_code(101);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("test mcp::tools/list ") && l.ends_with("... FAILED")),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("---- mcp::tools/list ----\nthe server lists 2 tools"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("test result: FAILED. 2 passed; 1 failed;"),
        "{run}"
    );
    // The server's own output, to read beside the failure.
    assert!(
        run.stderr
            .contains("py_server (two-tools): listening on http://127.0.0.1:"),
        "{run}"
    );
}

#[test]
fn cargo_holon_test_passes_libtest_arguments_through() {
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        .args(["holon-test", "--", "--exact", "function::a short article"])
        .current_dir(root().join("examples/word-stats"));
    let run = marker.spawn(&mut command).finish(CARGO_LIMIT);
    run.expect_code(0);
    assert!(
        run.stdout.contains("test function::a short article ... ok"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("1 passed; 0 failed; 0 ignored; 0 measured; 6 filtered out"),
        "{run}"
    );
    marker.assert_none_left();
}

/// `cargo nextest run` on word-stats' `tests/holon.rs`, the trials `filter` picks.
pub(crate) fn nextest_word_stats(filter: &str) -> Command {
    let mut command = crate::util::cargo();
    command
        // The workspace's test build, which the suite's nextest made: `-p word-stats` would
        // resolve its features apart and compile the tree again for them.
        .args(["nextest", "run", "--workspace"])
        .args(["-E", "binary_id(word-stats::holon)"])
        .args(["--no-fail-fast", "--color", "never", filter])
        .current_dir(root());
    command
}

#[test]
fn nextest_runs_each_trial_in_its_own_process() {
    let marker = Marker::new();
    let run = marker
        .spawn(&mut nextest_word_stats("mcp::"))
        .finish(CARGO_LIMIT);
    run.expect_code(0);
    // nextest reports on stderr: one PASS line per trial, each run in a process of its own
    // that starts (and stops) its own server; the agent speaks both eras, and each trial of
    // the second one runs in it.
    for name in PASSING {
        let legacy = name.replacen("mcp::", "mcp::2025-11-25::", 1);
        for name in [name.to_string(), legacy] {
            assert!(
                run.stderr
                    .lines()
                    .any(|l| l.contains("PASS") && l.trim_end().ends_with(&name)),
                "no PASS for `{name}`\n{run}"
            );
        }
    }
    assert!(run.stderr.contains("6 tests run: 6 passed"), "{run}");
    // The function pass's two trials and the two explore trials.
    assert!(run.stderr.contains("4 skipped"), "{run}");
    marker.assert_none_left();
}

// ---------------------------------------------------------------------------------------------
// A Rust agent with one defect per example, through `cargo holon-test`: both passes catch each.

#[test]
fn broken_rust_agent_fails_in_both_passes_naming_each_defect() {
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        // That one ends the run on purpose: see the next test.
        .args([
            "holon-test",
            "--",
            "--format",
            "json",
            "--skip",
            "never returns",
        ])
        // Explore would meet the defects too (tests/it/explore.rs gives it agents of its own).
        .env("HOLON_EXPLORE_CASES", "0")
        .current_dir(root().join("tests/fixtures/agents/broken-agent"));
    let run = marker.spawn(&mut command).finish(CARGO_LIMIT);
    let crashed = "got `agent_crashed` (the agent raised, threw or panicked with something that is not a declared failure: `ctx.fail` with a code of `interface.errors`)";
    // Both passes meet each defect: the words every report of it holds (in full, or in the one
    // line of a trial that failed of the cause another was reported for in full), and those of
    // the full report, which one of the two passes carries.
    let defects: &[(&str, &[&str], &[&str])] = &[
        (
            "a panic instead of a declared failure",
            &["the agent panicked", "gateway status: agent_crashed"],
            &[crashed],
        ),
        (
            "the wrong declared code",
            &[
                "the declared failure `no_words`",
                "gateway status: no_words (declared failure)",
            ],
            &["expected the declared failure `empty_text`, got the declared failure `no_words`"],
        ),
        (
            "an undeclared code",
            &[
                "`blank_text`, which is not declared in `interface.errors`",
                "gateway status: agent_crashed",
            ],
            &[crashed],
        ),
        (
            "an error passed up with a question mark",
            &[
                "cannot parse integer from empty string",
                "gateway status: agent_crashed",
            ],
            &[crashed],
        ),
        (
            "an extra field",
            &[
                "the output differs from the example at `/extra` (not in the example)",
                "gateway status: invalid_output",
            ],
            &["`/extra`: not in the example; the answer has true"],
        ),
        (
            "a number as a string",
            &[
                "the output differs from the example at `/words` (a string where the example has an integer)",
                "gateway status: invalid_output",
            ],
            &["`/words`: the answer has \"7\" (a string), the example 7 (an integer)"],
        ),
        (
            "a rounded value",
            &[
                "the output differs from the example at `/reading_time_s` (another value)",
                "gateway status: invalid_output",
            ],
            &["`/reading_time_s`: the answer has 2.1, the example 3"],
        ),
        (
            "a call that hangs past timeout_s",
            &[
                "the run passed `runtime.limits.timeout_s` (1 s)",
                "gateway status: timeout",
            ],
            &[],
        ),
        (
            "a function that blocks its thread past timeout_s",
            &[
                "`runtime.limits.timeout_s` (1 s)",
                "gateway status: timeout",
            ],
            &[],
        ),
    ];
    // The kit's runtime speaks both protocol eras: the MCP pass meets each defect in each.
    let passes = ["function", "mcp", "mcp::2025-11-25"];
    let mut expected = Vec::new();
    for (example, needles, _) in defects {
        for pass in passes {
            expected.push((format!("{pass}::{example}"), *needles));
        }
    }
    let expected: Vec<(&str, &[&str])> = expected.iter().map(|(n, m)| (n.as_str(), *m)).collect();
    run.expect_failed(&expected);
    let trials = run.trials();
    for (example, _, full) in defects {
        let reports: Vec<&String> = passes
            .iter()
            .filter_map(|pass| trials.get(&format!("{pass}::{example}"))?.as_ref().err())
            .collect();
        assert!(
            reports.iter().any(|r| full.iter().all(|n| r.contains(n))),
            "neither pass reports `{example}` in full ({full:?}):\n{reports:?}"
        );
    }
    let passed = run.trials().values().filter(|t| t.is_ok()).count();
    // Three good examples and the floats, in both passes and both eras of the MCP pass, and
    // `tools/list` in each era.
    assert_eq!(passed, 14, "{run}");
    marker.assert_none_left();
}

#[test]
fn a_function_that_never_returns_fails_as_a_timeout_and_the_run_goes_on() {
    // Every function trial, the one that never returns among them: every other trial is
    // reported, the summary is printed, and the process ends. It timed out among other calls;
    // a call tried alone before it (`a call that hangs past timeout_s`) timed out too, so it is
    // not tried again: its thread stays blocked, and no second one is given to it.
    let marker = Marker::new();
    let mut command = Command::new(BIN);
    command
        .args(["holon-test", "--", "--format", "json", "function::"])
        .current_dir(root().join("tests/fixtures/agents/broken-agent"));
    let run = marker.spawn(&mut command).finish(CARGO_LIMIT);
    let trials = run.trials();
    assert_eq!(trials.len(), 14, "every function trial is reported\n{run}");
    let never = trials
        .get("function::a function that never returns")
        .unwrap_or_else(|| panic!("not reported\n{run}"))
        .as_ref()
        .expect_err("it must fail");
    for needle in [
        "the run passed `runtime.limits.timeout_s` (1 s) among other calls in flight; not tried again alone, since a call tried alone timed out too",
        "gateway status: timeout",
    ] {
        assert!(never.contains(needle), "`{needle}` in:\n{never}");
    }
    assert_eq!(run.summary()["failed"], 10, "{run}");
    run.expect_code(101);
    marker.assert_none_left();
}

// ---------------------------------------------------------------------------------------------
// Running the CLI.

/// The Python fixture server under one `MODE`, as the CLI's `--server-cmd`; explore is off
/// (`HOLON_EXPLORE_CASES=0`) unless asked for, so these tests see the example trials alone.
pub(crate) struct Py {
    mode: &'static str,
    manifest: std::path::PathBuf,
    args: Vec<String>,
    libtest: Vec<String>,
    env: Vec<(String, String)>,
    grandchild: bool,
    explore: bool,
    /// The protocol era the run pins (`--protocol`), `None` for each era the server speaks.
    protocol: Option<&'static str>,
    pub(super) marker: Marker,
}

impl Py {
    pub(crate) fn new(mode: &'static str) -> Py {
        Py {
            mode,
            manifest: root().join("tests/fixtures/harness/word-stats.yaml"),
            args: Vec::new(),
            libtest: Vec::new(),
            env: Vec::new(),
            grandchild: false,
            explore: false,
            // The official Python SDK 2.x serves both eras from the same code: what these tests
            // hold the MCP pass to (a defect caught by the right trial, calls in flight, a
            // server that hangs or dies) is the same in either, so they run in one, the
            // handshake's, and tests/it/eras.rs holds the harness to both.
            protocol: Some("2025-11-25"),
            marker: Marker::new(),
        }
    }

    /// In each era the server speaks, as a run does by default.
    pub(crate) fn every_era(mut self) -> Py {
        self.protocol = None;
        self
    }

    /// With explore at its defaults, as a user runs it.
    pub(crate) fn explore(mut self) -> Py {
        self.explore = true;
        self
    }

    pub(crate) fn manifest(mut self, file: &'static str) -> Py {
        self.manifest = root().join("tests/fixtures/harness").join(file);
        self
    }

    pub(crate) fn manifest_at(mut self, path: &Path) -> Py {
        self.manifest = path.to_path_buf();
        self
    }

    pub(crate) fn args(mut self, args: &[&str]) -> Py {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub(crate) fn libtest(mut self, args: &[&str]) -> Py {
        self.libtest.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// A variable in the environment of the CLI and the server.
    pub(crate) fn env(mut self, key: &str, value: impl Into<String>) -> Py {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// The server as a child of the shell, not the shell replaced by it.
    fn grandchild(mut self) -> Py {
        self.grandchild = true;
        self
    }

    fn spawn(&self) -> Running {
        let python = root().join("target/interop/python");
        assert!(
            python.join("mcp").is_dir(),
            "the official Python MCP SDK is not in `{}`: run `.ci/setup-interop` first",
            python.display()
        );
        let script = root().join("tests/fixtures/servers/py_server.py");
        let mut server = format!("python3 '{}'", script.display());
        if self.grandchild {
            // A second command keeps the shell alive as the server's parent.
            server.push_str("; exit $?");
        }
        let mut command = Command::new(BIN);
        command
            .arg("--manifest")
            .arg(&self.manifest)
            .arg("--server-cmd")
            .arg(server)
            .args(&self.args)
            .arg("--");
        if !self.libtest.iter().any(|a| a == "--format") {
            command.args(["--format", "json"]);
        }
        command
            .args(&self.libtest)
            .env("MODE", self.mode)
            .env("PYTHONPATH", python)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        if !self.explore {
            command.env("HOLON_EXPLORE_CASES", "0");
        }
        match self.protocol {
            Some(era) => command.env("HOLON_PROTOCOL", era),
            None => command.env_remove("HOLON_PROTOCOL"),
        };
        self.marker.spawn(&mut command)
    }

    /// Runs to the end and checks that nothing is left behind.
    pub(crate) fn run(self) -> Finished {
        let run = self.spawn().finish(RUN_LIMIT);
        self.marker.assert_none_left();
        run
    }
}

/// A unique value in the environment of every process a test starts, to find them all.
pub(super) struct Marker(String);

impl Marker {
    pub(super) fn new() -> Marker {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        Marker(format!(
            "{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Puts the marker in `command`'s environment.
    pub(super) fn mark<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command.env("HOLON_TEST_MARKER", &self.0)
    }

    pub(super) fn spawn(&self, command: &mut Command) -> Running {
        self.mark(command)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Running::spawn(command)
    }

    /// Live processes (not zombies) carrying the marker: pid and command line.
    #[cfg(target_os = "linux")]
    pub(super) fn processes(&self) -> Vec<(u32, String)> {
        let needle = format!("HOLON_TEST_MARKER={}", self.0);
        let entries = std::fs::read_dir("/proc").expect("/proc is readable");
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
            })
            .map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                (pid, cmd.trim_end().to_string())
            })
            .collect()
    }

    /// Live processes (not zombies) carrying the marker: pid, and the command line with the
    /// environment after it (macOS has no `/proc`; its `ps -E` appends the environment).
    #[cfg(not(target_os = "linux"))]
    pub(super) fn processes(&self) -> Vec<(u32, String)> {
        let needle = format!("HOLON_TEST_MARKER={}", self.0);
        let out = Command::new("ps")
            .args(["-A", "-ww", "-E", "-o", "pid=,stat=,command="])
            .output()
            .expect("ps runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let pid = fields.next()?.parse::<u32>().ok()?;
                let stat = fields.next()?;
                let cmd = fields.collect::<Vec<_>>().join(" ");
                let marked = cmd.split(' ').any(|word| word == needle);
                (marked && !stat.starts_with('Z')).then_some((pid, cmd))
            })
            .collect()
    }

    /// No process of this test is left: a SIGKILL takes a moment to land, so poll.
    pub(super) fn assert_none_left(&self) {
        let mut left = Vec::new();
        let gone = wait_until(Instant::now() + Duration::from_secs(5), || {
            left = self.processes();
            left.is_empty()
        });
        assert!(gone, "processes left running after the run: {left:#?}");
    }
}

impl Drop for Marker {
    /// Whatever happened, nothing this test started outlives it.
    fn drop(&mut self) {
        for (pid, _) in self.processes() {
            // SAFETY: kill(2) touches no memory.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}

/// What libtest reported in a finished run of the CLI.
impl Finished {
    pub(crate) fn expect_code(&self, code: i32) {
        assert_eq!(self.status.code(), Some(code), "{self}");
    }

    /// The trials `--list` printed.
    pub(super) fn listed(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .collect()
    }

    /// The outcome of every trial that ran, from libtest's JSON events: the failure message
    /// when it failed.
    pub(crate) fn trials(&self) -> BTreeMap<String, Result<(), String>> {
        self.events()
            .filter(|e| e["type"] == "test" && e["event"] != "started" && e["event"] != "ignored")
            .map(|e| {
                let name = e["name"].as_str().unwrap_or_default().to_string();
                let outcome = match e["event"].as_str() {
                    Some("ok") => Ok(()),
                    _ => Err(e["stdout"].as_str().unwrap_or_default().to_string()),
                };
                (name, outcome)
            })
            .collect()
    }

    fn summary(&self) -> Value {
        self.events()
            .find(|e| e["type"] == "suite" && e["event"] != "started")
            .unwrap_or_else(|| panic!("no summary event\n{self}"))
    }

    fn events(&self) -> impl Iterator<Item = Value> + '_ {
        self.stdout
            .lines()
            .filter(|l| l.starts_with('{'))
            .filter_map(|l| serde_json::from_str(l).ok())
    }

    /// Exit 101; exactly these trials failed, each with a message holding every needle; every
    /// other trial passed.
    pub(crate) fn expect_failed(&self, expected: &[(&str, &[&str])]) {
        let trials = self.trials();
        assert!(!trials.is_empty(), "no trial ran\n{self}");
        for (name, outcome) in &trials {
            match (expected.iter().find(|(n, _)| n == name), outcome) {
                (None, Ok(())) => {}
                (None, Err(message)) => panic!("`{name}` failed:\n{message}\n\n{self}"),
                (Some(_), Ok(())) => panic!("`{name}` passed, but it must fail\n{self}"),
                (Some((_, needles)), Err(message)) => {
                    for needle in *needles {
                        assert!(
                            message.contains(needle),
                            "the failure of `{name}` does not say `{needle}`:\n{message}"
                        );
                    }
                }
            }
        }
        for (name, _) in expected {
            assert!(trials.contains_key(*name), "`{name}` did not run\n{self}");
        }
        self.expect_code(if expected.is_empty() { 0 } else { 101 });
    }
}

// ---------------------------------------------------------------------------------------------
// Reports: `--junit` read by a JUnit reader this project did not write, and GitHub annotations.

/// The report at `path` as junitparser (PyPI, pinned in tests/interop/python) reads it.
fn junit_read(path: &Path) -> Value {
    let output = Command::new("python3")
        .arg(root().join("tests/interop/python/junit_read.py"))
        .arg(path)
        .env("PYTHONPATH", root().join("target/interop/python"))
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "junitparser could not read `{}`:\n{}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON document")
}

#[test]
fn junit_report_reads_as_ci_tools_read_it() {
    let dir = tempfile::tempdir().unwrap();
    // A folder that does not exist yet is created.
    let path = dir.path().join("reports/holon/junit.xml");
    let run = Py::new("extra-field")
        .args(&["--junit", path.to_str().unwrap()])
        .run();
    run.expect_code(101);
    let trials = run.trials();
    let suites = junit_read(&path);
    let suites = suites.as_array().unwrap();
    assert_eq!(suites.len(), 1, "{suites:?}");
    let suite = &suites[0];
    assert_eq!(suite["name"], "word-stats");
    assert_eq!(suite["tests"], 3);
    assert_eq!(suite["failures"], 1);
    assert_eq!(suite["errors"], 0);
    let cases = suite["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = trials.keys().map(String::as_str).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        sorted, expected,
        "one testcase per trial, named as libtest names it"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        assert!(case["time"].as_f64().is_some_and(|t| t >= 0.0), "{case}");
        assert_eq!(
            case["classname"],
            format!("word-stats::{}", name.split("::").next().unwrap())
        );
        match &trials[name] {
            Ok(()) => assert_eq!(case["results"], serde_json::json!([]), "{case}"),
            Err(message) => {
                let results = case["results"].as_array().unwrap();
                assert_eq!(results.len(), 1, "{case}");
                assert_eq!(results[0]["kind"], "Failure");
                let text = results[0]["text"].as_str().unwrap();
                // The whole message, as libtest printed it.
                for needle in [
                    "the output differs from the example",
                    "`interface.output` refuses `/extra`",
                    "gateway status: invalid_output",
                ] {
                    assert!(text.contains(needle), "`{needle}` not in\n{text}");
                    assert!(message.contains(needle));
                }
                assert_eq!(
                    results[0]["message"].as_str().unwrap(),
                    text.lines().next().unwrap()
                );
            }
        }
    }
}

#[test]
fn junit_report_that_cannot_be_written_says_why_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let path = file.join("junit.xml");
    let run = Py::new("ok")
        .args(&["--junit", path.to_str().unwrap()])
        .run();
    run.expect_code(1);
    assert!(
        run.stderr.contains(&format!(
            "error: cannot create `{}` for the JUnit report",
            file.display()
        )),
        "{run}"
    );
    // Every trial ran and passed; only the report is missing.
    assert!(run.trials().values().all(Result::is_ok), "{run}");
}

/// A manifest the checks refuse runs no trial, and the JUnit report says why: one failing
/// testcase per error, named by its check and place, with the message and the hint, whether the
/// command line refused it or the test target did (`cargo test --test holon` with
/// `HOLON_JUNIT`, where no command line checked first).
#[test]
fn junit_report_of_a_refused_manifest_has_a_failing_testcase_per_error() {
    let manifest = root().join("tests/fixtures/check/all-problems.yaml");
    let checked = crate::util::check_file(&manifest);
    let errors: Vec<&Value> = (checked.doc["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["severity"] == "error")
        .collect();
    assert!(errors.len() >= 2, "{:?}", checked.doc);
    let dir = tempfile::tempdir().unwrap();
    let by_command = dir.path().join("command.xml");
    let output = Command::new(BIN)
        .args([
            "--manifest",
            manifest.to_str().unwrap(),
            "--server-cmd",
            "false",
        ])
        .args(["--junit", by_command.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let by_target = dir.path().join("target.xml");
    let harness = holon_kit::harness::Harness::new(&manifest)
        .server_command("false")
        .junit(&by_target);
    let args = libtest_mimic::Arguments::from_iter(["holon", "--quiet"]);
    assert_eq!(crate::util::seam::run_harness(harness, &args), 1);
    for path in [&by_command, &by_target] {
        let suites = junit_read(path);
        let suite = &suites.as_array().unwrap()[0];
        assert_eq!(suite["failures"], errors.len(), "{suite}");
        assert_eq!(suite["tests"], errors.len(), "{suite}");
        let cases = suite["cases"].as_array().unwrap();
        for (case, error) in cases.iter().zip(&errors) {
            let place = format!("all-problems.yaml:{}:{}", error["line"], error["column"]);
            let name = case["name"].as_str().unwrap();
            assert!(
                name.starts_with(&format!("check::{} (", error["check"].as_str().unwrap()))
                    && name.ends_with(&format!("{place})")),
                "{name} for {error}"
            );
            let text = case["results"][0]["text"].as_str().unwrap();
            assert!(
                text.contains(error["message"].as_str().unwrap()),
                "{text}\nfor {error}"
            );
            if let Some(hint) = error["hint"].as_str() {
                assert!(text.contains(hint), "{text}\nfor {error}");
            }
        }
    }
}

#[test]
fn github_annotations_put_a_failing_example_at_its_line() {
    let run = Py::new("extra-field")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", root().display().to_string())
        .run();
    run.expect_code(101);
    let annotations: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    let manifest = root().join("tests/fixtures/harness/word-stats.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("- name: a short article"))
        .unwrap()
        + 1;
    // The path as the workflow sees it: relative to the repository's root.
    assert_eq!(
        annotations,
        [format!(
            "::error file=tests/fixtures/harness/word-stats.yaml,line={line},col=5,title=mcp%3A%3Aa short article::the output differs from the example at `/extra` (not in the example); gateway status: invalid_output"
        )],
        "{run}"
    );
}

// ---------------------------------------------------------------------------------------------
// `source-commit-stale`: the commit in `source` against the code under test.

/// A git work tree holding word-stats' manifest and one file of "code", committed.
struct Repo(tempfile::TempDir);

impl Repo {
    fn new() -> Repo {
        let repo = Repo(tempfile::tempdir().unwrap());
        repo.git(&["init", "-q"]);
        repo.write("agent.py", "print('v1')\n");
        repo.manifest("0000000000000000000000000000000000000000");
        repo.commit("v1");
        repo
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.path().join(file), text).unwrap();
    }

    fn manifest(&self, commit: &str) {
        let text = std::fs::read_to_string(root().join("tests/fixtures/harness/word-stats.yaml"))
            .unwrap()
            .replace("0000000000000000000000000000000000000000", commit);
        self.write("holon.yaml", &text);
    }

    fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// The `source-commit-stale` warnings of a passing run, as printed.
    fn warnings(&self) -> Vec<String> {
        let run = Py::new("ok")
            .manifest_at(&self.path().join("holon.yaml"))
            .run();
        run.expect_code(0);
        stale_warnings(&run.stderr)
    }
}

fn stale_warnings(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("warning[source-commit-stale]"))
        .map(|(i, l)| format!("{l}\n{}", lines.get(i + 1).unwrap_or(&"")))
        .collect()
}

#[test]
fn source_commit_of_the_deployed_code_is_current_though_the_manifest_changed_since() {
    let repo = Repo::new();
    let deployed = repo.git(&["rev-parse", "HEAD"]);
    // The usual order: deploy, then name the commit in the manifest and commit that.
    repo.manifest(&deployed);
    repo.commit("name the deployed commit");
    assert_eq!(repo.warnings(), Vec::<String>::new());
    // An abbreviated commit is the same commit.
    repo.manifest(&deployed[..10]);
    repo.commit("abbreviate");
    assert_eq!(repo.warnings(), Vec::<String>::new());
}

#[test]
fn source_commit_older_than_the_code_is_stale_at_its_line() {
    let repo = Repo::new();
    let deployed = repo.git(&["rev-parse", "HEAD"]);
    repo.manifest(&deployed);
    repo.write("agent.py", "print('v2')\n");
    let head = repo.commit("v2");
    let warnings = repo.warnings();
    let line = std::fs::read_to_string(repo.path().join("holon.yaml"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("source:"))
        .unwrap()
        + 1;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&format!(
            "warning[source-commit-stale]: `source.commit` (`{}`) is not the code under test: the agent's files changed since then (HEAD is `{}`)\n",
            &deployed[..12],
            &head[..12]
        )),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains(&format!("holon.yaml:{line}:")),
        "{warnings:?}"
    );
    // Uncommitted changes to the code are said too.
    repo.write("agent.py", "print('v3')\n");
    let warnings = repo.warnings();
    assert!(
        warnings[0].contains("and the work tree has uncommitted changes"),
        "{warnings:?}"
    );
}

#[test]
fn source_commit_with_uncommitted_code_is_no_commit() {
    let repo = Repo::new();
    let deployed = repo.git(&["rev-parse", "HEAD"]);
    repo.manifest(&deployed);
    repo.commit("name it");
    repo.write("agent.py", "print('edited')\n");
    let warnings = repo.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("holds the committed code, but the work tree has uncommitted changes"),
        "{warnings:?}"
    );
    // A detached HEAD at the deployed commit is that commit.
    repo.git(&["checkout", "-q", "--", "agent.py"]);
    repo.git(&["checkout", "-q", "--detach", "HEAD"]);
    assert_eq!(repo.warnings(), Vec::<String>::new());
}

#[test]
fn source_commit_unknown_to_the_repository_is_said_and_nothing_without_git() {
    let repo = Repo::new();
    let warnings = repo.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("is not a commit of this repository (or the clone is shallow)"),
        "{warnings:?}"
    );
    // A shallow clone that lacks the named commit says so, and passes.
    let deployed = repo.git(&["rev-parse", "HEAD"]);
    repo.manifest(&deployed);
    repo.write("agent.py", "print('v2')\n");
    repo.commit("v2");
    let shallow = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    let clone = Command::new("git")
        .args(["clone", "-q", "--depth", "1", &url])
        .arg(shallow.path().join("agent"))
        .output()
        .unwrap();
    assert!(clone.status.success(), "{clone:?}");
    let run = Py::new("ok")
        .manifest_at(&shallow.path().join("agent/holon.yaml"))
        .run();
    run.expect_code(0);
    let warnings = stale_warnings(&run.stderr);
    assert_eq!(warnings.len(), 1, "{run}");
    assert!(
        warnings[0].contains(&format!(
            "`source.commit` (`{}`) is not a commit of this repository (or the clone is shallow)",
            &deployed[..12]
        )),
        "{warnings:?}"
    );
    // Outside any work tree: silence.
    let plain = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo.path().join("holon.yaml"),
        plain.path().join("holon.yaml"),
    )
    .unwrap();
    let run = Py::new("ok")
        .manifest_at(&plain.path().join("holon.yaml"))
        .run();
    run.expect_code(0);
    assert_eq!(stale_warnings(&run.stderr), Vec::<String>::new(), "{run}");
    // No `git` on PATH: silence, and the run passes.
    let bin = tempfile::tempdir().unwrap();
    // The real interpreter, not a version manager's shim (a script that needs more tools).
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
    std::os::unix::fs::symlink(python, bin.path().join("python3")).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.path().join("sh")).unwrap();
    let run = Py::new("ok")
        .manifest_at(&repo.path().join("holon.yaml"))
        .env("PATH", bin.path().display().to_string())
        .run();
    run.expect_code(0);
    assert_eq!(stale_warnings(&run.stderr), Vec::<String>::new(), "{run}");
}

#[test]
fn a_git_that_does_not_finish_is_stopped_with_what_it_started_and_said() {
    // The repository's fsmonitor hook, which `git status` runs, never answers (a hook, a
    // credential prompt or a network file system hang the same way). The check gives up after
    // 5 s with git and the hook, says so, and the run passes: `Py::run` finds no process of
    // the run left, and its 60 s limit is the hook's hour for a git run without a deadline.
    let repo = Repo::new();
    let hook = repo.path().join(".git/hanging-fsmonitor");
    std::fs::write(&hook, "#!/bin/sh\nexec sleep 3600\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.git(&["config", "core.fsmonitor", &hook.display().to_string()]);
    let started = Instant::now();
    let warnings = repo.warnings();
    let took = started.elapsed();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("warning[source-commit-stale]: `source.commit` was not compared with the code under test: `git status` did not finish within 5 s and was stopped (a hook or a prompt that waits?)\n"),
        "{warnings:?}"
    );
    assert!(
        took >= Duration::from_secs(5),
        "{took:?}: git was not waited for"
    );
}

//! Explore, proven on latent defects that pass every example: a Rust agent (both passes, the
//! broken agent under `BROKEN_LATENT` with tests/fixtures/agents/broken-agent/latent.yaml) and
//! the Python SDK server (`MODE`), one per class of bug; each is found with the default
//! settings while every example trial passes. No false alarm on a correct Python or TypeScript
//! SDK server (the example agents and the scaffold run explore in their own tests). And the
//! settings: cases, seed, the replay command, bad values.

use std::process::Command;

use super::harness::{Marker, Py};
use crate::util::{BIN, CARGO_LIMIT, Finished, RUN_LIMIT, root, word_stats_with};

/// The broken agent with one latent defect, through `cargo holon-test` at its defaults.
fn rust(mode: &str) -> Finished {
    let marker = Marker::new();
    let dir = root().join("tests/fixtures/agents/broken-agent");
    let mut command = Command::new(BIN);
    command
        .args(["holon-test", "--", "--format", "json"])
        .env("HOLON_MANIFEST", dir.join("latent.yaml"))
        .env("BROKEN_LATENT", mode)
        .env_remove("HOLON_EXPLORE_CASES")
        .env_remove("HOLON_EXPLORE_SEED")
        .env("RUST_BACKTRACE", "0")
        .current_dir(&dir);
    let run = marker.spawn(&mut command).finish(CARGO_LIMIT);
    marker.assert_none_left();
    run
}

/// Both explore trials fail, each message holding every needle; every example trial passes.
fn both(run: &Finished, needles: &[&str]) {
    let function: Vec<&str> = needles
        .iter()
        .copied()
        .chain([
            "replay: HOLON_EXPLORE_SEED=",
            "cargo holon-test -- --exact explore::function",
        ])
        .collect();
    let mcp: Vec<&str> = needles
        .iter()
        .copied()
        .chain([
            "replay: HOLON_EXPLORE_SEED=",
            "cargo holon-test -- --exact explore::mcp",
        ])
        .collect();
    run.expect_failed(&[("explore::function", &function), ("explore::mcp", &mcp)]);
    // The examples in both passes, and in both protocol eras of the MCP pass (the kit's
    // runtime speaks both): explore runs in the newest only.
    assert_eq!(run.trials().len(), 13, "{run}");
}

#[test]
fn rust_a_crash_at_a_bound() {
    both(
        &rust("crash-at-bound"),
        &[
            "a paying caller would get `agent_crashed`",
            "edge case `/top` at `maximum` (50)",
            "input: {\"text\": \"\", \"top\": 50}",
            "error: agent_crashed",
            "gateway status: agent_crashed",
        ],
    );
}

#[test]
fn rust_an_absent_optional_property() {
    both(
        &rust("absent-optional"),
        &[
            "edge case the input with only its required properties",
            "input: {\"text\": \"a\"}",
            "gateway status: agent_crashed",
        ],
    );
}

#[test]
fn rust_a_line_break() {
    both(
        &rust("line-break"),
        &[
            "edge case `/text` a line break",
            "input: {\"text\": \"\\n\"}",
            "gateway status: agent_crashed",
        ],
    );
}

#[test]
fn rust_non_ascii_text() {
    both(
        &rust("non-ascii"),
        &[
            "edge case `/text` non-ASCII letters",
            "gateway status: agent_crashed",
        ],
    );
}

#[test]
fn rust_a_timeout_only_for_large_input() {
    let run = rust("large-timeout");
    both(
        &run,
        &[
            "a paying caller would get `timeout`",
            "edge case `/text` at `maxLength` (1000000 characters)",
            "stopped after 3 calls that timed out",
            "too long to print: the example is written in full to",
            "gateway status: timeout",
        ],
    );
}

#[test]
fn rust_an_output_out_of_schema() {
    both(
        &rust("out-of-schema"),
        &[
            "a paying caller would get `invalid_output`",
            "`interface.output` refuses `/reading_time_s`: missing required property `reading_time_s`",
            "a random case",
            "gateway status: invalid_output",
        ],
    );
}

#[test]
fn rust_a_server_that_answers_unlike_its_function() {
    // Both answers are valid outputs: only the differential sees that the wire changed one.
    let run = rust("server-differs");
    run.expect_failed(&[(
        "explore::mcp",
        &[
            "the server's answer differs from the function's for the same input",
            "edge case `/text` non-ASCII letters",
            "`Harness::explore_differential(false)`",
        ],
    )]);
}

// ---------------------------------------------------------------------------------------------
// The Python SDK server, through `--server-cmd`.

fn py(mode: &'static str, needles: &[&str]) -> Finished {
    let run = Py::new(mode).explore().run();
    run.expect_failed(&[("explore::mcp", needles)]);
    run
}

#[test]
fn python_a_crash_at_a_bound() {
    py(
        "crash-at-bound",
        &[
            "edge case `/top` at `maximum` (50)",
            "a failure with no `structuredContent.error.code`",
            "IndexError",
            "gateway status: agent_error",
        ],
    );
}

#[test]
fn python_an_absent_optional_property() {
    py(
        "absent-optional",
        &[
            "KeyError",
            "input: {\"text\": \"a\"}",
            "gateway status: agent_error",
        ],
    );
}

#[test]
fn python_a_line_break() {
    py(
        "line-break",
        &[
            "ValueError",
            "input: {\"text\": \"\\n\"}",
            "gateway status: agent_error",
        ],
    );
}

#[test]
fn python_non_ascii_text() {
    py(
        "non-ascii",
        &[
            "edge case `/text` non-ASCII letters",
            "UnicodeEncodeError",
            "gateway status: agent_error",
        ],
    );
}

#[test]
fn python_an_undeclared_code_only_for_large_input() {
    py(
        "large-undeclared",
        &[
            "the undeclared code `text_too_long`",
            "edge case `/text` at `maxLength` (1000000 characters)",
            "gateway status: agent_error",
        ],
    );
}

#[test]
fn python_an_output_out_of_schema() {
    py(
        "out-of-schema",
        &[
            "a paying caller would get `invalid_output`",
            "a random case",
            "gateway status: invalid_output",
        ],
    );
}

#[test]
fn python_a_server_that_dies_mid_explore() {
    // The server is started again for each call after a crash: the crash is laid on the input
    // that ends a server just started, and shrunk like any other defect.
    py(
        "large-exit",
        &[
            "the server exited (exit status: 4) during this call",
            "this input ends the server",
            "edge case `/text` at `maxLength` (1000000 characters); shrunk in",
            "gateway status: agent_crashed",
        ],
    );
}

#[test]
fn python_a_server_that_hangs_on_large_input() {
    let run = Py::new("large-hang")
        .manifest("word-stats-timeout-1s.yaml")
        .explore()
        .run();
    run.expect_failed(&[(
        "explore::mcp",
        &[
            "no answer within `runtime.limits.timeout_s` (1 s)",
            "edge case `/text` at `maxLength` (1000000 characters)",
            "gateway status: timeout",
        ],
    )]);
}

#[test]
fn python_a_server_that_answers_garbage() {
    py(
        "garbage",
        &[
            "only text content and no `structuredContent`",
            "502 Bad Gateway",
            "gateway status: invalid_output",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// No false alarm, and the coverage line.

#[test]
fn a_correct_python_server_passes_with_one_line_of_coverage() {
    let run = Py::new("ok").explore().run();
    run.expect_failed(&[]);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("explore::mcp: "))
        .unwrap_or_else(|| panic!("no coverage line\n{run}"));
    assert!(line.starts_with("explore::mcp: 100 cases ("), "{line}");
    assert!(line.contains("reached empty_text "), "{line}");
    assert!(line.contains("success "), "{line}");
    assert!(line.ends_with("; every declared code reached"), "{line}");
}

#[test]
fn a_correct_typescript_sdk_server_passes() {
    let node = root().join("tests/interop/node");
    assert!(
        node.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript SDK is not installed: run `.ci/setup-interop` first"
    );
    let marker = Marker::new();
    let mut command = server_cmd(&format!("node '{}'", node.join("server.mjs").display()));
    command.args(["--", "--format", "json"]);
    let run = marker.spawn(&mut command).finish(RUN_LIMIT);
    marker.assert_none_left();
    run.expect_failed(&[]);
    assert_eq!(run.trials().get("explore::mcp"), Some(&Ok(())), "{run}");
}

/// The official TypeScript SDK's express app (`createMcpExpressApp`), which keeps express's
/// 100 KB body limit and refuses a larger call with HTTP 413 and an HTML page, through
/// `--server-cmd` on `manifest`.
fn express_server(manifest: &std::path::Path) -> Command {
    let node = root().join("tests/interop/node");
    assert!(
        node.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript SDK is not installed: run `.ci/setup-interop` first"
    );
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(manifest)
        .arg("--server-cmd")
        .arg(format!(
            "EXPRESS=1 node '{}'",
            node.join("server.mjs").display()
        ))
        .env_remove("HOLON_EXPLORE_CASES")
        .env_remove("HOLON_EXPLORE_SEED")
        .args(["--", "--format", "json"]);
    command
}

/// What no report may show of a server's HTTP error: rmcp's Rust type names, the error page.
fn no_internals(text: &str) {
    for internal in [
        "rmcp::",
        "WorkerTransport",
        "reqwest::",
        "<!DOCTYPE",
        "<html",
        "<pre>",
    ] {
        assert!(!text.contains(internal), "`{internal}` in:\n{text}");
    }
}

#[test]
fn a_server_that_refuses_a_large_body_with_http_413_answered_and_is_shrunk() {
    let marker = Marker::new();
    let manifest = root().join("tests/fixtures/harness/word-stats.yaml");
    let run = marker
        .spawn(&mut express_server(&manifest))
        .finish(RUN_LIMIT);
    marker.assert_none_left();
    run.expect_failed(&[(
        "explore::mcp",
        &[
            "explore found an input the gateway admits that a paying caller would get `agent_error` for",
            "the server answered HTTP 413 Payload Too Large instead of a tool result: \"PayloadTooLargeError: request entity too large\"",
            "edge case `/text` at `maxLength` (1000000 characters); shrunk in ",
            "gateway status: agent_error",
        ],
    )]);
    let message = failure(&run);
    no_internals(&message);
    // The server answered: the shrinking went on, to a text it still refuses, within twice
    // express's limit of 102,400 bytes (it halves).
    assert!(!message.contains("shrunk in 0 steps"), "{message}");
    assert!(!message.contains("cannot be reached"), "{message}");
    let bytes: usize = message
        .split_once("the input is ")
        .and_then(|(_, rest)| rest.split_once(" bytes of YAML"))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no size of the shrunk input:\n{message}"));
    assert!(
        (100_000..204_800).contains(&bytes),
        "{bytes} bytes\n{message}"
    );
    // Nothing was retried: an answer is not a flake.
    assert!(!run.stderr.contains("tried again alone"), "{run}");
}

#[test]
fn an_example_the_server_refuses_with_http_413_says_so_and_why() {
    // An example of 150,000 characters: within `max_input_bytes`, past the server's 100 KB.
    let (_dir, manifest) = word_stats_with(
        "examples:\n",
        &format!(
            "examples:\n  - name: a long text\n    input: {{ text: \"{}\" }}\n    output: {{ characters: 150000, words: 75000, top_words: [{{ word: a, count: 75000 }}], reading_time_s: 19566 }}\n",
            "a ".repeat(75_000)
        ),
    );
    let marker = Marker::new();
    let mut command = express_server(&manifest);
    command.env("HOLON_EXPLORE_CASES", "0");
    let run = marker.spawn(&mut command).finish(RUN_LIMIT);
    marker.assert_none_left();
    run.expect_failed(&[(
        "mcp::a long text",
        &[
            "expected an output, got the server answered HTTP 413 Payload Too Large instead of a tool result: \"PayloadTooLargeError: request entity too large\"",
            "(this is the server's answer: it refuses a request body this large, which `runtime.limits.max_input_bytes` admits",
            "gateway status: agent_error",
        ],
    )]);
    no_internals(&run.trials()["mcp::a long text"].clone().unwrap_err());
}

#[test]
fn nextest_runs_the_explore_trials_each_in_its_own_process() {
    let marker = Marker::new();
    let mut command = super::harness::nextest_word_stats("explore::");
    command.env_remove("HOLON_EXPLORE_CASES");
    let run = marker.spawn(&mut command).finish(CARGO_LIMIT);
    run.expect_code(0);
    assert!(run.stderr.contains("2 tests run: 2 passed"), "{run}");
    marker.assert_none_left();
}

// ---------------------------------------------------------------------------------------------
// Settings.

#[test]
fn the_replay_command_replays_the_failure_and_a_seed_changes_the_draw() {
    let first = Py::new("out-of-schema").explore().run();
    let message = failure(&first);
    let replay = message
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .unwrap_or_else(|| panic!("no replay line\n{message}"))
        .to_string();
    assert!(
        replay.starts_with("cargo holon-test --manifest "),
        "{replay}"
    );
    assert!(replay.ends_with(" -- --exact explore::mcp"), "{replay}");
    // The printed command, run as printed (with this build as `cargo holon-test`).
    let marker = Marker::new();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            "{} --format json",
            replay.replacen("cargo holon-test", &format!("'{BIN}'"), 1)
        ))
        .env("MODE", "out-of-schema")
        .env("PYTHONPATH", root().join("target/interop/python"));
    let again = marker.spawn(&mut command).finish(RUN_LIMIT);
    marker.assert_none_left();
    assert_eq!(again.trials().len(), 1, "{again}");
    // The same failure; only the seed is now given rather than taken from the manifest.
    assert_eq!(
        failure(&again),
        message.replace(" (from the manifest's bytes)", ""),
        "the replay found something else"
    );
    // Another seed draws other random cases, and says it was given.
    let other = Py::new("out-of-schema")
        .explore()
        .args(&["--explore-seed", "0x2a"])
        .run();
    let text = failure(&other);
    assert!(text.contains("  seed: 42\n"), "{text}");
    assert!(message.contains("(from the manifest's bytes)"), "{message}");
}

/// The CLI on word-stats' manifest with `--server-cmd CMD`, explore at its defaults.
fn server_cmd(cmd: &str) -> Command {
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(root().join("tests/fixtures/harness/word-stats.yaml"))
        .args(["--server-cmd", cmd])
        .env_remove("HOLON_EXPLORE_CASES")
        .env_remove("HOLON_EXPLORE_SEED");
    command
}

fn failure(run: &Finished) -> String {
    match run.trials().get("explore::mcp") {
        Some(Err(message)) => message.clone(),
        other => panic!("`explore::mcp` did not fail: {other:?}\n{run}"),
    }
}

#[test]
fn zero_cases_turn_explore_off() {
    for (flag, env) in [(Some("0"), None), (None, Some("0"))] {
        let marker = Marker::new();
        let mut command = server_cmd("true");
        if let Some(n) = flag {
            command.args(["--explore-cases", n]);
        }
        if let Some(n) = env {
            command.env("HOLON_EXPLORE_CASES", n);
        }
        command.args(["--", "--list"]);
        let run = marker.spawn(&mut command).finish(RUN_LIMIT);
        run.expect_code(0);
        assert_eq!(
            run.listed(),
            [
                "mcp::tools/list",
                "mcp::a short article",
                "mcp::an empty document",
                "mcp::2025-11-25::tools/list",
                "mcp::2025-11-25::a short article",
                "mcp::2025-11-25::an empty document"
            ],
            "{run}"
        );
    }
}

#[test]
fn cargo_holon_test_passes_the_explore_settings_to_the_agent_s_tests() {
    let list = |args: &[&str]| {
        let marker = Marker::new();
        let mut command = Command::new(BIN);
        command
            .arg("holon-test")
            .args(args)
            .args(["--", "--list"])
            .env_remove("HOLON_EXPLORE_CASES")
            .current_dir(root().join("examples/word-stats"));
        let run = marker.spawn(&mut command).finish(CARGO_LIMIT);
        run.expect_code(0);
        run.listed()
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let on = list(&[]);
    assert!(on.contains(&"explore::function".to_string()), "{on:?}");
    assert!(on.contains(&"explore::mcp".to_string()), "{on:?}");
    let off = list(&["--explore-cases", "0", "--explore-seed", "0x10"]);
    assert_eq!(off.len() + 2, on.len(), "{off:?}");
    assert!(!off.iter().any(|t| t.starts_with("explore::")), "{off:?}");
}

#[test]
fn bad_explore_settings_are_refused_clearly() {
    // On the command line: a usage error.
    let mut command = server_cmd("true");
    command.args(["--explore-cases", "many", "--", "--list"]);
    let run = Marker::new().spawn(&mut command).finish(RUN_LIMIT);
    run.expect_code(2);
    assert!(run.stderr.contains("--explore-cases"), "{run}");
    // In the environment: the harness cannot run, and says which variable.
    for (name, value, says) in [
        ("HOLON_EXPLORE_CASES", "-1", "whole number from 0"),
        ("HOLON_EXPLORE_SEED", "seed", "decimal or 0x hexadecimal"),
    ] {
        let mut command = server_cmd("true");
        command.args(["--", "--list"]).env(name, value);
        let run = Marker::new().spawn(&mut command).finish(RUN_LIMIT);
        run.expect_code(1);
        assert!(
            run.stderr.contains(&format!("error: `{name}={value}`: ")) && run.stderr.contains(says),
            "{run}"
        );
    }
}

#[test]
fn the_number_of_cases_has_a_maximum_and_past_it_is_refused_before_anything_runs() {
    // At the maximum: accepted (listed only, so that nothing runs).
    let mut command = server_cmd("true");
    command.args(["--explore-cases", "100000", "--", "--list"]);
    let run = Marker::new().spawn(&mut command).finish(RUN_LIMIT);
    run.expect_code(0);
    assert!(run.listed().contains(&"explore::mcp"), "{run}");
    // One past it, and the count that aborted the process allocating its plan: a usage error,
    // whether or not the trials would run.
    for (cases, list) in [("100001", true), ("4000000000", false)] {
        let mut command = server_cmd("true");
        command.args(["--explore-cases", cases]);
        if list {
            command.args(["--", "--list"]);
        }
        let run = Marker::new().spawn(&mut command).finish(RUN_LIMIT);
        run.expect_code(2);
        assert!(
            run.stderr.contains("--explore-cases")
                && run
                    .stderr
                    .contains("from 0 (0 turns explore off) to 100000"),
            "{run}"
        );
    }
    // In the environment: the harness cannot run, and names the variable.
    let mut command = server_cmd("true");
    command
        .args(["--", "--list"])
        .env("HOLON_EXPLORE_CASES", "100001");
    let run = Marker::new().spawn(&mut command).finish(RUN_LIMIT);
    run.expect_code(1);
    assert!(
        run.stderr
            .contains("error: `HOLON_EXPLORE_CASES=100001`: the number of explore cases must be a whole number from 0 (0 turns explore off) to 100000"),
        "{run}"
    );
}

//! `holon-test call INPUT`: one call by hand, through the binary, against the Python-SDK
//! word-stats server its `[server] command` starts, a server already running (`--url`), and a
//! Rust agent (through its test target, `--function` too); the document in JSON, the gate,
//! `--save` (an example that then passes, the file's layout kept) and everything it refuses.

use serde_json::{Value, json};

use crate::util::py_agent::PyAgent;
use crate::util::{
    AgentProcess, CARGO_LIMIT, OutputWithin, RUN_LIMIT, root, stderr, stdout, text,
    word_stats_binary,
};

/// The one JSON document a `--format json` call printed.
fn document(output: &std::process::Output) -> Value {
    let out = stdout(output);
    assert_eq!(
        out.lines().count(),
        1,
        "one line on stdout: {}",
        text(output)
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {}", text(output)))
}

#[test]
fn a_success_a_declared_code_and_a_refused_input_as_the_receipt_says_them() {
    let agent = PyAgent::new("ok");
    let call = |input: &str| {
        agent
            .command(&["call", input, "--format", "json"])
            .output_within(RUN_LIMIT)
    };
    let success = call(r#"{"text": "two words two"}"#);
    assert_eq!(success.status.code(), Some(0), "{}", text(&success));
    let got = document(&success);
    assert_eq!(got["status"], "success");
    assert_eq!(got["billed"], true);
    assert_eq!(got["output"]["words"], 3, "{got}");
    assert_eq!(got["upstream"], json!([]));
    assert_eq!(got["pass"], "mcp");
    assert!(got["ms"].as_u64().is_some(), "{got}");
    assert!(got.get("error").is_none(), "{got}");
    let keys: Vec<&str> = got
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys[..5],
        ["status", "billed", "ms", "output", "upstream"],
        "{got}"
    );

    let declared = call(r#"{"text": ""}"#);
    assert_eq!(declared.status.code(), Some(0), "{}", text(&declared));
    let got = document(&declared);
    assert_eq!(got["status"], "empty_text");
    assert_eq!(got["billed"], false);
    assert_eq!(got["error"]["code"], "empty_text");
    assert_eq!(
        got["error"]["message"],
        "the text is empty or only whitespace"
    );

    // The gate refuses it: nothing is sent, so a server that was never started is not asked.
    let refused = call(r#"{"text": "hi", "top": 99}"#);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let got = document(&refused);
    assert_eq!(got["status"], "rejected_input");
    assert_eq!(got["billed"], false);
    assert_eq!(got["error"]["code"], "invalid_input");
    assert!(
        got["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`/top`: 99 is greater than the maximum of 50"),
        "{got}"
    );

    // In lines for a person, an example named by `--example`.
    let named = agent
        .command(&["call", "--example", "an empty document"])
        .output_within(RUN_LIMIT);
    assert_eq!(named.status.code(), Some(0), "{}", text(&named));
    assert!(
        stdout(&named).starts_with("empty_text (declared failure), not billed, ")
            && stdout(&named).contains("error: empty_text: the text is empty or only whitespace\n"),
        "{}",
        text(&named)
    );
}

#[test]
fn an_answer_against_the_agent_is_said_with_its_status_and_fails_the_command() {
    let agent = PyAgent::new("number-as-string");
    let called = agent
        .command(&["call", r#"{"text": "a b"}"#])
        .output_within(RUN_LIMIT);
    assert_eq!(called.status.code(), Some(101), "{}", text(&called));
    let said = stdout(&called);
    assert!(
        said.starts_with("invalid_output, not billed, ")
            && said.contains("error: invalid_output: `interface.output` refuses `/words`"),
        "{}",
        text(&called)
    );
}

#[test]
fn save_adds_an_example_that_then_passes_with_the_layout_kept() {
    let agent = PyAgent::new("ok");
    let before = std::fs::read_to_string(agent.manifest()).expect("the manifest");
    let saved = agent
        .command(&[
            "call",
            r#"{"text": "Saved by hand, by hand."}"#,
            "--save",
            "by hand",
        ])
        .output_within(RUN_LIMIT);
    assert_eq!(saved.status.code(), Some(0), "{}", text(&saved));
    assert!(
        stderr(&saved).contains("saved the call as the example `by hand` in `holon.yaml`"),
        "{}",
        text(&saved)
    );
    let after = std::fs::read_to_string(agent.manifest()).expect("the manifest");
    // Every byte before kept, comments included; the new example after the last one, in
    // their layout.
    assert!(after.starts_with(&before), "{after}");
    assert_eq!(
        &after[before.len()..],
        "  - name: by hand\n    input: { text: \"Saved by hand, by hand.\" }\n    output:\n      characters: 23\n      words: 5\n      top_words: [{ word: by, count: 2 }, { word: hand, count: 2 }, { word: saved, count: 1 }]\n      reading_time_s: 2\n"
    );
    let run = agent.command(&[]).output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(
        stdout(&run)
            .lines()
            .any(|l| l.starts_with("test mcp::by hand ") && l.ends_with("... ok")),
        "{}",
        text(&run)
    );
}

#[test]
fn save_refuses_a_name_taken_a_transient_code_and_an_answer_an_example_cannot_promise() {
    let manifest = std::fs::read_to_string(root().join("tests/fixtures/harness/word-stats.yaml"))
        .expect("the manifest")
        .replace(
            "description: The text is empty or only whitespace.\n      retryable: false",
            "description: The text is empty or only whitespace.\n      retryable: true",
        );
    assert!(manifest.contains("retryable: true"), "the fixture changed");
    let agent = PyAgent::with_manifest(&manifest, "number-as-string");
    let before = std::fs::read(agent.manifest()).expect("the manifest");
    for (input, name, said, code) in [
        (
            r#"{"text": "x"}"#,
            "a short article",
            "`--save a short article`: `holon.yaml` has an example named `a short article` already: nothing was called, nothing was written",
            1,
        ),
        (
            r#"{"text": ""}"#,
            "empty",
            "`--save empty`: `empty_text` is marked `retryable: true`: a transient failure is not what the agent promises for this input",
            1,
        ),
        (
            r#"{"text": "x"}"#,
            "wrong",
            "`--save wrong`: an example promises a success or a declared failure, and this call ended in `invalid_output`; nothing was written",
            101,
        ),
        (
            r#"{"text": 1}"#,
            "refused",
            "`--save refused`: an example promises a success or a declared failure, and this call ended in `rejected_input`; nothing was written",
            1,
        ),
    ] {
        let called = agent
            .command(&["call", input, "--save", name])
            .output_within(RUN_LIMIT);
        assert_eq!(called.status.code(), Some(code), "{}", text(&called));
        assert!(
            stderr(&called).contains(said),
            "`{said}`:\n{}",
            text(&called)
        );
        assert_eq!(
            std::fs::read(agent.manifest()).expect("the manifest"),
            before
        );
    }
}

#[test]
fn input_that_is_not_json_is_refused_and_a_file_is_read() {
    let agent = PyAgent::new("ok");
    let bad = agent
        .command(&["call", "{text: hi}"])
        .output_within(RUN_LIMIT);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        stderr(&bad).starts_with(
            "error: INPUT is not JSON: key must be a string at line 1 column 2 (hint: an input is a JSON object, quoted for the shell: `call '{\"text\":\"Holon is a registry of agents. Agents pay per successful call.\",\"top\":3}'`, or `call @input.json`)"
        ),
        "{}",
        text(&bad)
    );
    let missing = agent
        .command(&["call", "@nowhere.json"])
        .output_within(RUN_LIMIT);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(
        stderr(&missing).starts_with("error: cannot read the input `nowhere.json`: "),
        "{}",
        text(&missing)
    );
    std::fs::write(agent.dir().join("in.json"), r#"{"text": "from a file"}"#).expect("write");
    let file = agent
        .command(&["call", "@in.json", "--format", "json"])
        .output_within(RUN_LIMIT);
    assert_eq!(document(&file)["output"]["words"], 3, "{}", text(&file));
    // A file handle the tests cannot serve: refused before any call, with why.
    let handle = agent
        .command(&["call", r#"{"text": "holon://files/missing.csv"}"#])
        .output_within(RUN_LIMIT);
    assert_eq!(handle.status.code(), Some(1), "{}", text(&handle));
    assert!(
        stderr(&handle).contains(
            "error: the input's file handle `holon://files/missing.csv` cannot be served: `files/missing.csv` does not exist beside `holon.yaml` (the tests serve `holon://files/NAME` from `files/NAME`); nothing was called"
        ),
        "{}",
        text(&handle)
    );
    assert!(
        !text(&handle).contains("runtime_unavailable"),
        "{}",
        text(&handle)
    );
    let unknown = agent
        .command(&["call", "--example", "nothing"])
        .output_within(RUN_LIMIT);
    assert_eq!(unknown.status.code(), Some(1), "{}", text(&unknown));
    assert!(
        stderr(&unknown).contains(
            "error: `holon.yaml` has no example named `nothing` (its examples: `a short article`, `an empty document`)"
        ),
        "{}",
        text(&unknown)
    );
}

#[tokio::test]
async fn a_server_already_running_is_called_at_its_url() {
    let server = AgentProcess::start(word_stats_binary(), &[]).await;
    let manifest = root().join("examples/word-stats/holon.yaml");
    let mut command = std::process::Command::new(crate::util::PLAIN_BIN);
    command
        .arg("call")
        .arg(r#"{"text": "one two"}"#)
        .args(["--format", "json", "--url", &server.url, "--manifest"])
        .arg(&manifest);
    let called = crate::util::output_within_async(&mut command, RUN_LIMIT).await;
    assert_eq!(called.status.code(), Some(0), "{}", text(&called));
    assert_eq!(document(&called)["output"]["words"], 2, "{}", text(&called));
}

#[test]
fn a_rust_agent_is_called_through_its_test_target_function_and_server_alike() {
    let package = root().join("examples/word-stats");
    for (flags, pass) in [(&["--function"][..], "function"), (&[][..], "mcp")] {
        let called = std::process::Command::new(crate::util::PLAIN_BIN)
            .current_dir(&package)
            .args(["call", r#"{"text": "one two one"}"#, "--format", "json"])
            .args(flags)
            .env("NO_COLOR", "1")
            .output_within(CARGO_LIMIT);
        assert_eq!(called.status.code(), Some(0), "{}", text(&called));
        let got = document(&called);
        assert_eq!(
            (got["status"].as_str(), got["pass"].as_str()),
            (Some("success"), Some(pass))
        );
        assert_eq!(
            got["output"]["top_words"][0],
            json!({"word": "one", "count": 2})
        );
    }
}

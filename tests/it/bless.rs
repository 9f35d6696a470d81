//! `--bless`, end to end: a scaffolded agent whose code changed on purpose has exactly its
//! drifted outputs and codes rewritten, comments and layout kept, then passes; under nextest
//! (one process per trial) too; and nothing a crash, a timeout or the gateway's refusal
//! produced is ever written.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::scaffold::{cargo, failed_trials, new_agent};
use crate::util::{BIN, CARGO_LIMIT, OutputWithin, broken_agent_binary, root, text};

fn edit(path: &Path, from: &str, to: &str) {
    let old = std::fs::read_to_string(path).expect("read");
    assert!(
        old.contains(from),
        "`{from}` not in {}:\n{old}",
        path.display()
    );
    std::fs::write(path, old.replacen(from, to, 1)).expect("write");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read")
}

#[test]
fn a_changed_agent_is_blessed_in_place_and_a_panic_never_is() {
    let root = tempfile::tempdir().expect("tempdir");
    let (agent, _) = new_agent(root.path(), "blessed-agent");
    let manifest = agent.join("holon.yaml");
    let lib = agent.join("src/lib.rs");

    // Comments and layout the rewrite must keep, byte for byte.
    edit(
        &manifest,
        "  - name: a sentence\n",
        "  # The first example: a whole sentence.\n  - name: a sentence   # keep me\n",
    );
    edit(
        &manifest,
        "    error: no_words\n",
        "    error: no_words # the code\n\n# The end.\n",
    );
    let original = read(&manifest);

    // The author changes the agent on purpose: the longest word upper-cased, and a text with
    // no long word now answered `empty_text`.
    edit(
        &lib,
        "longest: longest.to_string()",
        "longest: longest.to_uppercase()",
    );
    edit(&lib, "ctx.fail(\"no_words\"", "ctx.fail(\"empty_text\"");
    let drifted = cargo(&agent)
        .args(["holon-test"])
        .output_within(CARGO_LIMIT);
    assert_eq!(drifted.status.code(), Some(101), "{}", text(&drifted));
    let failed: std::collections::BTreeSet<String> = failed_trials(&drifted).into_iter().collect();
    assert_eq!(
        failed,
        [
            "function::a sentence",
            "function::no word long enough",
            "function::short words left out",
            // The kit's runtime speaks both protocol eras: each is tested.
            "mcp::2025-11-25::a sentence",
            "mcp::2025-11-25::no word long enough",
            "mcp::2025-11-25::short words left out",
            "mcp::a sentence",
            "mcp::no word long enough",
            "mcp::short words left out",
        ]
        .map(String::from)
        .into(),
        "{}",
        text(&drifted)
    );
    assert_eq!(
        read(&manifest),
        original,
        "a run without --bless writes nothing"
    );

    let blessed = cargo(&agent)
        .args(["holon-test", "--bless"])
        .output_within(CARGO_LIMIT);
    assert_eq!(blessed.status.code(), Some(0), "{}", text(&blessed));
    let expected = original
        .replace(
            "output: { words: 8, longest: examples }",
            "output: { words: 8, longest: EXAMPLES }",
        )
        .replace(
            "output: { words: 3, longest: server }",
            "output: { words: 3, longest: SERVER }",
        )
        .replace("error: no_words # the code", "error: empty_text # the code");
    assert_eq!(read(&manifest), expected, "{}", text(&blessed));
    let out = text(&blessed);
    assert!(
        out.contains("3 examples now say what the agent does"),
        "{out}"
    );
    // libtest printed FAILED for the differences just written: the run says why it passes.
    assert!(
        out.contains("bless: the 9 failed trials above were the differences now written into `"),
        "{out}"
    );
    for line in [
        "`a sentence`: output: {\"words\":8,\"longest\":\"examples\"}  =>  output: {\"words\":8,\"longest\":\"EXAMPLES\"}",
        "`no word long enough`: error: no_words  =>  error: empty_text",
    ] {
        assert!(out.contains(line), "missing `{line}`:\n{out}");
    }

    let passes = cargo(&agent)
        .args(["holon-test"])
        .output_within(CARGO_LIMIT);
    assert!(passes.status.success(), "{}", text(&passes));
    let modified = std::fs::metadata(&manifest).and_then(|m| m.modified()).ok();
    let again = cargo(&agent)
        .args(["holon-test", "--bless"])
        .output_within(CARGO_LIMIT);
    assert!(again.status.success(), "{}", text(&again));
    // A bless with nothing to write says so, in one line, and writes nothing.
    let said: Vec<String> = (text(&again).lines())
        .filter(|l| l.starts_with("bless:"))
        .map(String::from)
        .collect();
    assert_eq!(
        said,
        ["bless: every example of `holon.yaml` already says what the agent does: nothing to write"],
        "{}",
        text(&again)
    );
    assert_eq!(read(&manifest), expected);
    assert_eq!(
        std::fs::metadata(&manifest).and_then(|m| m.modified()).ok(),
        modified,
        "a second bless writes nothing"
    );

    // The author reverts the case and, by mistake, makes one example panic. Under nextest
    // each trial is a process of its own: the function and MCP trials of an example bless it
    // concurrently, once; the panicking example is never written.
    edit(
        &lib,
        "longest: longest.to_uppercase()",
        "longest: longest.to_string()",
    );
    edit(
        &lib,
        "    if input.text.trim().is_empty() {",
        "    if input.text.contains(\"MCP\") {\n        panic!(\"deliberate\");\n    }\n    if input.text.trim().is_empty() {",
    );
    let nextest = cargo(&agent)
        .args([
            "nextest",
            "run",
            "--test",
            "holon",
            "--no-fail-fast",
            "--color",
            "never",
        ])
        .env("HOLON_BLESS", "1")
        .output_within(CARGO_LIMIT);
    assert!(!nextest.status.success(), "{}", text(&nextest));
    let reverted = expected.replace(
        "output: { words: 8, longest: EXAMPLES }",
        "output: { words: 8, longest: examples }",
    );
    assert_eq!(read(&manifest), reverted, "{}", text(&nextest));
    // The panicking example fails in both passes, blessed or not; nothing else does.
    let rerun = cargo(&agent)
        .args(["holon-test", "--bless"])
        .output_within(CARGO_LIMIT);
    assert_eq!(rerun.status.code(), Some(101), "{}", text(&rerun));
    assert_eq!(read(&manifest), reverted);
    let out = text(&rerun);
    assert!(
        out.contains("left as it is (a crash, a timeout, an answer the gateway refuses, an undeclared code or a transient failure is never an example)"),
        "{out}"
    );
    assert!(
        out.contains("`short words left out`: function: agent_crashed: the agent panicked; mcp: agent_crashed: the agent panicked"),
        "{out}"
    );
}

/// The broken agent's manifest in a folder of its own, and a `--server-cmd` that serves it
/// with the broken agent's server.
struct Broken {
    dir: tempfile::TempDir,
    manifest: PathBuf,
    command: String,
}

impl Broken {
    fn new(rewrite: impl FnOnce(String) -> String) -> Broken {
        let server = broken_agent_binary();
        let dir = tempfile::tempdir().expect("tempdir");
        let manifest = dir.path().join("holon.yaml");
        let fixture = root().join("tests/fixtures/agents/broken-agent/holon.yaml");
        std::fs::write(&manifest, rewrite(read(&fixture))).expect("write");
        let command = format!(
            "HOLON_MANIFEST='{}' exec '{}'",
            manifest.display(),
            server.display()
        );
        Broken {
            dir,
            manifest,
            command,
        }
    }

    fn bless(&self, libtest: &[&str]) -> std::process::Output {
        Command::new(BIN)
            .arg("--manifest")
            .arg(&self.manifest)
            .args(["--server-cmd", &self.command, "--bless", "--"])
            .args(libtest)
            .current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .output_within(CARGO_LIMIT)
    }
}

#[test]
fn only_declared_codes_and_valid_outputs_are_ever_written() {
    let broken = Broken::new(|text| text);
    let manifest = &broken.manifest;
    let original = read(manifest);
    let run = || broken.bless(&["--skip", "never returns"]);
    let first = run();
    assert_eq!(first.status.code(), Some(101), "{}", text(&first));
    // The wrong declared code is still a declared code: the example now says it. Nothing else
    // moved.
    let wrong =
        "  - name: the wrong declared code\n    input: {\"text\": \" \", \"top\": 42}\n    error: ";
    assert_eq!(
        read(manifest),
        original.replace(&format!("{wrong}empty_text"), &format!("{wrong}no_words")),
        "{}",
        text(&first)
    );
    let out = text(&first);
    for (example, why) in [
        (
            "a panic instead of a declared failure",
            "mcp: agent_crashed: the agent panicked",
        ),
        (
            "an undeclared code",
            "mcp: agent_crashed: the agent failed with `blank_text`",
        ),
        (
            "an error passed up with a question mark",
            "mcp: agent_crashed:",
        ),
        (
            "an extra field",
            "mcp: invalid_output: `interface.output` refuses `/extra`",
        ),
        (
            "a number as a string",
            "mcp: invalid_output: `interface.output` refuses `/words`",
        ),
        (
            "a rounded value",
            "mcp: invalid_output: `interface.output` refuses `/reading_time_s`",
        ),
        ("a call that hangs past timeout_s", "mcp: timeout:"),
    ] {
        assert!(
            out.contains(&format!("  `{example}`: {why}")),
            "`{example}` not reported as `{why}`:\n{out}"
        );
    }
    // Blessing again changes nothing: what is left can only be fixed in the agent.
    let blessed = read(manifest);
    let second = run();
    assert_eq!(second.status.code(), Some(101), "{}", text(&second));
    assert_eq!(read(manifest), blessed);
    assert!(!text(&second).contains("now say"), "{}", text(&second));
}

#[test]
fn a_rewrite_the_publish_checks_refuse_is_not_written() {
    // Every success example turned into a failure would leave no successful example: the
    // registry refuses that, so the file stays as it was and the run says why.
    // Only two examples: one success the agent now answers `empty_text` (a blank text), one
    // error example that already passes.
    let only = |text: String| {
        let head = &text[..text.find("examples:").expect("examples")];
        format!(
            "{head}examples:\n  - name: blank\n    input: {{text: \" \"}}\n    output: {{ characters: 1, words: 0, top_words: [], reading_time_s: 0 }}\n  - name: an empty document\n    input: {{\"text\": \"   \"}}\n    error: empty_text\n"
        )
    };
    let broken = Broken::new(only);
    let manifest = &broken.manifest;
    let only = read(manifest);
    let out = broken.bless(&[]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    assert_eq!(read(manifest), only);
    assert!(
        text(&out).contains("was not rewritten: the rewritten manifest would not pass the publish checks; nothing was written"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("no-success-example"), "{}", text(&out));
}

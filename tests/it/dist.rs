//! The kit without a Rust toolchain. `holon-test`, the same binary without the cargo word:
//! `--version`, and the server command `holon-test.toml` names (`[server] command`) outside a
//! Cargo package.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::scaffold::{failed_trials, passed_trials};
use crate::util::dist::Machine;
use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, root, text};

/// Longest an install from files, or a run against a server in Python, may take.
const LIMIT: Duration = Duration::from_secs(180);

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The plain agent, rendered by `holon-test new` in `lang` into `dir/name`.
fn new_agent(holon_test: &Path, machine: &Machine, dir: &Path, name: &str, lang: &str) -> PathBuf {
    let new = machine
        .command(holon_test)
        .current_dir(dir)
        .args(["new", name, "--lang", lang])
        .output_within(RUN_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    dir.join(name)
}

/// `holon.yaml`'s first example, told to expect one word more than the agent counts.
fn drift(agent: &Path) {
    let manifest = agent.join("holon.yaml");
    let text = std::fs::read_to_string(&manifest).expect("the manifest");
    let drifted = text.replace(
        "output: { words: 8, longest: examples }",
        "output: { words: 9, longest: examples }",
    );
    assert_ne!(text, drifted, "the example to drift is not in the manifest");
    std::fs::write(&manifest, drifted).expect("write the manifest");
}

/// A run that passed every trial, the example and explore trials of the MCP pass among them.
fn assert_passed(run: &Output) {
    let out = text(run);
    assert_eq!(run.status.code(), Some(0), "{out}");
    for trial in [
        "mcp::tools/list",
        "mcp::a sentence",
        "mcp::no word long enough",
        "explore::mcp",
    ] {
        assert!(
            passed_trials(run).contains(&trial.to_string()),
            "{trial}:\n{out}"
        );
    }
}

/// A run that failed the drifted example alone, naming it and the field that differs.
fn assert_drift_named(run: &Output) {
    assert_eq!(run.status.code(), Some(101), "{}", text(run));
    assert_eq!(failed_trials(run), ["mcp::a sentence"], "{}", text(run));
    assert!(text(run).contains("`/words`"), "{}", text(run));
}

#[test]
fn holon_test_is_the_same_command_without_the_cargo_word() {
    let out = Command::new(PLAIN_BIN)
        .arg("--version")
        .output_within(RUN_LIMIT);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("holon-test {VERSION}\n")
    );
    let help = Command::new(PLAIN_BIN)
        .arg("--help")
        .output_within(RUN_LIMIT);
    assert!(help.status.success(), "{}", text(&help));
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("Usage: holon-test [OPTIONS]"),
        "{}",
        text(&help)
    );
    // Under cargo, the binary keeps its name, called as cargo calls it or directly.
    for args in [&["holon-test", "--version"][..], &["--version"][..]] {
        let out = Command::new(crate::util::BIN)
            .args(args)
            .output_within(RUN_LIMIT);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("cargo holon-test {VERSION}\n"),
            "{args:?}"
        );
    }
}

#[test]
fn outside_a_cargo_package_holon_test_runs_the_server_its_config_names_or_says_what_to_add() {
    let machine = Machine::new();
    let agent = new_agent(
        Path::new(PLAIN_BIN),
        &machine,
        machine.home(),
        "py-agent",
        "python",
    );
    let site = root().join("target/interop/python");
    // `holon-test` alone: `[server] command = "python holon.py"`, in the agent's folder.
    let run = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .env("PYTHONPATH", &site)
        .output_within(LIMIT);
    assert_passed(&run);

    // From a folder below, the nearest holon.yaml and its config; a failure's replay line is
    // `holon-test` itself, with no flag.
    drift(&agent);
    let below = agent.join("notes");
    std::fs::create_dir(&below).unwrap();
    let drifted = machine
        .command(PLAIN_BIN)
        .current_dir(&below)
        .env("PYTHONPATH", &site)
        .output_within(LIMIT);
    assert_drift_named(&drifted);

    // An unknown key in `[server]`: refused, located, before any server starts.
    let config = agent.join("holon-test.toml");
    std::fs::write(
        &config,
        "[server]\ncommand = \"python holon.py\"\ncomand = \"x\"\n",
    )
    .unwrap();
    let refused = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .output_within(RUN_LIMIT);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    for said in [
        "error[unknown-field]: unknown field `comand` in `[server]`",
        "holon-test.toml:3:1",
        "did you mean `command`?",
    ] {
        assert!(
            text(&refused).contains(said),
            "`{said}` in: {}",
            text(&refused)
        );
    }
    let check = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .arg("check")
        .output_within(RUN_LIMIT);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(
        text(&check).contains("holon-test.toml:3:1"),
        "{}",
        text(&check)
    );

    // No config, no flag, no Cargo.toml: says what to add, exit 1.
    std::fs::remove_file(&config).unwrap();
    let nothing = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .output_within(RUN_LIMIT);
    assert_eq!(nothing.status.code(), Some(1), "{}", text(&nothing));
    for said in ["[server]", "command = ", "--server-cmd"] {
        assert!(
            text(&nothing).contains(said),
            "`{said}` in: {}",
            text(&nothing)
        );
    }
}

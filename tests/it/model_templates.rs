//! `new --lang typescript --model` and `new --lang python --model` through the built packages, on
//! a machine with no Rust toolchain and no key: green offline on the first run (the recordings
//! shipped with the template answer every example, explore's cases and the fault trials, in
//! both passes), and a changed prompt said once per example, with the command that records
//! again in the author's words.

use std::path::Path;
use std::process::{Command, Output};

use super::scaffold::{failed_trials, passed_trials};
use crate::util::{OutputWithin, text};

const LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Every trial of the model template passed: both passes, explore, the fault trials.
fn assert_green(run: &Output) {
    assert!(run.status.success(), "{}", text(run));
    let passed = passed_trials(run);
    for trial in [
        "function::an outage",
        "function::a question",
        "function::an empty ticket",
        "mcp::an outage",
        "mcp::a question",
        "explore::function",
        "explore::mcp",
        "faults::function::an outage",
        "faults::mcp::a question",
    ] {
        assert!(
            passed.contains(&trial.to_string()),
            "{trial}:\n{}",
            text(run)
        );
    }
    assert!(!text(run).contains("OPENAI_API_KEY=sk"), "{}", text(run));
}

/// The prompt changed in `file`: each example's full report once, the others one line, and the
/// refresh command as the author runs the kit (`form`).
fn assert_prompt_change_said_once_per_example(
    agent: &Path,
    file: &str,
    form: &str,
    run: &dyn Fn() -> Output,
) {
    let path = agent.join(file);
    let source = std::fs::read_to_string(&path).expect("the agent");
    assert!(source.contains("You triage support tickets."), "{source}");
    std::fs::write(
        &path,
        source.replacen("You triage support tickets.", "You sort tickets.", 1),
    )
    .expect("write");
    let changed = run();
    let printed = text(&changed);
    assert_eq!(changed.status.code(), Some(101), "{printed}");
    for example in ["an outage", "a question"] {
        // The report in full is a line of its own (an SDK may quote the proxy's answer inside
        // the agent's own message).
        let full =
            format!("upstream `model` has no recording for a request of example `{example}`:");
        let reports = printed.lines().filter(|l| *l == full).count();
        assert_eq!(reports, 1, "{example}: {printed}");
        assert!(
            failed_trials(&changed).contains(&format!("mcp::{example}")),
            "{printed}"
        );
    }
    // No trial judges the agent's answer to a request no recording holds: the example's trials
    // in both eras, flying together, each report their own.
    assert!(
        !printed.contains("expected an output, got"),
        "a trial judged an answer to an unrecorded request:\n{printed}"
    );
    let refresh =
        format!("refresh the recordings: OPENAI_API_KEY=... {form} --upstream record --bless\n");
    assert_eq!(printed.matches(&refresh).count(), 2, "{refresh}{printed}");
}

#[test]
fn the_typescript_model_template_is_green_offline_and_says_a_changed_prompt_once_per_example() {
    use crate::util::dist::{Machine, dist};
    let dist = dist();
    let machine = Machine::new();
    let registry = crate::util::registry::Registry::start(&[
        &dist.launcher,
        &dist.platform,
        &dist.runtime_npm,
    ]);
    let npm = |program: &str, dir: &Path| {
        let mut c: Command = machine.command(program);
        c.current_dir(dir).env("npm_config_registry", &registry.url);
        c
    };
    let new = npm("npx", machine.home())
        .args([
            "holon-test",
            "new",
            "triage",
            "--lang",
            "typescript",
            "--model",
        ])
        .output_within(LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    let agent = machine.home().join("triage");
    let install = npm("npm", &agent).arg("install").output_within(LIMIT);
    assert!(install.status.success(), "{}", text(&install));
    assert_green(&npm("npm", &agent).arg("test").output_within(LIMIT));
    assert_prompt_change_said_once_per_example(&agent, "agent.ts", "npx holon-test", &|| {
        npm("npx", &agent).arg("holon-test").output_within(LIMIT)
    });
}

#[test]
fn the_python_model_template_is_green_offline_and_says_a_changed_prompt_once_per_example() {
    use crate::util::dist::{Machine, dist};
    let dist = dist();
    let machine = Machine::new();
    let uv = |program: &str, dir: &Path| {
        let mut c: Command = machine.command(program);
        c.current_dir(dir).env("UV_FIND_LINKS", &dist.dir);
        c
    };
    let new = uv("uvx", machine.home())
        .args(["holon-test", "new", "triage", "--lang", "python", "--model"])
        .output_within(LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    let agent = machine.home().join("triage");
    assert_green(
        &uv("uv", &agent)
            .args(["run", "holon-test"])
            .output_within(LIMIT),
    );
    let mypy = uv("uv", &agent).args(["run", "mypy"]).output_within(LIMIT);
    assert!(mypy.status.success(), "{}", text(&mypy));
    assert_prompt_change_said_once_per_example(&agent, "agent.py", "uv run holon-test", &|| {
        uv("uv", &agent)
            .args(["run", "holon-test"])
            .output_within(LIMIT)
    });
}

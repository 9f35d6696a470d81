//! Recorded upstreams, end to end: model-backed agents (the Rust `examples/ticket-triage`, and
//! the same agent in Python with the official `openai` SDK through `--server-cmd`) recorded once
//! against a fake model that needs a key and varies its wording, then replayed with the model
//! gone and no key anywhere; live runs against the varying model; and every bad input of the
//! feature (a broken recording, a folder that cannot be written, an unreachable model, a
//! variable the agent never reads, a broken `holon-test.toml`).
//!
//! `HOLON_REGENERATE=1 cargo test --test it upstream::` writes the recordings and examples the
//! Rust record run made back into `examples/ticket-triage` and the model template.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::scaffold::cargo;
use crate::util::fake_model::{Behaviour, FakeModel};
use crate::util::{BIN, CARGO_LIMIT, OutputWithin, RUN_LIMIT, root, text};

/// The key the fake model wants; it must end up in no file.
pub(super) const KEY: &str = "sk-holon-test-7c1e4b9a2f";

pub(super) fn model() -> FakeModel {
    FakeModel::start(Behaviour {
        vary: true,
        ..Behaviour::keyed(KEY)
    })
}

/// One copy of the Rust agent at a time: every copy builds into the workspace's target folder
/// (see `scaffold::cargo`), where its test binary has the same name whatever the copy's folder,
/// so two copies built at once would run each other's binary.
static RUST_AGENT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A copy of `examples/ticket-triage` in `dir` (its own package, depending on this checkout),
/// without its recordings, and the turn to use it (see [`RUST_AGENT`]), held until dropped.
/// The copy's package and server are `ticket-triage-copy`: it builds in the workspace's target
/// folder, where a server named as the example's would replace the example's own, which other
/// tests run at the same time.
pub(super) fn rust_agent(dir: &Path) -> (PathBuf, std::sync::MutexGuard<'static, ()>) {
    let turn = RUST_AGENT.lock().unwrap_or_else(|e| e.into_inner());
    let from = root().join("examples/ticket-triage");
    let to = dir.join("ticket-triage");
    for file in [
        "holon.yaml",
        "holon-test.toml",
        "src/lib.rs",
        "src/main.rs",
        "tests/holon.rs",
    ] {
        let target = to.join(file);
        std::fs::create_dir_all(target.parent().expect("a folder")).expect("mkdir");
        let text = std::fs::read_to_string(from.join(file)).expect("read the example");
        let text = text.replace(
            "CARGO_BIN_EXE_ticket-triage",
            "CARGO_BIN_EXE_ticket-triage-copy",
        );
        std::fs::write(&target, text).expect("copy");
    }
    let manifest = std::fs::read_to_string(from.join("Cargo.toml"))
        .expect("Cargo.toml")
        .replace(
            "path = \"../..\"",
            &format!("path = {:?}", root().display().to_string()),
        )
        .replace(
            "\n[lints]\nworkspace = true\n",
            "\n[lib]\nname = \"ticket_triage\"\n",
        )
        .replace("name = \"ticket-triage\"", "name = \"ticket-triage-copy\"");
    // A workspace of its own, with the workspace's profile for its dependencies (a new agent's
    // template has it too): with their debug info, every dependency would be compiled again in
    // the shared target folder, a whole second build of the kit's tree.
    let manifest = format!("{manifest}\n[profile.dev.package.\"*\"]\ndebug = false\n");
    std::fs::write(to.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    (to, turn)
}

/// The Python agent beside the example's manifest and `holon-test.toml`, in `dir`.
pub(super) fn python_agent(dir: &Path) -> PathBuf {
    let to = dir.join("py-triage");
    std::fs::create_dir_all(&to).expect("mkdir");
    for (from, file) in [
        ("examples/ticket-triage", "holon.yaml"),
        ("examples/ticket-triage", "holon-test.toml"),
        ("tests/fixtures/agents/py-triage", "agent.py"),
    ] {
        std::fs::copy(root().join(from).join(file), to.join(file)).expect("copy");
    }
    to
}

/// `cargo holon-test ARGS` in `agent`, the model's variables set or removed.
pub(super) fn run_rust(agent: &Path, args: &[&str], model: Option<&FakeModel>) -> Output {
    let mut command = cargo(agent);
    command.arg("holon-test").args(args);
    with_model(&mut command, model);
    command.output_within(CARGO_LIMIT)
}

/// `cargo-holon-test --manifest holon.yaml --server-cmd "python3 agent.py" ARGS` in `agent`.
pub(super) fn run_python(
    agent: &Path,
    args: &[&str],
    model: Option<&FakeModel>,
    mode: &str,
) -> Output {
    let mut command = Command::new(BIN);
    command
        .current_dir(agent)
        .args([
            "--manifest",
            "holon.yaml",
            "--server-cmd",
            "python3 agent.py",
        ])
        .args(args)
        .env("PYTHONPATH", root().join("target/interop/python"))
        .env("MODE", mode)
        .env("NO_COLOR", "1");
    with_model(&mut command, model);
    command.output_within(RUN_LIMIT)
}

fn with_model(command: &mut Command, model: Option<&FakeModel>) {
    command.env_remove("HOLON_UPSTREAM");
    match model {
        Some(model) => {
            command
                .env("OPENAI_BASE_URL", &model.url)
                .env("OPENAI_API_KEY", KEY);
        }
        None => {
            command
                .env_remove("OPENAI_BASE_URL")
                .env_remove("OPENAI_API_KEY");
        }
    }
}

/// Every file under `dir` but build output, with its text.
pub(super) fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name == "__pycache__" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out
}

fn assert_no_key(dir: &Path) {
    for (path, text) in files(dir) {
        assert!(!text.contains(KEY), "the key is in {}", path.display());
    }
}

pub(super) fn recordings(agent: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(agent.join("recordings"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The replay runs pass, every trial and explore too, three times in a row.
fn passes_three_times(run: impl Fn() -> Output) {
    for attempt in 1..=3 {
        let out = run();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(0), "replay {attempt}:\n{all}");
        for trial in [
            "explore::mcp",
            "mcp::tools/list",
            "mcp::an outage",
            "mcp::a question",
        ] {
            assert!(
                all.contains(&format!("test {trial}")),
                "`{trial}` in replay {attempt}:\n{all}"
            );
        }
        assert!(
            !all.contains("had no recording"),
            "replay {attempt}:\n{all}"
        );
    }
}

#[test]
fn a_rust_agent_records_once_then_replays_offline_without_its_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (agent, _turn) = rust_agent(dir.path());
    let mut model = model();
    // With the key and the model: the examples take the model's answers, the recordings are
    // written (one file per success example, one for explore), and the passes saw the same
    // answers (bless would refuse otherwise).
    let recorded = run_rust(&agent, &["--upstream", "record", "--bless"], Some(&model));
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded));
    assert_eq!(
        recordings(&agent),
        ["a-question.json", "an-outage.json", "explore.json"]
    );
    assert!(model.requests() > 2, "{}", model.requests());
    assert!(
        text(&recorded).contains("upstream: recorded"),
        "{}",
        text(&recorded)
    );
    assert_no_key(&agent);
    if std::env::var_os("HOLON_REGENERATE").is_some() {
        regenerate(&agent);
    }
    // The model gone, no key: offline, exact, three times.
    model.stop();
    // Replay is exact: the fault trials have tests of their own (`faults.rs`).
    passes_three_times(|| run_rust(&agent, &["--faults", "off"], None));
    // The agent keeps one `reqwest::Client` in a `OnceLock`: on the run's one runtime, every
    // call of every pass and of explore gets through it, whatever the worker count.
    for threads in ["1", "2", "4", "8"] {
        let out = run_rust(
            &agent,
            &["--faults", "off", "--", "--test-threads", threads],
            None,
        );
        let all = text(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "--test-threads {threads}:\n{all}"
        );
        assert!(
            !all.contains("upstream_unavailable "),
            "--test-threads {threads}:\n{all}"
        );
    }
    // The prompt changes: the requests are not the recorded ones any more.
    let lib = agent.join("src/lib.rs");
    let code = std::fs::read_to_string(&lib).expect("lib.rs");
    std::fs::write(
        &lib,
        code.replacen("You triage support tickets.", "You triage tickets.", 1),
    )
    .expect("write lib.rs");
    let changed = run_rust(&agent, &[], None);
    let all = text(&changed);
    assert_eq!(changed.status.code(), Some(101), "{all}");
    for needle in [
        "upstream `model` has no recording for a request of example `an outage`",
        "POST /chat/completions",
        "the closest recorded request (`recordings/an-outage.json`, exchange 1) differs at `/messages/0/content`",
        "refresh the recordings: OPENAI_API_KEY=... cargo holon-test --upstream record --bless\n  (this example alone: OPENAI_API_KEY=... cargo holon-test --upstream record --bless -- 'an outage')",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
}

/// The record run's recordings and blessed examples, back into the example and the template.
fn regenerate(agent: &Path) {
    let example = root().join("examples/ticket-triage");
    let template = root().join("crates/holon-cli/templates/model");
    let _ = std::fs::remove_dir_all(example.join("recordings"));
    let _ = std::fs::remove_dir_all(template.join("recordings"));
    for to in [&example, &template] {
        std::fs::create_dir_all(to.join("recordings")).expect("mkdir");
        for name in recordings(agent) {
            let file = Path::new("recordings").join(name);
            std::fs::copy(agent.join(&file), to.join(&file)).expect("copy a recording");
        }
    }
    std::fs::copy(agent.join("holon.yaml"), example.join("holon.yaml")).expect("copy holon.yaml");
    // The template's manifest is the example's from `interface:` on, its tool a hole.
    let blessed = std::fs::read_to_string(agent.join("holon.yaml")).expect("holon.yaml");
    let template_manifest = template.join("holon.yaml");
    let old = std::fs::read_to_string(&template_manifest).expect("the template's holon.yaml");
    let (head, _) = old.split_once("\ninterface:").expect("a template header");
    let (_, body) = blessed.split_once("\ninterface:").expect("an interface");
    let body = body.replace("tool: ticket_triage", "tool: {{tool}}");
    std::fs::write(template_manifest, format!("{head}\ninterface:{body}")).expect("write");
}

#[test]
fn a_python_agent_with_the_openai_sdk_records_once_then_replays_offline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    let mut model = model();
    let recorded = run_python(
        &agent,
        &["--upstream", "record", "--bless"],
        Some(&model),
        "ok",
    );
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded));
    assert_eq!(
        recordings(&agent),
        ["a-question.json", "an-outage.json", "explore.json"]
    );
    // Two calls a ticket, the second streamed, both recorded.
    let outage = std::fs::read_to_string(agent.join("recordings/an-outage.json")).expect("read");
    assert_eq!(
        outage.matches("\"upstream\": \"model\"").count(),
        2,
        "{outage}"
    );
    assert!(outage.contains("\"sse\": ["), "{outage}");
    assert_no_key(&agent);
    model.stop();
    passes_three_times(|| run_python(&agent, &["--faults", "off"], None, "ok"));
    // The failure names the command of this very run.
    let code = std::fs::read_to_string(agent.join("agent.py")).expect("agent.py");
    std::fs::write(
        agent.join("agent.py"),
        code.replacen("You triage support tickets.", "You sort tickets.", 1),
    )
    .expect("write agent.py");
    let changed = run_python(&agent, &[], None, "ok");
    let all = text(&changed);
    assert_eq!(changed.status.code(), Some(101), "{all}");
    // One diagnosis for every trial of the stale examples, whatever flew beside them: each
    // says its request has no recording (in full, or in one line naming the request another
    // trial reported), none that its recording may hold a bad day's answer.
    assert!(!all.contains("on a bad day"), "{all}");
    for trial in [
        "mcp::an outage",
        "mcp::a question",
        "mcp::2025-11-25::an outage",
        "mcp::2025-11-25::a question",
    ] {
        let report = all
            .split(&format!("---- {trial} ----\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no report of `{trial}`:\n{all}"));
        assert!(
            report.starts_with("upstream `model` has no recording for a request of example"),
            "`{trial}`: {report}"
        );
    }
    assert!(
        all.contains("refresh the recordings: OPENAI_API_KEY=... cargo holon-test --upstream record --bless --manifest holon.yaml --server-cmd 'python3 agent.py'"),
        "{all}"
    );
}

/// Explore recorded with a few cases, then replayed with more: a case whose model request has
/// no recording is not judged, whatever the agent made of the replay's refusal (its SDK retries
/// it, then it answers its declared `upstream_unavailable`); the summary counts those cases, no
/// code is said to be reached by them, and the trial passes on the cases that were recorded.
#[test]
fn explore_cases_beyond_the_recorded_ones_are_not_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    let mut model = model();
    let recorded = run_python(
        &agent,
        &["--upstream", "record", "--bless", "--explore-cases", "12"],
        Some(&model),
        "ok",
    );
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded));
    model.stop();
    let replayed = run_python(
        &agent,
        &["--explore-cases", "100", "--faults", "off"],
        None,
        "ok",
    );
    let all = text(&replayed);
    assert_eq!(replayed.status.code(), Some(0), "{all}");
    let summary = all
        .lines()
        .find(|l| l.starts_with("explore::mcp: 100 cases"))
        .unwrap_or_else(|| panic!("no summary of explore::mcp:\n{all}"));
    assert!(summary.contains("cases had no recording"), "{summary}");
    assert!(!summary.contains("upstream_unavailable "), "{summary}");
}

#[test]
fn live_runs_judge_what_a_paying_caller_gets_and_note_the_differences() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    let model = model();
    // The examples' summaries were written by another run of the model: live answers differ
    // in wording, which is a note, not a failure; nothing is written.
    let live = run_python(
        &agent,
        &["--upstream", "live", "--explore-cases", "4"],
        Some(&model),
        "ok",
    );
    let all = text(&live);
    assert_eq!(live.status.code(), Some(0), "{all}");
    assert!(
        all.contains("note: live: `mcp::an outage` differs from its example at `/summary`"),
        "{all}"
    );
    assert!(!agent.join("recordings").exists(), "live wrote recordings");
    assert!(model.requests() > 0);
    // An empty ticket is still judged exactly: it is the example's declared code.
    // (libtest pads the names to the longest, a second era's.)
    assert!(
        all.lines()
            .any(|l| l.starts_with("test mcp::an empty ticket ")
                && l.split_once(" ... ")
                    .map(|(name, end)| (name.trim_end(), end))
                    == Some(("test mcp::an empty ticket", "ok"))),
        "{all}"
    );
}

#[test]
fn the_model_unreachable_while_recording_fails_the_trial_and_records_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    let mut model = model();
    let url = model.url.clone();
    model.stop();
    let mut command = Command::new(BIN);
    command
        .current_dir(&agent)
        .args([
            "--manifest",
            "holon.yaml",
            "--server-cmd",
            "python3 agent.py",
            "--upstream",
            "record",
        ])
        .args(["--", "--exact", "mcp::an outage"])
        .env("PYTHONPATH", root().join("target/interop/python"))
        .env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", KEY);
    let out = command.output_within(RUN_LIMIT);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    assert!(
        all.contains(
            "upstream `model` could not be reached while recording (POST /chat/completions)"
        ),
        "{all}"
    );
    assert!(
        all.contains("nothing is recorded for example `an outage`"),
        "{all}"
    );
    assert!(recordings(&agent).is_empty(), "{:?}", recordings(&agent));
}

#[test]
fn a_broken_recording_is_refused_where_it_is_wrong_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    std::fs::create_dir_all(agent.join("recordings")).expect("mkdir");
    let broken = "{\n  \"example\": \"an outage\",\n  \"exchanges\": [\n    {\"upstream\": \"model\", \"request\": {\"method\": \"POST\", \"path\": \"/chat/completions\"}, \"response\": {\"status\": 700}}\n  ]\n}\n";
    std::fs::write(agent.join("recordings/an-outage.json"), broken).expect("write");
    for mode in ["replay", "record"] {
        let out = run_python(&agent, &["--upstream", mode], None, "ok");
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{mode}: {all}");
        assert!(
            all.contains("error[recording-invalid]: `700` is not an HTTP status"),
            "{mode}: {all}"
        );
        assert!(
            all.contains("recordings/an-outage.json:4:"),
            "{mode}: {all}"
        );
        assert_eq!(
            std::fs::read_to_string(agent.join("recordings/an-outage.json")).expect("read"),
            broken,
            "{mode} overwrote the file"
        );
    }
}

#[test]
fn a_recordings_folder_that_cannot_be_written_stops_a_record_run_before_any_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    // A file where the folder should be: it cannot be made, whoever runs the test.
    std::fs::write(agent.join("recordings"), "not a folder").expect("write");
    let manifest = std::fs::read_to_string(agent.join("holon.yaml")).expect("read");
    let model = model();
    let out = run_python(&agent, &["--upstream", "record"], Some(&model), "ok");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("`--upstream record` cannot write the recordings in"),
        "{all}"
    );
    assert_eq!(model.requests(), 0, "a call was made");
    assert_eq!(
        std::fs::read_to_string(agent.join("holon.yaml")).expect("read"),
        manifest
    );
}

#[test]
fn an_upstream_the_agent_never_calls_is_named_after_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    std::fs::write(
        agent.join("holon-test.toml"),
        "[upstreams.model]\nenv = \"OPENAI_BASE_URL\"\nsecrets = [\"OPENAI_API_KEY\"]\n\n[upstreams.search]\nenv = \"SEARCH_URL\"\nurl = \"https://search.example\"\n",
    )
    .expect("write");
    let model = model();
    let out = run_python(
        &agent,
        &[
            "--upstream",
            "live",
            "--explore-cases",
            "0",
            "--",
            "mcp::an",
        ],
        Some(&model),
        "ok",
    );
    let all = text(&out);
    assert!(
        all.contains("warning: no request reached upstream `search` in this run: does the agent read its base URL from `SEARCH_URL`?"),
        "{all}"
    );
    assert!(!all.contains("upstream `model` in this run"), "{all}");
}

#[test]
fn a_broken_holon_test_toml_is_refused_with_every_problem_located() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = python_agent(dir.path());
    std::fs::write(
        agent.join("holon-test.toml"),
        "[upstreams.model]\nenvv = \"OPENAI_BASE_URL\"\nurl = \"not a url\"\n",
    )
    .expect("write");
    let check = Command::new(BIN)
        .current_dir(&agent)
        .arg("check")
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT);
    let test = run_python(&agent, &[], None, "ok");
    for (what, out) in [("check", check), ("a test run", test)] {
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{what}: {all}");
        for needle in [
            "error[unknown-field]: unknown field `envv` in upstream `model`",
            "holon-test.toml:2:1",
            "= hint: did you mean `env`?",
            "error[invalid-value]: `not a url` does not parse as a URL",
            "holon-test.toml:3:7",
            "error[missing-field]: upstream `model` has no `env`",
        ] {
            assert!(all.contains(needle), "{what}: `{needle}` in:\n{all}");
        }
    }
}

//! Upstream faults, end to end: the fault trials of the Rust `examples/ticket-triage` and of the
//! same agent in Python (the official `openai` SDK, through `--server-cmd`), correct and with
//! two deliberate defects; the replay of one fault; and the rules that keep transient failures
//! out of the contract (`--bless` against a model answering 429, explore against a model that
//! cannot be reached).

use std::path::{Path, PathBuf};
use std::process::Output;

use super::upstream::{KEY, python_agent, run_python, run_rust, rust_agent};
use crate::util::fake_model::{Behaviour, FakeModel};
use crate::util::{root, text};

/// The Rust example in `dir` with its committed recordings, and the turn to use it.
fn recorded_rust(dir: &Path) -> (PathBuf, std::sync::MutexGuard<'static, ()>) {
    let (agent, turn) = rust_agent(dir);
    let from = root().join("examples/ticket-triage/recordings");
    std::fs::create_dir_all(agent.join("recordings")).expect("mkdir");
    for entry in std::fs::read_dir(&from).expect("the example's recordings") {
        let entry = entry.expect("an entry");
        std::fs::copy(
            entry.path(),
            agent.join("recordings").join(entry.file_name()),
        )
        .expect("copy a recording");
    }
    (agent, turn)
}

/// The Python agent in `dir`, recorded against a fake model that is gone afterwards.
pub(super) fn recorded_python(dir: &Path) -> PathBuf {
    let agent = python_agent(dir);
    let model = super::upstream::model();
    let recorded = run_python(
        &agent,
        &["--upstream", "record", "--bless"],
        Some(&model),
        "ok",
    );
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded));
    agent
}

/// The fault reports of a run, as `(trial, fault)` pairs in the order printed.
fn failed_faults(all: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut trial = String::new();
    for line in all.lines() {
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|l| l.strip_suffix(" ----"))
        {
            trial = name.to_string();
        } else if let Some(rest) = line.strip_prefix("fault ")
            && let Some((fault, _)) = rest.split_once(':')
        {
            out.push((trial.clone(), fault.to_string()));
        }
    }
    out
}

/// Whether libtest printed `trial` as passed.
fn passed(all: &str, trial: &str) -> bool {
    all.lines().any(|line| {
        line.strip_prefix("test ")
            .and_then(|l| l.strip_prefix(trial))
            .is_some_and(|rest| rest.trim_start().starts_with("...") && rest.ends_with(" ok"))
    })
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(t, f)| (t.to_string(), f.to_string()))
        .collect()
}

#[test]
fn the_rust_example_ends_every_fault_in_a_declared_code_on_both_passes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (agent, _turn) = recorded_rust(dir.path());
    let out = run_rust(&agent, &[], None);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    for pass in ["function", "mcp"] {
        for example in ["an outage", "a question"] {
            assert!(
                passed(&all, &format!("faults::{pass}::{example}")),
                "{pass} {example}:\n{all}"
            );
        }
        // Two examples, one exchange each, seven faults: the HTML page is unreadable, every
        // other fault is the model unavailable (the stall within the agent's own 5 s).
        assert!(
            all.contains(&format!("faults::{pass}: 2 examples, 14 faults; reached model_answer_unreadable 2, upstream_unavailable 12\n")),
            "{pass}:\n{all}"
        );
    }
    // The codes no example shows are covered by the faults, and said to be.
    for code in ["upstream_unavailable", "model_answer_unreadable"] {
        assert!(
            all.contains(&format!(
                "note: declared error `{code}` has no example, and needs none to be tested: `faults::"
            )),
            "{code}:\n{all}"
        );
    }
    assert!(!all.contains("error-without-example"), "{all}");
    // One fault, replayed alone, as a report's `replay:` line does it.
    let mut one = super::scaffold::cargo(&agent);
    one.args(["holon-test", "--", "--exact", "faults::mcp::an outage"])
        .env("HOLON_FAULT", "1:reset")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY");
    let out = crate::util::OutputWithin::output_within(&mut one, crate::util::CARGO_LIMIT);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("faults::mcp: 1 example, 1 fault; reached upstream_unavailable 1\n"),
        "{all}"
    );
    assert!(!all.contains("faults::function:"), "{all}");
    // Off by the command line and by the environment: no fault trial at all.
    let off = run_rust(&agent, &["--faults", "off"], None);
    assert_eq!(off.status.code(), Some(0), "{}", text(&off));
    assert!(!text(&off).contains("faults::"), "{}", text(&off));
    // With the faults off, nothing covers the codes without an example: the warning is back.
    assert!(
        text(&off).contains("warning[error-without-example]"),
        "{}",
        text(&off)
    );
    let bad = run_rust(&agent, &["--faults", "sometimes"], None);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

#[test]
fn the_python_agent_with_the_openai_sdk_passes_every_fault() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = recorded_python(dir.path());
    let out = run_python(&agent, &[], None, "ok");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    // Two examples, two model calls each (the second streamed), seven faults: the first call's
    // HTML page is unreadable JSON, the second's an empty stream, so unreadable too.
    assert!(
        all.contains("faults::mcp: 2 examples, 28 faults; reached model_answer_unreadable 4, upstream_unavailable 24\n"),
        "{all}"
    );
}

/// A run split in shards (`--partition`) deals the fault trials with the examples: each
/// example's fault trial runs in the shard that makes its call, and the shards' faults together
/// are the whole run's, none twice; each shard's note names its share of them.
#[test]
fn the_fault_trials_are_dealt_among_the_shards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = recorded_python(dir.path());
    let mut union = Vec::new();
    // Three examples, one of them a declared error (no fault trial), dealt in turn.
    for (shard, examples) in [("count:1/2", 2), ("count:2/2", 1)] {
        let out = run_python(
            &agent,
            &["--explore-cases", "0", "--partition", shard],
            None,
            "ok",
        );
        let all = text(&out);
        assert_eq!(out.status.code(), Some(0), "{shard}:\n{all}");
        assert!(
            all.contains(&format!(
                "note: `--partition {shard}`: this shard runs {examples} of the 3 examples, and its share of the fault trials\n"
            )),
            "{shard}:\n{all}"
        );
        // One example and its two model calls, seven faults each.
        assert!(
            all.contains("faults::mcp: 1 example, 14 faults; reached model_answer_unreadable 2, upstream_unavailable 12\n"),
            "{shard}:\n{all}"
        );
        for example in ["an outage", "a question"] {
            if passed(&all, &format!("faults::mcp::{example}")) {
                union.push(example);
            }
        }
    }
    union.sort_unstable();
    assert_eq!(union, ["a question", "an outage"], "each once, in all");
}

/// One wrong number in one example of a model-backed agent is one report: the example's own
/// trial shows the difference in full; its fault trial, whose every failed fault ended in that
/// same answer, says in one line that the example, not a fault, is at odds with it.
#[test]
fn one_wrong_example_is_one_report_not_one_per_fault() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = recorded_python(dir.path());
    let manifest = agent.join("holon.yaml");
    let text_of = std::fs::read_to_string(&manifest).expect("holon.yaml");
    let (head, tail) = text_of
        .split_once("  - name: an outage")
        .expect("the outage");
    let wrong = tail.replacen("priority: high", "priority: low", 1);
    assert_ne!(wrong, tail, "the outage says `priority: high`");
    std::fs::write(&manifest, format!("{head}  - name: an outage{wrong}")).expect("write");
    // An agent whose SDK tries again: under a fault it mostly answers the recorded answer.
    let out = run_python(&agent, &["--protocol", "2026-07-28"], None, "retry");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    let report = |trial: &str| {
        all.split(&format!("---- {trial} ----\n"))
            .nth(1)
            .and_then(|r| r.split("\n---- ").next())
            .unwrap_or_else(|| panic!("no report of `{trial}`:\n{all}"))
            .trim()
            .to_string()
    };
    let own = report("mcp::an outage");
    assert!(
        own.starts_with("the output differs from the example at `/priority` (another value)"),
        "{own}"
    );
    let faults = report("faults::mcp::an outage");
    assert_eq!(
        faults.lines().next(),
        Some(
            "every fault that failed ended in one answer, a success that is not the example's output (it differs at `/priority` (another value)): no fault explains it, the example does; `mcp::an outage` reports it in full"
        ),
        "{faults}"
    );
    assert!(
        !all.contains("answered from a broken upstream answer"),
        "{all}"
    );
}

#[test]
fn a_429_that_escapes_as_an_exception_fails_exactly_the_429_faults() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = recorded_python(dir.path());
    let out = run_python(&agent, &[], None, "escape-429");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    // The example trials pass: only a rate limit shows the defect.
    assert!(passed(&all, "mcp::an outage"), "{all}");
    let mut failed = failed_faults(&all);
    failed.sort();
    assert_eq!(
        failed,
        pairs(&[
            ("faults::mcp::a question", "429"),
            ("faults::mcp::a question", "429"),
            ("faults::mcp::an outage", "429"),
            ("faults::mcp::an outage", "429"),
        ]),
        "{all}"
    );
    for needle in [
        "fault 429: HTTP 429 Too Many Requests (`Retry-After: 1`)",
        "exchange 1 of 2: upstream `model`, POST /chat/completions",
        "exchange 2 of 2: upstream `model`, POST /chat/completions",
        // The fault trials run in the newest era the server speaks, 2026-07-28, where the
        // Python SDK answers an exception that escapes the tool as an internal error without
        // its text (in 2025-11-25 it sends the text under code 0).
        "the server answered with a JSON-RPC error (-32603: Internal server error)",
        "gateway status: agent_error",
        "neither a declared code nor the example's output",
        "replay: HOLON_FAULT=1:429 cargo holon-test --manifest holon.yaml --server-cmd 'python3 agent.py' -- --exact 'faults::mcp::an outage'",
        "2 of 14 faults failed",
        "faults::mcp: 2 examples, 28 faults; reached agent_error 4, model_answer_unreadable 4, upstream_unavailable 20; 4 failed",
        // The fault trials that reached `upstream_unavailable` failed: none proves it, so it
        // keeps its warning; explore reached the other code, which is proven.
        "warning[error-without-example]: declared error `upstream_unavailable` has no example",
        "note: declared error `model_answer_unreadable` has no example, and needs none to be tested: `explore::mcp` (its case",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    assert!(
        !all.contains("note: declared error `upstream_unavailable`"),
        "{all}"
    );
    // The replay line replays exactly that fault.
    let one = run_python(
        &agent,
        &["--", "--exact", "faults::mcp::an outage"],
        None,
        "escape-429",
    );
    let one_all = text(&one);
    assert_eq!(one.status.code(), Some(101), "{one_all}");
    assert!(
        one_all.contains("faults::mcp: 1 example, 14 faults"),
        "{one_all}"
    );
    let only = run_with_fault(&agent, "1:429", "escape-429");
    let only_all = text(&only);
    assert_eq!(only.status.code(), Some(101), "{only_all}");
    assert_eq!(
        failed_faults(&only_all),
        pairs(&[("faults::mcp::an outage", "429")]),
        "{only_all}"
    );
    assert!(only_all.contains("1 of 1 fault failed"), "{only_all}");
}

/// `HOLON_FAULT=<fault> cargo holon-test ... -- --exact 'faults::mcp::an outage'`.
fn run_with_fault(agent: &Path, fault: &str, mode: &str) -> Output {
    let mut command = std::process::Command::new(crate::util::BIN);
    command
        .current_dir(agent)
        .args([
            "--manifest",
            "holon.yaml",
            "--server-cmd",
            "python3 agent.py",
            "--",
            "--exact",
            "faults::mcp::an outage",
        ])
        .env("PYTHONPATH", root().join("target/interop/python"))
        .env("MODE", mode)
        .env("HOLON_FAULT", fault)
        .env("NO_COLOR", "1")
        .env_remove("HOLON_UPSTREAM")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY");
    crate::util::OutputWithin::output_within(&mut command, crate::util::RUN_LIMIT)
}

#[test]
fn a_body_that_is_not_json_unwrapped_fails_exactly_the_html_faults() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = recorded_python(dir.path());
    let out = run_python(&agent, &[], None, "unwrap-json");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    let mut failed = failed_faults(&all);
    failed.sort();
    // The first call is the one parsed without a check; the stream's HTML is read as empty.
    assert_eq!(
        failed,
        pairs(&[
            ("faults::mcp::a question", "html"),
            ("faults::mcp::an outage", "html"),
        ]),
        "{all}"
    );
    for needle in [
        "fault html: HTTP 200 with a body that is not JSON (an HTML error page)",
        "exchange 1 of 2: upstream `model`, POST /chat/completions",
        "JSONDecodeError",
        "replay: HOLON_FAULT=1:html cargo holon-test",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
}

/// A model that answers every call with HTTP 429.
fn rate_limited() -> FakeModel {
    FakeModel::start(Behaviour {
        rate_limited: true,
        ..Behaviour::keyed(KEY)
    })
}

#[test]
fn bless_against_a_model_answering_429_writes_nothing_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (agent, _turn) = recorded_rust(dir.path());
    let manifest = agent.join("holon.yaml");
    // Stale outputs, which a bless would rewrite from a good answer.
    let stale = std::fs::read_to_string(&manifest)
        .expect("holon.yaml")
        .replace("Someone says The dashboard", "Stale: the dashboard");
    std::fs::write(&manifest, &stale).expect("write holon.yaml");
    let recordings_before = super::upstream::recordings(&agent);
    let model = rate_limited();
    // Live: the agent answers `upstream_unavailable`, which is `retryable: true`, while its
    // model failed: neither is ever written.
    let live = run_rust(&agent, &["--upstream", "live", "--bless"], Some(&model));
    let all = text(&live);
    assert_eq!(live.status.code(), Some(101), "{all}");
    for needle in [
        "bless: left as",
        "`an outage`: function: `upstream_unavailable` is marked `retryable: true`: a transient failure is never an example (upstream `model` answered HTTP 429 (POST /chat/completions))",
        "mcp: `upstream_unavailable` is marked `retryable: true`",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    assert_eq!(
        std::fs::read_to_string(&manifest).expect("holon.yaml"),
        stale
    );
    // Record: a 429 is never recorded, and the call is not judged.
    let record = run_rust(&agent, &["--upstream", "record", "--bless"], Some(&model));
    let all = text(&record);
    assert_eq!(record.status.code(), Some(101), "{all}");
    assert!(
        all.contains("upstream `model` answered HTTP 429 while recording (POST /chat/completions): a transient failure is never recorded, so `recordings/an-outage.json` is kept as it is"),
        "{all}"
    );
    assert_eq!(
        std::fs::read_to_string(&manifest).expect("holon.yaml"),
        stale
    );
    assert_eq!(super::upstream::recordings(&agent), recordings_before);
    assert_eq!(
        std::fs::read_to_string(agent.join("recordings/an-outage.json")).expect("a recording"),
        std::fs::read_to_string(root().join("examples/ticket-triage/recordings/an-outage.json"))
            .expect("the example's"),
    );
}

#[test]
fn explore_fails_when_the_agent_answers_only_transient_failures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (agent, _turn) = rust_agent(dir.path());
    // No upstream declared, and the model's URL a closed port: every call fails.
    std::fs::remove_file(agent.join("holon-test.toml")).expect("remove holon-test.toml");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", closed.local_addr().expect("an address"));
    drop(closed);
    let mut command = super::scaffold::cargo(&agent);
    command
        .args(["holon-test", "--", "--exact", "explore::function"])
        .env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("HOLON_UPSTREAM");
    let out = crate::util::OutputWithin::output_within(&mut command, crate::util::CARGO_LIMIT);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    for needle in [
        "; transient (`retryable: true`) upstream_unavailable ",
        "no case succeeded, while the examples show successes: the agent answers only failures (",
        "is the upstream reachable?",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
}

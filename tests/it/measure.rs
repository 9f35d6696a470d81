//! Live runs measured as the gateway measures them, end to end through the binary: the ticket
//! triage agent in Python (the official `openai` SDK, `--server-cmd`, `MODE=trust`: one model
//! call, its answer returned unchecked) against a fake model that answers a known mix by the
//! ticket (valid, a priority out of range, prose, too slow) and keeps a log. The receipts are
//! held to the model's log call by call, the tokens to the usage it reported, the printed rate
//! to the one computed here from the receipts; `--min-success-rate` both ways, `--max-calls`,
//! replay's `--repeat`, Ctrl-C, and every bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use super::upstream::KEY;
use crate::util::fake_model::{Behaviour, FakeModel, Kind, Mix};
use crate::util::{BIN, OutputWithin, RUN_LIMIT, Running, root, text};

/// The tickets of the measured examples, each with the word the model answers by.
const EXAMPLES: [(&str, &str, Kind); 4] = [
    (
        "a valid answer",
        "The dashboard is down for our whole team.",
        Kind::Valid,
    ),
    (
        "a priority out of range",
        "Escalate: the invoice total is wrong.",
        Kind::OutOfRange,
    ),
    (
        "prose",
        "Chatty note: thanks for the quick fix last week.",
        Kind::Prose,
    ),
    (
        "too slow",
        "Sluggish export: reports take ages to download.",
        Kind::Slow(Duration::from_secs(8)),
    ),
];

/// The model's rules: the first word of each ticket.
fn mix() -> Mix {
    Mix::ByTicket(
        EXAMPLES
            .iter()
            .map(|(_, ticket, kind)| (ticket.split(' ').next().unwrap_or("").to_string(), *kind))
            .collect(),
    )
}

fn model(mix: Mix) -> FakeModel {
    FakeModel::start(Behaviour {
        mix,
        ..Behaviour::keyed(KEY)
    })
}

/// The gateway status each way of answering comes to for the agent in `MODE=trust`, with
/// `timeout_s: 1.5`: a priority out of the enum goes out as it came, prose is the declared
/// `model_answer_unreadable`, an answer after 8 s is past the limit (and the agent's own 3 s).
fn status_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Valid => "success",
        Kind::OutOfRange => "invalid_output",
        Kind::Prose => "model_answer_unreadable",
        Kind::Slow(_) => "timeout",
        Kind::OddUsage => "success",
    }
}

/// The Python agent in `dir`, with the example's schemas and these examples, `timeout_s: 1.5`,
/// and a price for the model's tokens.
fn agent(dir: &Path, examples: &[(&str, &str)]) -> PathBuf {
    let to = dir.join("py-triage");
    std::fs::create_dir_all(&to).expect("mkdir");
    std::fs::copy(
        root().join("tests/fixtures/agents/py-triage/agent.py"),
        to.join("agent.py"),
    )
    .expect("copy agent.py");
    let source = std::fs::read_to_string(root().join("examples/ticket-triage/holon.yaml"))
        .expect("the example's manifest");
    let (head, _) = source.split_once("\nexamples:").expect("examples");
    let head = head.replace("timeout_s: 30", "timeout_s: 1.5");
    assert!(head.contains("timeout_s: 1.5"), "{head}");
    let mut text = format!("{head}\nexamples:\n");
    for (name, ticket) in examples {
        text.push_str(&format!(
            "  - name: {name}\n    input: {{ ticket: \"{ticket}\" }}\n    output: {{ priority: high, summary: \"The customer reports {ticket}\" }}\n"
        ));
    }
    std::fs::write(to.join("holon.yaml"), text).expect("write holon.yaml");
    std::fs::write(
        to.join("holon-test.toml"),
        "[upstreams.model]\nenv = \"OPENAI_BASE_URL\"\nsecrets = [\"OPENAI_API_KEY\"]\n\n[upstreams.model.price]\ninput_per_million = 0.15\noutput_per_million = 0.6\n",
    )
    .expect("write holon-test.toml");
    to
}

/// `cargo-holon-test --manifest holon.yaml --server-cmd "python3 agent.py" ARGS` in `agent`,
/// live against `model`, in `MODE=trust`.
fn command(agent: &Path, model: &FakeModel, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.current_dir(agent).args([
        "--manifest",
        "holon.yaml",
        "--server-cmd",
        "python3 agent.py",
    ]);
    // Explore is off unless asked for: these runs measure the examples.
    if !args.contains(&"--explore-cases") {
        command.args(["--explore-cases", "0"]);
    }
    command
        .args(args)
        .env("PYTHONPATH", root().join("target/interop/python"))
        .env("MODE", "trust")
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", &model.url)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("HOLON_UPSTREAM");
    command
}

/// Whether libtest printed `trial` as passed (`Some(true)`) or failed.
fn outcome(all: &str, trial: &str) -> Option<bool> {
    all.lines().find_map(|line| {
        let rest = line.strip_prefix("test ")?.strip_prefix(trial)?;
        let verdict = rest.trim_start().strip_prefix("... ")?;
        Some(verdict == "ok")
    })
}

fn run(agent: &Path, model: &FakeModel, args: &[&str]) -> Output {
    command(agent, model, args).output_within(RUN_LIMIT)
}

/// A live run of each example `repeat` times, its receipts written to `receipts`.
fn live(agent: &Path, model: &FakeModel, repeat: &str, receipts: &Path) -> Output {
    let path = receipts.display().to_string();
    let args = [
        "--upstream",
        "live",
        "--repeat",
        repeat,
        "--receipts",
        &path,
    ];
    run(agent, model, &args)
}

/// Every line of a receipts file, each one whole JSON.
fn receipts(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the receipts");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a half line: {text:?}"
    );
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect()
}

/// `12345` as `12,345`, as the report writes counts.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The 95% Wilson interval, written again here from the formula rather than taken from the
/// code under test.
fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z: f64 = 1.959964;
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[test]
fn a_gate_that_passes_in_a_run_that_fails_says_why() {
    // The empty document's example says an output where the agent answers the declared
    // `empty_text`: the rate leaves that call out and is met, and its trial fails.
    let manifest = std::fs::read_to_string(root().join("tests/fixtures/harness/word-stats.yaml"))
        .expect("word-stats' manifest");
    let (head, empty) = manifest
        .split_once("  - name: an empty document\n")
        .expect("the empty document's example");
    let (_, after) = empty.split_once("\n  - ").map_or(("", ""), |(a, b)| (a, b));
    let changed = format!(
        "{head}  - name: an empty document\n    input: {{ text: \"   \" }}\n    output: {{ characters: 3, words: 0, top_words: [], reading_time_s: 0 }}\n{}",
        if after.is_empty() {
            String::new()
        } else {
            format!("  - {after}")
        }
    );
    let agent = crate::util::py_agent::PyAgent::with_manifest(&changed, "ok");
    let out = agent
        .command(&["--min-success-rate", "0.8"])
        .output_within(RUN_LIMIT);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    assert!(
        all.contains("note: the measured success rate meets `--min-success-rate 0.8`, and the run fails all the same: 1 trial failed (under `failures:` above)"),
        "{all}"
    );
}

#[test]
fn the_receipts_count_each_call_as_the_model_answered_it_and_the_gate_works_both_ways() {
    let dir = tempfile::tempdir().expect("tempdir");
    let examples: Vec<(&str, &str)> = EXAMPLES.iter().map(|(n, t, _)| (*n, *t)).collect();
    let agent = agent(dir.path(), &examples);
    let model = model(mix());
    let path = dir.path().join("out/receipts.jsonl");
    let out = live(&agent, &model, "5", &path);
    let all = text(&out);
    // Without `--min-success-rate` every call must end in a success or a declared failure:
    // the invalid outputs and the timeouts fail their trials.
    assert_eq!(out.status.code(), Some(101), "{all}");
    for (trial, ok) in [
        ("mcp::a valid answer", true),
        ("mcp::prose", true),
        ("mcp::a priority out of range", false),
        ("mcp::too slow", false),
    ] {
        assert_eq!(outcome(&all, trial), Some(ok), "`{trial}` in:\n{all}");
    }
    assert!(
        all.contains("5 of the 5 calls of this example failed; the first, call 1:"),
        "{all}"
    );
    // The model's own log: one request per call, each answered as its ticket says.
    let log = model.log();
    assert_eq!(log.len(), 20, "{log:?}");
    // By example: how the model answered each of its calls, and the usage it reported.
    type Answered = Vec<(&'static str, Option<(u64, u64)>)>;
    let mut from_log: BTreeMap<String, Answered> = BTreeMap::new();
    for logged in &log {
        let (name, _, _) = EXAMPLES
            .iter()
            .find(|(_, ticket, _)| *ticket == logged.ticket)
            .unwrap_or_else(|| panic!("a ticket of no example: {logged:?}"));
        from_log
            .entry(name.to_string())
            .or_default()
            .push((status_of(logged.kind), logged.usage));
    }
    let (late, lines): (Vec<Value>, Vec<Value>) =
        receipts(&path).into_iter().partition(|r| r["late"] == true);
    assert_eq!(lines.len(), 20, "{lines:#?}");
    // Each answer that came after its call's receipt was written: a line of its own, with the
    // tokens the model billed for it.
    assert_eq!(late.len(), 5, "{late:#?}");
    for line in &late {
        assert_eq!(line["example"], "too slow", "{line}");
        assert_eq!(line["upstream"][0]["status"], 200, "{line}");
        assert!(
            line["upstream"][0]["input_tokens"].as_u64().is_some(),
            "{line}"
        );
    }
    let mut from_receipts: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let (mut input, mut output) = (0, 0);
    for receipt in &lines {
        let name = receipt["example"].as_str().expect("an example").to_string();
        let status = receipt["status"].as_str().expect("a status");
        let logged = &from_log[&name];
        // Every call of an example was answered one way: each receipt says it.
        assert!(
            logged.iter().all(|(s, _)| *s == status),
            "{receipt} against the log {logged:?}"
        );
        assert_eq!(receipt["billed"], status == "success", "{receipt}");
        assert!(receipt["ms"].as_u64().is_some(), "{receipt}");
        from_receipts
            .entry(name)
            .or_default()
            .push(receipt["run"].as_u64().expect("a run"));
        let upstream = receipt["upstream"].as_array().expect("upstream");
        assert_eq!(upstream.len(), 1, "{receipt}");
        assert_eq!(upstream[0]["name"], "model", "{receipt}");
        let (i, o) = logged[0].1.expect("usage on a whole answer");
        // The model bills every request it answered, those the agent gave up on included.
        input += i;
        output += o;
        if status == "timeout" {
            // The model had not answered when the call ended (its receipt was written then).
            assert_eq!(upstream[0]["status"], Value::Null, "{receipt}");
            assert_eq!(upstream[0]["input_tokens"], Value::Null, "{receipt}");
        } else {
            assert_eq!(upstream[0]["status"], 200, "{receipt}");
            assert_eq!(upstream[0]["input_tokens"], i, "{receipt}");
            assert_eq!(upstream[0]["output_tokens"], o, "{receipt}");
        }
    }
    for (name, mut runs) in from_receipts {
        runs.sort_unstable();
        assert_eq!(runs, [1, 2, 3, 4, 5], "{name}");
        assert_eq!(from_log[&name].len(), 5, "{name}");
    }
    // The rate from the receipts: successes over the calls that were not declared failures.
    let count = |s: &str| lines.iter().filter(|r| r["status"] == s).count() as f64;
    let (success, declared) = (count("success"), count("model_answer_unreadable"));
    let counted = lines.len() as f64 - declared;
    let (low, high) = wilson(success, counted);
    let total = format!(
        "measure: total: 20 calls, success rate {:.1}% (95% interval {:.1}% to {:.1}%): {success} of the {counted} calls that were not declared failures",
        100.0 * success / counted,
        100.0 * low,
        100.0 * high
    );
    assert!(all.contains(&total), "`{total}` in:\n{all}");
    assert!(
        all.contains("measure: total: 20 calls, success rate 33.3%"),
        "{all}"
    );
    for needle in [
        "measure: the `mcp` pass, 4 examples, 20 calls (`--repeat 5`), upstreams live, up to 16 in flight",
        "measure:   `too slow`: 5 calls: timeout 5; success rate 0.0% (0.0% to 43.4%)",
        "measure:   `prose`: 5 calls: model_answer_unreadable 5 (declared); no call counts toward the success rate",
        "measure: success 5; declared failures 5 (model_answer_unreadable 5); invalid_output 5, agent_crashed 0, agent_error 0, timeout 5, runtime_unavailable 0",
        "`timeout_s` 1.50 s, 5 calls past it",
        "measure: price 0.01 EUR a billed call (`charge_on: success`), 5 billed; cost per success 0.03 EUR (price / success rate); the author is paid 0.00225 EUR a call and 0.009 EUR a success, after the platform's 10% fee",
        // The slow answers came after their calls ended: paid for, and counted.
        "measure: upstream `model`: 20 requests, 20 answered (5 after its call ended, paid all the same)",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    // The spend is the model's own log: every token it billed, late answers included.
    let tokens = format!(
        "{} input and {} output tokens at 0.15 and 0.6 EUR a million",
        thousands(input),
        thousands(output)
    );
    assert!(all.contains(&tokens), "`{tokens}` in:\n{all}");
    assert!(!all.contains("never answered"), "{all}");
    // The whole run, every request it made, by what each was for.
    let whole = format!(
        "spend:   upstream `model`: 20 requests, 20 answered (5 after its call ended, paid all the same), {} input and {} output tokens",
        thousands(input),
        thousands(output)
    );
    assert!(all.contains(&whole), "`{whole}` in:\n{all}");
    // `report` of the receipts, the file given twice: the run's calls and its tokens, late
    // answers included, each receipt counted once, and said so.
    let receipts_path = path.display().to_string();
    let read = Command::new(BIN)
        .current_dir(&agent)
        .args([
            "report",
            "--manifest",
            "holon.yaml",
            &receipts_path,
            &receipts_path,
        ])
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT);
    let again = text(&read);
    assert_eq!(read.status.code(), Some(0), "{again}");
    assert!(again.contains(&tokens), "`{tokens}` in:\n{again}");
    assert!(
        again.contains("measure: upstream `model`: 20 requests, 20 answered (5 after its call ended, paid all the same)"),
        "{again}"
    );
    assert!(again.contains("measure: total: 20 calls"), "{again}");
    assert!(
        again.contains("repeats 25 receipts already read (the same run's lines, from this file or another): each is counted once"),
        "{again}"
    );
    assert!(!again.contains("no receipt counts it"), "{again}");
    assert!(
        all.contains("; by what they were for: the MCP pass's examples 20\n"),
        "{all}"
    );
    // The gate: at 33.3%, 0.3 passes (the failures are the gate's to judge) and 0.5 does not,
    // naming the examples that pulled the rate down.
    let passed = run(
        &agent,
        &model,
        &[
            "--upstream",
            "live",
            "--repeat",
            "5",
            "--min-success-rate",
            "0.3",
        ],
    );
    let all = text(&passed);
    assert_eq!(passed.status.code(), Some(0), "{all}");
    assert!(all.contains("success rate 33.3%"), "{all}");
    assert!(!all.contains("error:"), "{all}");
    let failed = run(
        &agent,
        &model,
        &[
            "--upstream",
            "live",
            "--repeat",
            "5",
            "--min-success-rate",
            "0.5",
        ],
    );
    let all = text(&failed);
    assert_eq!(failed.status.code(), Some(101), "{all}");
    assert!(
        all.contains("error: the measured success rate 33.3% is below `--min-success-rate 0.5` (50.0%); the examples that pulled it down: `a priority out of range` 0.0% (invalid_output 5 of 5 counted calls), `too slow` 0.0% (timeout 5 of 5 counted calls)"),
        "{all}"
    );
    assert!(
        !all.contains("FAILED"),
        "the trials leave it to the gate:\n{all}"
    );
}

/// A live run with explore: explore's calls reach the real model too, and the run says so
/// before it starts; the whole run's spend counts every request the model took, explore's
/// and the examples' alike, each token the model billed.
#[test]
fn a_live_run_counts_every_request_it_made_explore_s_included() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", "Valid answer please")]);
    let model = model(Mix::Plain);
    let out = run(
        &agent,
        &model,
        &[
            "--upstream",
            "live",
            "--explore-cases",
            "6",
            "--faults",
            "off",
        ],
    );
    let all = text(&out);
    assert!(
        all.contains("note: explore makes 6 calls to the agent, each of which may call the real upstreams (`--upstream live`), which are paid for"),
        "{all}"
    );
    let log = model.log();
    let (input, output) = log.iter().fold((0, 0), |(i, o), l| {
        let (li, lo) = l.usage.expect("usage");
        (i + li, o + lo)
    });
    // A live run measures its calls in the newest era the server speaks: the example is
    // called once there, and explore's cases that reach the model (not the empty tickets).
    let explore = log.len() - 1;
    assert!(explore >= 1, "{log:?}");
    let whole = format!(
        "spend:   upstream `model`: {} requests, {} answered, {} input and {} output tokens at 0.15 and 0.6 EUR a million",
        log.len(),
        log.len(),
        thousands(input),
        thousands(output)
    );
    assert!(all.contains(&whole), "`{whole}` in:\n{all}");
    assert!(
        all.contains(&format!(
            "by what they were for: the MCP pass's examples 1, explore {explore}\n"
        )),
        "{all}"
    );
}

/// A declared failure that comes and goes for one input (the model answers prose one call in
/// four, and the agent declares it unreadable) is not the input's doing: the gateway's rate
/// counts it apart and stays at 100%, but the report shows it with its counts, and the strict
/// rate, which counts it as a failure, is what `--min-strict-success-rate` gates on.
#[test]
fn declared_failures_that_come_and_go_are_shown_and_gated_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", "Valid answer please")]);
    let model = model(Mix::Cycle(vec![
        Kind::Valid,
        Kind::Valid,
        Kind::Valid,
        Kind::Prose,
    ]));
    let args = [
        "--upstream",
        "live",
        "--repeat",
        "8",
        "--concurrency",
        "1",
        "--min-success-rate",
        "0.9",
        "--min-strict-success-rate",
        "0.9",
    ];
    let out = run(&agent, &model, &args);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    for needle in [
        "measure: total: 8 calls, success rate 100.0%",
        "measure: declared failures that come and go for one input (it ended otherwise on other calls, so they are not the input's doing, though the gateway counts them apart): `a valid answer` model_answer_unreadable 2 of 8 calls, success 6",
        "measure: strict success rate, counting them as failures: 75.0% (",
        "): 6 of 8 calls; gate on it with `--min-strict-success-rate R`",
        "error: the strict success rate 75.0% (the declared failures that come and go for one input counted as failures) is below `--min-strict-success-rate 0.9` (90.0%)",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    // The gateway's rate passes its own gate.
    assert!(!all.contains("error: the measured success rate"), "{all}");
}

#[test]
fn max_calls_bounds_the_calls_to_the_agent_and_says_what_was_not_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let examples: Vec<(&str, &str)> = EXAMPLES.iter().take(2).map(|(n, t, _)| (*n, *t)).collect();
    let agent = agent(dir.path(), &examples);
    let model = model(Mix::Plain);
    let out = run(
        &agent,
        &model,
        &[
            "--upstream",
            "live",
            "--repeat",
            "20",
            "--max-calls",
            "7",
            "--explore-cases",
            "4",
        ],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    // One model request a call: never more than the budget.
    assert_eq!(model.requests(), 7, "{all}");
    for needle in [
        "note: `--max-calls`: 7 of the 40 example calls planned are made: `mcp::a valid answer` 4 of 20, `mcp::a priority out of range` 3 of 20",
        "note: `--max-calls`: explore: off, no call left for its 4 cases a trial",
        "measure: not run (`--max-calls`): 7 of the 40 example calls planned are made",
        "measure: total: 7 calls",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
}

#[test]
fn replay_repeats_the_recorded_calls_together_and_prices_them_from_the_recordings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let examples: Vec<(&str, &str)> = EXAMPLES.iter().take(2).map(|(n, t, _)| (*n, *t)).collect();
    let agent = agent(dir.path(), &examples);
    let mut model = model(Mix::Plain);
    let recorded = run(&agent, &model, &["--upstream", "record", "--bless"]);
    assert_eq!(recorded.status.code(), Some(0), "{}", text(&recorded));
    let log = model.log();
    model.stop();
    let path = dir.path().join("replayed.jsonl");
    let mut replay = Command::new(BIN);
    replay
        .current_dir(&agent)
        .args([
            "--manifest",
            "holon.yaml",
            "--server-cmd",
            "python3 agent.py",
        ])
        .args(["--explore-cases", "0", "--faults", "off", "--repeat", "6"])
        .arg("--receipts")
        .arg(&path)
        .env("PYTHONPATH", root().join("target/interop/python"))
        .env("MODE", "trust")
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("HOLON_UPSTREAM");
    let out = replay.output_within(RUN_LIMIT);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("upstreams replayed, up to 16 in flight"),
        "{all}"
    );
    assert!(
        all.contains("measure: total: 12 calls, success rate 100.0%"),
        "{all}"
    );
    // What the recorded examples cost upstream: the usage the model reported when recording.
    let lines = receipts(&path);
    assert_eq!(lines.len(), 12);
    for receipt in &lines {
        let ticket = EXAMPLES
            .iter()
            .find(|(name, _, _)| receipt["example"] == *name)
            .map(|(_, t, _)| *t)
            .expect("an example");
        let (i, o) = (log.iter())
            .find(|l| l.ticket == ticket)
            .and_then(|l| l.usage)
            .expect("recorded with usage");
        assert_eq!(receipt["status"], "success", "{receipt}");
        assert_eq!(receipt["upstream"][0]["input_tokens"], i, "{receipt}");
        assert_eq!(receipt["upstream"][0]["output_tokens"], o, "{receipt}");
    }
}

#[test]
fn an_upstream_whose_usage_is_not_a_number_leaves_the_tokens_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", EXAMPLES[0].1)]);
    let model = model(Mix::Cycle(vec![Kind::OddUsage]));
    let path = dir.path().join("receipts.jsonl");
    let out = live(&agent, &model, "3", &path);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let lines = receipts(&path);
    assert_eq!(lines.len(), 3);
    for receipt in &lines {
        assert_eq!(receipt["upstream"][0]["status"], 200, "{receipt}");
        assert_eq!(
            receipt["upstream"][0]["input_tokens"],
            Value::Null,
            "{receipt}"
        );
    }
    assert!(all.contains("tokens unknown for 3 answers"), "{all}");
    assert!(all.contains("at least 0 EUR"), "{all}");
}

#[test]
fn ctrl_c_leaves_whole_receipts_and_says_what_ran() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", EXAMPLES[0].1)]);
    // Every call takes a moment, so the run is stopped in its middle.
    let model = FakeModel::start(Behaviour {
        delay: Duration::from_millis(200),
        ..Behaviour::keyed(KEY)
    });
    let path = dir.path().join("receipts.jsonl");
    let receipts_arg = path.display().to_string();
    let mut command = command(
        &agent,
        &model,
        &[
            "--upstream",
            "live",
            "--repeat",
            "500",
            "--concurrency",
            "2",
            "--receipts",
            &receipts_arg,
        ],
    );
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut running = Running::spawn(&mut command);
    running.wait_for("three receipts", RUN_LIMIT, |_| {
        std::fs::read_to_string(&path).is_ok_and(|t| t.lines().count() >= 3)
    });
    running.signal(libc::SIGINT);
    let finished = running.finish(RUN_LIMIT);
    assert_eq!(finished.status.code(), Some(130), "{finished}");
    let lines = receipts(&path);
    assert!(lines.len() >= 3 && lines.len() < 500, "{}", lines.len());
    assert!(
        finished
            .stderr
            .contains("measure (interrupted): the `mcp` pass"),
        "{finished}"
    );
    assert!(
        finished.stderr.contains("of the 500 calls planned ended"),
        "{finished}"
    );
    assert!(finished.stderr.contains("measure: total: "), "{finished}");
}

#[test]
fn bad_settings_are_refused_before_any_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", EXAMPLES[0].1)]);
    let model = model(Mix::Plain);
    for (args, needle) in [
        (
            &["--repeat", "0"][..],
            "invalid value '0' for '--repeat <N>'",
        ),
        (
            &["--repeat", "1e9"],
            "invalid value '1e9' for '--repeat <N>'",
        ),
        (
            &["--min-success-rate", "1.5"],
            "invalid value '1.5' for '--min-success-rate <R>'",
        ),
        (
            &["--max-calls", "-1"],
            "invalid value '-1' for '--max-calls <N>'",
        ),
        (
            &["--repeat", "3", "--bless"],
            "`--repeat 3` (`HOLON_REPEAT`) calls each example 3 times, and `--bless` (`HOLON_BLESS`) writes one answer per example",
        ),
        (
            &["--repeat", "3", "--upstream", "record"],
            "`--repeat 3` (`HOLON_REPEAT`) with `--upstream record` would replay",
        ),
    ] {
        let out = run(&agent, &model, args);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {all}");
        assert!(all.contains(needle), "{args:?}: `{needle}` in:\n{all}");
    }
    // One rule, one exit code and one sentence, whether a flag or a variable set it.
    for (name, value, args) in [
        ("HOLON_BLESS", "1", &["--repeat", "3"][..]),
        ("HOLON_REPEAT", "3", &["--bless"][..]),
    ] {
        let out = command(&agent, &model, args)
            .env(name, value)
            .output_within(RUN_LIMIT);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{name}={value}: {all}");
        assert!(
            all.contains("`--repeat 3` (`HOLON_REPEAT`) calls each example 3 times, and `--bless` (`HOLON_BLESS`) writes one answer per example"),
            "{name}={value}: {all}"
        );
    }
    for (name, value) in [
        ("HOLON_REPEAT", "0"),
        ("HOLON_REPEAT", "1e9"),
        ("HOLON_MIN_SUCCESS_RATE", "1.5"),
        ("HOLON_MAX_CALLS", "-1"),
    ] {
        let out = command(&agent, &model, &[])
            .env(name, value)
            .output_within(RUN_LIMIT);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{name}={value}: {all}");
        assert!(all.contains(&format!("`{name}={value}`")), "{name}: {all}");
    }
    // A file where the receipts' folder should be: refused with the reason, no call made.
    std::fs::write(dir.path().join("blocker"), "a file").expect("write");
    let blocked = dir.path().join("blocker/receipts.jsonl");
    let out = run(
        &agent,
        &model,
        &[
            "--upstream",
            "live",
            "--receipts",
            &blocked.display().to_string(),
        ],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("error: `--receipts`: cannot create"), "{all}");
    assert_eq!(model.requests(), 0, "a call was made:\n{all}");
    // A price with an unknown field or a negative number: located, in `check` and a run.
    std::fs::write(
        agent.join("holon-test.toml"),
        "[upstreams.model]\nenv = \"OPENAI_BASE_URL\"\n\n[upstreams.model.price]\ninput_per_milion = 0.15\noutput_per_million = -1\n",
    )
    .expect("write");
    let check = Command::new(BIN)
        .current_dir(&agent)
        .arg("check")
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT);
    let test = run(&agent, &model, &["--upstream", "live"]);
    for (what, out) in [("check", check), ("a run", test)] {
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{what}: {all}");
        for needle in [
            "error[unknown-field]: unknown field `input_per_milion` in a price",
            "holon-test.toml:5:1",
            "= hint: did you mean `input_per_million`?",
            "error[invalid-value]: `output_per_million` is a price, a number of at least 0, not `-1`",
            "holon-test.toml:6:22",
        ] {
            assert!(all.contains(needle), "{what}: `{needle}` in:\n{all}");
        }
    }
    assert_eq!(model.requests(), 0);
}

#[test]
fn an_answer_that_comes_after_timeout_s_is_a_timeout_as_at_the_gateway() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", EXAMPLES[0].1)]);
    // The model answers in 2 s: inside the agent's own patience (3 s) and inside the harness's
    // grace for a server's own `timeout` answer, but past `timeout_s` (1.5 s), where the
    // gateway would have stopped the call.
    let model = model(Mix::Cycle(vec![Kind::Slow(Duration::from_secs(2))]));
    let path = dir.path().join("receipts.jsonl");
    let out = live(&agent, &model, "2", &path);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(101), "{all}");
    assert_eq!(model.requests(), 2, "{all}");
    let lines = receipts(&path);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for receipt in &lines {
        assert_eq!(receipt["status"], "timeout", "{receipt}");
        assert_eq!(receipt["billed"], false, "{receipt}");
        assert!(
            receipt["ms"].as_u64().is_some_and(|ms| ms > 1500),
            "{receipt}"
        );
    }
    for needle in [
        "measure:   `a valid answer`: 2 calls: timeout 2; success rate 0.0%",
        "`timeout_s` 1.50 s, 2 calls past it",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
}

#[test]
fn the_calls_of_one_example_each_get_the_answer_they_waited_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = agent(dir.path(), &[("a valid answer", EXAMPLES[0].1)]);
    // Every fourth request is answered after half a second, the others at once: with the calls of one
    // example in flight together (whose requests cannot be told apart by content), a slow
    // answer dealt to a call that ended early is handed to the call still waiting for it.
    let model = model(Mix::Cycle(vec![
        Kind::Slow(Duration::from_millis(500)),
        Kind::Valid,
        Kind::Valid,
        Kind::Valid,
    ]));
    let path = dir.path().join("receipts.jsonl");
    let out = live(&agent, &model, "8", &path);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let log = model.log();
    assert_eq!(log.len(), 8, "{log:?}");
    let lines = receipts(&path);
    assert_eq!(lines.len(), 8, "{lines:#?}");
    let (mut input, mut output) = (0, 0);
    for receipt in &lines {
        assert_eq!(receipt["status"], "success", "{receipt}");
        // Each call ended with its answer in: its request answered, with the model's usage.
        assert_eq!(receipt["upstream"][0]["status"], 200, "{receipt}");
        input += receipt["upstream"][0]["input_tokens"]
            .as_u64()
            .expect("tokens");
        output += receipt["upstream"][0]["output_tokens"]
            .as_u64()
            .expect("tokens");
    }
    let logged = |f: fn(&(u64, u64)) -> u64| -> u64 {
        log.iter().map(|l| l.usage.as_ref().map_or(0, f)).sum()
    };
    assert_eq!(input, logged(|u| u.0));
    assert_eq!(output, logged(|u| u.1));
    assert!(
        all.contains("measure: upstream `model`: 8 requests, 8 answered"),
        "{all}"
    );
    assert!(!all.contains("not answered before"), "{all}");
}

#[test]
fn a_measured_run_writes_and_prints_no_secret() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A ticket short enough that the note shows the whole summary, the key the model echoes in it.
    let agent = agent(dir.path(), &[("an echo", "down")]);
    let model = FakeModel::start(Behaviour {
        echo_key: true,
        ..Behaviour::keyed(KEY)
    });
    let path = dir.path().join("live.jsonl");
    let shown = path.display().to_string();
    let out = run(
        &agent,
        &model,
        &["--upstream", "live", "--repeat", "2", "--receipts", &shown],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(!all.contains(KEY), "the key is in the output:\n{all}");
    for needle in [
        "note: live: `mcp::an echo`: 2 of its 2 calls are notes",
        "(key <secret:OPENAI_API_KEY>)",
        "measure: total: 2 calls",
        "mcp: the server speaks two eras: a measured run calls it in the newest alone",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    // The two calls of the newest era, and no other: one model request each.
    assert_eq!(model.requests(), 2, "{all}");
    let lines = receipts(&path);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let written = std::fs::read_to_string(&path).expect("the receipts");
    assert!(
        !written.contains(KEY),
        "the key is in the receipts: {written}"
    );
}

//! `--partition count:K/N` and `hash:K/N`: a run dealt among shards, each with its own server,
//! that together make the whole run with no example trial run twice; nextest's syntax, refused
//! in one line when it is not one; a shard with nothing of its own passes and says so; the
//! calls of a measured run dealt one by one, so the shards' receipts are every call once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{BIN, OutputWithin, RUN_LIMIT, root, text, word_stats_binary};

/// word-stats' manifest in `dir` with `blanks` more examples, each a blank text of its own
/// length (the declared `empty_text`), after its own two: a suite of `blanks + 2` examples.
fn suite(dir: &Path, blanks: usize) -> PathBuf {
    let source = std::fs::read_to_string(root().join("examples/word-stats/holon.yaml"))
        .expect("word-stats' manifest");
    let mut text = source.trim_end().to_string();
    for n in 1..=blanks {
        text.push_str(&format!(
            "\n  - name: blank {n}\n    input: {{ text: \"{}\" }}\n    error: empty_text",
            " ".repeat(n)
        ));
    }
    text.push('\n');
    let path = dir.join("holon.yaml");
    std::fs::write(&path, text).expect("write the suite");
    path
}

/// `holon-test --manifest MANIFEST --server-cmd word-stats ARGS -- --format json`.
fn run(manifest: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("--manifest")
        .arg(manifest)
        .arg("--server-cmd")
        .arg(word_stats_binary())
        .args(args)
        .args(["--", "--format", "json"])
        .env("NO_COLOR", "1")
        .env_remove("HOLON_PARTITION")
        .output_within(RUN_LIMIT)
}

/// The trials a run ran, by name (libtest's JSON events), and whether each passed.
fn ran(output: &std::process::Output) -> Vec<(String, bool)> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "test" && (e["event"] == "ok" || e["event"] == "failed"))
        .map(|e| {
            (
                e["name"].as_str().unwrap_or_default().to_string(),
                e["event"] == "ok",
            )
        })
        .collect()
}

#[test]
fn shards_are_disjoint_and_together_the_whole_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = suite(dir.path(), 28);
    let whole = run(&manifest, &["--explore-cases", "0"]);
    assert!(whole.status.success(), "{}", text(&whole));
    let everything: BTreeSet<String> = ran(&whole).into_iter().map(|(n, _)| n).collect();
    // The server speaks both eras: 30 examples, twice, and `tools/list` in each.
    assert_eq!(everything.len(), 62, "{everything:?}");
    for deal in ["count", "hash"] {
        let mut union = BTreeSet::new();
        for k in 1..=3 {
            let shard = format!("{deal}:{k}/3");
            let out = run(&manifest, &["--explore-cases", "0", "--partition", &shard]);
            let all = text(&out);
            assert!(out.status.success(), "{shard}:\n{all}");
            let examples = ran(&out)
                .iter()
                .filter(|(n, _)| {
                    n.starts_with("mcp::")
                        && !n.starts_with("mcp::2025")
                        && !n.ends_with("tools/list")
                })
                .count();
            if deal == "count" {
                assert_eq!(examples, 10, "{shard}: the count deal is even:\n{all}");
            }
            // Explore is off and word-stats calls no upstream: the note names neither.
            assert!(
                all.contains(&format!(
                    "note: `--partition {shard}`: this shard runs {examples} of the 30 examples\n"
                )),
                "{shard}:\n{all}"
            );
            for (name, passed) in ran(&out) {
                assert!(passed, "`{name}` in {shard}:\n{all}");
                let every_shard = name.ends_with("tools/list");
                assert!(
                    union.insert(name.clone()) || every_shard,
                    "`{name}` ran twice, again in {shard}"
                );
            }
        }
        assert_eq!(union, everything, "{deal}: the shards together");
    }
}

#[test]
fn explore_s_cases_are_dealt_among_the_shards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = suite(dir.path(), 1);
    let mut total = 0;
    for k in 1..=3 {
        let shard = format!("count:{k}/3");
        let out = run(&manifest, &["--explore-cases", "30", "--partition", &shard]);
        let all = text(&out);
        assert!(out.status.success(), "{shard}:\n{all}");
        let line = all
            .lines()
            .find(|l| l.starts_with("explore::mcp: "))
            .unwrap_or_else(|| panic!("no explore line in {shard}:\n{all}"));
        let (_, tail) = line
            .split_once("(this shard's ")
            .unwrap_or_else(|| panic!("{line}"));
        let mine: usize = tail.split(' ').next().unwrap().parse().unwrap();
        assert!(
            tail.contains("of the run's 30 cases, `--partition count:"),
            "{line}"
        );
        assert_eq!(mine, 10, "{line}");
        total += mine;
    }
    assert_eq!(total, 30);
}

#[test]
fn a_shard_with_nothing_of_its_own_passes_and_says_so() {
    let out = run(
        &root().join("examples/word-stats/holon.yaml"),
        &["--explore-cases", "0", "--partition", "count:3/3"],
    );
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("note: `--partition count:3/3`: no example's call falls to this shard (the others make them): no trial of its own, and it passes\n"),
        "{all}"
    );
    let names: Vec<String> = ran(&out).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().all(|n| n.ends_with("tools/list")), "{names:?}");
}

#[test]
fn a_partition_that_is_not_one_is_refused_in_one_line() {
    for wrong in [
        "4/3",
        "count:4/3",
        "count:0/3",
        "hash:1/0",
        "slice:1/3",
        "count:1",
    ] {
        let out = Command::new(BIN)
            .args(["--manifest", "holon.yaml", "--partition", wrong])
            .current_dir(root().join("examples/word-stats"))
            .output_within(RUN_LIMIT);
        assert_eq!(out.status.code(), Some(2), "{wrong}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(
            said.first().is_some_and(|l| l.contains(&format!(
                "`{wrong}` is not a partition: `count:K/N` or `hash:K/N`"
            ))),
            "{wrong}: {stderr}"
        );
    }
}

#[test]
fn the_shards_of_a_measured_run_make_every_call_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = suite(dir.path(), 28);
    let mut seen = BTreeSet::new();
    let mut lines = 0;
    for k in 1..=3 {
        let receipts = dir.path().join(format!("shard-{k}.jsonl"));
        let shard = format!("count:{k}/3");
        let out = run(
            &manifest,
            &[
                "--explore-cases",
                "0",
                "--repeat",
                "4",
                "--receipts",
                receipts.to_str().unwrap(),
                "--partition",
                &shard,
            ],
        );
        assert!(out.status.success(), "{shard}:\n{}", text(&out));
        // The runs of one example go round the shards: each makes a third of the calls.
        assert!(
            text(&out).contains(&format!("note: `--partition {shard}`: this shard makes 40 of the measured calls (`--repeat 4`), of 30 of the 30 examples\n")),
            "{shard}:\n{}",
            text(&out)
        );
        let body = std::fs::read_to_string(&receipts).expect("the receipts");
        for line in body.lines() {
            let receipt: Value = serde_json::from_str(line).expect("a whole line");
            let key = (
                receipt["example"].as_str().unwrap().to_string(),
                receipt["run"].as_u64().unwrap(),
            );
            assert!(seen.insert(key.clone()), "{key:?} twice, again in {shard}");
            lines += 1;
        }
    }
    assert_eq!(lines, 120);
    assert_eq!(seen.len(), 120);

    // `report` reads the three as one run: 120 calls, each example's counted as the whole run
    // counts them.
    let report = |files: &[&str]| {
        let out = Command::new(BIN)
            .arg("report")
            .args(files)
            .arg("--manifest")
            .arg(&manifest)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output_within(RUN_LIMIT);
        assert!(out.status.success(), "{files:?}:\n{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shards = report(&["shard-1.jsonl", "shard-2.jsonl", "shard-3.jsonl"]);
    assert!(
        shards.contains("120 calls, read from `shard-1.jsonl`, `shard-2.jsonl`, `shard-3.jsonl`"),
        "{shards}"
    );
    let whole = dir.path().join("whole.jsonl");
    let out = run(
        &manifest,
        &[
            "--explore-cases",
            "0",
            "--repeat",
            "4",
            "--receipts",
            whole.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "the whole run:\n{}", text(&out));
    let one = report(&["whole.jsonl"]);
    assert!(one.contains("120 calls, read from `whole.jsonl`"), "{one}");
    // Each example's counts and rate (its latency aside): the same, whichever shard made the
    // calls.
    let counts = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(" calls: "))
            .map(|l| l.split("; p50").next().unwrap_or(l).to_string())
            .collect()
    };
    assert_eq!(counts(&shards), counts(&one), "{shards}\n---\n{one}");
    assert_eq!(counts(&one).len(), 30, "{one}");

    // A shard ended after its first 10 calls (a run stopped leaves whole lines), and one not
    // there at all: the merge reads what there is and says what is missing.
    let second = dir.path().join("shard-2.jsonl");
    let body = std::fs::read_to_string(&second).expect("shard 2");
    let first_ten: String = body.lines().take(10).map(|l| format!("{l}\n")).collect();
    std::fs::write(&second, first_ten).expect("cut shard 2");
    let out = Command::new(BIN)
        .args(["report", "shard-1.jsonl", "shard-2.jsonl", "--manifest"])
        .arg(&manifest)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT);
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("warning: `shard-2.jsonl` holds 10 of the 40 calls its run (`--partition count:2/3`) planned: 30 missing (the run ended before it made them)"),
        "{said}"
    );
    assert!(
        said.contains("warning: no file holds the receipts of `--partition count:3/3`: its calls are missing from this report"),
        "{said}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("50 calls, read from"),
        "{}",
        text(&out)
    );
}

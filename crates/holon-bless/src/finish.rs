//! After the run: the differences the passes saw decided on (an example is rewritten only when
//! every pass that ran it saw the same answer a caller could get, and that answer holds no
//! secret), written, and what to say of it returned: the harness's reporter says it, scrubbed
//! of the run's secrets.

use std::path::Path;

use serde_json::Value;

use crate::collect::{Collector, Seen};
use crate::write::{Change, Fate, bless_file};
use holon_config::secrets::Secrets;
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Expect, Manifest};

/// What a blessing run wrote and left, for the author: its outcome, and the paragraphs that say
/// it (each set apart by a blank line when said), not yet scrubbed of the run's secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// Whether the run passes.
    pub outcome: Outcome,
    /// What to say: what was written, what was left and why, and why the run passes.
    pub said: Vec<String>,
}

/// How a blessing run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every failed trial was a difference now written in the manifest: the run passes.
    Blessed,
    /// A failed trial is not accounted for by what was written: the run fails.
    Left,
}

/// After the run: writes every blessable difference into the manifest at `path`, and returns
/// what was written and what was left, and whether every one of the `failed` trials was a
/// difference now written. An answer that holds the value of one of `secrets` is never
/// written (the manifest is published).
pub fn finish(
    path: &Path,
    manifest: &Manifest,
    seen: &Collector,
    failed: u64,
    secrets: &Secrets,
) -> Finished {
    let mut said = Vec::new();
    let Decided {
        changes,
        accounts,
        mut left,
    } = decide(manifest, &seen.take(), secrets);
    let blessed_trials = if changes.is_empty() {
        0
    } else {
        write_changes(path, (&changes, &accounts), &mut left, &mut said)
    };
    if !left.is_empty() {
        let mut paragraph = format!(
            "bless: left as {} (a crash, a timeout, an answer the gateway refuses, an undeclared code or a transient failure is never an example):",
            if left.len() == 1 { "it is" } else { "they are" }
        );
        for (name, why) in &left {
            paragraph.push_str(&format!("\n  `{name}`: {why}"));
        }
        said.push(paragraph);
    }
    if blessed_trials != failed {
        return Finished {
            outcome: Outcome::Left,
            said,
        };
    }
    // libtest printed `FAILED` for the differences just written: say why the run passes.
    let shown = holon_core::message::path_shown(path);
    said.push(match failed {
        0 => format!(
            "bless: every example of `{shown}` already says what the agent does: nothing to write"
        ),
        1 => format!(
            "bless: the failed trial above was the difference now written into `{shown}`, and nothing else failed: the run passes (read `git diff {shown}` before you commit)"
        ),
        n => format!(
            "bless: the {n} failed trials above were the differences now written into `{shown}`, and nothing else failed: the run passes (read `git diff {shown}` before you commit)"
        ),
    });
    Finished {
        outcome: Outcome::Blessed,
        said,
    }
}

/// What the passes' answers allow: the changes to write, and the examples left with why.
struct Decided {
    changes: Vec<Change>,
    /// Failed trials each change accounts for.
    accounts: Vec<u64>,
    left: Vec<(String, String)>,
}

fn decide(manifest: &Manifest, seen: &[Seen], secrets: &Secrets) -> Decided {
    let mut decided = Decided {
        changes: Vec::new(),
        accounts: Vec::new(),
        left: Vec::new(),
    };
    for example in &manifest.examples {
        let mine: Vec<&Seen> = seen.iter().filter(|s| s.example == example.name).collect();
        let failing = mine
            .iter()
            .filter(|s| !matches!(&s.answer, Ok(a) if same(&example.expect, a)))
            .count();
        if failing == 0 {
            continue;
        }
        let refused: Vec<String> = mine
            .iter()
            .filter_map(|s| {
                s.answer
                    .as_ref()
                    .err()
                    .map(|why| format!("{}: {why}", s.pass.name()))
            })
            .collect();
        if !refused.is_empty() {
            decided
                .left
                .push((example.name.clone(), refused.join("; ")));
            continue;
        }
        let answers: Vec<(&Seen, &Expect)> = mine
            .iter()
            .filter_map(|s| s.answer.as_ref().ok().map(|a| (*s, a)))
            .collect();
        // A failing trial saw an answer (none refused): there is at least one.
        let Some(&(first_seen, first)) = answers.first() else {
            continue;
        };
        if let Some((other, a)) = answers.iter().find(|(_, a)| !same(a, first)) {
            decided.left.push((
                example.name.clone(),
                format!(
                    "the passes disagree: {} says {}, {} says {}",
                    first_seen.pass.name(),
                    show(first),
                    other.pass.name(),
                    show(a)
                ),
            ));
            continue;
        }
        if let Some(name) = secret_in(first, secrets) {
            decided.left.push((
                example.name.clone(),
                format!(
                    "the answer holds the value of `{name}`, a secret: it is never written into the manifest, which is published"
                ),
            ));
            continue;
        }
        decided.changes.push(Change {
            example: example.name.clone(),
            old: example.expect.clone(),
            new: first.clone(),
        });
        decided.accounts.push(failing as u64);
    }
    decided
}

/// Writes the changes and adds to `said` which were written; returns the failed trials they
/// account for. An example that moved in the file during the run is added to `left`.
fn write_changes(
    path: &Path,
    (changes, accounts): (&[Change], &[u64]),
    left: &mut Vec<(String, String)>,
    said: &mut Vec<String>,
) -> u64 {
    let shown = holon_core::message::path_shown(path);
    let fates = match bless_file(path, changes) {
        Ok(fates) => fates,
        Err(why) => {
            said.push(format!("bless: `{shown}` was not rewritten: {why}"));
            return 0;
        }
    };
    let mut blessed_trials = 0;
    let mut lines = Vec::new();
    for ((change, fate), trials) in changes.iter().zip(fates).zip(accounts) {
        match fate {
            Fate::Written | Fate::AlreadySaid => {
                blessed_trials += trials;
                let note = if fate == Fate::AlreadySaid {
                    "  (already written by another run)"
                } else {
                    ""
                };
                lines.push(format!(
                    "  `{}`: {}  =>  {}{note}",
                    change.example,
                    show(&change.old),
                    show(&change.new)
                ));
            }
            Fate::Moved => left.push((
                change.example.clone(),
                "the example changed in the file during the run; run again".into(),
            )),
        }
    }
    if !lines.is_empty() {
        said.push(format!(
            "bless: `{shown}`: {} example{} now say{} what the agent does\n{}",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            if lines.len() == 1 { "s" } else { "" },
            lines.join("\n")
        ));
    }
    blessed_trials
}

/// The secret whose value an answer holds, in a string, a key or a number's digits.
fn secret_in<'s>(answer: &Expect, secrets: &'s Secrets) -> Option<&'s str> {
    if secrets.is_empty() {
        return None;
    }
    let value = match answer {
        Expect::Output(value) => value,
        Expect::Error(code) => return secrets.name_in(code),
    };
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        let found = match v {
            Value::String(s) => secrets.name_in(s),
            Value::Number(n) => secrets.name_in(&n.to_string()),
            Value::Array(items) => {
                stack.extend(items);
                None
            }
            Value::Object(map) => {
                stack.extend(map.values());
                map.keys().find_map(|k| secrets.name_in(k))
            }
            Value::Bool(_) | Value::Null => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Whether two answers say the same (numbers by value).
fn same(a: &Expect, b: &Expect) -> bool {
    match (a, b) {
        (Expect::Output(a), Expect::Output(b)) => json_eq(a, b),
        (Expect::Error(a), Expect::Error(b)) => a == b,
        _ => false,
    }
}

fn show(answer: &Expect) -> String {
    match answer {
        Expect::Output(v) => format!("output: {v}"),
        Expect::Error(c) => format!("error: {c}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holon_core::gateway::Pass;
    use serde_json::{Value, json};

    fn copy() -> (tempfile::TempDir, std::path::PathBuf, Manifest) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("holon.yaml");
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/word-stats/holon.yaml");
        std::fs::copy(fixture, &path).unwrap();
        let manifest =
            holon_core::check::into_manifest(holon_core::check::check_file(&path)).unwrap();
        (dir, path, manifest)
    }

    fn drifted(manifest: &Manifest, words: u64) -> (String, Expect) {
        let example = &manifest.examples[0];
        let Expect::Output(old) = &example.expect else {
            panic!("the first example of word-stats is a success")
        };
        let mut new: Value = old.clone();
        new["words"] = json!(words);
        (example.name.clone(), Expect::Output(new))
    }

    fn seen(collector: &Collector, pass: Pass, example: &str, answer: Result<Expect, String>) {
        collector.push(Seen {
            pass,
            example: example.to_string(),
            answer,
        });
    }

    fn words_before(manifest: &Manifest) -> Value {
        match &manifest.examples[0].expect {
            Expect::Output(o) => o["words"].clone(),
            Expect::Error(_) => Value::Null,
        }
    }

    /// The first example's `words` in the file after a run.
    fn words_after(path: &Path) -> Value {
        let after = holon_core::check::into_manifest(holon_core::check::check_file(path)).unwrap();
        match &after.examples[0].expect {
            Expect::Output(o) => o["words"].clone(),
            Expect::Error(_) => Value::Null,
        }
    }

    /// Each pass's `words` for the first example (or why it has no answer), then `finish`
    /// with `failed` failed trials: the exit code, and the example's `words` before and after.
    fn scenario(seen_by: &[(Pass, Result<u64, &str>)], failed: u64) -> (Outcome, Value, Value) {
        let (_dir, path, manifest) = copy();
        let collector = Collector::default();
        for (pass, words) in seen_by {
            let (name, answer) = drifted(&manifest, words.unwrap_or_default());
            match words {
                Ok(_) => seen(&collector, *pass, &name, Ok(answer)),
                Err(why) => collector.unanswered(*pass, &name, why),
            }
        }
        let code = finish(&path, &manifest, &collector, failed, &Secrets::default()).outcome;
        (code, words_before(&manifest), words_after(&path))
    }

    #[test]
    fn passes_that_agree_are_blessed_and_the_run_passes() {
        let (code, _, after) = scenario(&[(Pass::Function, Ok(12)), (Pass::Mcp, Ok(12))], 2);
        assert_eq!((code, after), (Outcome::Blessed, json!(12)));
    }

    #[test]
    fn passes_that_disagree_are_never_blessed() {
        let (code, before, after) = scenario(&[(Pass::Function, Ok(12)), (Pass::Mcp, Ok(13))], 2);
        assert_eq!((code, after), (Outcome::Left, before));
    }

    #[test]
    fn a_pass_that_got_no_answer_blocks_the_blessing() {
        let (code, before, after) = scenario(
            &[
                (Pass::Function, Ok(12)),
                (
                    Pass::Mcp,
                    Err("the server exited (signal 9) before it answered"),
                ),
            ],
            2,
        );
        assert_eq!((code, after), (Outcome::Left, before));
    }

    #[test]
    fn a_failure_bless_does_not_explain_keeps_the_run_failed() {
        // A third trial (`mcp::tools/list`) failed too: the drift is written, the run fails.
        let (code, _, after) = scenario(&[(Pass::Function, Ok(12)), (Pass::Mcp, Ok(12))], 3);
        assert_eq!((code, after), (Outcome::Left, json!(12)));
    }

    #[test]
    fn an_answer_that_holds_a_secret_is_never_written() {
        let (_dir, path, manifest) = copy();
        let before = std::fs::read_to_string(&path).unwrap();
        let collector = Collector::default();
        let (name, Expect::Output(mut answer)) = drifted(&manifest, 12) else {
            panic!("an output")
        };
        answer["top_words"][0]["word"] = json!("key=sk-0123456789");
        for pass in [Pass::Function, Pass::Mcp] {
            seen(&collector, pass, &name, Ok(Expect::Output(answer.clone())));
        }
        let secrets = Secrets::given([("API_KEY", "sk-0123456789")]);
        let finished = finish(&path, &manifest, &collector, 2, &secrets);
        assert_eq!(finished.outcome, Outcome::Left);
        // What bless says of it names the variable, never the value.
        let said = finished.said.join("\n");
        assert!(
            said.contains("API_KEY") && !said.contains("sk-0123456789"),
            "{said}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        let answer = Expect::Output(answer);
        assert_eq!(secret_in(&answer, &secrets), Some("API_KEY"));
        assert_eq!(secret_in(&answer, &Secrets::default()), None);
    }
}

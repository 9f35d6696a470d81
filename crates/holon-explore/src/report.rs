//! What explore prints: a failure as a ready-to-paste example with the verdict, the reason, the
//! seed and the command that replays it; after a trial, one line of coverage.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::plan::{Case, Origin};
use crate::shrink::Shrunk;
use holon_core::gateway::Status;
use holon_core::manifest::{Expect, Manifest};

/// Longest input printed in full; a longer one is written to a file the report names.
const PRINTED: usize = 4096;

/// The report of a failing case.
pub struct Failure<'a> {
    /// `explore::function` or `explore::mcp`.
    pub trial: &'a str,
    /// The case as first found.
    pub case: &'a Case,
    /// How many cases the run has.
    pub total: usize,
    /// The shrunk input and how it failed.
    pub shrunk: &'a Shrunk,
    /// The seed of the run.
    pub seed: u64,
    /// Whether it came from the manifest's bytes.
    pub seed_from_manifest: bool,
    /// The command that replays this trial with this seed.
    pub replay: String,
}

impl Failure<'_> {
    /// The text of the trial's failure.
    pub fn render(&self) -> String {
        let outcome = &self.shrunk.outcome;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "explore found an input the gateway admits that a paying caller would get `{}` for",
            outcome.status.code()
        );
        let reason = outcome.defect.as_deref().unwrap_or_default();
        let _ = writeln!(out, "  why: {}", reason.replace('\n', "\n       "));
        let origin = match &self.case.origin {
            Origin::Edge(label) => format!("edge case {label}"),
            Origin::Random => "a random case".to_string(),
        };
        let steps = match self.shrunk.steps {
            1 => "1 step".to_string(),
            n => format!("{n} steps"),
        };
        let shrunk = match (self.shrunk.steps, &self.shrunk.cut_short) {
            (0, None) => "already as small as it gets".to_string(),
            (_, None) => format!("shrunk in {steps}"),
            (_, Some(why)) => format!("shrunk in {steps} ({why})"),
        };
        let _ = writeln!(
            out,
            "  found by: case {} of {}, {origin}; {shrunk}",
            self.case.index + 1,
            self.total
        );
        let _ = writeln!(
            out,
            "  seed: {}{}",
            self.seed,
            if self.seed_from_manifest {
                " (from the manifest's bytes)"
            } else {
                ""
            }
        );
        let example = example(&self.shrunk.input, &outcome.answered, self.case);
        if example.len() <= PRINTED {
            let _ = writeln!(
                out,
                "\nthe input, as an example to paste into `examples` (write the answer you expect in place of the agent's):\n{example}"
            );
        } else {
            let path = std::env::temp_dir().join(format!(
                "holon-explore-{}-{}.yaml",
                self.trial.replace("::", "-"),
                self.seed
            ));
            let saved = match std::fs::write(&path, &example) {
                Ok(()) => format!("written in full to `{}`", path.display()),
                Err(e) => format!("could not be written to `{}`: {e}", path.display()),
            };
            let _ = writeln!(
                out,
                "\nthe input is {} bytes of YAML, too long to print: the example is {saved}",
                example.len()
            );
        }
        let _ = writeln!(out, "replay: {}", self.replay);
        let _ = write!(out, "gateway status: {}", outcome.status);
        out
    }
}

fn example(input: &Value, answered: &[String], case: &Case) -> String {
    let name = match &case.origin {
        Origin::Edge(label) => format!("explore: {label}"),
        Origin::Random => format!("explore: case {}", case.index + 1),
    };
    let mut text = format!(
        "  - name: {}\n    input: {}\n",
        holon_yaml::json(&Value::String(name.replace('`', ""))),
        holon_yaml::json(input)
    );
    for line in answered {
        let _ = writeln!(text, "    {line}");
    }
    text
}

/// Whether `code` is declared `retryable: true`.
fn retryable(manifest: &Manifest, code: &str) -> bool {
    manifest
        .gateway()
        .declared(code)
        .is_some_and(|d| d.retryable)
}

/// What a trial's cases reached.
#[derive(Default)]
pub struct Tally {
    /// Cases run.
    pub cases: usize,
    /// Of which edge cases.
    pub edges: usize,
    /// Statuses reached, by code.
    pub statuses: BTreeMap<String, usize>,
    /// Cases whose upstream had no recording (replay): run, not judged.
    pub unrecorded: usize,
}

impl Tally {
    /// When no case succeeded, some ended in a code marked `retryable: true`, and an example
    /// shows a success: what the cases reached, in words. An agent whose upstream cannot be
    /// reached answers like this; one that refuses most generated inputs does not.
    pub fn only_failures(&self, manifest: &Manifest) -> Option<String> {
        let succeeded = self.statuses.contains_key(Status::Success.code());
        let transient = (self.statuses.keys()).any(|code| retryable(manifest, code));
        let examples_succeed =
            (manifest.examples.iter()).any(|e| matches!(e.expect, Expect::Output(_)));
        (!succeeded && transient && examples_succeed).then(|| {
            let reached: Vec<String> = (self.statuses.iter())
                .map(|(code, n)| format!("{code} {n}"))
                .collect();
            reached.join(", ")
        })
    }

    /// One line: the cases, the statuses they reached (those marked `retryable: true` apart:
    /// transient, they say little of the agent), the declared codes none reached.
    pub fn line(&self, trial: &str, manifest: &Manifest, refused: usize) -> String {
        let (transient, lasting): (Vec<_>, Vec<_>) =
            (self.statuses.iter()).partition(|(code, _)| retryable(manifest, code));
        let reached: Vec<String> = lasting
            .iter()
            .map(|(code, n)| format!("{code} {n}"))
            .collect();
        let transient: Vec<String> = transient
            .iter()
            .map(|(code, n)| format!("{code} {n}"))
            .collect();
        let missed: Vec<String> = manifest
            .interface
            .errors
            .iter()
            .filter(|e| !self.statuses.contains_key(&e.code))
            .map(|e| format!("`{}`", e.code))
            .collect();
        let mut line = format!(
            "{trial}: {} cases ({} edge, {} random); reached {}",
            self.cases,
            self.edges,
            self.cases - self.edges,
            if reached.is_empty() {
                "nothing".to_string()
            } else {
                reached.join(", ")
            }
        );
        if !transient.is_empty() {
            let _ = write!(
                line,
                "; transient (`retryable: true`) {}",
                transient.join(", ")
            );
        }
        if self.unrecorded > 0 {
            let _ = write!(
                line,
                "; {} had no recording",
                match self.unrecorded {
                    1 => "1 case".to_string(),
                    n => format!("{n} cases"),
                }
            );
        }
        if refused > 0 {
            let _ = write!(
                line,
                "; {refused} generated inputs refused by the gate (never sent)"
            );
        }
        if !manifest.interface.errors.is_empty() {
            if missed.is_empty() {
                line.push_str("; every declared code reached");
            } else {
                let _ = write!(line, "; declared codes none reached: {}", missed.join(", "));
            }
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holon_core::gateway::Status;
    use serde_json::json;

    #[test]
    fn the_example_reads_back_as_the_same_yaml() {
        let input = json!({
            "text": "a\u{0}b\n\u{7f}\u{85}\u{2028}\u{feff} 🦀 \"q\" \\",
            "top": 50,
            "list": [1.5, true, null, {"k": "v"}]
        });
        let case = Case {
            index: 4,
            origin: Origin::Edge("`/text` a NUL character".into()),
            input: input.clone(),
        };
        let text = example(
            &input,
            &["error: agent_crashed".into(), "# message: boom".into()],
            &case,
        );
        let read: Vec<BTreeMap<String, Value>> = serde_saphyr::from_str(
            &text
                .replace("\n  ", "\n")
                .trim_start()
                .replace("  - ", "- "),
        )
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(read[0]["input"], input, "{text}");
        assert_eq!(read[0]["name"], json!("explore: /text a NUL character"));
        assert_eq!(read[0]["error"], json!(Status::AgentCrashed.code()));
    }
}

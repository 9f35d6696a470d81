//! What each pass saw for each example, kept while blessing is on: the answer that could be
//! written into the example, or why it never may. One collector per run, passed down to the
//! passes: nothing is kept in the process.

use std::sync::Mutex;

use holon_core::gateway::{Answer, Gateway, Pass, Status};
use holon_core::manifest::{Example, Expect};

/// One trial's answer: what the example could say, or why it must not.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The pass that saw it.
    pub pass: Pass,
    /// The example's name.
    pub example: String,
    /// What the example could say, or why it must not say what was seen.
    pub answer: Result<Expect, String>,
}

/// What the passes of one run saw, for `--bless` to decide on after it.
#[derive(Debug, Default)]
pub struct Collector {
    seen: Mutex<Vec<Seen>>,
}

impl Collector {
    /// Everything seen.
    pub fn take(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }

    /// Keeps what a pass saw.
    pub fn push(&self, seen: Seen) {
        if let Ok(mut all) = self.seen.lock() {
            all.push(seen);
        }
    }

    /// A pass judged this answer for this example; `upstream_failure` is the first failure of
    /// a real upstream the call saw (live), if any. A transient failure is never written: not a
    /// code marked `retryable: true`, and not an error in place of an output while an upstream
    /// failed.
    pub fn observe(
        &self,
        pass: Pass,
        gateway: &Gateway,
        example: &Example,
        got: &Answer,
        upstream_failure: Option<&str>,
    ) {
        let status = got.status(gateway);
        let answer = match (got, &status) {
            (Answer::Output(value), Status::Success) => Ok(Expect::Output(value.clone())),
            (Answer::Failed { .. }, Status::Declared(code))
                if gateway.declared(code).is_some_and(|d| d.retryable) =>
            {
                Err(format!(
                    "`{code}` is marked `retryable: true`: a transient failure is never an example{}",
                    upstream_failure.map_or(String::new(), |why| format!(" ({why})"))
                ))
            }
            (Answer::Failed { .. }, Status::Declared(code)) => {
                match (upstream_failure, &example.expect) {
                    (Some(why), Expect::Output(_)) => Err(format!(
                        "`{code}` answered while an upstream failed ({why}): an output is never replaced by an error an upstream's failure caused"
                    )),
                    _ => Ok(Expect::Error(code.clone())),
                }
            }
            _ => Err(format!(
                "{}: {}",
                status.code(),
                first_line(&got.describe(gateway))
            )),
        };
        self.push(Seen {
            pass,
            example: example.name.clone(),
            answer,
        });
    }

    /// A trial of this pass failed before any answer could be judged (the call was not made):
    /// the example has no answer to write.
    pub fn unanswered(&self, pass: Pass, example: &str, why: &str) {
        let Ok(mut all) = self.seen.lock() else {
            return;
        };
        if !all.iter().any(|s| s.pass == pass && s.example == example) {
            all.push(Seen {
                pass,
                example: example.to_string(),
                answer: Err(format!("no answer: {}", first_line(why))),
            });
        }
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 160 {
        format!("{}...", line.chars().take(160).collect::<String>())
    } else {
        line.to_string()
    }
}

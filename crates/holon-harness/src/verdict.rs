//! What an answer means for an example: pass, or a failure that says why in words, with the
//! status the gateway would have given. The status and the description of the answer are the
//! answer's own (`Answer::status`, `Answer::describe`); this adds what the example expected.

use super::compare::{diff, differences};
use super::measure::{CallEnd, counted};
use super::record::{Cause, Fault};
use super::reporter::{Event, Reporter};
use holon_core::gateway::{Answer, Gateway, Pass, Status};
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Example, Expect};

/// How an example's calls are judged: whether the upstreams are real (`live`), on which pass,
/// whether an answer that counts against the success rate is left to `--min-success-rate`
/// (`tolerate`), and the run's reporter, where the notes of a live run go.
pub(crate) struct Judging<'a> {
    pub live: bool,
    pub pass: Pass,
    pub tolerate: bool,
    pub reporter: &'a Reporter,
}

/// One call of an example judged: [`judge`], or in live mode (the real upstreams behind the
/// agent, whose answers vary) what a paying caller would get, a success `interface.output`
/// admits or a declared failure, with any difference from the example printed as a note
/// (scrubbed of the run's secrets), not a failure. With `tolerate` (`--min-success-rate`), an
/// answer that counts against the success rate is left to that gate.
pub(crate) fn judge_one(
    gateway: &Gateway,
    example: &Example,
    answer: Answer,
    how: &Judging<'_>,
) -> Result<(), Fault> {
    if let Some(note) = judge_call(gateway, example, answer, how.live, how.tolerate)? {
        let note = format!("live: `{}::{}` {note}", how.pass.name(), example.name);
        how.reporter.emit(Event::Note(note));
    }
    Ok(())
}

/// Several calls of an example (`--repeat`), each judged as [`judge_one`] judges one: the
/// trial fails when one does, reporting the first in full and naming the others; the notes
/// of a live run are said once, with their count.
pub(crate) fn judge_many(
    gateway: &Gateway,
    example: &Example,
    ends: &[CallEnd],
    how: &Judging<'_>,
) -> Result<(), Fault> {
    let mut notes = Vec::new();
    let mut failures: Vec<(u32, Fault)> = Vec::new();
    for end in ends {
        let judged = match &end.answer {
            Err(why) => Err(Fault::from(why.clone())),
            Ok(answer) => judge_call(gateway, example, answer.clone(), how.live, how.tolerate),
        };
        match judged {
            Ok(Some(note)) => notes.push((end.run, note)),
            Ok(None) => {}
            Err(fault) => failures.push((end.run, fault)),
        }
    }
    let trial = format!("{}::{}", how.pass.name(), example.name);
    if let Some((run, note)) = notes.first() {
        let note = format!(
            "live: `{trial}`: {} of its {} calls are notes; the first, call {run}, {note}",
            notes.len(),
            ends.len()
        );
        how.reporter.emit(Event::Note(note));
    }
    let Some((run, first)) = failures.first() else {
        return Ok(());
    };
    let mut message = format!(
        "{} of the {} calls of this example failed; the first, call {run}: {}",
        failures.len(),
        ends.len(),
        first.message
    );
    if failures.len() > 1 {
        let others: Vec<String> = (failures.iter().skip(1))
            .map(|(run, f)| {
                let why = match &f.cause {
                    Some(cause) => cause.status.code().to_string(),
                    None => f.message.lines().next().unwrap_or_default().to_string(),
                };
                format!("call {run} ({why})")
            })
            .collect();
        message.push_str(&format!(
            "
the others: {}",
            others.join(", ")
        ));
    }
    Err(Fault {
        message,
        cause: first.cause.clone(),
    })
}

/// One call judged: `Ok(Some(note))` when it passes with something to say (live).
fn judge_call(
    gateway: &Gateway,
    example: &Example,
    answer: Answer,
    live: bool,
    tolerate: bool,
) -> Result<Option<String>, Fault> {
    let status = answer.status(gateway);
    if tolerate && counted(&status) && status != Status::Success {
        return Ok(None);
    }
    if !live {
        return judge(gateway, example, answer).map(|()| None);
    }
    let shown = |v: Option<&serde_json::Value>| {
        v.map_or("(nothing)".to_string(), holon_core::message::short)
    };
    let expected = |expect: &Expect| match expect {
        Expect::Output(_) => "an output".to_string(),
        Expect::Error(code) => format!("`{code}`"),
    };
    match (&answer, &example.expect, &status) {
        (Answer::Output(actual), Expect::Output(expected), Status::Success) => {
            Ok(holon_core::json::first_difference(expected, actual).map(|(at, was, now)| {
                format!(
                    "differs from its example at `{}`: the example says {}, the agent {} (live judges what a paying caller gets: a success, so this is a note)",
                    if at.is_empty() { "/" } else { &at },
                    shown(was),
                    shown(now)
                )
            }))
        }
        (_, Expect::Error(want), Status::Declared(code)) if code == want => Ok(None),
        (_, expect, Status::Success | Status::Declared(_)) => Ok(Some(format!(
            "answered {} where its example shows {} (live judges what a paying caller gets: {}, so this is a note)",
            answer.describe(gateway),
            expected(expect),
            match status {
                Status::Success => "a success",
                _ => "a declared failure, counted apart from the success rate",
            }
        ))),
        _ => judge(gateway, example, answer).map(|()| None),
    }
}

/// Passes when the answer is exactly what the example promises; a failure says why, and what
/// it has in common with other trials' failures.
pub(crate) fn judge(gateway: &Gateway, example: &Example, answer: Answer) -> Result<(), Fault> {
    let status = answer.status(gateway);
    match (&answer, &example.expect) {
        (Answer::Output(actual), Expect::Output(expected)) => {
            // The status judged the output already: a pass validates it once.
            if status == Status::Success && json_eq(actual, expected) {
                return Ok(());
            }
            let violations = gateway.judge_output(actual);
            let what = match differences(expected, actual).first() {
                Some(d) => format!(
                    "the output differs from the example at {} ({})",
                    d.place(),
                    d.kind.words()
                ),
                None => "the output differs from the example".to_string(),
            };
            let mut message = format!("{what}\n");
            message.push_str(&diff(expected, actual));
            for v in &violations {
                message.push_str(&format!(
                    "\n`interface.output` refuses `{}`: {}",
                    v.at(),
                    v.message
                ));
            }
            message.push_str(&format!("\ngateway status: {status}"));
            Err(Fault {
                message,
                cause: Some(Cause { status, what }),
            })
        }
        (_, Expect::Error(want)) if status == Status::Declared(want.clone()) => Ok(()),
        (Answer::Failed { code, message }, expect) => Err(Fault {
            message: failed(&status, code.as_deref(), message, expect),
            cause: Some(Cause {
                what: answer.describe(gateway),
                status,
            }),
        }),
        (_, expect) => Err(Fault {
            message: format!(
                "expected {}, got {}{}\ngateway status: {status}",
                expected(expect),
                answer.describe(gateway),
                hint(&answer, expect)
            ),
            cause: Some(Cause {
                what: answer.describe(gateway),
                status,
            }),
        }),
    }
}

/// What was expected, in words.
fn expected(expect: &Expect) -> String {
    match expect {
        Expect::Output(_) => "an output".to_string(),
        Expect::Error(want) => format!("the declared failure `{want}`"),
    }
}

/// A failure result against what the example expects: which code it carried, what that means,
/// and its message.
fn failed(status: &Status, code: Option<&str>, message: &str, expect: &Expect) -> String {
    let what = match (code, status) {
        (None, _) => "a failure with no `structuredContent.error.code`".to_string(),
        (Some(c), Status::AgentError) => format!("the undeclared code `{c}`"),
        (Some(c), Status::Declared(_)) => format!("the declared failure `{c}`"),
        (Some(c), _) => format!("`{c}`"),
    };
    let cause = match (code, status) {
        (None, _) => {
            " (a failure must carry `structuredContent: {error: {code, message}}` with a declared code)"
        }
        (_, Status::AgentCrashed) => {
            " (the agent raised, threw or panicked with something that is not a declared failure: `ctx.fail` with a code of `interface.errors`)"
        }
        (_, Status::AgentError) => " (not declared in `interface.errors`)",
        _ => "",
    };
    format!(
        "expected {}, got {what}{cause}: {message}\ngateway status: {status}",
        expected(expect)
    )
}

/// What to do about an answer that is not the example's, where the answer alone does not say.
fn hint(answer: &Answer, expect: &Expect) -> String {
    match (answer, expect) {
        (Answer::RpcError { .. }, Expect::Error(want)) => format!(
            "\n(a declared failure is a tool result with `isError: true` and `structuredContent.error.code: \"{want}\"`)"
        ),
        (Answer::HttpStatus { status: 413, .. }, _) => {
            "\n(this is the server's answer: it refuses a request body this large, which `runtime.limits.max_input_bytes` admits; raise the server's body limit or lower `max_input_bytes`)".into()
        }
        (Answer::HttpStatus { .. }, _) => {
            "\n(this is the server's answer, not retried; if it limits the calls in flight, lower `--concurrency`)".into()
        }
        _ => String::new(),
    }
}

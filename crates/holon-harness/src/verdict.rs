//! What an answer means for an example: pass, or a failure that says why in words, with the
//! status the gateway would have given. The status and the description of the answer are the
//! answer's own (`Answer::status`, `Answer::describe`); this adds what the example expected.

use super::compare::{diff, differences};
use super::record::{Cause, Fault, Records};
use holon_core::gateway::{Answer, Gateway, Status};
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Example, Expect};

/// [`judge`], or in live mode (the real upstreams behind the agent, whose answers vary) what a
/// paying caller would get: a success `interface.output` admits, or the example's declared
/// code, with any difference from the example's output printed as a note (scrubbed of the
/// run's secrets, as `records` scrubs every message), not a failure.
pub(crate) fn judge_as(
    gateway: &Gateway,
    example: &Example,
    answer: Answer,
    live: bool,
    pass: &str,
    records: &Records,
) -> Result<(), Fault> {
    if !live {
        return judge(gateway, example, answer);
    }
    match (&answer, &example.expect, answer.status(gateway)) {
        (Answer::Output(actual), Expect::Output(expected), Status::Success) => {
            if let Some((at, was, now)) = holon_core::json::first_difference(expected, actual) {
                let shown = |v: Option<&serde_json::Value>| {
                    v.map_or("(nothing)".to_string(), holon_core::message::short)
                };
                let note = format!(
                    "note: live: `{pass}::{}` differs from its example at `{}`: the example says {}, the agent {} (live judges what a paying caller gets: a success, so this is a note)",
                    example.name,
                    if at.is_empty() { "/" } else { &at },
                    shown(was),
                    shown(now)
                );
                eprintln!("{}", records.scrub(&note));
            }
            Ok(())
        }
        _ => judge(gateway, example, answer),
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
            " (a panic or an error that is not `ctx.fail` with a declared code)"
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

//! What an answer means for an example: pass, or a failure that says why in words, with the
//! status the gateway would have given.

use serde_json::Value;

use super::compare::{diff, json_eq};
use crate::gateway::{Ended, Gateway, Status};
use crate::manifest::{Example, Expect, Manifest};

/// What a call came back with, from either pass.
#[derive(Debug, Clone)]
pub(crate) enum Got {
    /// An output (`structuredContent`, or the function's return value).
    Output(Value),
    /// A failure result; `code` is `structuredContent.error.code` when there is one.
    Failed {
        /// The code, when the failure carried one.
        code: Option<String>,
        /// Its message.
        message: String,
    },
    /// A result with text content only, no `structuredContent`.
    TextOnly(String),
    /// A JSON-RPC error instead of a tool result.
    RpcError {
        /// The JSON-RPC error code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// No answer within `timeout_s` (plus a grace).
    Hung(f64),
    /// No answer within `timeout_s` while other calls were in flight, nor when tried alone.
    HungAlone(f64),
    /// An HTTP error status (429, 503, ...) instead of an MCP answer.
    HttpStatus(u16),
}

impl Got {
    /// The status the gateway would settle this answer with.
    pub(crate) fn status(&self, manifest: &Manifest) -> Status {
        match self {
            Got::Output(output) if manifest.gateway().judge_output(output).is_empty() => {
                Status::Success
            }
            Got::Output(_) | Got::TextOnly(_) => Status::InvalidOutput,
            Got::Failed { code, .. } => Status::of_failure(manifest, code.as_deref()),
            Got::RpcError { .. } | Got::HttpStatus(_) => Status::AgentError,
            Got::Hung(_) | Got::HungAlone(_) => Status::Timeout,
        }
    }
}

/// The function pass's answer, as a server would have sent it: a failure carries its status's
/// code.
impl From<Result<Value, Ended>> for Got {
    fn from(outcome: Result<Value, Ended>) -> Got {
        match outcome {
            Ok(output) => Got::Output(output),
            Err(ended) => Got::Failed {
                code: Some(ended.status.code().to_string()),
                message: ended.message,
            },
        }
    }
}

/// Passes when the answer is exactly what the example promises.
pub(crate) fn judge(
    manifest: &Manifest,
    gateway: &Gateway,
    example: &Example,
    got: Got,
) -> Result<(), String> {
    let status = got.status(manifest);
    match (got, &example.expect) {
        (Got::Output(actual), Expect::Output(expected)) => {
            // The status judged the output already: a pass validates it once.
            if status == Status::Success && json_eq(&actual, expected) {
                return Ok(());
            }
            let violations = gateway.judge_output(&actual);
            let mut message = String::from("the output differs from the example\n");
            message.push_str(&diff(expected, &actual));
            for v in &violations {
                message.push_str(&format!(
                    "\n`interface.output` refuses `{}`: {}",
                    v.at(),
                    v.message
                ));
            }
            message.push_str(&format!("\ngateway status: {status}"));
            Err(message)
        }
        (Got::Output(actual), Expect::Error(want)) => Err(format!(
            "expected the declared failure `{want}`, but the agent returned an output: {}\ngateway status: {status}",
            crate::message::short(&actual)
        )),
        (Got::Failed { code, message }, expect) => {
            failed(&status, code.as_deref(), &message, expect)
        }
        (Got::TextOnly(text), _) => Err(format!(
            "the result has only text content and no `structuredContent`; the gateway reads `structuredContent`, so this call fails\ntext: {}\ngateway status: {}",
            text.chars().take(200).collect::<String>(),
            status
        )),
        (Got::RpcError { code, message }, expect) => {
            let hint = match expect {
                Expect::Error(want) => format!(
                    "; a declared failure is a tool result with `isError: true` and `structuredContent.error.code: \"{want}\"`"
                ),
                Expect::Output(_) => String::new(),
            };
            Err(format!(
                "the server answered with a JSON-RPC error ({code}: {message}) instead of a tool result{hint}\ngateway status: {status}"
            ))
        }
        (Got::Hung(limit), _) => Err(format!(
            "no answer within `runtime.limits.timeout_s` ({limit} s)\ngateway status: {status}"
        )),
        (Got::HungAlone(limit), _) => Err(format!(
            "no answer within `runtime.limits.timeout_s` ({limit} s), even when tried alone after timing out among other calls in flight; it was cancelled (`notifications/cancelled`)\ngateway status: {status}"
        )),
        (Got::HttpStatus(http), _) => Err(format!(
            "the server answered HTTP {http}{} instead of a tool result; this is the server's answer, not retried (if it limits the calls in flight, lower `--concurrency`)\ngateway status: {status}",
            match http {
                429 => " Too Many Requests",
                503 => " Service Unavailable",
                _ => "",
            },
        )),
    }
}

/// A failure result against what the example expects: its declared failure, or why not.
fn failed(
    status: &Status,
    code: Option<&str>,
    message: &str,
    expect: &Expect,
) -> Result<(), String> {
    if let (Status::Declared(c), Expect::Error(want)) = (status, expect)
        && c == want
    {
        return Ok(());
    }
    let what = match (code, status) {
        (None, _) => "a failure with no `structuredContent.error.code`".to_string(),
        (Some(c), Status::AgentError) => format!("the undeclared code `{c}`"),
        (Some(c), Status::Declared(_)) => format!("the declared failure `{c}`"),
        (Some(c), _) => format!("`{c}`"),
    };
    let expected = match expect {
        Expect::Output(_) => "an output".to_string(),
        Expect::Error(want) => format!("the declared failure `{want}`"),
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
    Err(format!(
        "expected {expected}, got {what}{cause}: {message}\ngateway status: {status}"
    ))
}

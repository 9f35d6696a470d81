//! What a call came back with, from the agent function or its server, settled as the gateway
//! would settle it: one type for every pass, with one status and one description per kind of
//! answer, so the verdicts, `--bless` and explore cannot read an answer three ways.

use serde_json::Value;

use super::{Ended, Gateway, Status};
use crate::message::short;

/// What a call came back with.
#[derive(Debug, Clone)]
pub enum Answer {
    /// An output (`structuredContent`, or the function's return value).
    Output(Value),
    /// A failure result; `code` is `structuredContent.error.code` when there is one.
    Failed {
        /// The code, when the failure carried one.
        code: Option<String>,
        /// What the failure says happened.
        message: String,
    },
    /// A result with text content only, no `structuredContent`.
    TextOnly(String),
    /// A result that breaks the protocol's rules for the era the call was made in (a
    /// 2026-07-28 result without its `resultType`): what is wrong with it.
    Malformed(String),
    /// A JSON-RPC error instead of a tool result.
    RpcError {
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        message: String,
    },
    /// No answer within `timeout_s` (plus a grace); the limit in seconds.
    Hung(f64),
    /// No answer within `timeout_s` while other calls were in flight, nor when tried alone.
    HungAlone(f64),
    /// No answer within `timeout_s` while other calls were in flight, and not tried again
    /// alone: another call tried alone got no answer either, so the server does not answer.
    HungNotRetried(f64),
    /// No answer within `timeout_s` to a call made alone, while the server answered nothing
    /// else either: the call blocks the server (its other calls wait behind it).
    Blocked(f64),
    /// An HTTP error status (413, 429, 503, ...) instead of an MCP answer: the server answered,
    /// with no usable code.
    HttpStatus {
        /// The status code.
        status: u16,
        /// Its reason phrase (`Payload Too Large`), when it has one.
        reason: String,
        /// The start of the body, as text, in a line (empty when there was none, or it was not
        /// read).
        body: String,
    },
    /// No answer at all: the server could not be reached, or exited before the call was
    /// made; why, in words.
    Unreachable(String),
    /// The server's process ended while it had the call: a crash, as a caller meets it (the
    /// connection cut, no answer); what happened, in words (the exit status, whether the call
    /// was alone on a server just started, the server's last lines).
    Crashed(String),
}

impl Answer {
    /// The status the gateway would settle this answer with.
    pub fn status(&self, gateway: &Gateway) -> Status {
        match self {
            Answer::Output(output) if gateway.judge_output(output).is_empty() => Status::Success,
            Answer::Output(_) | Answer::TextOnly(_) => Status::InvalidOutput,
            Answer::Failed { code, .. } => Status::of_failure(gateway, code.as_deref()),
            Answer::RpcError { .. } | Answer::Malformed(_) | Answer::HttpStatus { .. } => {
                Status::AgentError
            }
            Answer::Hung(_)
            | Answer::HungAlone(_)
            | Answer::HungNotRetried(_)
            | Answer::Blocked(_) => Status::Timeout,
            Answer::Unreachable(_) => Status::RuntimeUnavailable,
            Answer::Crashed(_) => Status::AgentCrashed,
        }
    }

    /// What the agent answered, for a report that names the status beside it: an output in
    /// short, or what is wrong with the answer.
    pub fn describe(&self, gateway: &Gateway) -> String {
        match self {
            Answer::Output(output) => match gateway.judge_output(output).as_slice() {
                [] => format!("an output {}", short(output)),
                [v, rest @ ..] => {
                    let more = match rest.len() {
                        0 => String::new(),
                        n => format!(" (and {n} more)"),
                    };
                    format!(
                        "`interface.output` refuses `{}`: {}{more}",
                        v.at(),
                        v.message
                    )
                }
            },
            Answer::Failed { code, message } => {
                match (Status::of_failure(gateway, code.as_deref()), code) {
                    (_, None) => {
                        format!("a failure with no `structuredContent.error.code`: {message}")
                    }
                    (Status::Declared(c), _) => format!("the declared failure `{c}`: {message}"),
                    (Status::AgentError, Some(c)) => {
                        format!("the undeclared code `{c}` (not in `interface.errors`): {message}")
                    }
                    (Status::InvalidInput, _) => {
                        format!("the agent refused an input the gateway admits: {message}")
                    }
                    // The agent's own server said how it ended (a crash, a timeout): its
                    // message is the description.
                    _ => message.clone(),
                }
            }
            Answer::TextOnly(text) => format!(
                "a result with only text content and no `structuredContent` (the gateway reads `structuredContent`): {}",
                text.chars().take(200).collect::<String>()
            ),
            Answer::RpcError { code, message } => format!(
                "the server answered with a JSON-RPC error ({code}: {message}) instead of a tool result"
            ),
            Answer::Malformed(why) => format!("a result that breaks the protocol: {why}"),
            Answer::Hung(limit) => {
                format!("no answer within `runtime.limits.timeout_s` ({limit} s)")
            }
            Answer::HungAlone(limit) => format!(
                "no answer within `runtime.limits.timeout_s` ({limit} s), even when tried alone after timing out among other calls in flight; it was cancelled (`notifications/cancelled`)"
            ),
            Answer::Blocked(limit) => format!(
                "no answer within `runtime.limits.timeout_s` ({limit} s), made alone, while the server answered nothing else either (not even `tools/list`): this input blocks the server, and every call in flight beside it waits too (a blocking call in an async handler?); the server was started again for the calls after it"
            ),
            Answer::HungNotRetried(limit) => format!(
                "no answer within `runtime.limits.timeout_s` ({limit} s) among other calls in flight; not tried again alone, since a call tried alone got no answer either"
            ),
            Answer::HttpStatus {
                status,
                reason,
                body,
            } => {
                let mut said = format!("the server answered HTTP {status}");
                if !reason.is_empty() {
                    said.push(' ');
                    said.push_str(reason);
                }
                said.push_str(" instead of a tool result");
                if !body.is_empty() {
                    said.push_str(&format!(": {body:?}"));
                }
                said
            }
            Answer::Unreachable(why) | Answer::Crashed(why) => why.clone(),
        }
    }
}

/// The function pass's answer, as a server would have sent it: a failure carries its status's
/// code.
impl From<Result<Value, Ended>> for Answer {
    fn from(outcome: Result<Value, Ended>) -> Answer {
        match outcome {
            Ok(output) => Answer::Output(output),
            Err(ended) => Answer::Failed {
                code: Some(ended.status.code().to_string()),
                message: ended.message,
            },
        }
    }
}

/// Which pass a call went through: the agent function in-process, or its MCP server. The one
/// name for it every part of a run uses: the trials' names, `--bless`, explore, the upstreams'
/// proxies and the fault trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pass {
    /// The agent function, called in the harness's own process.
    Function,
    /// The agent's MCP server, a process of its own (or one already running).
    Mcp,
}

impl Pass {
    /// Both passes, in the order a run makes them.
    pub const ALL: [Pass; 2] = [Pass::Function, Pass::Mcp];

    /// The pass as its trials' names say it: `function`, `mcp`.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Function => "function",
            Pass::Mcp => "mcp",
        }
    }

    /// What answers on this pass, in words: `the agent function`, `the server`.
    pub fn who(self) -> &'static str {
        match self {
            Pass::Function => "the agent function",
            Pass::Mcp => "the server",
        }
    }
}

/// Why a call's answer is not judged: its upstream requests went wrong on the harness's side,
/// so what came back says nothing of the agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Trouble {
    /// A request had no recording (replay): the report, and the command that refreshes.
    #[error("{0}")]
    Unrecorded(String),
    /// The real service failed while recording: why.
    #[error("{0}")]
    Upstream(String),
}

/// What a call came back with, its upstreams considered: the answer to judge, or why there is
/// none to judge.
pub type Reply = Result<Answer, Trouble>;

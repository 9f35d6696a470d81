//! What a paying caller would get for an answer: a success with an output inside
//! `interface.output`, or a declared code. Everything else is a defect explore reports.

use crate::gateway::{Gateway, Status};
use crate::harness::{Got, json_eq};
use crate::manifest::Manifest;
use crate::message::short;

/// How one case ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The status the gateway would settle it with.
    pub status: Status,
    /// Why it is a defect; `None` when a paying caller could get this answer.
    pub defect: Option<String>,
    /// What the agent answered, as the lines of a YAML example after `input`.
    pub answered: Vec<String>,
}

impl Outcome {
    /// A case that could not be sent or answered at all.
    pub fn unreachable(reason: String) -> Outcome {
        Outcome {
            status: Status::RuntimeUnavailable,
            defect: Some(reason),
            answered: vec!["# no answer: the server could not be reached".into()],
        }
    }
}

/// Settles one answer as the gateway would, for an input its gate admitted.
pub fn settle(manifest: &Manifest, gateway: &Gateway, got: &Got) -> Outcome {
    let status = got.status(manifest);
    let defect = match got {
        Got::Output(_) if status == Status::Success => None,
        Got::Output(output) => Some(
            gateway
                .judge_output(output)
                .iter()
                .map(|v| format!("`interface.output` refuses `{}`: {}", v.at(), v.message))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Got::Failed { code, message } => match (&status, code) {
            (Status::Declared(_), _) => None,
            (_, None) => Some(format!(
                "a failure with no `structuredContent.error.code`: {message}"
            )),
            (Status::AgentError, Some(c)) => Some(format!(
                "the undeclared code `{c}` (not in `interface.errors`): {message}"
            )),
            (Status::InvalidInput, _) => Some(format!(
                "the agent refused an input the gateway admits: {message}"
            )),
            (_, Some(c)) => Some(format!("`{c}`: {message}")),
        },
        Got::TextOnly(text) => Some(format!(
            "a result with only text content and no `structuredContent`: {}",
            text.chars().take(200).collect::<String>()
        )),
        Got::RpcError { code, message } => Some(format!(
            "a JSON-RPC error ({code}: {message}) instead of a tool result"
        )),
        Got::Hung(limit) | Got::HungAlone(limit) => Some(format!(
            "no answer within `runtime.limits.timeout_s` ({limit} s)"
        )),
        Got::HttpStatus(http) => Some(format!("HTTP {http} instead of an MCP answer")),
    };
    Outcome {
        status,
        defect,
        answered: answered(got),
    }
}

/// The server's answer against the function's for the same input: the same output, or the
/// same code. What only the wire changes shows here.
pub fn differ(function: &Got, server: &Got) -> Option<String> {
    let same = match (function, server) {
        (Got::Output(a), Got::Output(b)) => json_eq(a, b),
        (Got::Failed { code: a, .. }, Got::Failed { code: b, .. }) => a == b,
        _ => false,
    };
    (!same).then(|| {
        format!(
            "the server's answer differs from the function's for the same input\n  function: {}\n  server:   {}\n(an agent whose answers vary from call to call turns this check off with `Harness::explore_differential(false)`)",
            one_line(function),
            one_line(server)
        )
    })
}

fn one_line(got: &Got) -> String {
    match got {
        Got::Output(v) => format!("output {}", short(v)),
        Got::Failed { code: Some(c), .. } => format!("failure `{c}`"),
        Got::Failed { code: None, .. } => "a failure with no code".into(),
        Got::TextOnly(_) => "text only".into(),
        Got::RpcError { code, .. } => format!("JSON-RPC error {code}"),
        Got::Hung(_) | Got::HungAlone(_) => "no answer".into(),
        Got::HttpStatus(status) => format!("HTTP {status}"),
    }
}

/// The answer as YAML lines, ready to follow `input:` in an example.
fn answered(got: &Got) -> Vec<String> {
    match got {
        Got::Output(v) => vec![format!("output: {}", super::report::yaml_json(v))],
        Got::Failed {
            code: Some(c),
            message,
        } => vec![
            format!("error: {c}"),
            format!("# message: {}", comment(message)),
        ],
        Got::Failed {
            code: None,
            message,
        } => {
            vec![format!("# a failure with no code: {}", comment(message))]
        }
        Got::TextOnly(text) => vec![format!("# text only: {}", comment(text))],
        Got::RpcError { code, message } => {
            vec![format!("# JSON-RPC error {code}: {}", comment(message))]
        }
        Got::Hung(limit) | Got::HungAlone(limit) => vec![format!("# no answer within {limit} s")],
        Got::HttpStatus(status) => vec![format!("# HTTP {status} instead of an MCP answer")],
    }
}

fn comment(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(160)
        .collect();
    flat.trim().to_string()
}

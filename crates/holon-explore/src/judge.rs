//! What a paying caller would get for an answer: a success with an output inside
//! `interface.output`, or a declared code. Everything else is a defect explore reports. The
//! status and the description are the answer's own (`Answer::status`, `Answer::describe`).

use holon_core::gateway::{Answer, Gateway, Status};
use holon_core::json::equal as json_eq;
use holon_core::message::short;

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

/// Settles one answer as the gateway would, for an input its gate admitted.
pub fn settle(gateway: &Gateway, answer: &Answer) -> Outcome {
    let status = answer.status(gateway);
    let defect = match status {
        Status::Success | Status::Declared(_) => None,
        _ => Some(answer.describe(gateway)),
    };
    Outcome {
        status,
        defect,
        answered: answered(answer),
    }
}

/// The server's answer against the function's for the same input: the same output, or the
/// same code. What only the wire changes shows here.
pub fn differ(function: &Answer, server: &Answer) -> Option<String> {
    let same = match (function, server) {
        (Answer::Output(a), Answer::Output(b)) => json_eq(a, b),
        (Answer::Failed { code: a, .. }, Answer::Failed { code: b, .. }) => a == b,
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

fn one_line(answer: &Answer) -> String {
    match answer {
        Answer::Output(v) => format!("output {}", short(v)),
        Answer::Failed { code: Some(c), .. } => format!("failure `{c}`"),
        Answer::Failed { code: None, .. } => "a failure with no code".into(),
        Answer::TextOnly(_) => "text only".into(),
        Answer::RpcError { code, .. } => format!("JSON-RPC error {code}"),
        Answer::Malformed(_) => "a result that breaks the protocol".into(),
        Answer::Hung(_) | Answer::HungAlone(_) | Answer::HungNotRetried(_) | Answer::Blocked(_) => {
            "no answer".into()
        }
        Answer::HttpStatus { status, .. } => format!("HTTP {status}"),
        Answer::Unreachable(_) => "no answer: the server could not be reached".into(),
        Answer::Crashed(_) => "no answer: the server's process ended".into(),
    }
}

/// The answer as YAML lines, ready to follow `input:` in an example.
fn answered(answer: &Answer) -> Vec<String> {
    match answer {
        Answer::Output(v) => vec![format!("output: {}", holon_yaml::json(v))],
        Answer::Failed {
            code: Some(c),
            message,
        } => vec![
            format!("error: {c}"),
            format!("# message: {}", comment(message)),
        ],
        Answer::Failed {
            code: None,
            message,
        } => {
            vec![format!("# a failure with no code: {}", comment(message))]
        }
        Answer::TextOnly(text) => vec![format!("# text only: {}", comment(text))],
        Answer::RpcError { code, message } => {
            vec![format!("# JSON-RPC error {code}: {}", comment(message))]
        }
        Answer::Malformed(why) => vec![format!("# breaks the protocol: {}", comment(why))],
        Answer::Hung(limit)
        | Answer::HungAlone(limit)
        | Answer::HungNotRetried(limit)
        | Answer::Blocked(limit) => {
            vec![format!("# no answer within {limit} s")]
        }
        Answer::HttpStatus { status, reason, .. } => {
            let reason = match reason.as_str() {
                "" => String::new(),
                words => format!(" {words}"),
            };
            vec![format!("# HTTP {status}{reason} instead of an MCP answer")]
        }
        Answer::Unreachable(_) => vec!["# no answer: the server could not be reached".into()],
        Answer::Crashed(why) => vec![format!("# the server crashed: {}", comment(why))],
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

//! What each pass saw for each example, kept while blessing is on: the answer that could be
//! written into the example, or why it never may.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::gateway::{Gateway, Status};
use crate::harness::Got;
use crate::manifest::{Example, Manifest};

use crate::manifest::Expect;

/// Which pass saw an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    Function,
    Mcp,
}

impl Pass {
    pub fn name(self) -> &'static str {
        match self {
            Pass::Function => "function",
            Pass::Mcp => "mcp",
        }
    }
}

/// One trial's answer: what the example could say, or why it must not.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub pass: Pass,
    pub example: String,
    pub answer: Result<Expect, String>,
}

static ON: AtomicBool = AtomicBool::new(false);
static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

/// From now on, the passes report what they see.
pub(crate) fn start() {
    if let Ok(mut seen) = SEEN.lock() {
        seen.clear();
    }
    ON.store(true, Ordering::SeqCst);
}

/// Everything seen since [`start`]; the passes stop reporting.
pub(crate) fn take() -> Vec<Seen> {
    ON.store(false, Ordering::SeqCst);
    SEEN.lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default()
}

pub(crate) fn push(seen: Seen) {
    if let Ok(mut all) = SEEN.lock() {
        all.push(seen);
    }
}

/// A pass judged this answer for this example.
pub(crate) fn observe(
    pass: Pass,
    manifest: &Manifest,
    gateway: &Gateway,
    example: &Example,
    got: &Got,
) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    let status = got.status(manifest);
    let answer = match (got, &status) {
        (Got::Output(value), Status::Success) => Ok(Expect::Output(value.clone())),
        (Got::Output(value), _) => {
            let refused = gateway.judge_output(value);
            let v = &refused[0];
            Err(format!(
                "{status}: `interface.output` refuses `{}`: {}",
                v.at(),
                v.message
            ))
        }
        (Got::Failed { .. }, Status::Declared(code)) => Ok(Expect::Error(code.clone())),
        (Got::Failed { message, .. }, _) => {
            Err(format!("{}: {}", status.code(), first_line(message)))
        }
        (Got::TextOnly(_), _) => Err(format!(
            "{status}: text content only, no `structuredContent`"
        )),
        (Got::RpcError { code, message }, _) => Err(format!(
            "{status}: a JSON-RPC error ({code}: {}) instead of a tool result",
            first_line(message)
        )),
        (Got::Hung(limit) | Got::HungAlone(limit), _) => Err(format!(
            "{status}: no answer within `runtime.limits.timeout_s` ({limit} s)"
        )),
        (Got::HttpStatus(http), _) => {
            Err(format!("{status}: HTTP {http} instead of an MCP answer"))
        }
    };
    push(Seen {
        pass,
        example: example.name.clone(),
        answer,
    });
}

/// A trial of this pass failed before any answer could be judged (the server did not start,
/// the connection dropped): the example has no answer to write.
pub(crate) fn unanswered(pass: Pass, example: &str, why: &str) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    let Ok(mut all) = SEEN.lock() else {
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

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 160 {
        format!("{}...", line.chars().take(160).collect::<String>())
    } else {
        line.to_string()
    }
}

//! One call, start to end: the gate, the function under the time limit, and the answer.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::failure::FailureKind;
use super::{Agent, Ctx};
use crate::gateway::{Gateway, integers};
use crate::manifest::Manifest;

/// What one call answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The function's output (not yet judged against `interface.output`).
    Output(Value),
    /// A failure with the code that goes out in `structuredContent.error.code`.
    Error {
        /// A declared code, or `invalid_input`, `timeout` or `agent_crashed`.
        code: String,
        /// What happened, without internals such as a backtrace.
        message: String,
    },
}

impl Answer {
    fn error(code: &str, message: impl Into<String>) -> Answer {
        Answer::Error {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// Runs an agent function the way the gateway would have it run.
#[derive(Clone)]
pub struct Runner {
    manifest: Arc<Manifest>,
    gateway: Arc<Gateway>,
    agent: Arc<dyn Agent>,
    declared: Arc<HashSet<String>>,
}

impl Runner {
    /// A runner for a checked manifest and an agent function.
    pub fn new(manifest: Arc<Manifest>, agent: Arc<dyn Agent>) -> Result<Runner, String> {
        let gateway = Arc::new(Gateway::new(&manifest)?);
        let declared = Arc::new(
            manifest
                .interface
                .errors
                .iter()
                .map(|e| e.code.clone())
                .collect(),
        );
        Ok(Runner {
            manifest,
            gateway,
            agent,
            declared,
        })
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The gateway's compiled rules.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// One call: input refused by the gate (`invalid_input`, the function is not called), the
    /// function run on its own task under `timeout_s` (`timeout`), a panic, an undeclared
    /// failure or arguments the function's type refuses (`agent_crashed`), a declared failure,
    /// or the output.
    ///
    /// An integer-valued float (`10.0`, `1e1`, `-0`) where `interface.input` says `integer`
    /// reaches the function as an integer: the gate admitted it as one.
    pub async fn run(&self, mut input: Value, ctx: Ctx) -> Answer {
        if let Err(rejection) = self.gateway.admit(&input) {
            return Answer::error("invalid_input", rejection.to_string());
        }
        integers::coerce(&self.manifest.interface.input, &mut input);
        let limits = self.manifest.runtime.limits;
        let mut task = tokio::spawn(self.agent.call(input, ctx));
        let joined = match tokio::time::timeout(limits.timeout(), &mut task).await {
            Ok(joined) => joined,
            Err(_) => {
                task.abort();
                return Answer::error(
                    "timeout",
                    format!(
                        "the run passed `runtime.limits.timeout_s` ({} s) and was cancelled",
                        limits.timeout_s
                    ),
                );
            }
        };
        match joined {
            Ok(Ok(output)) => Answer::Output(output),
            Ok(Err(failure)) => match failure.kind {
                FailureKind::Declared { code, message } if self.declared.contains(&code) => {
                    Answer::Error { code, message }
                }
                FailureKind::Declared { code, message } => Answer::error(
                    "agent_crashed",
                    format!(
                        "the agent failed with `{code}`, which is not declared in `interface.errors`: {message}"
                    ),
                ),
                FailureKind::Undeclared { message } => {
                    Answer::error("agent_crashed", format!("undeclared failure: {message}"))
                }
                // The gate admitted these arguments, so the caller kept to `interface.input`:
                // the function's type refusing them is the agent's bug, not the caller's.
                FailureKind::InputType { message } => Answer::error(
                    "agent_crashed",
                    format!(
                        "{message} (they match `interface.input`: the schema and the type disagree)"
                    ),
                ),
            },
            Err(e) if e.is_panic() => Answer::error("agent_crashed", "the agent panicked"),
            Err(_) => Answer::error("agent_crashed", "the run was cancelled"),
        }
    }
}

//! One call, start to end: the gate, the function under the time limit, and how it ended.

use std::sync::Arc;

use serde_json::Value;

use super::failure::FailureKind;
use super::{Agent, Ctx};
use holon_core::gateway::{Ended, Status, integers};
use holon_core::manifest::Manifest;

/// Runs an agent function the way the gateway would have it run.
#[derive(Clone)]
pub struct Runner {
    manifest: Arc<Manifest>,
    agent: Arc<dyn Agent>,
}

impl Runner {
    /// A runner for a checked manifest and an agent function.
    pub fn new(manifest: Arc<Manifest>, agent: Arc<dyn Agent>) -> Runner {
        Runner { manifest, agent }
    }

    /// The checked manifest the calls are run under.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// One call: input refused by the gate (`invalid_input`, the function is not called), the
    /// function run on its own task under `timeout_s` (`timeout`), a panic, an undeclared
    /// failure or arguments the function's type refuses (`agent_crashed`), a declared failure,
    /// or the output (not yet judged against `interface.output`).
    ///
    /// An integer-valued float (`10.0`, `1e1`, `-0`) where `interface.input` says `integer`
    /// reaches the function as an integer: the gate admitted it as one.
    pub async fn run(&self, input: Value, ctx: Ctx) -> Result<Value, Ended> {
        self.run_on(input, ctx, Where::Task).await
    }

    /// [`Runner::run`] with the function on a thread of its own (tokio's blocking pool), apart
    /// from the threads that serve connections: a function that blocks its thread (a
    /// synchronous client, `std::thread::sleep`) holds that one only, so the server goes on
    /// answering the other calls, and this one with `timeout` at `timeout_s`. What it awaits
    /// is driven by the server's runtime as before; at `timeout_s` it is dropped at its next
    /// await, and a thread that never awaits again runs on until the function returns.
    pub async fn run_apart(&self, input: Value, ctx: Ctx) -> Result<Value, Ended> {
        self.run_on(input, ctx, Where::Apart).await
    }

    async fn run_on(&self, mut input: Value, ctx: Ctx, place: Where) -> Result<Value, Ended> {
        if let Err(rejection) = self.manifest.gateway().admit(&input) {
            return Err(Ended::new(Status::InvalidInput, rejection.to_string()));
        }
        integers::coerce(&self.manifest.interface.input, &mut input);
        let limits = self.manifest.runtime.limits;
        let call = self.agent.call(input, ctx);
        // Dropped to cancel a call running apart.
        let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
        let mut task = match place {
            Where::Task => tokio::spawn(async move { Some(call.await) }),
            Where::Apart => {
                let runtime = tokio::runtime::Handle::current();
                tokio::task::spawn_blocking(move || {
                    runtime.block_on(async move {
                        tokio::select! {
                            out = call => Some(out),
                            _ = cancelled => None,
                        }
                    })
                })
            }
        };
        let joined = match tokio::time::timeout(limits.timeout(), &mut task).await {
            Ok(joined) => joined,
            Err(_) => {
                task.abort();
                drop(cancel);
                return Err(Ended::new(
                    Status::Timeout,
                    format!(
                        "the run passed `runtime.limits.timeout_s` ({} s) and was cancelled",
                        limits.timeout_s
                    ),
                ));
            }
        };
        let crashed = |message: String| Err(Ended::new(Status::AgentCrashed, message));
        match joined {
            Ok(Some(Ok(output))) => Ok(output),
            Ok(Some(Err(failure))) => match failure.kind {
                FailureKind::Declared { code, message } if self.manifest.error(&code).is_some() => {
                    Err(Ended::new(Status::Declared(code), message))
                }
                FailureKind::Declared { code, message } => crashed(format!(
                    "the agent failed with `{code}`, which is not declared in `interface.errors`: {message}"
                )),
                FailureKind::Undeclared { message } => {
                    crashed(format!("undeclared failure: {message}"))
                }
                // The gate admitted these arguments, so the caller kept to `interface.input`:
                // the function's type refusing them is the agent's bug, not the caller's.
                FailureKind::InputType { message } => crashed(format!(
                    "{message} (they match `interface.input`: the schema and the type disagree)"
                )),
            },
            Err(e) if e.is_panic() => crashed("the agent panicked".into()),
            Ok(None) | Err(_) => crashed("the run was cancelled".into()),
        }
    }
}

/// Where a call's function runs.
#[derive(Clone, Copy)]
enum Where {
    /// A task of the runtime that awaits it (the harness's function pass, whose own workers
    /// run nothing else).
    Task,
    /// A thread of the blocking pool, apart from the server's.
    Apart,
}

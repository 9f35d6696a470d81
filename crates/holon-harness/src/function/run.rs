//! One call of the function as the gateway would run it (the gate, the function under
//! `timeout_s`, panics caught), and the answers of calls that could not be: given up on, or
//! not tried again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::adapter::Stuck;
use crate::error::NoAnswer;
use crate::flight::{Crowded, Sent, Transport};
use holon_core::gateway::{Answer, Ended, Status};
use holon_runtime::{Ctx, Runner};

/// How long past `timeout_s` a function that blocks its thread may hold its worker before the
/// call is reported as a `timeout` and given up on.
pub(crate) const BLOCKED_GRACE: Duration = Duration::from_secs(5);

/// One call as the gateway would run it: the gate, the function under `timeout_s`.
pub(crate) async fn run_one(runner: &Runner, input: Value) -> Result<Value, Ended> {
    let manifest = runner.manifest();
    let limit = manifest.runtime.limits.timeout();
    let started = Instant::now();
    // The function pass reads `holon://files/NAME` straight from `files/NAME`.
    let ctx = Ctx::with_files_dir(manifest.dir().join("files"));
    let answer = runner.run(input, ctx).await;
    let took = started.elapsed();
    // An awaiting function is cancelled at `timeout_s`; one that blocks its thread cannot be,
    // and its answer, however late, must still count as the gateway would count it.
    if took > limit && !matches!(&answer, Err(e) if e.status == Status::Timeout) {
        return Err(Ended::new(
            Status::Timeout,
            format!(
                "the run took {:.1} s, past `runtime.limits.timeout_s` ({} s); it blocked its thread, so it could not be cancelled",
                took.as_secs_f64(),
                manifest.runtime.limits.timeout_s
            ),
        ));
    }
    answer
}

/// The agent function as a [`Transport`]: each call run as the gateway would run it
/// ([`run_one`]), in-process or through its function mode's process (the adapter is the
/// runner's agent).
#[derive(Clone)]
pub(crate) struct Function(pub(crate) Arc<Runner>);

impl Transport for Function {
    async fn send(&self, input: &Value) -> Sent {
        let answer = Answer::from(run_one(&self.0, input.clone()).await);
        Sent {
            // A function that waits on the others (a lock, the CPU) times out in a crowd.
            crowded: is_timeout(&answer).then_some(Crowded::TimedOut),
            answer,
            first: false,
        }
    }
}

/// Whether the function's answer is a `timeout`.
pub(crate) fn is_timeout(answer: &Answer) -> bool {
    matches!(answer, Answer::Failed { code: Some(code), .. } if code == Status::Timeout.code())
}

/// A call's end that is no output: its status and why, as the function's answer.
pub(crate) fn ended(status: Status, why: String) -> Answer {
    Answer::from(Err(Ended::new(status, why)))
}

/// The answer of a call that timed out among others and was not tried again alone, since a
/// call tried alone timed out too.
pub(crate) fn not_retried(limit: Duration) -> Ended {
    Ended::new(
        Status::Timeout,
        format!(
            "the run passed `runtime.limits.timeout_s` ({} s) among other calls in flight; not tried again alone, since a call tried alone timed out too",
            limit.as_secs_f64()
        ),
    )
}

/// The answer of a call of a function mode that timed out alone, its process found `stuck`
/// (and started again for the calls after it).
pub(crate) fn blocks_process(limit: Duration, stuck: Stuck) -> Ended {
    let seconds = limit.as_secs_f64();
    let why = match stuck {
        Stuck::Blocked => format!(
            "no answer within `runtime.limits.timeout_s` ({seconds} s), made alone, while the function mode answered nothing else either (not even a ping): this input blocks the agent's process, and every call in flight beside it waits too (a blocking call in an async function, such as `time.sleep`?); the process was started again for the calls after it"
        ),
        Stuck::Replaced | Stuck::Slow => format!(
            "no answer within `runtime.limits.timeout_s` ({seconds} s), made alone; the function mode was started again for the calls after it (an adapter of the agent's own cannot be asked whether this input blocks it: the runtime package's function mode can)"
        ),
    };
    Ended::new(Status::Timeout, why)
}

/// Why the calls still waiting fail when a thread of the pass panicked (a bug of the harness:
/// the agent's own panics are caught as `agent_crashed`).
pub(crate) const PANICKED: &str = "a thread of the function pass panicked (see the panic above)";

/// Why a call the harness could not run has no answer.
pub(crate) fn harness_failed(why: &str) -> NoAnswer {
    NoAnswer::Harness(why.to_string())
}

/// What a function that blocks its thread past `timeout_s` and the grace did.
pub(crate) fn blocked(limit: Duration) -> String {
    format!(
        "the agent function has not returned {} s after it started, past `runtime.limits.timeout_s` ({} s): it blocks its thread (a loop, a lock or `std::thread::sleep` in an async function), so it cannot be cancelled",
        (limit + BLOCKED_GRACE).as_secs_f64(),
        limit.as_secs_f64()
    )
}

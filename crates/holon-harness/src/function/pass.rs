//! The function pass as a [`Caller`]: the examples' flight and the other calls, on one runtime
//! that lives as long as the run.

use std::sync::Arc;

use serde_json::Value;

use std::time::Instant;

use super::cases::Cases;
use super::examples::{Flight, Shape};
use super::run::{BLOCKED_GRACE, blocked, harness_failed, run_one};
use crate::context::{Functions, Run};
use crate::error::NoAnswer;
use crate::flight::Watchdog;
use crate::measure::CallEnd;
use crate::pass::{Caller, Planted};
use holon_core::gateway::{Answer, Pass, Reply, Status};
use holon_runtime::{Agent, Runner};
use holon_upstream::fault::Faulted;
use holon_upstream::{Entered, Mode, Scope, Upstreams};

/// The function pass of one run: the agent function called in-process.
pub(crate) struct FunctionPass {
    flight: Arc<Flight>,
    cases: Arc<Cases>,
    /// What a call by hand goes through: the runner, its runtime, the upstreams.
    by_hand: (Arc<Runner>, Option<Arc<Functions>>, Option<Arc<Upstreams>>),
    /// Whether the function calls real upstreams (live), whose answers vary.
    live: bool,
}

impl FunctionPass {
    /// The pass of `agent` in `run`, on `workers` workers (libtest's `--test-threads`).
    pub(crate) fn new(run: &Run, agent: Arc<dyn Agent>, workers: usize) -> FunctionPass {
        let runner = Arc::new(Runner::new(run.manifest.clone(), agent));
        // In a record run (and a live run that blesses), one example call at a time: each
        // upstream request is then one call's for sure.
        let serial = run.upstreams.as_ref().is_some_and(|u| u.serial());
        let concurrency = if serial {
            1
        } else {
            run.settings.concurrency.max(1)
        };
        // One watchdog gives up on every call of the pass whose function blocks its worker.
        let watchdog =
            Watchdog::start("holon-function-watch").map_err(|e| NoAnswer::Thread(e.to_string()));
        let shape = Shape {
            concurrency,
            workers,
            runs: run.plan.all_runs(Pass::Function),
            retry: run.settings.retries(),
            adapter: run.adapter.clone(),
            watchdog: watchdog.clone(),
        };
        let flight = Arc::new(Flight::new(
            runner.clone(),
            run.functions.clone(),
            shape,
            run.upstreams.clone(),
            run.meter.clone(),
        ));
        let by_hand = (runner.clone(), run.functions.clone(), run.upstreams.clone());
        let cases = Arc::new(Cases::new(
            runner,
            run.functions.clone(),
            run.upstreams.clone(),
            run.settings.concurrency,
            run.adapter.clone(),
            watchdog.ok(),
        ));
        let live = (run.upstreams.as_ref()).is_some_and(|u| u.mode() == Mode::Live);
        FunctionPass {
            flight,
            cases,
            by_hand,
            live,
        }
    }

    /// The examples whose trials will run (libtest's filters applied), in trial order.
    pub(crate) fn select(&self, examples: Vec<usize>) {
        self.flight.select(examples);
    }
}

impl Caller for FunctionPass {
    fn pass(&self) -> Pass {
        Pass::Function
    }

    fn ends_of(&self, index: usize) -> Result<Vec<CallEnd>, NoAnswer> {
        self.flight.ends_of(index)
    }

    fn live(&self) -> bool {
        self.live
    }

    fn one(&self, input: &Value) -> Reply {
        (self
            .cases
            .all(std::slice::from_ref(input))
            .into_iter()
            .next())
        .unwrap_or_else(|| Ok(Answer::Unreachable("the case was not run".into())))
    }

    fn all(&self, inputs: &[Value]) -> Vec<Reply> {
        self.cases.all(inputs)
    }

    fn single(&self, input: &Value, scope: Scope) -> CallEnd {
        let (runner, functions, upstreams) = &self.by_hand;
        let Some(functions) = functions else {
            return CallEnd::without(1, harness_failed("the function pass has no runtime"));
        };
        let limit = runner.manifest().runtime.limits.timeout() + BLOCKED_GRACE;
        functions.block_on(async {
            let entered = match upstreams {
                Some(u) => Some(
                    u.enter(Pass::Function, scope, std::slice::from_ref(input))
                        .await,
                ),
                None => None,
            };
            let started = Instant::now();
            let call = tokio::spawn({
                let (runner, input) = (runner.clone(), input.clone());
                async move { run_one(&runner, input).await }
            });
            // A function that blocks its thread cannot be cancelled: it is given up on.
            let answer = match tokio::time::timeout(limit, call).await {
                Ok(Ok(answer)) => Ok(Answer::from(answer)),
                Ok(Err(e)) => Err(harness_failed(&e.to_string())),
                Err(_) => Ok(Answer::Failed {
                    code: Some(Status::Timeout.code().to_string()),
                    message: blocked(runner.manifest().runtime.limits.timeout()),
                }),
            };
            let took = started.elapsed();
            let answer = match entered.as_ref().and_then(Entered::trouble) {
                Some(trouble) => Err(NoAnswer::Trouble(trouble)),
                None => answer,
            };
            CallEnd {
                run: 1,
                answer,
                failure: entered.as_ref().and_then(Entered::upstream_failure),
                took,
                upstream: entered.as_ref().map(Entered::used).unwrap_or_default(),
                late: entered.as_ref().map(Entered::waiting).unwrap_or_default(),
            }
        })
    }

    fn faulted_all(&self, calls: &[Planted], done: &(dyn Fn(usize, Faulted) + Sync)) {
        self.cases.faulted_all(calls, done)
    }

    fn retry_note(&self) -> Option<String> {
        self.flight.retry_note()
    }
}

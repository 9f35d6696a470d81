//! The function pass as a [`Caller`]: the examples' flight and the other calls, on one runtime
//! that lives as long as the run.

use std::sync::Arc;

use serde_json::Value;

use super::cases::Cases;
use super::examples::{Flight, Shape};
use crate::context::Run;
use crate::error::NoAnswer;
use crate::measure::CallEnd;
use crate::pass::{Caller, Planted};
use holon_core::gateway::{Answer, Pass, Reply};
use holon_runtime::{Agent, Runner};
use holon_upstream::Mode;
use holon_upstream::fault::Faulted;

/// The function pass of one run: the agent function called in-process.
pub(crate) struct FunctionPass {
    flight: Arc<Flight>,
    cases: Cases,
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
        let shape = Shape {
            concurrency,
            workers,
            runs: run.plan.all_runs(Pass::Function),
            retry: run.settings.retries(),
        };
        let flight = Arc::new(Flight::new(
            runner.clone(),
            run.functions.clone(),
            shape,
            run.upstreams.clone(),
            run.meter.clone(),
        ));
        let cases = Cases::new(
            runner,
            run.functions.clone(),
            run.upstreams.clone(),
            run.settings.concurrency,
        );
        let live = (run.upstreams.as_ref()).is_some_and(|u| u.mode() == Mode::Live);
        FunctionPass {
            flight,
            cases,
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

    fn faulted_all(&self, calls: &[Planted], done: &(dyn Fn(usize, Faulted) + Sync)) {
        self.cases.faulted_all(calls, done)
    }

    fn retry_note(&self) -> Option<String> {
        self.flight.retry_note()
    }
}

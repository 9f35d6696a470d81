//! The function's other calls: explore's cases and the fault trials' calls, on the run's
//! runtime, up to the concurrency in flight, each under `timeout_s` and the grace a blocked
//! function gets.

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::run::{BLOCKED_GRACE, blocked, run_one};
use crate::context::Functions;
use holon_core::gateway::{Answer, Ended, Pass, Reply, Status};
use holon_runtime::Runner;
use holon_upstream::fault::{Faulted, Plant};
use holon_upstream::{Entered, Scope, Upstreams};

/// The function's calls outside the examples' flight: its cases on the run's runtime, up to
/// `concurrency` in flight, each under `timeout_s` and the grace a blocked function gets.
pub(crate) struct Cases {
    runner: Arc<Runner>,
    runtime: Option<Arc<Functions>>,
    upstreams: Option<Arc<Upstreams>>,
    concurrency: usize,
}

impl Cases {
    /// The calls of `runner` on `runtime`, `concurrency` at once, each batch entered on
    /// `upstreams`.
    pub(crate) fn new(
        runner: Arc<Runner>,
        runtime: Option<Arc<Functions>>,
        upstreams: Option<Arc<Upstreams>>,
        concurrency: usize,
    ) -> Cases {
        Cases {
            runner,
            runtime,
            upstreams,
            concurrency: concurrency.max(1),
        }
    }

    /// Several cases in flight together: the replies, in the inputs' order.
    pub(crate) fn all(&self, inputs: &[Value]) -> Vec<Reply> {
        let (answers, entered) = self.run(inputs, Scope::Explore, None);
        answers
            .into_iter()
            .map(|answer| match &entered {
                Some(entered) => entered.reply(answer),
                None => Ok(answer),
            })
            .collect()
    }

    /// Example `scope`'s input with `plant` failing one of its upstream requests: a fault
    /// trial's call.
    pub(crate) fn faulted(&self, input: &Value, scope: Scope, plant: Plant) -> Faulted {
        let (answers, entered) = self.run(std::slice::from_ref(input), scope, Some(plant));
        let answer = answers.into_iter().next().unwrap_or(Answer::Unreachable(
            "the function's worker could not run the call".into(),
        ));
        match entered {
            Some(entered) => entered.faulted(answer),
            None => Faulted {
                answer,
                played: false,
                misses: Vec::new(),
            },
        }
    }

    /// Runs `inputs` as calls of `scope` (one turn on the upstreams for them all), up to the
    /// concurrency at once: their answers in order, and the turn, whose verdict is the
    /// caller's to read.
    fn run(
        &self,
        inputs: &[Value],
        scope: Scope,
        plant: Option<Plant>,
    ) -> (Vec<Answer>, Option<Entered>) {
        let unrun = || Answer::Unreachable("the function's worker could not run the call".into());
        let Some(runtime) = &self.runtime else {
            let none = || Answer::Unreachable("the function pass has no runtime".into());
            return (inputs.iter().map(|_| none()).collect(), None);
        };
        let limit = self.runner.manifest().runtime.limits.timeout();
        let (tx, rx) = mpsc::channel::<(usize, Answer)>();
        let started = Arc::new(Mutex::new(vec![None::<Instant>; inputs.len()]));
        let permits = Arc::new(tokio::sync::Semaphore::new(self.concurrency));
        let turn = Arc::new(tokio::sync::Mutex::new(None::<Entered>));
        let upstreams = self.upstreams.clone();
        runtime.spawn({
            let (runner, started, turn) = (self.runner.clone(), started.clone(), turn.clone());
            let inputs = inputs.to_vec();
            async move {
                if let Some(u) = &upstreams {
                    *turn.lock().await = Some(u.enter_with(Pass::Function, scope, plant).await);
                }
                let mut tasks = tokio::task::JoinSet::new();
                for (i, input) in inputs.into_iter().enumerate() {
                    let Ok(permit) = permits.clone().acquire_owned().await else {
                        break;
                    };
                    let (runner, started, tx) = (runner.clone(), started.clone(), tx.clone());
                    tasks.spawn(async move {
                        if let Ok(mut s) = started.lock()
                            && let Some(slot) = s.get_mut(i)
                        {
                            *slot = Some(Instant::now());
                        }
                        let answer = run_one(&runner, input).await;
                        drop(permit);
                        let _ = tx.send((i, Answer::from(answer)));
                    });
                }
                while tasks.join_next().await.is_some() {}
            }
        });
        let mut answers: Vec<Option<Answer>> = vec![None; inputs.len()];
        let mut left = inputs.len();
        while left > 0 {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((i, answer)) => {
                    if let Some(slot) = answers.get_mut(i)
                        && slot.is_none()
                    {
                        *slot = Some(answer);
                        left -= 1;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    let starts = started.lock().map(|s| s.clone()).unwrap_or_default();
                    for (i, start) in starts.iter().enumerate() {
                        let stuck =
                            start.is_some_and(|s| now.duration_since(s) > limit + BLOCKED_GRACE);
                        if let (true, Some(slot @ None)) = (stuck, answers.get_mut(i)) {
                            *slot = Some(Answer::from(Err(Ended::new(
                                Status::Timeout,
                                format!("{}; its thread is abandoned", blocked(limit)),
                            ))));
                            left -= 1;
                        }
                    }
                }
            }
        }
        let entered = turn.try_lock().ok().and_then(|mut e| e.take());
        let answers = answers
            .into_iter()
            .map(|a| a.unwrap_or_else(unrun))
            .collect();
        (answers, entered)
    }
}

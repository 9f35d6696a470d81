//! The function's other calls: explore's cases and the fault trials' calls, on the run's
//! runtime, up to the concurrency in flight, each under `timeout_s` and the grace a blocked
//! function gets. A call under the `slow` fault gives its place to the next once the proxy
//! holds its answer: it only waits on the agent's own patience.

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::run::{BLOCKED_GRACE, blocked, run_one};
use crate::adapter::Adapter;
use crate::context::Functions;
use crate::pass::Planted;
use crate::planted::giving_way;
use holon_core::gateway::{Answer, Ended, Pass, Reply, Status};
use holon_runtime::Runner;
use holon_upstream::fault::Faulted;
use holon_upstream::{Entered, Scope, Upstreams};

/// A fault trial's call that could not be made.
fn unplayed(why: &str) -> Faulted {
    Faulted {
        answer: Answer::Unreachable(why.to_string()),
        played: false,
        misses: Vec::new(),
    }
}

/// The function's calls outside the examples' flight: its cases on the run's runtime, up to
/// `concurrency` in flight, each under `timeout_s` and the grace a blocked function gets.
pub(crate) struct Cases {
    runner: Arc<Runner>,
    runtime: Option<Arc<Functions>>,
    upstreams: Option<Arc<Upstreams>>,
    concurrency: usize,
    /// The function mode the calls go through, when it is a TypeScript or Python agent's:
    /// started before each call, so that no call's `timeout_s` is spent on its start.
    adapter: Option<Adapter>,
}

impl Cases {
    /// The calls of `runner` on `runtime`, `concurrency` at once, each batch entered on
    /// `upstreams`.
    pub(crate) fn new(
        runner: Arc<Runner>,
        runtime: Option<Arc<Functions>>,
        upstreams: Option<Arc<Upstreams>>,
        concurrency: usize,
        adapter: Option<Adapter>,
    ) -> Cases {
        Cases {
            runner,
            runtime,
            upstreams,
            concurrency: concurrency.max(1),
            adapter,
        }
    }

    /// Several cases in flight together: the replies, in the inputs' order. A call that timed
    /// out among others is made again alone, in order, up to the first that times out alone
    /// too (the first defect explore reports is the first in its order): a function that
    /// blocks on one input holds the others up, and only that input fails.
    pub(crate) fn all(&self, inputs: &[Value]) -> Vec<Reply> {
        let reply = |(answer, entered): (Answer, Option<&Entered>)| match entered {
            Some(entered) => entered.reply(answer),
            None => Ok(answer),
        };
        let (answers, entered) = self.run(inputs, Scope::Explore);
        let mut replies: Vec<Reply> = (answers.into_iter())
            .map(|a| reply((a, entered.as_ref())))
            .collect();
        if inputs.len() < 2 {
            return replies;
        }
        let gateway = self.runner.manifest().gateway();
        for (input, slot) in inputs.iter().zip(replies.iter_mut()) {
            if !matches!(slot, Ok(answer) if answer.status(gateway) == Status::Timeout) {
                continue;
            }
            let (again, entered) = self.run(std::slice::from_ref(input), Scope::Explore);
            let Some(again) = again.into_iter().next() else {
                continue;
            };
            let alone_too = again.status(gateway) == Status::Timeout;
            *slot = reply((again, entered.as_ref()));
            if alone_too {
                break;
            }
        }
        replies
    }

    /// The fault trials' calls, up to the concurrency in flight, each entered with its fault
    /// on its own; `done` is given each one's end as it comes.
    pub(crate) fn faulted_all(&self, calls: &[Planted], done: &(dyn Fn(usize, Faulted) + Sync)) {
        let Some(runtime) = &self.runtime else {
            for (i, _) in calls.iter().enumerate() {
                done(i, unplayed("the function pass has no runtime"));
            }
            return;
        };
        let limit = self.runner.manifest().runtime.limits.timeout();
        let (tx, rx) = mpsc::channel::<(usize, Faulted)>();
        // Each call's start and its place on the upstreams: a call whose function blocks its
        // thread is given up on from here, its place taken back.
        type Place = Arc<Mutex<(Option<Instant>, Option<Entered>)>>;
        let places: Vec<Place> = calls.iter().map(|_| Place::default()).collect();
        let permits = Arc::new(tokio::sync::Semaphore::new(self.concurrency));
        let (runner, upstreams) = (self.runner.clone(), self.upstreams.clone());
        let (owned, shared) = (calls.to_vec(), places.clone());
        runtime.spawn(async move {
            for ((i, call), place) in owned.into_iter().enumerate().zip(shared) {
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    break;
                };
                let (runner, upstreams, tx) = (runner.clone(), upstreams.clone(), tx.clone());
                tokio::spawn(async move {
                    let Planted {
                        input,
                        scope,
                        plant,
                    } = call;
                    let inputs = std::slice::from_ref(&input);
                    let entered = match &upstreams {
                        Some(u) => Some(
                            u.enter_with(Pass::Function, scope, inputs, Some(plant))
                                .await,
                        ),
                        None => None,
                    };
                    let held = entered.as_ref().map(Entered::held);
                    if let Ok(mut p) = place.lock() {
                        *p = (Some(Instant::now()), entered);
                    }
                    let held = async move {
                        match held {
                            Some(held) => held.await,
                            None => std::future::pending().await,
                        }
                    };
                    let answer = giving_way(run_one(&runner, input), held, permit).await;
                    // Given up on already when its place was taken back.
                    let Some(entered) = place.lock().ok().and_then(|mut p| p.1.take()) else {
                        if upstreams.is_none() {
                            let _ = tx.send((i, unplayed("no upstream is declared")));
                        }
                        return;
                    };
                    let _ = tx.send((i, entered.faulted(Answer::from(answer))));
                });
            }
        });
        let mut left: Vec<bool> = vec![true; calls.len()];
        let mut waiting = calls.len();
        while waiting > 0 {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((i, faulted)) => {
                    if let Some(open @ true) = left.get_mut(i) {
                        *open = false;
                        waiting -= 1;
                        done(i, faulted);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    for (i, place) in places.iter().enumerate() {
                        let Ok(mut p) = place.lock() else {
                            continue;
                        };
                        let stuck =
                            p.0.is_some_and(|s| now.duration_since(s) > limit + BLOCKED_GRACE);
                        if let (true, Some(open @ true)) = (stuck, left.get_mut(i)) {
                            let answer = Answer::from(Err(Ended::new(
                                Status::Timeout,
                                format!("{}; its thread is abandoned", blocked(limit)),
                            )));
                            let faulted = match p.1.take() {
                                Some(entered) => entered.faulted(answer),
                                None => Faulted {
                                    answer,
                                    played: false,
                                    misses: Vec::new(),
                                },
                            };
                            *open = false;
                            waiting -= 1;
                            done(i, faulted);
                        }
                    }
                }
            }
        }
        for (i, open) in left.iter().enumerate() {
            if *open {
                done(i, unplayed("the function's worker could not run the call"));
            }
        }
    }

    /// Runs `inputs` as calls of `scope` (one turn on the upstreams for them all), up to the
    /// concurrency at once: their answers in order, and the turn, whose verdict is the
    /// caller's to read.
    fn run(&self, inputs: &[Value], scope: Scope) -> (Vec<Answer>, Option<Entered>) {
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
            let adapter = self.adapter.clone();
            async move {
                if let Some(adapter) = &adapter {
                    adapter.ready().await;
                }
                if let Some(u) = &upstreams {
                    let entered = u.enter(Pass::Function, scope, &inputs).await;
                    *turn.lock().await = Some(entered);
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

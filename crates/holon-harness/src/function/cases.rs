//! The function's other calls: explore's cases and the fault trials' calls, on the run's
//! runtime, up to the concurrency in flight, each under `timeout_s` and the grace a blocked
//! function gets. A call under the `slow` fault gives its place to the next once the proxy
//! holds its answer: it only waits on the agent's own patience.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use serde_json::Value;

use super::run::{BLOCKED_GRACE, Function, blocked, ended};
use crate::adapter::Adapter;
use crate::context::Functions;
use crate::flight::{Deadline, Transport, Watchdog, unplayed};
use crate::pass::Planted;
use crate::planted::giving_way;
use holon_core::gateway::{Answer, Pass, Reply, Status};
use holon_runtime::Runner;
use holon_upstream::fault::Faulted;
use holon_upstream::{Entered, Scope, Upstreams};

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
    /// What gives up on a call whose function blocks its worker: without one (its thread
    /// could not start), such a call is waited for.
    watchdog: Option<Arc<Watchdog>>,
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
        watchdog: Option<Arc<Watchdog>>,
    ) -> Cases {
        Cases {
            runner,
            runtime,
            upstreams,
            concurrency: concurrency.max(1),
            adapter,
            watchdog,
        }
    }

    /// Arms the deadline of a call that starts now: at `timeout_s` and the grace a blocked
    /// function gets, `give_up` runs unless the call ended first.
    fn deadline(&self, give_up: impl FnOnce() + Send + 'static) -> Option<Deadline> {
        let limit = self.runner.manifest().runtime.limits.timeout();
        let at = Instant::now() + limit + BLOCKED_GRACE;
        (self.watchdog.as_ref()).map(|watchdog| watchdog.arm(at, give_up))
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
    pub(crate) fn faulted_all(
        self: &Arc<Self>,
        calls: &[Planted],
        done: &(dyn Fn(usize, Faulted) + Sync),
    ) {
        let Some(runtime) = &self.runtime else {
            for (i, _) in calls.iter().enumerate() {
                done(i, unplayed(unreachable("the function pass has no runtime")));
            }
            return;
        };
        let limit = self.runner.manifest().runtime.limits.timeout();
        let (tx, rx) = mpsc::channel::<(usize, Faulted)>();
        let permits = Arc::new(tokio::sync::Semaphore::new(self.concurrency));
        let (me, owned) = (self.clone(), calls.to_vec());
        runtime.spawn(async move {
            for (i, call) in owned.into_iter().enumerate() {
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    break;
                };
                let (me, tx) = (me.clone(), tx.clone());
                tokio::spawn(async move {
                    let Planted {
                        input,
                        scope,
                        plant,
                    } = call;
                    let inputs = std::slice::from_ref(&input);
                    // To a process that answers: not one a call let go before blocks.
                    if let Some(adapter) = &me.adapter {
                        adapter.ready().await;
                    }
                    let entered = match &me.upstreams {
                        Some(u) => Some(
                            u.enter_with(Pass::Function, scope, inputs, Some(plant))
                                .await,
                        ),
                        None => None,
                    };
                    let held = entered.as_ref().map(Entered::held);
                    // The call's place on the upstreams: a call whose function blocks its
                    // thread is given up on at its deadline, its place taken back.
                    let place = Arc::new(Mutex::new(entered));
                    let deadline = me.deadline({
                        let (place, tx) = (place.clone(), tx.clone());
                        move || {
                            let answer = ended(
                                Status::Timeout,
                                format!("{}; its thread is abandoned", blocked(limit)),
                            );
                            let faulted = match place.lock().ok().and_then(|mut p| p.take()) {
                                Some(entered) => entered.faulted(answer),
                                None => unplayed(answer),
                            };
                            let _ = tx.send((i, faulted));
                        }
                    });
                    let held = async move {
                        match held {
                            Some(held) => held.await,
                            None => std::future::pending().await,
                        }
                    };
                    let sent = giving_way(me.function().send(&input), held, permit).await;
                    drop(deadline);
                    // Given up on already when its place was taken back.
                    let Some(entered) = place.lock().ok().and_then(|mut p| p.take()) else {
                        if me.upstreams.is_none() {
                            let _ = tx.send((i, unplayed(unreachable("no upstream is declared"))));
                        }
                        return;
                    };
                    let _ = tx.send((i, entered.faulted(sent.answer)));
                });
            }
        });
        let mut left: Vec<bool> = vec![true; calls.len()];
        let mut waiting = calls.len();
        // Every call ends here once: with its answer, or given up on at its deadline.
        while waiting > 0 {
            let Ok((i, faulted)) = rx.recv() else {
                break;
            };
            if let Some(open @ true) = left.get_mut(i) {
                *open = false;
                waiting -= 1;
                done(i, faulted);
            }
        }
        for (i, open) in left.iter().enumerate() {
            if *open {
                let why = "the function's worker could not run the call";
                done(i, unplayed(unreachable(why)));
            }
        }
    }

    /// The function, as calls go out to it.
    fn function(&self) -> Function {
        Function(self.runner.clone())
    }

    /// Runs `inputs` as calls of `scope` (one turn on the upstreams for them all), up to the
    /// concurrency at once: their answers in order, and the turn, whose verdict is the
    /// caller's to read.
    fn run(&self, inputs: &[Value], scope: Scope) -> (Vec<Answer>, Option<Entered>) {
        let unrun = || unreachable("the function's worker could not run the call");
        let Some(runtime) = &self.runtime else {
            let none = || unreachable("the function pass has no runtime");
            return (inputs.iter().map(|_| none()).collect(), None);
        };
        let limit = self.runner.manifest().runtime.limits.timeout();
        let (tx, rx) = mpsc::channel::<(usize, Answer)>();
        let permits = Arc::new(tokio::sync::Semaphore::new(self.concurrency));
        let turn = Arc::new(tokio::sync::Mutex::new(None::<Entered>));
        let upstreams = self.upstreams.clone();
        runtime.spawn({
            let turn = turn.clone();
            let inputs = inputs.to_vec();
            let (adapter, function) = (self.adapter.clone(), self.function());
            let watchdog = self.watchdog.clone();
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
                    let (function, tx) = (function.clone(), tx.clone());
                    let (watchdog, adapter) = (watchdog.clone(), adapter.clone());
                    tasks.spawn(async move {
                        // A call let go past `timeout_s` before this one had a place may have
                        // blocked its process: this one goes to a process that answers.
                        if let Some(adapter) = &adapter {
                            adapter.ready().await;
                        }
                        let at = Instant::now() + limit + BLOCKED_GRACE;
                        let deadline = watchdog.as_ref().map(|watchdog| {
                            let tx = tx.clone();
                            watchdog.arm(at, move || {
                                let why = format!("{}; its thread is abandoned", blocked(limit));
                                let _ = tx.send((i, ended(Status::Timeout, why)));
                            })
                        });
                        let sent = function.send(&input).await;
                        drop(deadline);
                        drop(permit);
                        let _ = tx.send((i, sent.answer));
                    });
                }
                while tasks.join_next().await.is_some() {}
            }
        });
        let mut answers: Vec<Option<Answer>> = vec![None; inputs.len()];
        let mut left = inputs.len();
        // Every call ends here once: with its answer, or given up on at its deadline.
        while left > 0 {
            let Ok((i, answer)) = rx.recv() else {
                break;
            };
            if let Some(slot) = answers.get_mut(i)
                && slot.is_none()
            {
                *slot = Some(answer);
                left -= 1;
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

/// A call that could not be made, and why.
fn unreachable(why: &str) -> Answer {
    Answer::Unreachable(why.to_string())
}

//! The function pass: every example through the agent function, in-process, as the gateway
//! would run it (the gate, `timeout_s`, panics caught), then judged.
//!
//! The calls run ahead of the trials on worker threads of their own, as many as libtest's
//! `--test-threads` (the CPU the pass may use), each driving several calls at once, up to the
//! concurrency in all: an agent that awaits the network has that many calls in flight, one that
//! computes keeps the worker busy until it returns. A function that blocks its worker past
//! `timeout_s` and a grace is reported as a `timeout`; its worker is abandoned, the calls
//! stalled behind it go to another, and the run goes on.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, mpsc};

use serde_json::Value;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;

use super::flight::{Crowded, Retries, Slots};
use super::record::Fault;
use super::verdict::judge;
use crate::bless::{Collector, Pass};
use holon_core::gateway::Answer;
use holon_core::gateway::{Ended, Status};
use holon_runtime::{Agent, Ctx, Runner};

/// How long past `timeout_s` a function that blocks its thread may hold its worker before the
/// call is reported as a `timeout` and the worker abandoned.
const BLOCKED_GRACE: Duration = Duration::from_secs(5);

/// One `function::<example>` trial per example, and the flight that makes their calls.
pub fn trials(
    run: &crate::context::Run,
    agent: Arc<dyn Agent>,
    threads: usize,
) -> (Vec<Trial>, Arc<Flight>) {
    let runner = Arc::new(Runner::new(run.manifest.clone(), agent));
    let flight = Arc::new(Flight::new(
        runner,
        run.settings.concurrency,
        threads,
        run.bless.clone(),
    ));
    let trials = (run.manifest.examples.iter().enumerate())
        .map(|(index, example)| {
            let flight = flight.clone();
            super::record::trial(
                &run.records,
                format!("function::{}", example.name),
                move || flight.trial(index),
            )
        })
        .collect();
    (trials, flight)
}

/// The function pass's calls: queued in trial order, run by the workers, answered by slot.
pub struct Flight {
    runner: Arc<Runner>,
    concurrency: usize,
    threads: usize,
    selected: OnceLock<Vec<usize>>,
    started: OnceLock<()>,
    state: Mutex<State>,
    /// Wakes idle workers when a call ends or a new one is queued.
    changed: tokio::sync::Notify,
    answers: Slots<Result<Value, Ended>>,
    retries: Retries,
    bless: Option<Arc<Collector>>,
}

#[derive(Default)]
struct State {
    queued: Vec<bool>,
    pending: VecDeque<usize>,
    running: HashMap<usize, Running>,
    /// Calls that timed out among others, to try again alone once the rest are done.
    again: Vec<usize>,
    /// One call at a time from now on: a call timed out among others.
    alone: bool,
    retrying: bool,
    next_worker: u64,
    abandoned: Vec<u64>,
}

impl State {
    fn done(&self) -> bool {
        self.pending.is_empty() && self.running.is_empty() && self.again.is_empty()
    }

    /// Once every other call is done, the calls that timed out among others go again, alone.
    fn retry_when_idle(&mut self) {
        if self.pending.is_empty() && self.running.is_empty() && !self.again.is_empty() {
            let mut again = std::mem::take(&mut self.again);
            again.sort_unstable();
            self.pending.extend(again);
            self.retrying = true;
        }
    }
}

struct Running {
    worker: u64,
    started: Instant,
    /// Another call was in flight at some moment of this one's run.
    crowded: bool,
}

enum Next {
    Run(usize),
    Wait,
    Stop,
}

impl Flight {
    fn new(
        runner: Arc<Runner>,
        concurrency: usize,
        threads: usize,
        bless: Option<Arc<Collector>>,
    ) -> Flight {
        let examples = runner.manifest().examples.len();
        Flight {
            runner,
            concurrency: concurrency.max(1),
            threads: threads.max(1),
            selected: OnceLock::new(),
            started: OnceLock::new(),
            state: Mutex::new(State {
                queued: vec![false; examples],
                ..State::default()
            }),
            changed: tokio::sync::Notify::new(),
            answers: Slots::new(examples),
            retries: Retries::default(),
            bless,
        }
    }

    /// The examples whose trials will run (libtest's filters applied), in trial order.
    pub fn select(&self, examples: Vec<usize>) {
        let _ = self.selected.set(examples);
    }

    /// The note on calls retried alone, for the end of the run.
    pub fn retry_note(&self) -> Option<String> {
        self.retries.note("the agent function", self.concurrency)
    }

    fn limit(&self) -> Duration {
        self.runner.manifest().runtime.limits.timeout()
    }

    /// The `function::<example>` trial for `examples[index]`.
    fn trial(self: &Arc<Self>, index: usize) -> Result<(), Fault> {
        self.started.get_or_init(|| self.start());
        // A trial outside the selection (there is none) queues its own call rather than wait
        // for one that was never queued.
        if let Ok(mut state) = self.state.lock()
            && let Some(queued @ false) = state.queued.get_mut(index)
        {
            *queued = true;
            state.pending.push_front(index);
            drop(state);
            self.spawn_worker();
        }
        let answer = self
            .answers
            .take(index)
            .ok_or_else(|| Fault::from("this example's call gave no answer".to_string()))?;
        let got = Answer::from(answer);
        let manifest = self.runner.manifest();
        let example = manifest
            .examples
            .get(index)
            .ok_or_else(|| Fault::from(format!("the manifest has no example {index}")))?;
        if let Some(bless) = &self.bless {
            bless.observe(Pass::Function, manifest.gateway(), example, &got);
        }
        judge(manifest.gateway(), example, got)
    }

    fn start(self: &Arc<Self>) {
        let all: Vec<usize> = (0..self.runner.manifest().examples.len()).collect();
        let order = self.selected.get().unwrap_or(&all);
        if let Ok(mut state) = self.state.lock() {
            for &index in order {
                if let Some(queued) = state.queued.get_mut(index) {
                    *queued = true;
                    state.pending.push_back(index);
                }
            }
        }
        for _ in 0..self.threads.min(order.len().max(1)) {
            self.spawn_worker();
        }
        let me = self.clone();
        let watching = std::thread::Builder::new()
            .name("holon-function-watch".into())
            .spawn(move || {
                let _failed = me.answers.on_panic(|_| Err(harness_failed(PANICKED)));
                me.clone().watch();
            });
        if let Err(e) = watching {
            self.fail_all(&format!("cannot start a thread for the calls: {e}"));
        }
    }

    fn spawn_worker(self: &Arc<Self>) {
        let worker = match self.state.lock() {
            Ok(mut state) => {
                state.next_worker += 1;
                state.next_worker
            }
            Err(_) => return,
        };
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("holon-function-{worker}"))
            .spawn(move || {
                let _failed = me.answers.on_panic(|_| Err(harness_failed(PANICKED)));
                // Each worker drives its calls on a runtime of its own: a function that blocks
                // its thread holds up this worker's calls only.
                match super::flight::current_thread() {
                    Ok(runtime) => runtime.block_on(me.clone().work(worker)),
                    Err(e) => me.fail_all(&e),
                }
            });
        if let Err(e) = spawned {
            self.fail_all(&format!("cannot start a thread for the calls: {e}"));
        }
    }

    fn fail_all(&self, message: &str) {
        self.answers.close(|_| Err(harness_failed(message)));
    }

    async fn work(self: Arc<Self>, worker: u64) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match self.next(worker) {
                Next::Run(index) => {
                    tokio::spawn(self.clone().call(index, worker));
                    // A function that does not await runs to its end here, before the next
                    // call is claimed: this worker's share of the CPU stays one call wide.
                    tokio::task::yield_now().await;
                }
                Next::Wait => changed.await,
                Next::Stop => return,
            }
        }
    }

    fn next(&self, worker: u64) -> Next {
        let Ok(mut state) = self.state.lock() else {
            return Next::Stop;
        };
        if state.abandoned.contains(&worker) {
            return Next::Stop;
        }
        let limit = if state.alone || state.retrying {
            1
        } else {
            self.concurrency
        };
        if state.running.len() < limit
            && let Some(index) = state.pending.pop_front()
        {
            // Each call in flight now has company, the new one included: a call that started
            // alone may still wait on those that started after it.
            let crowded = !state.running.is_empty();
            for running in state.running.values_mut() {
                running.crowded = true;
            }
            state.running.insert(
                index,
                Running {
                    worker,
                    started: Instant::now(),
                    crowded,
                },
            );
            return Next::Run(index);
        }
        if state.done() {
            return Next::Stop;
        }
        Next::Wait
    }

    async fn call(self: Arc<Self>, index: usize, worker: u64) {
        let answer = match self.runner.manifest().examples.get(index) {
            Some(example) => run_one(&self.runner, example.input.clone()).await,
            None => Err(Ended::new(
                Status::AgentCrashed,
                format!("the harness has no example {index} to call"),
            )),
        };
        self.finish(index, worker, answer);
    }

    fn finish(&self, index: usize, worker: u64, answer: Result<Value, Ended>) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        // A call given up on that returned after all: its answer was given already.
        let running = state.running.get(&index).filter(|r| r.worker == worker);
        let Some(crowded) = running.map(|r| r.crowded) else {
            return;
        };
        state.running.remove(&index);
        let among_others = crowded || !state.running.is_empty();
        if state.retrying {
            let timed_out = is_timeout(&answer);
            self.retries.record(Crowded::TimedOut, !timed_out);
            self.answers.put(index, answer);
            if timed_out {
                // Alone too: the function does not answer, and each call still to try again
                // alone would only wait `timeout_s` once more.
                for index in std::mem::take(&mut state.pending) {
                    self.retries.not_retried();
                    self.answers.put(index, Err(not_retried(self.limit())));
                }
            }
        } else if is_timeout(&answer) && among_others {
            // It may have waited on the others (a lock, the CPU): alone it may pass.
            state.alone = true;
            state.again.push(index);
        } else {
            self.answers.put(index, answer);
        }
        state.retry_when_idle();
        drop(state);
        self.changed.notify_waiters();
    }

    /// Gives up on calls that have held their worker past `timeout_s` and a grace: their
    /// function blocks the thread. Polls rather than being woken per call, so a call costs a
    /// lock, not a wake-up.
    fn watch(self: Arc<Self>) {
        let limit = self.limit();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            if state.done() {
                return;
            }
            let now = Instant::now();
            let stuck: Vec<(usize, u64)> = (state.running.iter())
                .filter(|(_, r)| now.duration_since(r.started) > limit + BLOCKED_GRACE)
                .map(|(index, r)| (*index, r.worker))
                .collect();
            let mut replace = 0;
            for (index, worker) in stuck {
                state.running.remove(&index);
                self.answers.put(
                    index,
                    Err(Ended::new(
                        Status::Timeout,
                        format!(
                            "{}; its thread is abandoned and the other trials go on",
                            blocked(limit)
                        ),
                    )),
                );
                if !state.abandoned.contains(&worker) {
                    state.abandoned.push(worker);
                    replace += 1;
                    // The other calls on that worker are stalled behind it: they start again
                    // on another.
                    let stalled: Vec<usize> = (state.running.iter())
                        .filter(|(_, r)| r.worker == worker)
                        .map(|(i, _)| *i)
                        .collect();
                    for i in stalled.into_iter().rev() {
                        state.running.remove(&i);
                        state.pending.push_front(i);
                    }
                }
            }
            state.retry_when_idle();
            drop(state);
            for _ in 0..replace {
                self.spawn_worker();
            }
            if replace > 0 {
                self.changed.notify_waiters();
            }
        }
    }
}

/// One call as the gateway would run it: the gate, the function under `timeout_s`.
async fn run_one(runner: &Runner, input: Value) -> Result<Value, Ended> {
    let manifest = runner.manifest();
    let limit = manifest.runtime.limits.timeout();
    let started = Instant::now();
    // The function pass reads `holon://files/NAME` straight from `files/NAME`.
    let ctx = Ctx::with_files_dir(manifest.dir().join("files"));
    let answer = runner.run(input, ctx).await;
    let took = started.elapsed();
    // An awaiting function is cancelled at `timeout_s`; one that blocks its thread cannot be,
    // and its answer, however late, must still count as the gateway would count it.
    if took > limit && !is_timeout(&answer) {
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

/// A call for the worker that serves calls outside the example trials, and where its answer
/// goes.
type Job = (Arc<Runner>, Value, mpsc::Sender<Result<Value, Ended>>);

/// The worker of one run for calls outside the example trials (explore's), one at a time;
/// `None` until the first call, and again after a function blocked it.
#[derive(Default)]
pub struct Solo(Mutex<Option<mpsc::Sender<Job>>>);

fn solo_worker() -> Result<mpsc::Sender<Job>, String> {
    let (jobs, queue) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("holon-function-solo".into())
        .spawn(move || {
            // Without a runtime the queue is dropped: the caller hears the worker is gone.
            let Ok(runtime) = super::flight::current_thread() else {
                return;
            };
            while let Ok((runner, input, reply)) = queue.recv() {
                let _ = reply.send(runtime.block_on(run_one(&runner, input)));
            }
        })
        .map_err(|e| format!("cannot start a thread for the call: {e}"))?;
    Ok(jobs)
}

impl Solo {
    /// One input through the function, outside the example trials (explore's cases), as the
    /// gateway would run it. A function that blocks its thread past `timeout_s` and a grace
    /// is answered `timeout`, and its thread is abandoned: the next call gets a new one.
    pub fn answer(&self, runner: &Arc<Runner>, input: Value) -> Answer {
        match self.send(runner, input) {
            Ok(answer) => answer,
            Err(why) => Answer::Unreachable(why),
        }
    }

    fn send(&self, runner: &Arc<Runner>, input: Value) -> Result<Answer, String> {
        let (reply, answered) = mpsc::channel();
        {
            let mut solo = self
                .0
                .lock()
                .map_err(|_| "the function's worker failed".to_string())?;
            let worker = match solo.take() {
                Some(worker) => worker,
                None => solo_worker()?,
            };
            worker
                .send((runner.clone(), input, reply))
                .map_err(|_| "the function's worker is gone".to_string())?;
            *solo = Some(worker);
        }
        let limit = runner.manifest().runtime.limits.timeout();
        match answered.recv_timeout(limit + BLOCKED_GRACE) {
            Ok(answer) => Ok(Answer::from(answer)),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err("the function's worker could not run the call".to_string())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(mut solo) = self.0.lock() {
                    *solo = None;
                }
                Ok(Answer::from(Err(Ended::new(
                    Status::Timeout,
                    format!("{}; its thread is abandoned", blocked(limit)),
                ))))
            }
        }
    }
}

fn is_timeout(answer: &Result<Value, Ended>) -> bool {
    matches!(answer, Err(e) if e.status == Status::Timeout)
}

/// The answer of a call that timed out among others and was not tried again alone, since a
/// call tried alone timed out too.
fn not_retried(limit: Duration) -> Ended {
    Ended::new(
        Status::Timeout,
        format!(
            "the run passed `runtime.limits.timeout_s` ({} s) among other calls in flight; not tried again alone, since a call tried alone timed out too",
            limit.as_secs_f64()
        ),
    )
}

/// Why the calls still waiting fail when a thread of the pass panicked (a bug of the harness:
/// the agent's own panics are caught as `agent_crashed`).
const PANICKED: &str = "a thread of the function pass panicked (see the panic above)";

/// The answer of a call the harness could not run, and why.
fn harness_failed(why: &str) -> Ended {
    Ended::new(
        Status::AgentCrashed,
        format!("the harness could not run the call: {why}"),
    )
}

/// What a function that blocks its thread past `timeout_s` and the grace did.
fn blocked(limit: Duration) -> String {
    format!(
        "the agent function has not returned {} s after it started, past `runtime.limits.timeout_s` ({} s): it blocks its thread (a loop, a lock or `std::thread::sleep` in an async function), so it cannot be cancelled",
        (limit + BLOCKED_GRACE).as_secs_f64(),
        limit.as_secs_f64()
    )
}

//! The function pass's example calls: each example's calls (one, or `--repeat`'s) queued in
//! trial order, a round of every example at a time, run on the run's runtime up to the
//! concurrency at once, each ending gathered for its trial (and, when this pass is measured,
//! counted and written as a receipt); a call that timed out among others tried again alone
//! (unless the run measures many calls, where each call is one receipt), and a function that
//! blocks its worker past `timeout_s` given up on.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::run::{
    BLOCKED_GRACE, Function, PANICKED, blocked, blocks_process, ended, harness_failed, is_timeout,
    not_retried,
};
use crate::adapter::{Adapter, Stuck};
use crate::context::Functions;
use crate::error::NoAnswer;
use crate::flight::{Crowd, Crowded, Gathered, Retries, Seat, Transport, Watchdog};
use crate::measure::{CallEnd, Meter};
use holon_core::gateway::{Answer, Pass, Status};
use holon_runtime::Runner;
use holon_upstream::{Entered, Scope, Upstreams};

/// One call: the example's place, and which of its calls (from 1).
type Key = (usize, u32);

/// The function pass's example calls: queued in trial order, run on the run's runtime,
/// gathered by example.
pub(crate) struct Flight {
    runner: Arc<Runner>,
    function: Function,
    runtime: Option<Arc<Functions>>,
    concurrency: usize,
    workers: usize,
    selected: OnceLock<Vec<usize>>,
    started: OnceLock<()>,
    state: Mutex<State>,
    /// Wakes the dispatcher when a call ends or a new one is queued.
    changed: tokio::sync::Notify,
    /// The calls in flight, for whether each had company.
    crowd: Arc<Crowd>,
    /// What gives up on a call whose function blocks its worker (or why there is none).
    watchdog: Result<Arc<Watchdog>, NoAnswer>,
    answers: Gathered,
    retries: Retries,
    /// Whether a call that timed out among others is tried again alone.
    retry: bool,
    upstreams: Option<Arc<Upstreams>>,
    meter: Option<Arc<Meter>>,
    /// The function mode the calls go through, when it is a TypeScript or Python agent's.
    adapter: Option<Adapter>,
}

#[derive(Default)]
struct State {
    queued: Vec<bool>,
    pending: VecDeque<Key>,
    running: HashMap<Key, Running>,
    /// Calls that timed out among others, to try again alone once the rest are done.
    again: Vec<Key>,
    /// One call at a time from now on: a call timed out among others.
    alone: bool,
    retrying: bool,
    /// Calls given up on that still hold a worker.
    blocked: usize,
}

impl State {
    /// The running entry of call `key`, taken out, if it is still its `attempt`'s: a later
    /// attempt's entry stays.
    fn take(&mut self, key: Key, attempt: u64) -> Option<Running> {
        match self.running.get(&key) {
            Some(r) if r.attempt == attempt => self.running.remove(&key),
            _ => None,
        }
    }

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
    /// When the function was called (`None` while the call waits for its turn on its pass's
    /// upstreams).
    started: Option<Instant>,
    /// Its place among the calls in flight, from its start to its end (or its giving up).
    seat: Seat,
    /// The call's place on the upstreams, held here so that giving up on the call frees it.
    entered: Option<Entered>,
    /// A number that tells this run of the call from a later retry of it.
    attempt: u64,
}

enum Next {
    Run(Key, u64),
    Wait,
    Stop,
}

/// How a [`Flight`] runs its calls.
pub(crate) struct Shape {
    /// Calls in flight at once.
    pub concurrency: usize,
    /// The workers of the runtime (libtest's `--test-threads`).
    pub workers: usize,
    /// The calls of each example, by place.
    pub runs: Vec<Vec<u32>>,
    /// Whether a call that timed out among others is tried again alone.
    pub retry: bool,
    /// The function mode the calls go through, when it is a TypeScript or Python agent's.
    pub adapter: Option<Adapter>,
    /// What gives up on a call whose function blocks its worker (or why there is none).
    pub watchdog: Result<Arc<Watchdog>, NoAnswer>,
}

impl Flight {
    /// The flight of `runner`'s example calls on `runtime`, shaped by `shape`, each entered on
    /// `upstreams` and, when this pass is measured, counted by `meter`.
    pub(crate) fn new(
        runner: Arc<Runner>,
        runtime: Option<Arc<Functions>>,
        shape: Shape,
        upstreams: Option<Arc<Upstreams>>,
        meter: Option<Arc<Meter>>,
    ) -> Flight {
        let examples = runner.manifest().examples.len();
        Flight {
            function: Function(runner.clone()),
            runner,
            runtime,
            concurrency: shape.concurrency,
            workers: shape.workers.max(2),
            selected: OnceLock::new(),
            started: OnceLock::new(),
            state: Mutex::new(State {
                queued: vec![false; examples],
                ..State::default()
            }),
            changed: tokio::sync::Notify::new(),
            crowd: Arc::default(),
            watchdog: shape.watchdog,
            answers: Gathered::new(shape.runs),
            retries: Retries::default(),
            retry: shape.retry,
            upstreams,
            meter,
            adapter: shape.adapter,
        }
    }

    /// The examples whose trials will run (libtest's filters applied), in trial order.
    pub(crate) fn select(&self, examples: Vec<usize>) {
        let _ = self.selected.set(examples);
    }

    /// The note on calls retried alone, for the end of the run.
    pub(crate) fn retry_note(&self) -> Option<String> {
        self.retries.note(Pass::Function.who(), self.concurrency)
    }

    fn limit(&self) -> Duration {
        self.runner.manifest().runtime.limits.timeout()
    }

    /// Example `index`'s calls as they ended, queued with the others when the first trial
    /// asked.
    pub(crate) fn ends_of(self: &Arc<Self>, index: usize) -> Result<Vec<CallEnd>, NoAnswer> {
        self.started.get_or_init(|| self.start());
        // A trial outside the selection (there is none) queues its own calls rather than wait
        // for ones that were never queued.
        if let Ok(mut state) = self.state.lock()
            && let Some(queued @ false) = state.queued.get_mut(index)
        {
            *queued = true;
            for &run in self.answers.numbers(index).iter().rev() {
                state.pending.push_front((index, run));
            }
            drop(state);
            self.changed.notify_one();
        }
        self.answers.take(index).ok_or(NoAnswer::Unanswered)
    }

    fn start(self: &Arc<Self>) {
        let all: Vec<usize> = (0..self.runner.manifest().examples.len()).collect();
        let order = self.selected.get().unwrap_or(&all);
        if let Ok(mut state) = self.state.lock() {
            for &index in order {
                if let Some(queued) = state.queued.get_mut(index) {
                    *queued = true;
                }
            }
            state.pending.extend(self.answers.in_rounds(order));
        }
        let Some(runtime) = &self.runtime else {
            self.answers
                .close(|| harness_failed("the function pass has no runtime"));
            return;
        };
        runtime.spawn(self.clone().dispatch());
        if let Err(why) = &self.watchdog {
            self.answers.close(|| why.clone());
        }
    }

    /// Starts the queued calls, as many at once as the concurrency allows.
    async fn dispatch(self: Arc<Self>) {
        if let Some(adapter) = &self.adapter {
            adapter.ready().await;
        }
        let mut attempt = 0;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            attempt += 1;
            match self.next(attempt) {
                Next::Run(key, attempt) => {
                    tokio::spawn(self.clone().call(key, attempt));
                }
                Next::Wait => changed.await,
                Next::Stop => return,
            }
        }
    }

    fn next(&self, attempt: u64) -> Next {
        let Ok(mut state) = self.state.lock() else {
            return Next::Stop;
        };
        if state.blocked >= self.workers {
            // Every worker is held by a function that never returned: nothing else can run.
            let mut stranded: Vec<Key> = state.pending.drain(..).collect();
            stranded.append(&mut state.again);
            for key in stranded {
                let why = format!(
                    "not run: every worker of the function pass ({}) is held by a call that blocks its thread past `runtime.limits.timeout_s`",
                    self.workers
                );
                self.end(key, Ok(ended(Status::Timeout, why)), None, None);
            }
            return Next::Stop;
        }
        let limit = if state.alone || state.retrying {
            1
        } else {
            self.concurrency
        };
        if state.running.len() < limit
            && let Some(key) = state.pending.pop_front()
        {
            state.running.insert(
                key,
                Running {
                    started: None,
                    seat: self.crowd.seat(),
                    entered: None,
                    attempt,
                },
            );
            return Next::Run(key, attempt);
        }
        if state.done() {
            return Next::Stop;
        }
        Next::Wait
    }

    async fn call(self: Arc<Self>, key: Key, attempt: u64) {
        let (index, _) = key;
        let Some(example) = self.runner.manifest().examples.get(index) else {
            self.finish(key, attempt, Err(NoAnswer::NoExample(index)), None);
            return;
        };
        if let Some(upstreams) = &self.upstreams {
            let scope = Scope::Example(example.name.clone());
            let entered = upstreams
                .enter(Pass::Function, scope, std::slice::from_ref(&example.input))
                .await;
            match self.state.lock() {
                Ok(mut state) => match state.running.get_mut(&key) {
                    Some(r) if r.attempt == attempt => r.entered = Some(entered),
                    _ => return,
                },
                Err(_) => return,
            }
        }
        // A process replaced under a blocked call is started before this call's time runs.
        if let Some(adapter) = &self.adapter {
            adapter.ready().await;
        }
        let started = Instant::now();
        if let Ok(mut state) = self.state.lock()
            && let Some(r) = state.running.get_mut(&key)
            && r.attempt == attempt
        {
            r.started = Some(started);
        }
        let deadline = self.watchdog.as_ref().ok().map(|watchdog| {
            let me = Arc::downgrade(&self);
            let at = started + self.limit() + BLOCKED_GRACE;
            watchdog.arm(at, move || given_up(&me, key, attempt))
        });
        let since = self.adapter.as_ref().map_or(0, Adapter::replacements);
        let answer = self.function.send(&example.input).await.answer;
        // Its answer came (a function mode may yet be asked whether a call that timed out
        // blocked it): no longer a call that holds its worker.
        drop(deadline);
        let Some(adapter) = &self.adapter else {
            self.finish(key, attempt, Ok(answer), None);
            return;
        };
        if let Some(why) = adapter.unavailable() {
            self.finish(key, attempt, Err(NoAnswer::FunctionMode(why)), None);
            return;
        }
        // Timed out alone: whether the process is blocked (and was replaced) or only slow.
        let retrying = self.state.lock().is_ok_and(|state| state.retrying);
        let stuck = match is_timeout(&answer) && retrying {
            true => Some(adapter.stuck(since).await),
            false => None,
        };
        self.finish(key, attempt, Ok(answer), stuck);
    }

    /// A call's end; `stuck`, for a call of a function mode that timed out alone, how its
    /// process was found.
    fn finish(
        &self,
        key: Key,
        attempt: u64,
        answer: Result<Answer, NoAnswer>,
        stuck: Option<Stuck>,
    ) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        // A call given up on that returned after all: its answer was given already.
        let Some(running) = state.take(key, attempt) else {
            return;
        };
        let answer = match running.entered.as_ref().and_then(Entered::trouble) {
            Some(trouble) => Err(NoAnswer::Trouble(trouble)),
            None => answer,
        };
        let among_others = running.seat.crowded();
        let timed_out = matches!(&answer, Ok(a) if is_timeout(a));
        if state.retrying {
            self.retries.record(Crowded::TimedOut, !timed_out);
            let replaced = matches!(stuck, Some(Stuck::Blocked | Stuck::Replaced));
            if timed_out && stuck == Some(Stuck::Blocked) {
                self.retries.blocked();
            }
            let answer = match stuck {
                Some(stuck @ (Stuck::Blocked | Stuck::Replaced)) if timed_out => {
                    Ok(Answer::from(Err(blocks_process(self.limit(), stuck))))
                }
                _ => answer,
            };
            self.end(key, answer, running.started, running.entered.as_ref());
            // A process replaced under a call alone says nothing of the calls after it: each
            // goes again alone, on a process of its own.
            if timed_out && !replaced {
                // Alone too: the function does not answer, and each call still to try again
                // alone would only wait `timeout_s` once more.
                for key in std::mem::take(&mut state.pending) {
                    self.retries.not_retried();
                    let answer = Answer::from(Err(not_retried(self.limit())));
                    self.end(key, Ok(answer), None, None);
                }
            }
        } else if timed_out && among_others && self.retry {
            // It may have waited on the others (a lock, the CPU): alone it may pass.
            state.alone = true;
            state.again.push(key);
        } else {
            self.end(key, answer, running.started, running.entered.as_ref());
        }
        drop(running);
        state.retry_when_idle();
        drop(state);
        self.changed.notify_one();
    }

    /// A call's end, gathered for its trial and counted by the meter: what it answered, since
    /// when it ran, and what its upstream requests were answered.
    fn end(
        &self,
        (index, run): Key,
        answer: Result<Answer, NoAnswer>,
        started: Option<Instant>,
        entered: Option<&Entered>,
    ) {
        let end = CallEnd {
            run,
            answer,
            failure: entered.and_then(Entered::upstream_failure),
            took: started.map(|s| s.elapsed()).unwrap_or_default(),
            upstream: entered.map(Entered::used).unwrap_or_default(),
            late: entered.map(Entered::waiting).unwrap_or_default(),
        };
        if let Some(meter) = &self.meter {
            meter.ended(Pass::Function, index, &end);
        }
        self.answers.put(index, end);
    }

    /// Gives up on the `attempt` of call `key`, whose function has held its worker past
    /// `timeout_s` and a grace (its deadline passed): it blocks the thread.
    fn give_up(&self, key: Key, attempt: u64) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        // Dropping the entry frees the call's place on the upstreams.
        let Some(running) = state.take(key, attempt) else {
            return;
        };
        state.blocked += 1;
        let limit = self.limit();
        let why = format!(
            "{}; its thread is abandoned and the other trials go on",
            blocked(limit)
        );
        self.end(
            key,
            Ok(ended(Status::Timeout, why)),
            running.started,
            running.entered.as_ref(),
        );
        drop(running);
        state.retry_when_idle();
        drop(state);
        self.changed.notify_one();
    }
}

/// A call's deadline passed: the flight, when it is still there, gives up on it; a panic of
/// the harness on the way leaves no trial waiting.
fn given_up(flight: &Weak<Flight>, key: Key, attempt: u64) {
    if let Some(flight) = flight.upgrade() {
        let _failed = flight.answers.on_panic(|| harness_failed(PANICKED));
        flight.give_up(key, attempt);
    }
}

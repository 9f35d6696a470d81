//! The function pass's example calls: queued in trial order, run on the run's runtime up to the
//! concurrency at once, each answer put in its trial's slot; a call that timed out among others
//! tried again alone, and a function that blocks its worker past `timeout_s` given up on.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::run::{
    BLOCKED_GRACE, PANICKED, blocked, harness_failed, is_timeout, not_retried, run_one,
};
use crate::context::Functions;
use crate::error::NoAnswer;
use crate::flight::{Crowded, Retries, Slots};
use holon_core::gateway::{Answer, Ended, Pass, Status};
use holon_runtime::Runner;
use holon_upstream::{Entered, Scope, Upstreams};

/// A call's end: the function's answer, or what kept it from being one (its upstream had no
/// recording, the harness could not run it).
type Called = Result<Result<Value, Ended>, NoAnswer>;

/// The function pass's example calls: queued in trial order, run on the run's runtime,
/// answered by slot.
pub(crate) struct Flight {
    runner: Arc<Runner>,
    runtime: Option<Arc<Functions>>,
    concurrency: usize,
    workers: usize,
    selected: OnceLock<Vec<usize>>,
    started: OnceLock<()>,
    state: Mutex<State>,
    /// Wakes the dispatcher when a call ends or a new one is queued.
    changed: tokio::sync::Notify,
    answers: Slots<Called>,
    retries: Retries,
    upstreams: Option<Arc<Upstreams>>,
    /// The first failure of a real upstream each example's call saw (live), for `--bless`.
    upstream_failures: Mutex<HashMap<usize, String>>,
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
    /// Calls given up on that still hold a worker.
    blocked: usize,
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
    /// When the function was called (`None` while the call waits for its turn on its pass's
    /// upstreams).
    started: Option<Instant>,
    crowded: bool,
    /// The call's turn on the upstreams, held here so that giving up on the call frees it.
    entered: Option<Entered>,
    /// A number that tells this run of the call from a later retry of it.
    attempt: u64,
}

enum Next {
    Run(usize, u64),
    Wait,
    Stop,
}

impl Flight {
    /// The flight of `runner`'s example calls on `runtime`, `concurrency` at once on `workers`
    /// workers, each entered on `upstreams`.
    pub(crate) fn new(
        runner: Arc<Runner>,
        runtime: Option<Arc<Functions>>,
        concurrency: usize,
        workers: usize,
        upstreams: Option<Arc<Upstreams>>,
    ) -> Flight {
        let examples = runner.manifest().examples.len();
        Flight {
            runner,
            runtime,
            concurrency,
            workers: workers.max(2),
            selected: OnceLock::new(),
            started: OnceLock::new(),
            state: Mutex::new(State {
                queued: vec![false; examples],
                ..State::default()
            }),
            changed: tokio::sync::Notify::new(),
            answers: Slots::new(examples),
            retries: Retries::default(),
            upstreams,
            upstream_failures: Mutex::new(HashMap::new()),
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

    /// Example `index`'s answer, its call queued with the others when the first trial asked;
    /// with the first failure of a real upstream the call saw.
    pub(crate) fn answer_of(
        self: &Arc<Self>,
        index: usize,
    ) -> Result<(Answer, Option<String>), NoAnswer> {
        self.started.get_or_init(|| self.start());
        // A trial outside the selection (there is none) queues its own call rather than wait
        // for one that was never queued.
        if let Ok(mut state) = self.state.lock()
            && let Some(queued @ false) = state.queued.get_mut(index)
        {
            *queued = true;
            state.pending.push_front(index);
            drop(state);
            self.changed.notify_one();
        }
        let answer = self
            .answers
            .take(index)
            .unwrap_or(Err(NoAnswer::Unanswered))?;
        let failure = (self.upstream_failures.lock().ok()).and_then(|mut f| f.remove(&index));
        Ok((Answer::from(answer), failure))
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
        let Some(runtime) = &self.runtime else {
            self.fail_all("the function pass has no runtime");
            return;
        };
        runtime.spawn(self.clone().dispatch());
        let me = self.clone();
        let watching = std::thread::Builder::new()
            .name("holon-function-watch".into())
            .spawn(move || {
                let _failed = me.answers.on_panic(|_| Err(harness_failed(PANICKED)));
                me.clone().watch();
            });
        if let Err(e) = watching {
            self.answers.close(|_| Err(NoAnswer::Thread(e.to_string())));
        }
    }

    fn fail_all(&self, message: &str) {
        self.answers.close(|_| Err(harness_failed(message)));
    }

    /// Starts the queued calls, as many at once as the concurrency allows.
    async fn dispatch(self: Arc<Self>) {
        let mut attempt = 0;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            attempt += 1;
            match self.next(attempt) {
                Next::Run(index, attempt) => {
                    tokio::spawn(self.clone().call(index, attempt));
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
            let mut stranded: Vec<usize> = state.pending.drain(..).collect();
            stranded.append(&mut state.again);
            for index in stranded {
                self.answers.put(
                    index,
                    Ok(Err(Ended::new(
                        Status::Timeout,
                        format!(
                            "not run: every worker of the function pass ({}) is held by a call that blocks its thread past `runtime.limits.timeout_s`",
                            self.workers
                        ),
                    ))),
                );
            }
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
                    started: None,
                    crowded,
                    entered: None,
                    attempt,
                },
            );
            return Next::Run(index, attempt);
        }
        if state.done() {
            return Next::Stop;
        }
        Next::Wait
    }

    async fn call(self: Arc<Self>, index: usize, attempt: u64) {
        let Some(example) = self.runner.manifest().examples.get(index) else {
            self.finish(index, attempt, Err(NoAnswer::NoExample(index)));
            return;
        };
        if let Some(upstreams) = &self.upstreams {
            let entered = upstreams
                .enter(Pass::Function, Scope::Example(example.name.clone()))
                .await;
            match self.state.lock() {
                Ok(mut state) => match state.running.get_mut(&index) {
                    Some(r) if r.attempt == attempt => r.entered = Some(entered),
                    _ => return,
                },
                Err(_) => return,
            }
        }
        if let Ok(mut state) = self.state.lock()
            && let Some(r) = state.running.get_mut(&index)
            && r.attempt == attempt
        {
            r.started = Some(Instant::now());
        }
        let answer = run_one(&self.runner, example.input.clone()).await;
        self.finish(index, attempt, Ok(answer));
    }

    fn finish(&self, index: usize, attempt: u64, answer: Called) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        // A call given up on that returned after all: its answer was given already.
        if state
            .running
            .get(&index)
            .is_none_or(|r| r.attempt != attempt)
        {
            return;
        }
        let Some(running) = state.running.remove(&index) else {
            return;
        };
        if let Some(why) = running.entered.as_ref().and_then(Entered::upstream_failure)
            && let Ok(mut failures) = self.upstream_failures.lock()
        {
            failures.insert(index, why);
        }
        let answer = match running.entered.as_ref().and_then(Entered::trouble) {
            Some(trouble) => Err(NoAnswer::Trouble(trouble)),
            None => answer,
        };
        let among_others = running.crowded || !state.running.is_empty();
        drop(running);
        let timed_out = matches!(&answer, Ok(a) if is_timeout(a));
        if state.retrying {
            self.retries.record(Crowded::TimedOut, !timed_out);
            self.answers.put(index, answer);
            if timed_out {
                // Alone too: the function does not answer, and each call still to try again
                // alone would only wait `timeout_s` once more.
                for index in std::mem::take(&mut state.pending) {
                    self.retries.not_retried();
                    self.answers.put(index, Ok(Err(not_retried(self.limit()))));
                }
            }
        } else if timed_out && among_others {
            // It may have waited on the others (a lock, the CPU): alone it may pass.
            state.alone = true;
            state.again.push(index);
        } else {
            self.answers.put(index, answer);
        }
        state.retry_when_idle();
        drop(state);
        self.changed.notify_one();
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
            let stuck: Vec<usize> = (state.running.iter())
                .filter(|(_, r)| {
                    r.started
                        .is_some_and(|s| now.duration_since(s) > limit + BLOCKED_GRACE)
                })
                .map(|(index, _)| *index)
                .collect();
            for index in &stuck {
                // Dropping the entry frees the call's turn on the upstreams.
                state.running.remove(index);
                state.blocked += 1;
                self.answers.put(
                    *index,
                    Ok(Err(Ended::new(
                        Status::Timeout,
                        format!(
                            "{}; its thread is abandoned and the other trials go on",
                            blocked(limit)
                        ),
                    ))),
                );
            }
            state.retry_when_idle();
            drop(state);
            if !stuck.is_empty() {
                self.changed.notify_one();
            }
        }
    }
}

//! The function pass: every example through the agent function, in-process, as the gateway
//! would run it (the gate, `timeout_s`, panics caught), then judged.
//!
//! Every call of the run, the examples' and explore's, runs on one multi-thread tokio runtime
//! that lives as long as the run, as `serve` runs an agent: a client the agent keeps across
//! calls (a `reqwest::Client` in a `OnceLock`) works in the tests exactly as it does when
//! served. The runtime has as many workers as libtest's `--test-threads` (at least two), and
//! up to the concurrency calls are in flight: an agent that awaits the network has that many at
//! once, one that computes keeps a worker busy until it returns. A function that blocks its
//! worker past `timeout_s` and a grace is reported as a `timeout` and given up on; the other
//! calls go on on the other workers.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use serde_json::Value;

use super::flight::{Crowded, Retries, Slots};
use super::record::Fault;
use super::verdict;
use crate::bless::{Collector, Pass};
use crate::context::{Functions, Run};
use crate::explore::Reply;
use crate::upstream::fault::{Faulted, Plant};
use crate::upstream::{Entered, Mode, Scope, Side, Trouble, Upstreams};
use holon_core::gateway::{Answer, Ended, Status};
use holon_runtime::{Agent, Ctx, Runner};

/// How long past `timeout_s` a function that blocks its thread may hold its worker before the
/// call is reported as a `timeout` and given up on.
const BLOCKED_GRACE: Duration = Duration::from_secs(5);

/// The runtime every function call of a run runs on: `threads` workers, at least two, so one
/// function that never returns cannot hold all the others.
pub fn runtime(threads: usize) -> Result<Functions, String> {
    Functions::new(threads)
}

/// One `function::<example>` trial per example, and the flight that makes their calls.
pub fn trials(run: &Run, agent: Arc<dyn Agent>, workers: usize) -> (Vec<Trial>, Arc<Flight>) {
    let runner = Arc::new(Runner::new(run.manifest.clone(), agent));
    let serial = run.upstreams.as_ref().is_some_and(|u| u.serial());
    let flight = Arc::new(Flight {
        runner,
        runtime: run.functions.clone(),
        concurrency: if serial {
            1
        } else {
            run.settings.concurrency.max(1)
        },
        workers: workers.max(2),
        selected: OnceLock::new(),
        started: OnceLock::new(),
        state: Mutex::new(State {
            queued: vec![false; run.manifest.examples.len()],
            ..State::default()
        }),
        changed: tokio::sync::Notify::new(),
        answers: Slots::new(run.manifest.examples.len()),
        retries: Retries::default(),
        bless: run.bless.clone(),
        upstreams: run.upstreams.clone(),
        upstream_failures: Mutex::new(HashMap::new()),
    });
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

/// A call's end: the function's answer, or what kept it from being one (its upstream had no
/// recording, the harness could not run it).
type Called = Result<Result<Value, Ended>, String>;

/// The function pass's calls: queued in trial order, run on the run's runtime, answered by
/// slot.
pub struct Flight {
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
    bless: Option<Arc<Collector>>,
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
            self.changed.notify_one();
        }
        let manifest = self.runner.manifest();
        let example = manifest
            .examples
            .get(index)
            .ok_or_else(|| Fault::from(format!("the manifest has no example {index}")))?;
        let called = self
            .answers
            .take(index)
            .unwrap_or_else(|| Err("this example's call gave no answer".to_string()));
        let answer = match called {
            Ok(answer) => answer,
            Err(why) => {
                if let Some(bless) = &self.bless {
                    bless.unanswered(Pass::Function, &example.name, &why);
                }
                return Err(Fault::from(why));
            }
        };
        let got = Answer::from(answer);
        if let Some(bless) = &self.bless {
            let failure = (self.upstream_failures.lock().ok()).and_then(|mut f| f.remove(&index));
            bless.observe(
                Pass::Function,
                manifest.gateway(),
                example,
                &got,
                failure.as_deref(),
            );
        }
        let live = (self.upstreams.as_ref()).is_some_and(|u| u.mode() == Mode::Live);
        verdict::judge_as(manifest.gateway(), example, got, live, "function")
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
            self.fail_all(&format!("cannot start a thread for the calls: {e}"));
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
            self.finish(
                index,
                attempt,
                Err(format!("the manifest has no example {index}")),
            );
            return;
        };
        if let Some(upstreams) = &self.upstreams {
            let entered = upstreams
                .enter(Side::Function, Scope::Example(example.name.clone()))
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
        let answer = match (&running.entered, &self.upstreams) {
            (Some(entered), Some(upstreams)) => match entered.trouble(upstreams.refresh()) {
                Some(Trouble::Unrecorded(report) | Trouble::Upstream(report)) => Err(report),
                None => answer,
            },
            _ => answer,
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

/// The function as explore calls it: its cases on the run's runtime, up to `concurrency` in
/// flight, each under `timeout_s` and the grace a blocked function gets.
pub struct Explore {
    runner: Arc<Runner>,
    runtime: Option<Arc<Functions>>,
    upstreams: Option<Arc<Upstreams>>,
    concurrency: usize,
}

impl Explore {
    /// Explore's calls of `agent` in `run`.
    pub fn new(run: &Run, runner: Arc<Runner>) -> Explore {
        Explore {
            runner,
            runtime: run.functions.clone(),
            upstreams: run.upstreams.clone(),
            concurrency: run.settings.concurrency.max(1),
        }
    }

    /// Whether cases may go out together: not in replay, where each case's upstream requests
    /// must be its own.
    pub fn batches(&self) -> bool {
        self.upstreams
            .as_ref()
            .is_none_or(|u| u.mode() != crate::upstream::Mode::Replay)
    }

    /// The concurrency batches go out with.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// One case, alone.
    pub fn one(&self, input: &Value) -> Reply {
        self.all(std::slice::from_ref(input))
            .into_iter()
            .next()
            .unwrap_or(Reply::Upstream("the case was not run".into()))
    }

    /// Several cases in flight together: the replies, in the inputs' order.
    pub fn all(&self, inputs: &[Value]) -> Vec<Reply> {
        let (replies, entered) = self.run(inputs, Scope::Explore, None);
        let trouble = match (entered, &self.upstreams) {
            (Some(entered), Some(u)) => entered.trouble(u.refresh()),
            _ => None,
        };
        replies
            .into_iter()
            .map(|r| match (&trouble, r) {
                (Some(Trouble::Upstream(why)), _) => Reply::Upstream(why.clone()),
                (Some(Trouble::Unrecorded(_)), _) => Reply::Unrecorded,
                (None, reply) => Reply::Answer(reply),
            })
            .collect()
    }

    /// Example `scope`'s input with `plant` failing one of its upstream requests: a fault
    /// trial's call.
    pub fn faulted(&self, input: &Value, scope: Scope, plant: Plant) -> Faulted {
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
                    *turn.lock().await = Some(u.enter_with(Side::Function, scope, plant).await);
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

/// Why a call the harness could not run has no answer.
fn harness_failed(why: &str) -> String {
    format!("the harness could not run the call: {why}")
}

/// What a function that blocks its thread past `timeout_s` and the grace did.
fn blocked(limit: Duration) -> String {
    format!(
        "the agent function has not returned {} s after it started, past `runtime.limits.timeout_s` ({} s): it blocks its thread (a loop, a lock or `std::thread::sleep` in an async function), so it cannot be cancelled",
        (limit + BLOCKED_GRACE).as_secs_f64(),
        limit.as_secs_f64()
    )
}

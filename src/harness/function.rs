//! The function pass: every example through the agent function, in-process, as the gateway
//! would run it (the gate, `timeout_s`, panics caught), then judged.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};

use super::process;
use super::verdict::{Got, judge};
use crate::manifest::{Example, Manifest};
use crate::runtime::{Agent, Answer, Ctx, Runner};

/// How long past `timeout_s` a function that blocks its thread may hold the run before the
/// watchdog ends it.
const BLOCKED_GRACE: Duration = Duration::from_secs(5);

/// One `function::<example>` trial per example.
pub fn trials(manifest: &Arc<Manifest>, agent: Arc<dyn Agent>) -> Vec<Trial> {
    let runner = match Runner::new(manifest.clone(), agent) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            return vec![super::record::trial("function::setup", move || {
                Err(Failed::from(e))
            })];
        }
    };
    manifest
        .examples
        .iter()
        .map(|example| {
            let (runner, example) = (runner.clone(), example.clone());
            let name = format!("function::{}", example.name);
            super::record::trial(name.clone(), move || {
                trial(&runner, &example, &name).map_err(Failed::from)
            })
        })
        .collect()
}

fn trial(runner: &Runner, example: &Example, name: &str) -> Result<(), String> {
    let limit = runner.manifest().runtime.limits.timeout();
    let runtime = Pooled::take()?;
    let _watched = Watched::new(name, limit);
    let started = Instant::now();
    // The function pass reads `holon://files/NAME` straight from `files/NAME`.
    let ctx = Ctx::with_files_dir(runner.manifest().dir().join("files"));
    let mut answer = runtime.block_on(runner.run(example.input.clone(), ctx));
    let took = started.elapsed();
    // An awaiting function is cancelled at `timeout_s`; one that blocks its thread cannot be,
    // and its answer, however late, must still count as the gateway would count it.
    if took > limit && !matches!(&answer, Answer::Error { code, .. } if code == "timeout") {
        answer = Answer::Error {
            code: "timeout".into(),
            message: format!(
                "the run took {:.1} s, past `runtime.limits.timeout_s` ({} s); it blocked its thread, so it could not be cancelled",
                took.as_secs_f64(),
                runner.manifest().runtime.limits.timeout_s
            ),
        };
    }
    let got = match answer {
        Answer::Output(v) => Got::Output(v),
        Answer::Error { code, message } => Got::Failed {
            code: Some(code),
            message,
        },
    };
    judge(runner.manifest(), runner.gateway(), example, got)
}

/// A current-thread runtime for one trial at a time: the function's task runs on the trial's
/// own thread, with no hop to a worker thread and back, which on a busy machine costs more
/// than most agent functions. Pooled in a static rather than kept in a thread-local, which
/// tokio cannot always drop when a thread ends.
struct Pooled(Option<tokio::runtime::Runtime>);

fn pool() -> &'static Mutex<Vec<tokio::runtime::Runtime>> {
    static POOL: OnceLock<Mutex<Vec<tokio::runtime::Runtime>>> = OnceLock::new();
    POOL.get_or_init(Default::default)
}

impl Pooled {
    fn take() -> Result<Pooled, String> {
        if let Some(runtime) = pool().lock().ok().and_then(|mut p| p.pop()) {
            return Ok(Pooled(Some(runtime)));
        }
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|runtime| Pooled(Some(runtime)))
            .map_err(|e| format!("cannot start a tokio runtime: {e}"))
    }
}

impl std::ops::Deref for Pooled {
    type Target = tokio::runtime::Runtime;

    fn deref(&self) -> &tokio::runtime::Runtime {
        // Only `Drop` takes it out.
        self.0.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let (Some(runtime), Ok(mut pool)) = (self.0.take(), pool().lock()) {
            pool.push(runtime);
        }
    }
}

/// A trial in flight, watched: a function that blocks its thread and never returns would
/// otherwise hang the whole run. Past `timeout_s` and a grace, the watchdog says which trial
/// and why, stops the servers and ends the process as a failed run.
struct Watched(u64);

struct Watchdog {
    trials: Mutex<HashMap<u64, (Instant, String, Duration)>>,
    next: AtomicU64,
}

fn watchdog() -> &'static Watchdog {
    static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        // Polls rather than being woken per trial, so a trial costs a lock, not a wake-up.
        let _ = std::thread::Builder::new()
            .name("holon-watchdog".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(Duration::from_millis(250));
                    watchdog().check();
                }
            });
        Watchdog {
            trials: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        }
    })
}

impl Watchdog {
    fn check(&self) {
        let now = Instant::now();
        let Ok(trials) = self.trials.lock() else {
            return;
        };
        if let Some((_, name, limit)) = trials.values().find(|(deadline, ..)| *deadline < now) {
            eprintln!(
                "\nerror: `{name}` has not returned {} s after it started, past `runtime.limits.timeout_s` ({} s): the agent function blocks its thread (a loop, a lock or `std::thread::sleep` in an async function), so it cannot be cancelled; the gateway would end the call with status `timeout`",
                (*limit + BLOCKED_GRACE).as_secs_f64(),
                limit.as_secs_f64()
            );
            process::stop_all();
            std::process::exit(i32::from(super::EXIT_FAILED));
        }
    }
}

impl Watched {
    fn new(name: &str, limit: Duration) -> Watched {
        let dog = watchdog();
        let id = dog.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut trials) = dog.trials.lock() {
            trials.insert(
                id,
                (
                    Instant::now() + limit + BLOCKED_GRACE,
                    name.to_string(),
                    limit,
                ),
            );
        }
        Watched(id)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Ok(mut trials) = watchdog().trials.lock() {
            trials.remove(&self.0);
        }
    }
}

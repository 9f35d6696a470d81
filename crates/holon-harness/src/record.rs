//! What each trial did, kept for the reports written after the run (JUnit, GitHub
//! annotations): its name, how long it took, and the failure's message. Kept per run, with the
//! causes the failures share: when several trials fail for one cause, the first is reported in
//! full and the others in one line each. A trial's end goes to the run's reporter, which cleans
//! it of the run's secrets as it is kept (`reporter`), so no report made of it holds one.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::{Completion, Failed, Trial};

use crate::reporter::Reporter;

use holon_core::gateway::Status;

/// Why a trial failed: its whole report, and what the failure can have in common with others.
#[derive(Debug, Clone)]
pub(crate) struct Fault {
    /// The report, as printed for the first trial of its cause (and in the JUnit report).
    pub message: String,
    /// What makes it the same failure as another trial's; `None` when it is its own.
    pub cause: Option<Cause>,
}

impl From<String> for Fault {
    fn from(message: String) -> Fault {
        Fault {
            message,
            cause: None,
        }
    }
}

/// A trial that failed of an error is its own failure: its words are the report.
macro_rules! fault_from {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for Fault {
            fn from(error: $error) -> Fault {
                Fault::from(error.to_string())
            }
        }
    )*};
}

fault_from!(crate::error::FaultsFailed, holon_explore::ExploreError);

/// A trial that failed because the pass has no server shares that cause with every other trial
/// of the pass: the first reports it in full (the server's output included), the others in
/// one line.
fn no_server(error: &crate::error::ServerError) -> Cause {
    let text = error.to_string();
    Cause {
        status: Status::RuntimeUnavailable,
        what: text.lines().next().unwrap_or_default().to_string(),
    }
}

impl From<crate::error::ServerError> for Fault {
    fn from(error: crate::error::ServerError) -> Fault {
        Fault {
            cause: Some(no_server(&error)),
            message: error.to_string(),
        }
    }
}

impl From<crate::error::NoAnswer> for Fault {
    fn from(error: crate::error::NoAnswer) -> Fault {
        match error {
            crate::error::NoAnswer::Server(e) => Fault::from(e),
            other => Fault::from(other.to_string()),
        }
    }
}

impl From<crate::error::ToolsError> for Fault {
    fn from(error: crate::error::ToolsError) -> Fault {
        match error {
            crate::error::ToolsError::Server(e) => Fault::from(e),
            other => Fault::from(other.to_string()),
        }
    }
}

/// What makes several failures one: how the gateway settled the answer, and what went wrong
/// in words that do not depend on the example (for an output that differs, its first
/// differing path and the kind of difference there; for another answer, what it was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    /// The status the gateway would give.
    pub status: Status,
    /// What went wrong (`the output differs from the example at `/words` (a string where the
    /// example has an integer)`).
    pub what: String,
}

/// One trial that ran.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The trial's name, as libtest prints it (`mcp::a short article`).
    pub name: String,
    /// How long it ran.
    pub took: Duration,
    /// Why it failed, in full; `None` when it passed.
    pub failure: Option<String>,
    /// Why it failed as the terminal said it: in one line when an earlier trial failed of the
    /// same cause and was reported in full.
    pub shown: Option<String>,
    /// The cause of the failure, when it has one.
    pub cause: Option<Cause>,
}

/// A cause several trials may share: the first trial that failed of it, and how many did.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    /// What the failures have in common.
    pub cause: Cause,
    /// The trial reported in full: the first to fail of it.
    pub first: String,
    /// How many trials failed of it.
    pub count: usize,
}

/// The trials of one run that ended so far, and the causes of their failures.
#[derive(Debug, Default)]
pub(crate) struct Records {
    ended: Mutex<Vec<Record>>,
    causes: Mutex<Vec<Shared>>,
    /// The run's sink, whose scrub every message kept goes through.
    reporter: Reporter,
}

/// A trial whose end is recorded in `records`: a pass, a failure with its message (in one line
/// when an earlier trial failed of the same cause), or a panic (recorded, then passed on for
/// libtest to report as it always does).
pub(crate) fn trial(
    records: &Arc<Records>,
    name: impl Into<String>,
    run: impl FnOnce() -> Result<(), Fault> + Send + 'static,
) -> Trial {
    let name = name.into();
    Trial::test(name.clone(), recorded(records, name, run))
}

/// A [`trial`] that may find, when it runs, that it has nothing to test: `nothing` says why
/// (libtest then reports it ignored, with that reason, and no record is kept); otherwise it
/// runs as a trial does.
pub(crate) fn ignorable(
    records: &Arc<Records>,
    name: impl Into<String>,
    nothing: impl FnOnce() -> Option<String> + Send + 'static,
    run: impl FnOnce() -> Result<(), Fault> + Send + 'static,
) -> Trial {
    let name = name.into();
    let run = recorded(records, name.clone(), run);
    Trial::ignorable_test(name, move || match nothing() {
        Some(why) => Ok(Completion::ignored_with(why)),
        None => run().map(|()| Completion::Completed),
    })
}

/// `run` as a trial's body whose end is recorded in `records` (see [`trial`]).
fn recorded(
    records: &Arc<Records>,
    name: String,
    run: impl FnOnce() -> Result<(), Fault> + Send + 'static,
) -> impl FnOnce() -> Result<(), Failed> + Send + 'static {
    let recorded = name;
    let records = records.clone();
    move || {
        let started = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(run));
        let (failure, cause) = match &result {
            Ok(Ok(())) => (None, None),
            Ok(Err(fault)) => (Some(fault.message.clone()), fault.cause.clone()),
            Err(panic) => (
                Some(match panic.downcast_ref::<String>() {
                    Some(s) => format!("the trial panicked: {s}"),
                    None => match panic.downcast_ref::<&str>() {
                        Some(s) => format!("the trial panicked: {s}"),
                        None => "the trial panicked".to_string(),
                    },
                }),
                None,
            ),
        };
        let shown = match (&result, &cause) {
            (Ok(Err(fault)), Some(cause)) => match records.first_of(cause, &recorded) {
                None => fault.message.clone(),
                Some(first) => format!(
                    "{}; gateway status: {} (the same cause as `{first}`, reported in full)",
                    cause.what, cause.status
                ),
            },
            (Ok(Err(fault)), None) => fault.message.clone(),
            _ => String::new(),
        };
        let clean = |text: &str| records.reporter.clean(text).into_owned();
        let (failure, shown) = (failure.as_deref().map(clean), clean(&shown));
        let took = CALLS_TOOK
            .with(Cell::take)
            .unwrap_or_else(|| started.elapsed());
        if let Ok(mut ended) = records.ended.lock() {
            ended.push(Record {
                name: recorded,
                took,
                failure,
                shown: (!shown.is_empty()).then(|| shown.clone()),
                cause,
            });
        }
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Failed::from(shown)),
            Err(panic) => resume_unwind(panic),
        }
    }
}

thread_local! {
    /// How long the calls of the trial running on this thread took, when they were made ahead
    /// of it (an example's calls): its time, rather than the moment it took to judge them.
    static CALLS_TOOK: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Says that the trial running on this thread judged calls made ahead of it, which took
/// `took`: the trial's time in the reports.
pub(crate) fn calls_took(took: Duration) {
    CALLS_TOOK.with(|t| t.set(Some(took)));
}

impl Records {
    /// No trial yet, in a run whose messages go through `reporter`.
    pub(crate) fn new(reporter: Reporter) -> Records {
        Records {
            reporter,
            ..Records::default()
        }
    }

    /// Every trial that ended so far, in the order they ended.
    pub(crate) fn take(&self) -> Vec<Record> {
        self.ended
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    /// Counts a failure of `cause` by the trial `name`: the trial that failed of it first, when
    /// that is another one.
    fn first_of(&self, cause: &Cause, name: &str) -> Option<String> {
        let mut causes = self.causes.lock().ok()?;
        match causes.iter_mut().find(|s| s.cause == *cause) {
            Some(shared) => {
                shared.count += 1;
                Some(shared.first.clone())
            }
            None => {
                causes.push(Shared {
                    cause: cause.clone(),
                    first: name.to_string(),
                    count: 1,
                });
                None
            }
        }
    }

    /// The causes more than one trial failed of, in the order they were first met.
    pub(crate) fn shared(&self) -> Vec<Shared> {
        self.causes
            .lock()
            .map(|c| c.iter().filter(|s| s.count > 1).cloned().collect())
            .unwrap_or_default()
    }
}

/// The line that closes a run in which several trials failed of `shared`'s cause.
pub(crate) fn note(shared: &Shared) -> String {
    format!(
        "note: {} trials failed for one cause: {}; gateway status: {}; `{}` is reported in full, the others in one line each",
        shared.count, shared.cause.what, shared.cause.status, shared.first
    )
}

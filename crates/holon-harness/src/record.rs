//! What each trial did, kept for the reports written after the run (JUnit, GitHub
//! annotations): its name, how long it took, and the failure's message. Kept per run.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};

/// One trial that ran.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The trial's name, as libtest prints it (`mcp::a short article`).
    pub name: String,
    /// How long it ran.
    pub took: Duration,
    /// Why it failed; `None` when it passed.
    pub failure: Option<String>,
}

/// The trials of one run that ended so far.
#[derive(Debug, Default)]
pub(crate) struct Records(Mutex<Vec<Record>>);

/// A trial whose end is recorded in `records`: a pass, a failure with its message, or a panic
/// (recorded, then passed on for libtest to report as it always does).
pub(crate) fn trial(
    records: &Arc<Records>,
    name: impl Into<String>,
    run: impl FnOnce() -> Result<(), Failed> + Send + 'static,
) -> Trial {
    let name = name.into();
    let recorded = name.clone();
    let records = records.clone();
    Trial::test(name, move || {
        let started = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(run));
        let failure = match &result {
            Ok(Ok(())) => None,
            Ok(Err(failed)) => Some(failed.message().unwrap_or("the trial failed").to_string()),
            Err(panic) => Some(match panic.downcast_ref::<String>() {
                Some(s) => format!("the trial panicked: {s}"),
                None => match panic.downcast_ref::<&str>() {
                    Some(s) => format!("the trial panicked: {s}"),
                    None => "the trial panicked".to_string(),
                },
            }),
        };
        if let Ok(mut records) = records.0.lock() {
            records.push(Record {
                name: recorded,
                took: started.elapsed(),
                failure,
            });
        }
        match result {
            Ok(outcome) => outcome,
            Err(panic) => resume_unwind(panic),
        }
    })
}

impl Records {
    /// Every trial that ended so far, in the order they ended.
    pub(crate) fn take(&self) -> Vec<Record> {
        self.0
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }
}

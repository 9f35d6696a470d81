//! Calls in flight together: a pass starts its calls ahead of the trials, up to N at once
//! whatever the core count and libtest's `--test-threads`, and each trial takes its own call's
//! answer when it runs.
//!
//! By job: `crowd` (whether a call had company, defined once), `transport` (what a call goes
//! through), `slots` (each trial's answer), `retries` (the calls tried again alone, and the
//! note), `watch` (the one watchdog of calls that block their worker).

mod crowd;
mod retries;
mod slots;
mod transport;
mod watch;

pub(crate) use crowd::{Crowd, Crowded, Seat};
pub(crate) use retries::Retries;
pub(crate) use slots::{Gathered, Slots};
pub(crate) use transport::{Sent, Transport, unplayed};
pub(crate) use watch::{Deadline, Watchdog};

/// A runtime for one thread of the harness: the passes' workers, the MCP client, the signal
/// watcher. Each drives its own tasks, so nothing crosses a thread it does not have to.
pub(crate) fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

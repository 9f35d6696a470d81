//! The one watchdog of calls in flight: a call arms its deadline when it starts and disarms it
//! when it ends; one thread of the harness waits until the earliest deadline (never on a fixed
//! tick) and runs the action of each call still armed then. A function that blocks its worker
//! cannot be cancelled: this is how the harness gives up on it.
//!
//! A call costs no wake-up of that thread: calls arm deadlines in the order they start, each
//! later than the one the thread already sleeps to, so arming wakes it only when the new
//! deadline is earlier. The thread keeps the time it planned to wake at when the call it slept
//! for ended, and from there sleeps to the earliest deadline armed since.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

/// What a deadline does when it passes.
type Action = Box<dyn FnOnce() + Send>;

/// The deadlines of calls in flight, and the thread that keeps them. Dropping the watchdog
/// ends its thread, and the actions still armed are dropped unrun.
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    armed: Vec<(u64, Instant, Action)>,
    next: u64,
    closed: bool,
    /// When the thread wakes by itself (`None`: only when woken).
    wakes: Option<Instant>,
}

impl Watchdog {
    /// A watchdog whose thread is named `name`.
    pub(crate) fn start(name: &str) -> std::io::Result<Arc<Watchdog>> {
        let shared = Arc::new(Shared::default());
        let keeper = shared.clone();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || keeper.keep())?;
        Ok(Arc::new(Watchdog { shared }))
    }

    /// Runs `action` at `at`, unless the returned [`Deadline`] is dropped first.
    pub(crate) fn arm(
        self: &Arc<Self>,
        at: Instant,
        action: impl FnOnce() + Send + 'static,
    ) -> Deadline {
        let mut id = 0;
        let mut sooner = true;
        if let Ok(mut state) = self.shared.state.lock() {
            state.next += 1;
            id = state.next;
            state.armed.push((id, at, Box::new(action)));
            sooner = state.wakes.is_none_or(|wakes| at < wakes);
        }
        if sooner {
            self.shared.changed.notify_all();
        }
        Deadline {
            watchdog: self.clone(),
            id,
        }
    }

    /// Takes back deadline `id`'s action, unless it ran (or is running).
    fn disarm(&self, id: u64) {
        let Ok(mut state) = self.shared.state.lock() else {
            return;
        };
        let Some(at) = state.armed.iter().position(|(mine, ..)| *mine == id) else {
            return;
        };
        // Dropped outside the lock: an action may hold what takes it.
        let taken = state.armed.swap_remove(at);
        drop(state);
        drop(taken);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let armed = match self.shared.state.lock() {
            Ok(mut state) => {
                state.closed = true;
                std::mem::take(&mut state.armed)
            }
            Err(_) => Vec::new(),
        };
        self.shared.changed.notify_all();
        drop(armed);
    }
}

impl Shared {
    /// The watchdog's thread: runs each action whose deadline passed, then waits for the next
    /// deadline or a new one. An action that panics (its own guard answers its call) does not
    /// end the watch of the others.
    fn keep(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        loop {
            if state.closed {
                return;
            }
            let now = Instant::now();
            let (due, armed): (Vec<_>, Vec<_>) = std::mem::take(&mut state.armed)
                .into_iter()
                .partition(|(_, at, _)| *at <= now);
            state.armed = armed;
            if !due.is_empty() {
                // Looks again once the actions ran: a deadline armed meanwhile need not wake it.
                state.wakes = Some(now);
                drop(state);
                for (_, _, action) in due {
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(action));
                }
                state = match self.state.lock() {
                    Ok(state) => state,
                    Err(_) => return,
                };
                continue;
            }
            // With nothing armed, the time planned stays until it passes: the next call's
            // deadline is likely later, and arming it then wakes nothing.
            let earliest = (state.armed.iter().map(|(_, at, _)| *at).min())
                .or(state.wakes.filter(|wakes| *wakes > now));
            state.wakes = earliest;
            state = match earliest {
                None => (self.changed.wait(state)).unwrap_or_else(PoisonError::into_inner),
                Some(at) => {
                    let wait = at.saturating_duration_since(now);
                    let waited = self.changed.wait_timeout(state, wait);
                    waited.unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
    }
}

/// One armed deadline: a call drops it when it ends, which disarms it (a call whose task is
/// dropped leaves nothing to run either).
pub(crate) struct Deadline {
    watchdog: Arc<Watchdog>,
    id: u64,
}

impl Drop for Deadline {
    fn drop(&mut self) {
        self.watchdog.disarm(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_deadline_runs_its_action_unless_disarmed_first() {
        let watchdog = Watchdog::start("holon-test-watch").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let now = Instant::now();
        let late = tx.clone();
        let kept = watchdog.arm(now + Duration::from_secs(3600), move || {
            let _ = late.send("the late one");
        });
        let soon = tx.clone();
        let _given_up = watchdog.arm(now + Duration::from_millis(50), move || {
            let _ = soon.send("given up");
        });
        let panics = watchdog.arm(now, || panic!("an action that panics"));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok("given up"));
        // The call ended first: its action is dropped unrun, and with it its sender.
        drop((kept, panics, tx));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn a_deadline_later_than_the_one_the_thread_sleeps_to_runs_without_waking_it() {
        let watchdog = Watchdog::start("holon-test-watch").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let now = Instant::now();
        // The thread sleeps to the first deadline; its call ends before it.
        let first = watchdog.arm(now + Duration::from_millis(100), || {});
        drop(first);
        let later = tx.clone();
        let _second = watchdog.arm(now + Duration::from_millis(200), move || {
            let _ = later.send(Instant::now());
        });
        let ran = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(ran >= now + Duration::from_millis(200));
        // A sooner deadline than the one it sleeps to wakes it.
        let _long = watchdog.arm(Instant::now() + Duration::from_secs(3600), || {});
        let soon = tx.clone();
        let _short = watchdog.arm(Instant::now() + Duration::from_millis(50), move || {
            let _ = soon.send(Instant::now());
        });
        assert!(rx.recv_timeout(Duration::from_secs(10)).is_ok());
    }
}

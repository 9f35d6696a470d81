//! Crowding, defined once: whether another call was in flight at some moment of a call (at its
//! start, or started while it ran), and why a call that failed in a crowd is tried again alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Why a call was tried again alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crowded {
    /// No answer within `timeout_s`.
    TimedOut,
    /// No connection to the server.
    Refused,
    /// The server's process ended while it had the call (the server is started again).
    Died,
}

/// The calls of one flight in flight at once, counted as each takes and leaves its [`Seat`].
#[derive(Default)]
pub(crate) struct Crowd {
    in_flight: AtomicUsize,
    started: AtomicUsize,
}

impl Crowd {
    /// A seat for a call that starts now; the call is in flight until the seat drops.
    pub(crate) fn seat(self: &Arc<Self>) -> Seat {
        Seat {
            others: self.in_flight.fetch_add(1, Ordering::SeqCst),
            mine: self.started.fetch_add(1, Ordering::SeqCst),
            crowd: self.clone(),
        }
    }
}

/// One call's place in its [`Crowd`], from its start until it is dropped.
pub(crate) struct Seat {
    crowd: Arc<Crowd>,
    /// Calls in flight when this one started.
    others: usize,
    /// How many calls started before this one.
    mine: usize,
}

impl Seat {
    /// Whether another call was in flight at some moment of this one: at its start, or it
    /// started later (a call that started alone may have waited on those).
    pub(crate) fn crowded(&self) -> bool {
        self.others > 0 || self.crowd.started.load(Ordering::SeqCst) > self.mine + 1
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.crowd.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_crowded_by_a_call_before_it_and_by_one_after_it() {
        let crowd = Arc::new(Crowd::default());
        let first = crowd.seat();
        assert!(!first.crowded(), "alone so far");
        let second = crowd.seat();
        assert!(second.crowded(), "the first was in flight at its start");
        assert!(first.crowded(), "the second started while it ran");
        drop(first);
        drop(second);
        let third = crowd.seat();
        assert!(!third.crowded(), "the others ended before it started");
    }
}

//! The calls tried again alone, counted, and the note a run ends with when there were any.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::crowd::Crowded;
use crate::settings::CONCURRENCY_VAR;

/// Calls that failed while others were in flight (no answer in time, no connection) and were
/// tried again alone, or were not because a call tried alone got no answer either: the note a
/// run ends with when there were any.
#[derive(Default)]
pub struct Retries {
    timed_out: AtomicUsize,
    refused: AtomicUsize,
    died: AtomicUsize,
    answered: AtomicUsize,
    answered_died: AtomicUsize,
    not_retried: AtomicUsize,
    not_retried_dead: AtomicUsize,
    /// Of the calls tried alone, those that blocked what answers (no answer to anything else
    /// either): the others waited behind them.
    blocked: AtomicUsize,
}

impl Retries {
    /// A call was tried again alone; `answered` when it then answered in time.
    pub fn record(&self, why: Crowded, answered: bool) {
        match why {
            Crowded::TimedOut => &self.timed_out,
            Crowded::Refused => &self.refused,
            Crowded::Died => &self.died,
        }
        .fetch_add(1, Ordering::Relaxed);
        if answered && why == Crowded::Died {
            self.answered_died.fetch_add(1, Ordering::Relaxed);
        } else if answered {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A call tried alone got no answer while what answers answered nothing else either: it
    /// blocks it, and the calls in flight beside it waited behind it.
    pub fn blocked(&self) {
        self.blocked.fetch_add(1, Ordering::Relaxed);
    }

    /// A call timed out among others and was not tried again: one tried alone got no answer
    /// in time either, so whatever answers does not answer, and a retry would only wait again.
    pub fn not_retried(&self) {
        self.not_retried.fetch_add(1, Ordering::Relaxed);
    }

    /// A call that failed among others (`why`) was not tried again: the server was not fit to
    /// take it (it dies whatever the input, or answers nothing even started again).
    pub fn not_retried_for(&self, why: Crowded) {
        match why {
            Crowded::Died => &self.not_retried_dead,
            Crowded::TimedOut | Crowded::Refused => &self.not_retried,
        }
        .fetch_add(1, Ordering::Relaxed);
    }

    /// The note for the end of the run, when a call failed among others; `who` names what
    /// answered (`the server`, `the agent function`).
    pub fn note(&self, who: &str, concurrency: usize) -> Option<String> {
        let tried_timed_out = self.timed_out.load(Ordering::Relaxed);
        let refused = self.refused.load(Ordering::Relaxed);
        let answered = self.answered.load(Ordering::Relaxed);
        let not_retried = self.not_retried.load(Ordering::Relaxed);
        let timed_out = tried_timed_out + not_retried;
        let calls = |n: usize| format!("{n} {}", if n == 1 { "call" } else { "calls" });
        let were = |n: usize| if n == 1 { "was" } else { "were" };
        let died = self.died_note(who);
        let what = match (timed_out, refused) {
            (0, 0) => return died,
            (t, 0) => format!("{} timed out", calls(t)),
            (0, r) => format!("{} could not connect", calls(r)),
            (t, r) => format!("{} timed out and {} could not connect", calls(t), calls(r)),
        };
        let tried = tried_timed_out + refused;
        let mut note = format!(
            "note: {what} while other calls were in flight (up to {concurrency} at once), and {} {} tried again alone: ",
            tried,
            were(tried)
        );
        let blocked = self.blocked.load(Ordering::Relaxed);
        if answered > 0 && blocked > 0 {
            note.push_str(&format!(
                "{answered} answered in time alone, and {blocked} blocked {who} alone (reported as such): the others waited behind {}",
                if blocked == 1 { "it" } else { "them" }
            ));
        } else if blocked > 0 {
            // Only the blocking calls timed out: the others had answered before it blocked.
            let each = if tried == 1 { "it" } else { "each" };
            note.push_str(&format!(
                "{each} got no answer alone either, and {blocked} blocked {who} alone (reported as such)"
            ));
        } else if answered > 0 {
            note.push_str(&format!(
                "{answered} answered in time alone, so {who} takes calls one at a time; `--concurrency 1` (or `{CONCURRENCY_VAR}=1`) matches it and spares the retries"
            ));
        } else {
            note.push_str("none answered alone either, so each is reported as it failed");
        }
        if not_retried > 0 {
            note.push_str(&format!(
                "; the other {not_retried} {} not tried again, since a call tried alone got no answer in time either: {who} does not answer, and each is reported as `{}`",
                were(not_retried),
                holon_core::gateway::Status::Timeout.code()
            ));
        }
        if let Some(died) = died {
            note.push('\n');
            note.push_str(&died);
        }
        Some(note)
    }

    /// The note on calls cut off when the server's process ended among others.
    fn died_note(&self, who: &str) -> Option<String> {
        let died = self.died.load(Ordering::Relaxed);
        let not_retried = self.not_retried_dead.load(Ordering::Relaxed);
        if died + not_retried == 0 {
            return None;
        }
        let answered = self.answered_died.load(Ordering::Relaxed);
        let calls = |n: usize| format!("{n} {}", if n == 1 { "call" } else { "calls" });
        let mut note = format!(
            "note: {who} ended while it had other calls too, or ended on a call that was not its first: it was started again, and {} made again alone, so that a crash is laid on the input that causes it; {answered} answered",
            calls(died)
        );
        if not_retried > 0 {
            note.push_str(&format!(
                "; {} not made again, since {who} dies whatever the input",
                calls(not_retried)
            ));
        }
        Some(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_what_went_wrong() {
        let retries = Retries::default();
        assert_eq!(retries.note("the server", 16), None);
        retries.record(Crowded::TimedOut, true);
        retries.record(Crowded::Refused, false);
        let note = retries.note("the server", 16).unwrap();
        assert!(
            note.starts_with("note: 1 call timed out and 1 call could not connect while other calls were in flight (up to 16 at once)"),
            "{note}"
        );
        assert!(note.contains("1 answered in time alone, so the server takes calls one at a time; `--concurrency 1`"), "{note}");
    }

    #[test]
    fn the_note_says_which_calls_were_not_tried_again() {
        let retries = Retries::default();
        retries.record(Crowded::TimedOut, false);
        for _ in 0..17 {
            retries.not_retried();
        }
        let note = retries.note("the server", 16).unwrap();
        assert_eq!(
            note,
            "note: 18 calls timed out while other calls were in flight (up to 16 at once), and 1 was tried again alone: none answered alone either, so each is reported as it failed; the other 17 were not tried again, since a call tried alone got no answer in time either: the server does not answer, and each is reported as `timeout`"
        );
    }

    #[test]
    fn a_call_that_blocks_alone_is_said_to_block_though_none_waited_behind_it() {
        let retries = Retries::default();
        retries.record(Crowded::TimedOut, false);
        retries.blocked();
        let note = retries.note("the agent function", 16).unwrap();
        assert_eq!(
            note,
            "note: 1 call timed out while other calls were in flight (up to 16 at once), and 1 was tried again alone: it got no answer alone either, and 1 blocked the agent function alone (reported as such)"
        );
    }
}

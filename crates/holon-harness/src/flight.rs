//! Calls in flight together: a pass starts its calls ahead of the trials, up to N at once
//! whatever the core count and libtest's `--test-threads`, and each trial takes its own call's
//! answer when it runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::error::NoAnswer;
use crate::measure::CallEnd;
use crate::settings::CONCURRENCY_VAR;

/// One answer per trial, put by the flight and taken by the trial that waits for it.
pub struct Slots<T> {
    state: Mutex<Vec<Slot<T>>>,
    changed: Condvar,
}

enum Slot<T> {
    Waiting,
    Done(T),
    Taken,
}

impl<T> Slots<T> {
    /// `n` empty slots.
    pub fn new(n: usize) -> Slots<T> {
        Slots {
            state: Mutex::new((0..n).map(|_| Slot::Waiting).collect()),
            changed: Condvar::new(),
        }
    }

    /// Fills slot `i` unless it already holds an answer: the first answer counts, a late one
    /// (a call given up on that returned after all) is dropped.
    pub fn put(&self, i: usize, value: T) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        match state.get_mut(i) {
            Some(slot @ Slot::Waiting) => {
                *slot = Slot::Done(value);
                drop(state);
                self.changed.notify_all();
                true
            }
            _ => false,
        }
    }

    /// Fills every slot still waiting, for a flight that ends without answering them.
    pub fn close(&self, value: impl Fn(usize) -> T) {
        if let Ok(mut state) = self.state.lock() {
            for (i, slot) in state.iter_mut().enumerate() {
                if matches!(slot, Slot::Waiting) {
                    *slot = Slot::Done(value(i));
                }
            }
        }
        self.changed.notify_all();
    }

    /// A guard for a thread that fills the slots: when that thread panics, every slot still
    /// waiting is filled with `value` as the guard drops, so that no trial waits for ever for
    /// an answer that nothing will put. On the way out without a panic it does nothing.
    pub fn on_panic<F: Fn(usize) -> T>(&self, value: F) -> OnPanic<'_, T, F> {
        OnPanic { slots: self, value }
    }

    /// Waits for slot `i` and takes its answer; `None` if it was taken already.
    pub fn take(&self, i: usize) -> Option<T> {
        let mut state = self.state.lock().ok()?;
        loop {
            match state.get_mut(i)? {
                Slot::Waiting => state = self.changed.wait(state).ok()?,
                slot @ Slot::Done(_) => {
                    return match std::mem::replace(slot, Slot::Taken) {
                        Slot::Done(value) => Some(value),
                        _ => None,
                    };
                }
                Slot::Taken => return None,
            }
        }
    }
}

/// See [`Slots::on_panic`].
pub struct OnPanic<'a, T, F: Fn(usize) -> T> {
    slots: &'a Slots<T>,
    value: F,
}

impl<T, F: Fn(usize) -> T> Drop for OnPanic<'_, T, F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.slots.close(&self.value);
        }
    }
}

/// Each example's calls' ends, gathered as they come, then put in the example's slot once all
/// its calls ended (`--repeat` makes several): a trial takes its example's calls at once, in
/// the order of their runs.
pub struct Gathered {
    /// The runs (from 1) each example is called.
    runs: Vec<Vec<u32>>,
    ends: Mutex<Vec<Vec<CallEnd>>>,
    slots: Slots<Vec<CallEnd>>,
}

impl Gathered {
    /// Slots for examples called on the runs `runs[i]` each; an example with none has its
    /// (empty) answer at once.
    pub fn new(runs: Vec<Vec<u32>>) -> Gathered {
        let slots = Slots::new(runs.len());
        for (index, mine) in runs.iter().enumerate() {
            if mine.is_empty() {
                slots.put(index, Vec::new());
            }
        }
        Gathered {
            ends: Mutex::new(vec![Vec::new(); runs.len()]),
            runs,
            slots,
        }
    }

    /// How many calls example `index` makes.
    pub fn runs(&self, index: usize) -> u32 {
        self.runs.get(index).map_or(0, |r| r.len() as u32)
    }

    /// The runs example `index` is called (from 1; a shard makes some runs only).
    pub fn numbers(&self, index: usize) -> &[u32] {
        self.runs.get(index).map_or(&[], Vec::as_slice)
    }

    /// The end of one call of example `index`; the example's slot is filled with its last.
    /// A second end of the same run (a call given up on that returned after all) is dropped.
    pub fn put(&self, index: usize, end: CallEnd) {
        let Ok(mut ends) = self.ends.lock() else {
            return;
        };
        let Some(mine) = ends.get_mut(index) else {
            return;
        };
        if mine.iter().any(|e| e.run == end.run) {
            return;
        }
        mine.push(end);
        if mine.len() >= self.runs(index) as usize {
            let mut all = std::mem::take(mine);
            all.sort_by_key(|e| e.run);
            drop(ends);
            self.slots.put(index, all);
        }
    }

    /// Waits for every call of example `index` and takes their ends.
    pub fn take(&self, index: usize) -> Option<Vec<CallEnd>> {
        self.slots.take(index)
    }

    /// Fills every example still waiting: its ends so far, and each call not ended `why`.
    pub fn close(&self, why: impl Fn() -> NoAnswer) {
        let gathered = std::cell::RefCell::new(
            self.ends
                .lock()
                .map(|mut e| std::mem::take(&mut *e))
                .unwrap_or_default(),
        );
        self.slots.close(|index| {
            let mut mine = (gathered.borrow_mut().get_mut(index))
                .map(std::mem::take)
                .unwrap_or_default();
            for &run in self.numbers(index) {
                if !mine.iter().any(|e| e.run == run) {
                    mine.push(CallEnd::without(run, why()));
                }
            }
            mine.sort_by_key(|e| e.run);
            mine
        });
    }

    /// A guard for a thread that gathers the ends: when that thread panics, every example
    /// still waiting is filled (see [`Gathered::close`]), so no trial waits for ever.
    pub fn on_panic(&self, why: fn() -> NoAnswer) -> GatherPanic<'_> {
        GatherPanic {
            gathered: self,
            why,
        }
    }
}

/// See [`Gathered::on_panic`].
pub struct GatherPanic<'a> {
    gathered: &'a Gathered,
    why: fn() -> NoAnswer,
}

impl Drop for GatherPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.gathered.close(self.why);
        }
    }
}

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

/// A runtime for one thread of the harness: the passes' workers, the MCP client, the signal
/// watcher. Each drives its own tasks, so nothing crosses a thread it does not have to.
pub(crate) fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_keeps_its_first_answer() {
        let slots = Slots::new(2);
        assert!(slots.put(0, "first"));
        assert!(!slots.put(0, "late"));
        slots.close(|_| "closed");
        assert_eq!(slots.take(0), Some("first"));
        assert_eq!(slots.take(0), None);
        assert_eq!(slots.take(1), Some("closed"));
    }

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

    #[test]
    fn a_filler_that_panics_leaves_no_trial_waiting() {
        let slots = std::sync::Arc::new(Slots::new(2));
        let (waiter, filler) = (slots.clone(), slots.clone());
        let (taken, answer) = std::sync::mpsc::channel();
        let trial = std::thread::spawn(move || taken.send(waiter.take(1)));
        let filling = std::thread::spawn(move || {
            let _guard = filler.on_panic(|_| "the flight failed");
            filler.put(0, "answered");
            panic!("a bug in the flight");
        });
        assert!(filling.join().is_err());
        // Without the guard the trial would wait for ever: a bound makes that a failure.
        let got = answer.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(got, Ok(Some("the flight failed")));
        assert!(trial.join().is_ok());
        // What was put before the panic is kept.
        assert_eq!(slots.take(0), Some("answered"));
        // A guard dropped without a panic fills nothing.
        let quiet = Slots::new(1);
        drop(quiet.on_panic(|_| "closed"));
        assert!(quiet.put(0, "later"));
    }

    #[test]
    fn an_example_is_answered_once_all_its_calls_ended() {
        let end = |run: u32| CallEnd::without(run, NoAnswer::Unanswered);
        let gathered = std::sync::Arc::new(Gathered::new(vec![vec![1, 2, 3], vec![], vec![1, 2]]));
        assert_eq!(
            gathered.take(1).map(|e| e.len()),
            Some(0),
            "no call: at once"
        );
        gathered.put(0, end(2));
        gathered.put(0, end(1));
        gathered.put(0, end(1));
        let g = gathered.clone();
        let waiter = std::thread::spawn(move || g.take(0));
        gathered.put(0, end(3));
        let runs: Vec<u32> = waiter
            .join()
            .unwrap()
            .unwrap()
            .iter()
            .map(|e| e.run)
            .collect();
        assert_eq!(runs, [1, 2, 3]);
        // The run ends with one call of the last example in: the other is said not made.
        gathered.put(2, end(2));
        gathered.close(|| NoAnswer::RunEnded);
        let last = gathered.take(2).unwrap();
        assert_eq!(last.iter().map(|e| e.run).collect::<Vec<_>>(), [1, 2]);
        assert!(matches!(last[0].answer, Err(NoAnswer::RunEnded)));
        assert!(matches!(last[1].answer, Err(NoAnswer::Unanswered)));
    }

    #[test]
    fn a_trial_waits_for_its_answer() {
        let slots = std::sync::Arc::new(Slots::new(1));
        let s = slots.clone();
        let waiter = std::thread::spawn(move || s.take(0));
        slots.put(0, 7);
        assert_eq!(waiter.join().unwrap(), Some(7));
    }
}

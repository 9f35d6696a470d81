//! One answer per trial, put by the scheduler and taken by the trial that waits for it
//! ([`Slots`]), and each example's calls' ends gathered for its trial ([`Gathered`]).

use std::sync::{Condvar, Mutex};

use crate::error::NoAnswer;
use crate::measure::CallEnd;

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

    /// The calls of the examples in `order`, a round of every example at a time, so that each
    /// gets its calls early whatever the count: each call as its example's place and its run.
    pub fn in_rounds(&self, order: &[usize]) -> Vec<(usize, u32)> {
        let rounds = order.iter().map(|i| self.runs(*i)).max().unwrap_or(0);
        let mut keys = Vec::new();
        for round in 0..rounds as usize {
            keys.extend(
                (order.iter()).filter_map(|i| self.numbers(*i).get(round).map(|run| (*i, *run))),
            );
        }
        keys
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

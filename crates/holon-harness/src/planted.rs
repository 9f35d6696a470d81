//! The fault trials' calls, sent ahead of their trials as the examples' are: when the first
//! fault trial of a pass runs, every call of that pass's fault trials that will run goes out,
//! up to the concurrency in flight, in the order that keeps them flying (each fault across the
//! examples in turn, `slow` last, so calls of one example, which wait for each other, are
//! rarely in flight at once), and each trial takes its own calls' ends. Replayed calls are
//! told apart by their requests' content, so the `slow` fault's waits overlap instead of
//! adding up.

use std::sync::{Arc, Mutex, OnceLock};

use crate::flight::{Slots, unplayed};
use crate::pass::{Caller, Planted};
use holon_core::gateway::Answer;
use holon_upstream::fault::{Fault, Faulted};

/// One pass's fault calls and their ends.
pub(crate) struct FaultFlight {
    caller: Arc<dyn Caller>,
    calls: Mutex<Vec<Planted>>,
    answers: Arc<Slots<Faulted>>,
    started: OnceLock<()>,
}

impl FaultFlight {
    /// The flight of `calls` through `caller`; nothing goes out before a trial takes an end.
    pub(crate) fn new(caller: Arc<dyn Caller>, calls: Vec<Planted>) -> Arc<FaultFlight> {
        Arc::new(FaultFlight {
            caller,
            answers: Arc::new(Slots::new(calls.len())),
            calls: Mutex::new(calls),
            started: OnceLock::new(),
        })
    }

    /// The end of call `i`, once it came (the calls go out when the first is asked for).
    pub(crate) fn take(self: &Arc<Self>, i: usize) -> Faulted {
        self.started.get_or_init(|| self.launch());
        self.answers.take(i).unwrap_or_else(|| {
            unplayed(Answer::Unreachable(
                "the call's end was taken already".into(),
            ))
        })
    }

    fn launch(self: &Arc<Self>) {
        let calls = self.calls.lock().map(|mut c| std::mem::take(&mut *c));
        let calls = calls.unwrap_or_default();
        // Each fault across the examples in turn, `slow` last: calls of one example wait for
        // each other (two of its calls could not be told apart by their requests).
        let rank = |c: &Planted| Fault::ALL.iter().position(|f| *f == c.plant.fault);
        let mut order: Vec<usize> = (0..calls.len()).collect();
        order.sort_by_key(|i| (calls.get(*i).map(rank), *i));
        let sorted: Vec<Planted> = order
            .iter()
            .filter_map(|i| calls.get(*i).cloned())
            .collect();
        let (caller, answers) = (self.caller.clone(), self.answers.clone());
        let spawned = std::thread::Builder::new()
            .name("holon-fault-flight".into())
            .spawn(move || {
                let _guard = answers.on_panic(|_| unplayed(Answer::Unreachable(PANICKED.into())));
                caller.faulted_all(&sorted, &|j, faulted| {
                    if let Some(i) = order.get(j) {
                        answers.put(*i, faulted);
                    }
                });
                answers.close(|_| unplayed(Answer::Unreachable("the call was not made".into())));
            });
        if let Err(e) = spawned {
            let why = format!("cannot start a thread for the fault calls: {e}");
            self.answers
                .close(|_| unplayed(Answer::Unreachable(why.clone())));
        }
    }
}

/// Why the fault calls still waiting have no end when their thread panicked.
const PANICKED: &str = "the fault calls failed (see the panic above)";

/// `call`'s end, holding `permit` (its place among the calls in flight) until the proxy holds
/// its answer back (`held`, the `slow` fault): from then on the call only waits on the agent
/// giving up on its upstream, and gives its place to the next.
pub(crate) async fn giving_way<T>(
    call: impl Future<Output = T>,
    held: impl Future<Output = ()>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> T {
    tokio::pin!(call);
    tokio::pin!(held);
    let mut permit = Some(permit);
    loop {
        tokio::select! {
            end = &mut call => return end,
            () = &mut held, if permit.is_some() => permit = None,
        }
    }
}

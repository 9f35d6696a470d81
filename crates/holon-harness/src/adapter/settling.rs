//! What a call through a function mode waits on before it goes out: the questions put to a
//! process that let a call run past `timeout_s` (is it blocked?), and its replacement when it
//! is. A question is claimed at once, where the call that timed out is let go, before anything
//! else runs: a call that goes out after that waits for the answer, and never reaches a
//! process still blocked by the call before it. The questions themselves are asked one at a
//! time.
//!
//! The runtime lets a call go at `timeout_s` by aborting its task, which drops the call (and
//! claims its question) a moment later, on a worker: the caller may see the timeout first. So
//! each call sent is known until it ends, with the time its `timeout_s` runs out, and a call
//! waits, besides the questions claimed, for every call sent whose time had run out when it
//! asked: dropped, it has claimed its question.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{Mutex, MutexGuard, watch};

/// The questions claimed and not yet answered, the turn they take one at a time, and the calls
/// sent and not yet ended.
pub(super) struct Settling {
    claims: watch::Sender<usize>,
    turn: Mutex<()>,
    /// Each call sent and not yet ended, by its id: when its `timeout_s` runs out.
    sent: watch::Sender<HashMap<u64, Instant>>,
}

/// A call sent: known as one until it is dropped, after its question, if any, is claimed.
pub(super) struct Sent {
    settling: Arc<Settling>,
    id: u64,
}

/// A question claimed: the calls after it wait until it is dropped.
pub(super) struct Claim(Arc<Settling>);

impl Settling {
    pub(super) fn new() -> Arc<Settling> {
        Arc::new(Settling {
            claims: watch::Sender::new(0),
            turn: Mutex::new(()),
            sent: watch::Sender::new(HashMap::new()),
        })
    }

    /// The call `id`, sent now, whose `timeout_s` runs out at `due`.
    pub(super) fn sent(self: &Arc<Self>, id: u64, due: Instant) -> Sent {
        self.sent.send_modify(|sent| {
            sent.insert(id, due);
        });
        Sent {
            settling: self.clone(),
            id,
        }
    }

    /// Claims a question now, synchronously: a call that asks [`Settling::settled`] after
    /// this waits for it.
    pub(super) fn claim(self: &Arc<Self>) -> Claim {
        self.claims.send_modify(|n| *n += 1);
        Claim(self.clone())
    }

    /// The turn of a claimed question: one at a time.
    pub(super) async fn turn(&self) -> MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// Once every call sent whose time has run out has ended, and every question claimed so
    /// far (theirs among them) is answered.
    pub(super) async fn settled(&self) {
        let now = Instant::now();
        let mut sent = self.sent.subscribe();
        let _ = sent
            .wait_for(|sent| sent.values().all(|due| *due > now))
            .await;
        let mut claims = self.claims.subscribe();
        // The sender lives in `self`: the wait ends only with its condition.
        let _ = claims.wait_for(|n| *n == 0).await;
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.0.claims.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drop for Sent {
    fn drop(&mut self) {
        self.settling.sent.send_modify(|sent| {
            sent.remove(&self.id);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_call_after_a_claim_waits_for_it_and_not_after() {
        let settling = Settling::new();
        // Claimed before any task runs: the call that asks next waits, whoever runs first.
        let claim = settling.claim();
        let second = settling.claim();
        let waited = tokio::time::timeout(Duration::from_millis(50), settling.settled()).await;
        assert!(waited.is_err(), "a call went out beside a claimed question");
        drop(claim);
        let waited = tokio::time::timeout(Duration::from_millis(50), settling.settled()).await;
        assert!(
            waited.is_err(),
            "a call went out before every question was answered"
        );
        let asked = tokio::spawn({
            let settling = settling.clone();
            async move { settling.settled().await }
        });
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), asked)
            .await
            .expect("the call goes out once every question is answered")
            .expect("the task");
        // Nothing claimed: a call goes out at once.
        tokio::time::timeout(Duration::from_secs(5), settling.settled())
            .await
            .expect("at once");
    }

    #[tokio::test]
    async fn a_call_waits_for_a_call_past_its_time_to_end_and_claim_not_for_one_in_time() {
        let settling = Settling::new();
        let now = Instant::now();
        // In time: a call goes out beside it.
        let in_time = settling.sent(1, now + Duration::from_secs(3600));
        tokio::time::timeout(Duration::from_secs(5), settling.settled())
            .await
            .expect("a call in time holds nobody up");
        // Past its time, and not yet dropped (its task's abort is on its way).
        let late = settling.sent(2, now);
        let waited = tokio::time::timeout(Duration::from_millis(50), settling.settled()).await;
        assert!(waited.is_err(), "a call went out beside one past its time");
        let asked = tokio::spawn({
            let settling = settling.clone();
            async move { settling.settled().await }
        });
        // Dropped as a cancelled call is: its question claimed first, then the call ended.
        let claim = settling.claim();
        drop(late);
        let waited = tokio::time::timeout(Duration::from_millis(50), settling.settled()).await;
        assert!(
            waited.is_err(),
            "a call went out before the question was answered"
        );
        drop(claim);
        tokio::time::timeout(Duration::from_secs(5), asked)
            .await
            .expect("the call goes out once the late call ended and its question is answered")
            .expect("the task");
        drop(in_time);
    }
}

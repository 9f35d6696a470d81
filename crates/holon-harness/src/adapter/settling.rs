//! What a call through a function mode waits on before it goes out: the questions put to a
//! process that let a call run past `timeout_s` (is it blocked?), and its replacement when it
//! is. A question is claimed at once, where the call that timed out is let go, before anything
//! else runs: a call that goes out after that waits for the answer, and never reaches a
//! process still blocked by the call before it. The questions themselves are asked one at a
//! time.

use std::sync::Arc;

use tokio::sync::{Mutex, MutexGuard, watch};

/// The questions claimed and not yet answered, and the turn they take one at a time.
pub(super) struct Settling {
    claims: watch::Sender<usize>,
    turn: Mutex<()>,
}

/// A question claimed: the calls after it wait until it is dropped.
pub(super) struct Claim(Arc<Settling>);

impl Settling {
    pub(super) fn new() -> Arc<Settling> {
        Arc::new(Settling {
            claims: watch::Sender::new(0),
            turn: Mutex::new(()),
        })
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

    /// Once every question claimed so far is answered.
    pub(super) async fn settled(&self) {
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
}

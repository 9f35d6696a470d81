//! One call of an example as it ended: what its trial judges, what a receipt says of it, and
//! what the gateway would bill for it.

use std::time::Duration;

use crate::error::NoAnswer;
use holon_core::gateway::{Answer, Gateway, Status};
use holon_core::manifest::{ChargeOn, Manifest};
use holon_upstream::{Used, Waiting};

/// One call of an example, as it ended.
#[derive(Debug, Clone)]
pub(crate) struct CallEnd {
    /// Which call of the example it was, from 1 (`--repeat`).
    pub run: u32,
    /// What came back; `Err` when there is nothing to judge (its upstream requests went wrong
    /// on the harness's side, or it was never made).
    pub answer: Result<Answer, NoAnswer>,
    /// The first failure of a real upstream the call saw (live), for `--bless`.
    pub failure: Option<String>,
    /// From when the call was sent to its answer.
    pub took: Duration,
    /// Its upstream requests, in order, each with its answer.
    pub upstream: Vec<Used>,
    /// Those of them still waiting for an answer when the call ended: a late answer is paid
    /// for all the same, and gets a receipt line of its own.
    pub late: Vec<Waiting>,
}

impl CallEnd {
    /// A call that was never made or has nothing to judge, for `why`.
    pub(crate) fn without(run: u32, why: NoAnswer) -> CallEnd {
        CallEnd {
            run,
            answer: Err(why),
            failure: None,
            took: Duration::ZERO,
            upstream: Vec::new(),
            late: Vec::new(),
        }
    }

    /// The status the gateway's receipt would carry; `None` when there is nothing to judge.
    pub(crate) fn status(&self, gateway: &Gateway) -> Option<Status> {
        self.answer.as_ref().ok().map(|a| a.status(gateway))
    }
}

/// Whether the gateway bills a call that ended in `status`: a success, and under
/// `charge_on: attempt` a declared failure marked `billed: true`.
pub(crate) fn billed(manifest: &Manifest, status: &Status) -> bool {
    match status {
        Status::Success => true,
        Status::Declared(code) => {
            manifest.pricing.charge_on == ChargeOn::Attempt
                && manifest.error(code).is_some_and(|e| e.billed)
        }
        _ => false,
    }
}

/// Whether a call that ended in `status` counts toward the success rate, as the gateway
/// measures it: everything but a declared failure (counted apart, being the input's doing),
/// a success included.
pub(crate) fn counted(status: &Status) -> bool {
    !matches!(status, Status::Declared(_))
}

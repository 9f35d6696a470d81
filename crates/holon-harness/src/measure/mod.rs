//! The measurement of a run, as the gateway measures an agent: `--repeat N` calls of each
//! example on the measured pass, each judged by the status on its receipt; the success rate
//! (declared failures counted apart) with its interval, latency against `timeout_s`, the cost
//! per success and the author's pay, the upstreams' tokens and spend; `--receipts`,
//! `--min-success-rate`, and `--max-calls`'s plan.
//!
//! The modules, lowest first: `stats` (the Wilson interval, percentiles), `ended` (one call's
//! end, what is billed and counted), `plan` (the calls a run makes); `receipts` (the file) and
//! `tally` (the counts and the report); `meter` (what the calls go through), `picture` (what the
//! report page draws of them) and `read` (receipts files read back as one run).

mod ended;
mod meter;
mod picture;
mod plan;
mod read;
mod receipts;
mod stats;
mod tally;

pub(crate) use ended::{CallEnd, counted};
pub(crate) use meter::{Meter, Setup};
pub(crate) use picture::{Kind, Picture, Row};
pub(crate) use plan::{Asked, Plan};
pub(crate) use read::{Measured, measured};
pub(crate) use receipts::{Receipts, receipt};
pub(crate) use tally::{money, percent, run_spend, seconds};

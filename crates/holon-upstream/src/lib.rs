//! Recorded upstreams: the services an agent calls (a model, a paid API), declared in
//! `holon-test.toml`, stood in for by a loopback proxy the agent is pointed at through its own
//! variable. Three modes: `replay` (the default: no network, the recordings answer), `record`
//! (the real service answers, and what it answered is written beside the manifest) and `live`
//! (the real service answers, nothing is written).
//!
//! Each pass has its own listener per upstream, and each request is attributed to one call in
//! flight on its pass: under `replay` by its content (the call whose recording holds it; calls
//! that could not be told apart where it matters wait for each other), in a live run by the
//! input it carries, in `record` by the one call the pass makes at a time. An example's
//! recording answers that example's requests, in the order they were made; explore's cases
//! share one recording. Each call keeps what its requests were answered and the tokens each
//! answer says it used (`usage`).
//!
//! An implementation crate of holon-kit: the harness starts the upstreams of a run and enters
//! each call it makes; this crate knows nothing of the harness. Its items follow holon-kit's
//! version and make no promise of their own.
//!
//! The modules, lowest first: `error`; `recording` (the files' format, read with every problem
//! located; a stream's text put together; what two recordings of one answer may differ in);
//! `matching` (a request matched by method, path, query and JSON body; the closest recorded
//! request), `scrub` (the secrets' values out of what is recorded, across a stream's events
//! too), `fault` (the seven faults and what each answers) and `usage` (the tokens an answer
//! says it used); `mode` (and the command that records again); `index` (the recordings by
//! content); `call` (the calls in flight on each pass, what the proxies share); `ledger` (every
//! request of the run, what it was for and what it was answered, late answers included);
//! `attribute`
//! (which call in flight a request is); `proxy` (the loopback proxy that replays, records or
//! forwards); `upstreams` (a run's upstreams).

mod attribute;
mod call;
mod error;
pub mod fault;
mod index;
mod ledger;
mod matching;
mod mode;
mod proxy;
pub mod recording;
mod scrub;
mod upstreams;
pub mod usage;

pub use call::Entered;
pub use error::{FORCE_HINT, FinishError, SettingError, StartError};
pub use ledger::{Count, Purpose, Spend, Used, Waiting};
pub use mode::{MODE_VAR, Mode, PLACEHOLDER, Refresh, parse_mode};
pub use recording::{Request, Scope};
pub use upstreams::{Start, Upstreams};

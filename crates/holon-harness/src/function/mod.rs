//! The function pass: every example through the agent function, in-process, as the gateway
//! would run it (the gate, `timeout_s`, panics caught), then judged.
//!
//! Every call of the run, the examples' and explore's, runs on one multi-thread tokio runtime
//! that lives as long as the run, as `serve` runs an agent: a client the agent keeps across
//! calls (a `reqwest::Client` in a `OnceLock`) works in the tests exactly as it does when
//! served. The runtime has as many workers as libtest's `--test-threads` (at least two), and
//! up to the concurrency calls are in flight: an agent that awaits the network has that many at
//! once, one that computes keeps a worker busy until it returns. A function that blocks its
//! worker past `timeout_s` and a grace is reported as a `timeout` and given up on; the other
//! calls go on on the other workers.
//!
//! By job: `run` (one call as the gateway would run it), `examples` (the examples' calls, sent
//! ahead of their trials), `cases` (explore's and the fault trials' calls), `pass` (the pass
//! as a `Caller`).

mod cases;
mod examples;
mod pass;
mod run;

pub(crate) use pass::FunctionPass;

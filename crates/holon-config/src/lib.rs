//! The configuration of a test run, beside the manifest and outside the registry's view: the
//! agent's `holon-test.toml`, the run's settings it carries, which of its secrets' values a run
//! must have (and what every output is scrubbed of), and the run's share under `--partition`.
//! holon-core holds what the registry and the gateway decide; what a run of the tests is told
//! lives here, so that neither the runtime an agent ships nor its `toml` dependency carries it.
//!
//! An implementation crate of holon-kit: the harness, the upstreams and the command line build on
//! it. Its items follow holon-kit's version and make no promise of their own.
//!
//! The modules, lowest first: `partition` (a run's share of the examples and cases), `tables`
//! (what reading a table of `holon-test.toml` shares), `settings` (the run's settings the file
//! carries), `file` (`holon-test.toml` itself, its items re-exported here), `secrets` (which of
//! its secrets' values a run must have, and what every output is scrubbed of).

mod file;
pub mod partition;
pub mod secrets;
pub mod settings;
mod tables;

pub use file::{FILE, Secret, ServerCommand, TestConfig, TokenPrice, Upstream, parse, read};

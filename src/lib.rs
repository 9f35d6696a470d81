//! holon-kit: the Rust author kit for Holon agents.
//!
//! - [`check`]: the registry's publish checks on a `holon.yaml`, all problems in one run.
//! - [`gateway`]: the gateway's rules (payload bounds, schemas, statuses) that both test passes
//!   apply.
//! - [`manifest`]: the file format and the checked [`Manifest`].
#![warn(missing_docs)]

#[cfg(feature = "harness")]
mod bless;
pub mod check;
#[cfg(feature = "harness")]
pub(crate) mod explore;
pub mod gateway;
// The harness supervises server process groups, a Unix notion: see `harness::supervise`.
#[cfg(all(feature = "harness", not(unix)))]
compile_error!(
    "the holon-kit harness (the `harness` and `cli` features, `cargo holon-test`) runs on Linux and macOS; on Windows, run it under WSL (the `runtime` feature, what an agent ships, builds on Windows)"
);
#[cfg(all(feature = "harness", unix))]
pub mod harness;
pub mod manifest;
#[cfg(feature = "runtime")]
pub mod runtime;

pub use manifest::Manifest;
#[cfg(feature = "runtime")]
pub use runtime::{Ctx, Failure, ServeError, agent, serve};
#[cfg(all(feature = "cli", unix))]
pub mod cli;
#[cfg(all(feature = "cli", unix))]
pub mod scaffold;

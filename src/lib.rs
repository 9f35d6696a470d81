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
#[cfg(feature = "harness")]
pub mod harness;
pub mod manifest;
#[cfg(feature = "runtime")]
pub mod runtime;

pub use manifest::Manifest;
#[cfg(feature = "runtime")]
pub use runtime::{Ctx, Failure, ServeError, agent, serve};
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod scaffold;

//! The core of holon-kit: a `holon.yaml` manifest read into a located tree, the registry's
//! publish checks over it, and the gateway's rules that every call meets (payload bounds, the
//! two schemas, how a call ends and what an agent's answer settles as).
//!
//! An implementation crate of holon-kit: the runtime, the harness and the command line build
//! on it, and an agent depends on `holon-kit`, whose `check` module re-exports the report API.
//! Its items follow holon-kit's version and make no promise of their own.
//!
//! The modules, lowest first (a module never names one after it): `pointer`, `message` and
//! `ids` (JSON pointers, message helpers, every diagnostic id with its explanation), `json` (equality and size of values), `gateway` (bounds,
//! schemas, statuses, answers), `manifest` (the file format and the checked model), `bump`
//! (two manifests compared: the version each difference needs), `check` (the publish checks,
//! which build the checked `Manifest`, and `--against`'s version rule). A test run's own
//! configuration (`holon-test.toml`, its secrets, the partition) is holon-config's.

pub mod bump;
pub mod check;
pub mod gateway;
pub mod ids;
pub mod json;
pub mod manifest;
pub mod message;
pub mod pointer;

//! The integration tests, in one binary: the real `cargo-holon-test` on fixture manifests and
//! real agent crates, the runtime against official MCP clients, and properties of the checks on
//! arbitrary text.

mod api;
mod bless;
mod check;
mod concurrency;
mod explore;
mod files;
mod hardening;
mod harness;
mod properties;
mod runtime;
mod scaffold;
mod supervision;
mod util;

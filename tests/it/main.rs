//! The integration tests, in one binary: the real `cargo-holon-test` on fixture manifests and
//! real agent crates, the runtime against official MCP clients, and properties of the checks on
//! arbitrary text.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

mod against;
mod api;
mod bless;
mod call;
mod check;
mod concurrency;
mod conformance;
mod crates_io;
mod dist;
mod docs;

mod eras;
mod explain;
mod explore;
mod faults;
mod files;
mod function_mode;
mod hardening;
mod harness;
mod measure;
mod model_templates;
mod partition;
mod properties;
mod recording;
mod reference;
mod remote;
mod report;
mod runtime;
mod runtime_packages;
mod scaffold;
mod settings_file;
mod supervision;
mod tidy;
mod types;
mod upstream;
mod util;
mod watch;
mod workflows;

// The example agent's function, compiled into the tests rather than depended on: the example
// depends on holon-kit, and no crate of the workspace depends on one above it.
#[path = "../../examples/word-stats/src/lib.rs"]
mod word_stats;

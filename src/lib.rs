//! holon-kit: the Rust author kit for Holon agents.
//!
//! A Holon agent is an MCP server with one tool, described by a `holon.yaml` manifest. The
//! registry checks the manifest at publish; a gateway checks every call's input (the gate) and
//! output (the billing rule). This crate gives an author three things.
//!
//! **The runtime** (feature `runtime`), what the agent ships: an async function from its input
//! to its output, served as the one MCP tool.
//!
//! ```no_run
//! use holon_kit::{Ctx, Failure};
//!
//! #[derive(serde::Deserialize)]
//! struct Input { text: String }
//! #[derive(serde::Serialize)]
//! struct Output { words: usize }
//!
//! async fn run(input: Input, ctx: Ctx) -> Result<Output, Failure> {
//!     if input.text.trim().is_empty() {
//!         // A declared failure: its code is listed under `interface.errors`.
//!         return Err(ctx.fail("empty_text", "the text is empty"));
//!     }
//!     Ok(Output { words: input.text.split_whitespace().count() })
//! }
//!
//! fn main() -> Result<(), holon_kit::ServeError> {
//!     // `PORT` and `HOST` from the environment; the manifest embedded at build time
//!     // (`manifest!()` reads the package's own `holon.yaml`).
//!     let manifest = holon_kit::manifest!("examples/word-stats/holon.yaml");
//!     holon_kit::serve(manifest, holon_kit::agent(run))
//! }
//! ```
//!
//! [`Ctx`] carries the call ([`Ctx::fail`] for declared failures, `ctx.download` for file
//! handles); anything else that goes wrong (a panic, an undeclared code, arguments the type
//! refuses) reaches the caller as `agent_crashed`. [`serve`] refuses a manifest the registry
//! would refuse, and holds up on an open network (bounded reads, a connection cap, a drain on
//! SIGTERM).
//!
//! **The harness** (feature `harness`, a dev-dependency): `tests/holon.rs` turns every example
//! into trials, `function::<name>` in-process and `mcp::<name>` through the real server, plus
//! `explore::function` and `explore::mcp` over inputs generated from `interface.input`, all
//! judged by the gateway's rules. See `harness::Harness`.
//!
//! **`cargo holon-test`** (feature `cli`, the binary): the publish checks ([`check`]), then the
//! test target; `--server-cmd` tests a server in any language; `--bless` writes the agent's
//! actual answers into the examples; `new` scaffolds an agent; `schema` prints the manifest's
//! JSON Schema for editors. The README is the manual.
//!
//! The public API is those three parts and nothing else: the runtime's items at the crate's
//! root, [`harness::Harness`], and [`check`]'s report for tools that run the publish checks
//! themselves. Everything else is the crate's own. Inside, a manifest goes through `manifest`
//! (the file format and the checked model), `check` (the publish checks, all problems in one
//! run), `gateway` (payload bounds, schemas, statuses: the rules both passes apply), then
//! `runtime` and `harness`; ARCHITECTURE.md walks through them.
#![warn(missing_docs)]
// The checks, the runtime and the harness share the manifest model and the gateway's rules, so
// a build with fewer features compiles parts only the others use. Dead code is judged on the
// full build (`cli`, the default), which the tests and clippy run.
#![cfg_attr(not(feature = "cli"), allow(dead_code, unused_imports))]

#[cfg(feature = "harness")]
mod bless;
pub mod check;
#[cfg(feature = "harness")]
mod exit;
#[cfg(feature = "harness")]
mod explore;
mod gateway;
// The harness supervises server process groups, a Unix notion: see `harness::supervise`.
#[cfg(all(feature = "harness", not(unix)))]
compile_error!(
    "the holon-kit harness (the `harness` and `cli` features, `cargo holon-test`) runs on Linux and macOS; on Windows, run it under WSL (the `runtime` feature, what an agent ships, builds on Windows)"
);
#[cfg(all(feature = "harness", unix))]
pub mod harness;
mod manifest;
mod message;
mod pointer;
#[cfg(feature = "runtime")]
mod runtime;

#[cfg(feature = "runtime")]
pub use runtime::{
    Agent, AgentFuture, Ctx, DownloadError, EmbeddedManifest, Failure, ServeError, agent, serve,
};

// The binary's entry point: `src/main.rs` is one call to `cli::main`.
#[doc(hidden)]
#[cfg(all(feature = "cli", unix))]
pub mod cli;
#[cfg(all(feature = "cli", unix))]
mod scaffold;

#[doc(hidden)]
#[cfg(all(feature = "harness", unix))]
pub mod seam;

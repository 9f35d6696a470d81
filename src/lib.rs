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
//! JSON Schema for editors. The guide (`docs/`) is the manual.
//!
//! The public API is those three parts and nothing else: the runtime's items at the crate's
//! root, [`harness::Harness`], and [`check`]'s report for tools that run the publish checks
//! themselves. They are re-exported from the crates of the workspace, one per role:
//! `holon-re2` (the RE2 syntax check), `holon-core` (the manifest, the publish checks, the
//! gateway's rules), `holon-runtime`, `holon-harness` and `holon-cli` (the command line);
//! ARCHITECTURE.md walks through them. Depend on this crate, not on those: their items follow
//! its version and make no promise of their own.
// The facade of the workspace: only re-exports, each of an item the guide teaches.

/// The publish checks, for a tool that runs them itself (an editor plugin, a registry mirror):
/// with `default-features = false`, the crate is this module and nothing else.
///
/// ```no_run
/// let report = holon_kit::check::check_file(std::path::Path::new("holon.yaml"));
/// for d in &report.diagnostics {
///     println!("{}:{}:{} {} {}", report.path.display(), d.line, d.column, d.check, d.message);
/// }
/// if !report.accepted() {
///     eprint!("{}", holon_kit::check::render_human(&report, false));
/// }
/// println!("{}", holon_kit::check::render_json(&report));
/// ```
pub mod check {
    #[doc(inline)]
    pub use holon_core::check::{
        Diagnostic, Report, Severity, check_file, render_human, render_json,
    };
}

#[cfg(feature = "runtime")]
#[doc(inline)]
pub use holon_runtime::{
    Agent, AgentFuture, Ctx, DownloadError, EmbeddedManifest, Failure, ServeError, agent, manifest,
    serve,
};

/// The test harness (feature `harness`): `tests/holon.rs` builds a [`harness::Harness`] and
/// runs it.
#[cfg(feature = "harness")]
pub mod harness {
    #[doc(inline)]
    pub use holon_harness::Harness;
}

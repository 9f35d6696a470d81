//! The runtime an author ships: `Ctx`, `Failure`, and `serve`, which exposes one agent function
//! as an MCP server with exactly one tool.
//!
//! An implementation crate of holon-kit: an agent depends on `holon-kit` with the `runtime`
//! feature, which re-exports what the guide teaches (`Ctx`, `Failure`, `Agent`, `agent`,
//! `serve`, `manifest!`...). The rest of what is public here (`Runner`, `Server`, `files`) is
//! for the harness above it; its items follow holon-kit's version and make no promise of their
//! own.
//!
//! In the order a call meets them: `config` and `embed` (what the server starts from), `server`
//! (connections), `endpoint` (the HTTP request and its JSON-RPC message), `tool` (the MCP
//! tool), `run` (the call itself), `agent`, `ctx`, `failure` and `files` (what the author's
//! function sees).

mod agent;
mod config;
mod connections;
mod ctx;
mod embed;
mod endpoint;
mod error;
mod failure;
pub mod files;
mod run;
mod serve;
mod server;
mod tool;

pub use agent::{Agent, AgentFuture, agent};
pub use ctx::Ctx;
pub use embed::EmbeddedManifest;
pub use error::ServeError;
pub use failure::Failure;
pub use files::DownloadError;
pub use run::Runner;
pub use serve::serve;
pub use server::{Server, max_request_body_bytes};
pub use tool::output_schema;

#[doc(hidden)]
pub mod seam;

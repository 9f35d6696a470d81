//! The runtime an author ships: `Ctx`, `Failure`, and `serve`, which exposes one agent function
//! as an MCP server with exactly one tool. In the order a call meets them: `config` and
//! `embed` (what the server starts from), `server` (connections), `endpoint` (the HTTP request
//! and its JSON-RPC message), `tool` (the MCP tool), `run` (the call itself), `agent`, `ctx`,
//! `failure` and `files` (what the author's function sees).

mod agent;
mod config;
mod connections;
mod ctx;
mod embed;
mod endpoint;
mod failure;
pub(crate) mod files;
mod run;
mod serve;
mod server;
mod tool;

pub use agent::{Agent, AgentFuture, agent};
pub use ctx::Ctx;
pub use embed::EmbeddedManifest;
pub use failure::Failure;
pub use files::DownloadError;
pub(crate) use run::Runner;
pub use serve::{ServeError, serve};
pub use server::Server;
pub(crate) use server::max_request_body_bytes;
pub(crate) use tool::output_schema;

//! The runtime an author ships: `Ctx`, `Failure`, and `serve`, which exposes one agent function
//! as an MCP server with exactly one tool.

mod agent;
mod connections;
mod ctx;
mod endpoint;
mod failure;
pub mod files;
mod limits;
pub mod run;

pub use agent::{Agent, AgentFuture, agent};
pub use ctx::Ctx;
pub use failure::Failure;
pub use limits::ServerLimits;
pub use run::{Answer, Runner};
mod serve;

pub use serve::{
    EmbeddedManifest, ServeError, ServeOptions, Server, max_request_body_bytes, output_schema,
    result, serve, serve_async, tool,
};

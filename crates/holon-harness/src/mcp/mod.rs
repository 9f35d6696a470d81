//! The MCP pass, by job: the server's life (`server`: started on a free port or already
//! running, connected once, stopped), the calls in flight (`calls`: `tools/list` and every
//! example's `tools/call` sent ahead of the trials, up to N at once, a call that failed among
//! others tried again alone), the client's errors in words (`words`), `tools/list` held to the
//! manifest (`tools`), and the pass as a `Caller` with its own trials (`pass`).

mod calls;
mod pass;
mod server;
mod tools;
mod words;

pub(crate) use pass::McpPass;
pub(crate) use server::ServerAt;

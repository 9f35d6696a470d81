//! The MCP pass, by job: the server's life (`server`: started on a free port or already running,
//! opened once in each era the run tests, stopped), which eras it speaks and how each is opened
//! (`eras`: `server/discover` with the envelope and the headers, `initialize`, the fallback
//! between them and what each refusal means), the calls in flight in one era (`calls`:
//! `tools/list` and every example's `tools/call` sent ahead of the trials, up to N at once, a
//! call that failed among others tried again alone), the client's errors in words (`words`),
//! `tools/list` held to the manifest (`tools`), and the pass in one era as a `Caller` with its
//! own trials (`pass`).

mod alone;
mod calls;
mod eras;
mod pass;
mod server;
mod tools;
mod words;

pub(crate) use eras::{OPENING, Opened, Target, open as open_era};
pub(crate) use pass::McpPass;
pub(crate) use server::{Server, ServerAt};

//! The recordings of an agent's upstreams, as files beside the manifest (`recordings/`), one
//! per example and one for explore: a form made for review in a pull request. JSON bodies are
//! structured data, not escaped strings; an SSE answer is written one event a line, after what
//! its text fields say put together; a binary body is base64; keys come in a fixed order, and an
//! answer that differs from the recorded one only in the fields a service makes new for every
//! answer (`volatile`) is the recorded one, so re-recording an agent whose upstream answers the
//! same leaves the files byte for byte. Reading a file that does not parse, or was edited into
//! an impossible state, is refused with its problems located (file, line, column).
//!
//! The modules, lowest first: `stream` (a stream's text fields put together), `format` (what a
//! recording holds, and its text), `volatile` (what two recordings of one answer may differ in)
//! and `read` (the files read back).

mod format;
mod read;
mod stream;
mod volatile;

pub use format::{Body, Event, Exchange, FOLDER, Recording, Request, Response, Scope, slug};
pub use read::{Folder, Read, any_recorded, parse, read_all, read_folder};
pub use stream::pieces;
pub use volatile::{VOLATILE, equivalent};

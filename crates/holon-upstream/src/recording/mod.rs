//! The recordings of an agent's upstreams, as files beside the manifest (`recordings/`), one
//! per example and one for explore: a form made for review in a pull request. JSON bodies are
//! structured data, not escaped strings; an SSE answer is written event by event; a binary body
//! is base64; keys come in a fixed order, so re-recording an agent whose upstream answers the
//! same is an empty diff. Reading a file that does not parse, or was edited into an impossible
//! state, is refused with its problems located (file, line, column).

mod format;
mod read;

pub use format::{Body, Event, Exchange, FOLDER, Recording, Request, Response, Scope, slug};
pub use read::{Read, any_recorded, parse, read_all};

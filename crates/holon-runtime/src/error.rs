//! Why a server could not start, or stopped with an error.

use std::fmt;

/// Why the server could not start or stopped with an error.
#[derive(thiserror::Error)]
pub enum ServeError {
    /// The manifest fails the publish checks; the rendered diagnostics follow.
    #[error("the manifest was refused:\n{0}")]
    Refused(String),
    /// The environment is not usable: `PORT`, `HOST`, `HOLON_MANIFEST` or a `HOLON_*` limit.
    #[error("{0}")]
    Config(String),
    /// Binding or serving failed.
    #[error("cannot serve on {addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
}

// `fn main() -> Result<(), ServeError>` prints the Debug form: make it the readable one.
impl fmt::Debug for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

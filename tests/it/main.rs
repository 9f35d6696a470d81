//! The integration tests, in one binary: the real `cargo-holon-test` on fixture manifests and
//! real agent crates, properties of the checks on arbitrary text, and the runtime against the
//! official MCP SDKs and every bad input.

mod check;
mod files;
mod properties;
mod runtime;
mod scaffold;
mod util;

//! The integration tests, in one binary: the real `cargo-holon-test` on fixture manifests and
//! real agent crates, and properties of the checks on arbitrary text.

mod check;
mod files;
mod properties;
mod scaffold;
mod util;

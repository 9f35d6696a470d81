//! The integration tests, in one binary: the real `cargo-holon-test` on fixture manifests, and
//! properties of the checks on arbitrary text.

mod check;
mod properties;
mod util;

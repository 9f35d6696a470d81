//! The integration tests: the real CLI on fixture manifests and real agent crates.

mod files;
mod scaffold;

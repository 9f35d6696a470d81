//! Where the project is and the binary under test, for the tests and the benchmarks alike.
#![allow(
    dead_code,
    reason = "each benchmark that includes this file uses a different part of it"
)]

use std::path::PathBuf;

/// The `cargo-holon-test` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_cargo-holon-test");

/// The same program as `holon-test`, the name the wheel and the npm packages install.
pub const PLAIN_BIN: &str = env!("CARGO_BIN_EXE_holon-test");

/// The crate's root folder, which is also the workspace's.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

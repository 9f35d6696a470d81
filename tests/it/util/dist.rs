//! An author's machine: a child environment with node, npm and python on its PATH but no Rust
//! toolchain, a home of its own, and nothing of this process's cargo variables.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{OutputWithin, root, text};

/// An author's machine without Rust: a PATH holding node, npm, npx, python and uv (from the
/// interop folder) but no `cargo`, `rustc` or `rustup`, and a home folder of its own (no
/// `~/.npmrc`, no caches). Every command it makes starts from an empty environment.
pub struct Machine {
    home: tempfile::TempDir,
    path: OsString,
}

/// Programs an author has; each is found on this process's PATH.
const TOOLS: [&str; 5] = ["node", "npm", "npx", "sh", "tar"];

/// Programs of the Rust toolchain: a folder holding one is left off the PATH.
const RUST: [&str; 3] = ["cargo", "rustc", "rustup"];

/// Variables passed through, so a machine behind a proxy or with a private CA still reaches
/// the registries.
const PASSED: [&str; 8] = [
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
];

impl Machine {
    /// A new machine; fails the test when a tool is missing or a Rust program is still on its
    /// PATH.
    pub fn new() -> Machine {
        let home = tempfile::tempdir().expect("a home folder");
        let shims = home.path().join(".shims");
        std::fs::create_dir(&shims).expect("a folder of links");
        let ours = std::env::var_os("PATH").unwrap_or_default();
        let kept: Vec<PathBuf> = std::env::split_paths(&ours)
            .filter(|dir| !RUST.iter().any(|p| dir.join(p).exists()))
            .collect();
        let link = |name: &str, to: &Path| {
            std::os::unix::fs::symlink(to, shims.join(name)).expect("a link");
        };
        for tool in TOOLS {
            let found = std::env::split_paths(&ours)
                .map(|dir| dir.join(tool))
                .find(|p| p.is_file())
                .unwrap_or_else(|| panic!("`{tool}` is not on PATH"));
            // A tool that lives beside cargo (a folder left off) is linked in on its own.
            if !kept.iter().any(|dir| found.parent() == Some(dir.as_path())) {
                link(tool, &found);
            }
        }
        let python = interpreter();
        link("python3", &python);
        link("python", &python);
        let uv = root().join("target/interop/python/bin");
        for tool in ["uv", "uvx"] {
            assert!(
                uv.join(tool).is_file(),
                "no `{tool}` in `{}`: run `bash .ci/setup-interop`",
                uv.display()
            );
            link(tool, &uv.join(tool));
        }
        let path = std::env::join_paths(std::iter::once(shims).chain(kept)).expect("a PATH");
        let machine = Machine { home, path };
        // The proof: no Rust program is reachable, and node and python are.
        let rust = machine
            .command("sh")
            .args([
                "-c",
                "command -v cargo || command -v rustc || command -v rustup",
            ])
            .output_within(super::RUN_LIMIT);
        assert!(
            !rust.status.success(),
            "a Rust program is on the machine's PATH: {}",
            text(&rust)
        );
        for tool in ["node", "npm", "python3", "uv"] {
            let found = machine
                .command(tool)
                .arg("--version")
                .output_within(super::RUN_LIMIT);
            assert!(found.status.success(), "{tool}: {}", text(&found));
        }
        machine
    }

    /// The machine's home folder.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// `program` on this machine: its PATH, its home, colour off, nothing else of ours.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.home.path())
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            // A fresh machine's npm, not this one's `~/.npmrc`.
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_audit", "false")
            .env("UV_PYTHON_DOWNLOADS", "never");
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            c.env("TMPDIR", tmp);
        }
        for name in PASSED {
            if let Some(value) = std::env::var_os(name) {
                c.env(name, value);
            }
        }
        c
    }
}

/// The Python interpreter itself (not a version manager's shim, which needs its own setup).
pub fn interpreter() -> PathBuf {
    let out = Command::new(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()))
        .args(["-c", "import sys; print(sys.executable)"])
        .output_within(super::RUN_LIMIT);
    assert!(out.status.success(), "python3: {}", text(&out));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

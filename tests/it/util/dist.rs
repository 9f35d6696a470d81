//! The prebuilt packages `bash .ci/dist` writes into `target/dist` (the wheel, the npm launcher
//! and this platform's npm package, the release archive, the runtime packages), and an author's machine to install
//! them on: a child environment with node, npm and python on its PATH but no Rust toolchain, a
//! home of its own, and nothing of this process's cargo variables.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{OutputWithin, root, text};

/// The packages of one `.ci/dist` run.
pub struct Dist {
    /// `target/dist`.
    pub dir: PathBuf,
    /// `holon_test-VERSION-py3-none-PLATFORM.whl`.
    pub wheel: PathBuf,
    /// `holon-test-VERSION.tgz`, the npm launcher.
    pub launcher: PathBuf,
    /// `holon-kit-holon-test-OS-CPU-VERSION.tgz`, this platform's npm package.
    pub platform: PathBuf,
    /// `holon-kit-TARGET.tar.gz`, what `cargo binstall` takes.
    pub archive: PathBuf,
    /// `holon-kit-VERSION.tgz`, the TypeScript runtime package.
    pub runtime_npm: PathBuf,
    /// `holon_kit-VERSION-py3-none-any.whl`, the Python runtime package.
    pub runtime_wheel: PathBuf,
}

/// The packages in `target/dist`. A test that needs them fails, naming the command that builds
/// them, when they are missing or were built from other sources than the work tree's (a stale
/// binary would test old code and pass or fail for nothing).
pub fn dist() -> Dist {
    let dir = root().join("target/dist");
    let build = "run `bash .ci/dist` first: it builds them (the README's test command does)";
    let stamp = std::fs::read_to_string(dir.join("SOURCE"))
        .unwrap_or_else(|_| panic!("no prebuilt packages in `{}`: {build}", dir.display()));
    let now = Command::new("bash")
        .arg(root().join("dist/fingerprint.sh"))
        .output_within(super::RUN_LIMIT);
    assert!(now.status.success(), "dist/fingerprint.sh: {}", text(&now));
    assert_eq!(
        stamp.trim(),
        String::from_utf8_lossy(&now.stdout).trim(),
        "the packages in `{}` were built from other sources than the work tree's: {build}",
        dir.display()
    );
    let one = |what: &str, matches: &dyn Fn(&str) -> bool| {
        let found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("target/dist")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(OsStr::to_str).is_some_and(matches))
            .collect();
        assert_eq!(found.len(), 1, "{what} in `{}`: {found:?}", dir.display());
        found.into_iter().next().expect("one")
    };
    Dist {
        wheel: one("one wheel of holon-test", &|n| {
            n.starts_with("holon_test-") && n.ends_with(".whl")
        }),
        runtime_wheel: one("one wheel of holon-kit", &|n| {
            n.starts_with("holon_kit-") && n.ends_with("-py3-none-any.whl")
        }),
        runtime_npm: one("one npm runtime package", &|n| {
            n.starts_with("holon-kit-")
                && n.ends_with(".tgz")
                && n["holon-kit-".len()..].starts_with(|c: char| c.is_ascii_digit())
        }),
        launcher: one("one npm launcher", &|n| {
            n.starts_with("holon-test-") && n.ends_with(".tgz")
        }),
        platform: one("one platform package", &|n| {
            n.starts_with("holon-kit-holon-test-") && n.ends_with(".tgz")
        }),
        archive: one("one release archive", &|n| {
            n.starts_with("holon-kit-") && n.ends_with(".tar.gz")
        }),
        dir,
    }
}

/// An author's machine without Rust: a PATH holding node, npm, npx, python and uv (from the
/// interop folder) but no `cargo`, `rustc` or `rustup`, and a home folder of its own (no
/// `~/.npmrc`, no caches). Every command it makes starts from an empty environment.
pub struct Machine {
    home: tempfile::TempDir,
    path: OsString,
}

/// Programs an author has; each is found on this process's PATH (`node` is Node 22, below).
const TOOLS: [&str; 4] = ["npm", "npx", "sh", "tar"];

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
        // Node 22 as the author's `node` (npm and npx run on it too): the TypeScript template
        // runs its `.ts` files as they are, which Node 22.18 and later do.
        link("node", &super::paths::node22());
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

/// A file of a gzipped npm tarball (`package/package.json`), as JSON.
pub fn tarball_json(tarball: &Path, file: &str) -> serde_json::Value {
    let out = Command::new("tar")
        .arg("-xzOf")
        .arg(tarball)
        .arg(format!("package/{file}"))
        .output_within(super::RUN_LIMIT);
    assert!(
        out.status.success(),
        "{}: {}",
        tarball.display(),
        text(&out)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

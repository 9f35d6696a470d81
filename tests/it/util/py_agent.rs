//! word-stats served by the official Python MCP SDK (`tests/fixtures/servers/py_server.py`), in
//! a folder of its own as an author has it: `holon.yaml`, the server's source as `server.py`,
//! and `holon-test.toml` whose `[server] command` starts it. The binary runs there as
//! `holon-test`, with no flag naming the server.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{PLAIN_BIN, root};

/// An agent folder.
pub struct PyAgent {
    dir: tempfile::TempDir,
    /// Its `MODE` (`ok`, or one of `py_server.py`'s defects).
    pub mode: String,
}

impl PyAgent {
    /// word-stats' manifest (`tests/fixtures/harness/word-stats.yaml`) and its Python server in
    /// `MODE=mode`.
    pub fn new(mode: &str) -> PyAgent {
        PyAgent::with_manifest(
            &std::fs::read_to_string(root().join("tests/fixtures/harness/word-stats.yaml"))
                .expect("word-stats' manifest"),
            mode,
        )
    }

    /// `manifest` as `holon.yaml`, and the Python server in `MODE=mode`.
    pub fn with_manifest(manifest: &str, mode: &str) -> PyAgent {
        let python = root().join("target/interop/python");
        assert!(
            python.join("mcp").is_dir(),
            "the official Python MCP SDK is not in `{}`: run `.ci/setup-interop` first",
            python.display()
        );
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(dir.path().join("holon.yaml"), manifest).expect("the manifest");
        std::fs::copy(
            root().join("tests/fixtures/servers/py_server.py"),
            dir.path().join("server.py"),
        )
        .expect("the server");
        std::fs::write(
            dir.path().join("holon-test.toml"),
            "[server]\ncommand = \"python3 server.py\"\n",
        )
        .expect("holon-test.toml");
        PyAgent {
            dir,
            mode: mode.to_string(),
        }
    }

    /// The agent's folder.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `holon.yaml`'s path.
    pub fn manifest(&self) -> PathBuf {
        self.dir.path().join("holon.yaml")
    }

    /// `holon-test ARGS` in the agent's folder, with explore off (a test that wants it says
    /// `--explore-cases N`), in the server's newest era, colour off.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(PLAIN_BIN);
        command
            .current_dir(self.dir.path())
            .args(args)
            .env("PYTHONPATH", root().join("target/interop/python"))
            .env("MODE", &self.mode)
            .env("NO_COLOR", "1")
            .env("HOLON_EXPLORE_CASES", "0")
            .env("HOLON_PROTOCOL", "2025-11-25")
            .env_remove("HOLON_UPSTREAM")
            .env_remove("HOLON_REPORT")
            .env_remove("HOLON_RECEIPTS");
        command
    }
}

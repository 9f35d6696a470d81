//! What every integration test shares, from one place: where the project is and the binary under
//! test ([`paths`]), the one watchdog that runs a process under a deadline ([`running`]), the
//! example agents built by cargo and served as real processes ([`agent`]), a server in front of
//! one as a deployment has ([`front`]), `check` run through
//! the binary with its report asserted on ([`outcome`]), and the prebuilt packages with an
//! author's machine to install them on ([`dist`]), a registry that serves them ([`registry`]),
//! and the runtime packages installed for the agents the tests run ([`runtime_packages`]).

pub mod agent;
pub mod browser;
pub mod dist;
pub mod fake_model;
pub mod front;
pub mod outcome;
pub mod paths;
pub mod py_agent;
pub mod registry;
pub mod running;
pub mod runtime_packages;
pub mod seam;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub use agent::{
    AgentProcess, broken_agent_binary, free_port, ticket_triage_binary, word_stats_binary,
};
pub use outcome::{check, check_arg, check_file, fixtures, human, normalise, one_document};
pub use paths::{BIN, PLAIN_BIN, cargo, root};
pub use running::{Finished, OutputWithin, Running, output_within_async, wait_until};

/// Longest a run of the binary that builds nothing may take (a `--server-cmd` run of the Python
/// server takes a few seconds): generous, because a hang is one of the bugs these tests catch.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);
/// Long enough for a cold nested `cargo build` on a busy two-core machine; only a hang gets there.
pub const CARGO_LIMIT: Duration = Duration::from_secs(900);

/// Runs the binary in `dir` with colour off, failing the test if it runs past [`RUN_LIMIT`].
pub fn run<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT)
}

/// The exit code, failing the test if the process was killed by a signal (a crash).
pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or_else(|| {
        panic!(
            "killed by a signal: {:?}\n{}",
            output.status,
            stderr(output)
        )
    })
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard output then standard error, as text.
pub fn text(output: &Output) -> String {
    format!("{}{}", stdout(output), stderr(output))
}

/// word-stats' manifest (`tests/fixtures/harness/word-stats.yaml`, what most runs test) with
/// `from` replaced by `to`, as `holon.yaml` in a folder of its own. `from` must be in it: a
/// variant that changes nothing would test the fixture instead.
pub fn word_stats_with(from: &str, to: &str) -> (tempfile::TempDir, PathBuf) {
    let source = root().join("tests/fixtures/harness/word-stats.yaml");
    let text = std::fs::read_to_string(&source).expect("word-stats' manifest");
    assert!(
        text.contains(from),
        "`{from}` is not in `{}`",
        source.display()
    );
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("holon.yaml");
    std::fs::write(&path, text.replace(from, to)).expect("the variant");
    (dir, path)
}

//! What the command line (`holon-cli`) drives: the checks a test run starts with, a
//! `--server-cmd` run with the command line's settings on top, `cargo test` under a watcher,
//! and the parsers and variables the command line shares with the test target. Not part of
//! holon-kit's API: `holon_kit::harness` re-exports [`crate::Harness`] only.

use std::path::Path;
use std::process::{Command, ExitStatus};

use libtest_mimic::Arguments;

use crate::Harness;
use crate::settings::Layer;
use holon_core::check::Report;

pub use crate::era::{Era, PROTOCOL_VAR, Protocol, parse_protocol};
pub use crate::error::{AddressError, SettingError};
pub use crate::provenance::{RevisionError, read_revision};
pub use crate::remote::{Header, parse_header, parse_url};
pub use crate::settings::{
    BLESS_VAR, CHECKS_SHOWN, CONCURRENCY_VAR, EXPLORE_CASES_VAR, EXPLORE_SEED_VAR, FAULTS_VAR,
    FORCE_VAR, JUNIT_VAR, MAX_CALLS_VAR, MIN_STRICT_SUCCESS_RATE_VAR, MIN_SUCCESS_RATE_VAR,
    PARTITION_VAR, RECEIPTS_VAR, REPEAT_VAR, SERVER_URL_VAR, STARTUP_VAR, parse_concurrency,
    parse_max_calls, parse_partition, parse_rate, parse_repeat, parse_seconds, parse_switch,
    shell_quote,
};
pub use holon_explore::{parse_cases, parse_seed};
pub use holon_upstream::{MODE_VAR as UPSTREAM_VAR, Mode as UpstreamMode, parse_mode};

/// The checks a test run starts with, as the command line prints them before the run: the
/// warnings the trials may answer are held back, and the run prints them after; under
/// `--bless`, an example output the schema no longer admits is a difference to write, not a
/// refusal (`holon_core::check::for_bless`).
pub fn checks(path: &Path, bless: bool) -> Report {
    crate::checks::checks(path, bless).0
}

/// The settings a command line gave: they win over the environment and the harness's own.
pub type CommandLine = Layer;

/// How a run the command line drives prints itself: `program` is the command as the author
/// runs the kit (a hint names its `explain`), `replay` the command line that runs it again
/// (explore's reports add the seed and the trial).
pub struct Words {
    /// `cargo holon-test`, `holon-test`, or however the author runs it.
    pub program: String,
    /// The command line that runs it again.
    pub replay: String,
}

/// A `--server-cmd` run: the publish checks' warnings were printed already.
pub fn run_server_command(
    manifest: &Path,
    server: String,
    given: CommandLine,
    words: Words,
    args: &Arguments,
) -> u8 {
    let mut harness = Harness::new(manifest).server_command(server);
    harness.command_line = given;
    harness.replay = Some(words.replay);
    harness.program = words.program;
    harness.checks_shown = true;
    harness.run_code(args)
}

/// A `--url` run: the MCP pass against the server already running at `url`, reached with
/// `headers` (their `${VAR}`s read already) and trusting `ca_cert` beside the platform's roots;
/// nothing is started or stopped, and explore is off unless the command line or
/// `HOLON_EXPLORE_CASES` asks for it (every call may cost money). The replay line of `words`
/// shows its headers as `NAME: ***`.
pub fn run_url(
    manifest: &Path,
    url: String,
    (headers, ca_cert): (Vec<Header>, Option<std::path::PathBuf>),
    mut given: CommandLine,
    words: Words,
    args: &Arguments,
) -> u8 {
    let mut harness = Harness::new(manifest).explore_cases(0);
    given.server_url = Some(url);
    harness.command_line = given;
    harness.replay = Some(words.replay);
    harness.program = words.program;
    harness.remote = (headers, ca_cert);
    harness.checks_shown = true;
    harness.run_code(args)
}

/// Runs a command in a process group of its own with a watcher, so that if this process is
/// killed (SIGKILL included), the command and everything it started end too; whatever is left
/// in the group when the command exits ends with it.
pub fn supervised_status(command: &mut Command) -> std::io::Result<ExitStatus> {
    let (mut child, mut group) = crate::supervise::spawn(command)?;
    let status = child.wait();
    group.end();
    status
}

/// Where the command line's run writes its JUnit report: `--junit`, else `HOLON_JUNIT`.
pub fn junit_path(given: Option<&Path>) -> Option<std::path::PathBuf> {
    crate::settings::junit_of(
        &Layer {
            junit: given.map(Path::to_path_buf),
            ..Layer::default()
        },
        &Layer::default(),
    )
}

/// The JUnit report of a run that stopped at the checks of `manifest` (or of its
/// `holon-test.toml`): one failing `testcase` per error of `report`. A report that cannot be
/// written is said on one line, and its exit code returned.
pub fn junit_refused(
    path: &Path,
    manifest: &Path,
    report: &Report,
    program: &str,
) -> Result<(), u8> {
    crate::junit::write_refused(path, &crate::junit::agent_of(manifest), report)
        .map_err(|e| crate::error::RunError::from(e).report(false, program))
}

/// True inside a GitHub Actions job: diagnostics are also printed as workflow commands.
pub fn github_enabled() -> bool {
    crate::github::enabled()
}

/// Every diagnostic of `report` as a GitHub workflow command, a line each, the hints naming
/// `program`'s `explain`.
pub fn github_render(report: &Report, program: &str) -> String {
    crate::github::render_check(report, program)
}

/// Runs a harness with explicit libtest arguments and returns its exit code, as
/// [`Harness::run`] does with the process's own.
pub fn run_with_arguments(harness: Harness, args: &Arguments) -> u8 {
    harness.run_code(args)
}

//! What the command line (`holon-cli`) drives: the checks a test run starts with, a
//! `--server-cmd` run with the command line's settings on top, `cargo test` under a watcher,
//! and the parsers and variables the command line shares with the test target. Not part of
//! holon-kit's API: `holon_kit::harness` re-exports [`crate::Harness`] only.

use std::path::Path;
use std::process::{Command, ExitStatus};

use libtest_mimic::Arguments;

use crate::Harness;
use crate::reporter::{Event, say};
use crate::settings::Layer;
use holon_core::check::{self, Report};

pub use crate::call::{CALL_VAR, Spec as CallSpec};
pub use crate::defs::{DEFS, Def, file_keys, reference_table};
pub use crate::era::{Era, PROTOCOL_VAR, Protocol, parse_protocol};
pub use crate::error::{AddressError, SettingError};
pub use crate::provenance::{RevisionError, read_revision};
pub use crate::remote::{Header, parse_header, parse_url};
pub use crate::settings::{
    BLESS_VAR, CHECKS_SHOWN, CONCURRENCY_VAR, EXPLORE_CASES_VAR, EXPLORE_SEED_VAR, FAULTS_VAR,
    FORCE_VAR, JUNIT_VAR, MAX_CALLS_VAR, MIN_STRICT_SUCCESS_RATE_VAR, MIN_SUCCESS_RATE_VAR,
    PARTITION_VAR, RECEIPTS_VAR, REPEAT_VAR, REPORT_VAR, SERVER_URL_VAR, STARTUP_VAR,
    parse_concurrency, parse_max_calls, parse_partition, parse_rate, parse_repeat, parse_seconds,
    parse_switch, shell_quote,
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

/// `holon-test.toml` in `dir`, read as a run reads it: its tables, then each setting's value as
/// its flag parses it; the report of every problem, each at its line, when it is refused.
pub fn read_config(dir: &Path) -> Result<Option<holon_config::TestConfig>, Report> {
    let config = holon_config::read(dir, crate::defs::file_keys())?;
    crate::config_layer::layer(config.as_ref())?;
    Ok(config)
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

/// A harness of `manifest` on the server `server` starts, and with `function`, the command of
/// the adapter's function mode (`[server] function`), as its agent function.
fn on_server(manifest: &Path, (server, function): (String, Option<String>)) -> Harness {
    let mut harness = Harness::new(manifest).server_command(server);
    if let Some(function) = function {
        let adapter = crate::adapter::Adapter::new(function, manifest);
        harness.agent = Some(std::sync::Arc::new(adapter.clone()));
        harness.adapter = Some(adapter);
    }
    harness
}

/// A `--server-cmd` run: the publish checks' warnings were printed already. With `function`,
/// the command of the adapter's function mode (`[server] function`), the function pass runs
/// first, through it.
pub fn run_server_command(
    manifest: &Path,
    (server, function): (String, Option<String>),
    given: CommandLine,
    words: Words,
    args: &Arguments,
) -> u8 {
    let mut harness = on_server(manifest, (server, function));
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

/// `holon-test call` on the server `server` starts (a `--server-cmd`, or `[server] command`),
/// with the command line's settings on top: one call, said; the exit code.
pub fn call_server_command(
    manifest: &Path,
    (server, function): (String, Option<String>),
    given: CommandLine,
    program: String,
    spec: &CallSpec,
) -> u8 {
    let mut harness = on_server(manifest, (server, function));
    harness.command_line = given;
    harness.program = program;
    harness.call_code(spec)
}

/// `holon-test call --url URL`: one call to the server already running there, reached with
/// `headers` and trusting `ca_cert`, as [`run_url`] reaches it.
pub fn call_url(
    manifest: &Path,
    url: String,
    (headers, ca_cert): (Vec<Header>, Option<std::path::PathBuf>),
    mut given: CommandLine,
    program: String,
    spec: &CallSpec,
) -> u8 {
    let mut harness = Harness::new(manifest);
    given.server_url = Some(url);
    harness.command_line = given;
    harness.program = program;
    harness.remote = (headers, ca_cert);
    harness.call_code(spec)
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

/// A command running in a watched process group of its own, as [`supervised_status`] runs
/// one, that a Ctrl-C or SIGTERM to this process stops too (see [`stop_on_signal`]): a run
/// under `--watch`. Dropping it ends the group.
pub struct Supervised {
    child: std::sync::Arc<std::sync::Mutex<std::process::Child>>,
    group: crate::supervise::Group,
}

impl Supervised {
    /// Starts `command` in a group of its own, with its watcher.
    pub fn spawn(command: &mut Command) -> std::io::Result<Supervised> {
        let (child, group) = crate::supervise::spawn(command)?;
        let child = std::sync::Arc::new(std::sync::Mutex::new(child));
        crate::process::register(group.id(), child.clone());
        Ok(Supervised { child, group })
    }

    /// The command's exit status, once it has exited.
    pub fn try_wait(&self) -> Option<ExitStatus> {
        let mut child = self.child.lock().ok()?;
        child.try_wait().ok().flatten()
    }

    /// Asks every process of the group to stop (SIGTERM): the command ends as it would on
    /// Ctrl-C, stopping what it started.
    pub fn terminate(&self) {
        crate::supervise::terminate(self.group.id());
    }

    /// Ends the whole group at once (SIGKILL) and reaps the command; the exit status.
    pub fn end(&mut self) -> Option<ExitStatus> {
        crate::process::unregister(self.group.id());
        self.group.end();
        let mut child = self.child.lock().ok()?;
        let _ = child.kill();
        child.wait().ok()
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        let _ = self.end();
    }
}

/// On Ctrl-C or SIGTERM, every [`Supervised`] group and every server this process started is
/// stopped (SIGTERM, a moment, SIGKILL), then the process ends as the signal would have ended
/// it (130, 143). Once per process.
pub fn stop_on_signal() {
    crate::process::stop_all_on_signal();
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

/// `holon-test report RECEIPTS...`: the receipts `files` read as one run of `manifest` (which
/// must pass the publish checks, and be the manifest they were written for), measured as the run
/// would have: the `measure:` lines on stdout, or with `out` the page written there. What the
/// reader has to say (a file cut short) is a warning on stderr.
pub fn report(
    manifest: &Path,
    files: &[std::path::PathBuf],
    out: Option<&Path>,
    program: &str,
) -> u8 {
    let color = crate::exit::color(None);
    let report = holon_core::check::check_file(manifest);
    let checked = match holon_core::check::into_manifest(report) {
        Ok(checked) => checked,
        Err(refused) => {
            say(Event::Text(check::render::human(&refused, color, program)));
            return crate::exit::REFUSED;
        }
    };
    let prices: Vec<(String, Option<holon_config::TokenPrice>)> =
        match holon_config::read(&checked.dir(), crate::defs::file_keys()) {
            Ok(config) => (config.iter())
                .flat_map(|c| c.upstreams.iter())
                .map(|u| (u.name.clone(), u.price))
                .collect(),
            Err(refused) => {
                say(Event::Text(check::render::human(&refused, color, program)));
                return crate::exit::REFUSED;
            }
        };
    let measured = match crate::measure::measured(&checked, files, &prices) {
        Ok(measured) => measured,
        Err(e) => {
            say(Event::Error(e.to_string()));
            return crate::exit::REFUSED;
        }
    };
    for note in &measured.notes {
        say(Event::Warning(note.clone()));
    }
    let Some(out) = out else {
        say(Event::Output(measured.lines));
        return crate::exit::OK;
    };
    match crate::page::of_receipts(&checked, files, measured).write(out) {
        Ok(()) => {
            say(Event::Line(format!("report: wrote `{}`", out.display())));
            crate::exit::OK
        }
        Err(e) => crate::error::RunError::from(e).report(color, program),
    }
}

/// Runs a harness with explicit libtest arguments and returns its exit code, as
/// [`Harness::run`] does with the process's own.
pub fn run_with_arguments(harness: Harness, args: &Arguments) -> u8 {
    harness.run_code(args)
}

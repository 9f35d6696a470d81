//! The test harness: every example becomes trials, `function::<name>` in-process and
//! `mcp::<name>` through the real server, plus `mcp::tools/list`. Built on libtest-mimic, so
//! `cargo test` and `cargo nextest run` drive it with libtest's arguments.

mod compare;
mod files;
mod function;
pub(crate) mod github;
mod junit;
mod mcp;
mod process;
mod provenance;
mod record;
#[cfg(target_os = "linux")]
mod strays;
pub(crate) mod supervise;
mod verdict;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Arguments, Failed};

pub use compare::{diff, json_eq};
pub use mcp::check_tools;
pub use process::ServerSpec;
pub use verdict::{Got, failure_status, judge};

use crate::check;
use crate::gateway::Gateway;
use crate::runtime::Agent;

/// Exit code when the manifest is refused or the harness cannot run.
pub const EXIT_REFUSED: u8 = 1;
/// Exit code when a trial failed (libtest's own).
pub const EXIT_FAILED: u8 = 101;

/// A `harness = false` test target in five lines:
///
/// ```no_run
/// # async fn run(input: serde_json::Value, _ctx: holon_kit::Ctx) -> Result<serde_json::Value, holon_kit::Failure> { Ok(input) }
/// fn main() -> std::process::ExitCode {
///     holon_kit::harness::Harness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/holon.yaml"))
///         .function(holon_kit::agent(run))
///         .server_binary("target/debug/my-agent") // env!("CARGO_BIN_EXE_my-agent")
///         .run()
/// }
/// ```
pub struct Harness {
    manifest: PathBuf,
    agent: Option<Arc<dyn Agent>>,
    server: Option<ServerSpec>,
    startup: Duration,
    junit: Option<PathBuf>,
    checks_shown: bool,
}

impl Harness {
    /// A harness for the manifest at `path`.
    pub fn new(path: impl AsRef<Path>) -> Harness {
        let startup = std::env::var("HOLON_STARTUP_TIMEOUT_S")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .map_or(Duration::from_secs(30), Duration::from_secs_f64);
        Harness {
            manifest: path.as_ref().to_path_buf(),
            agent: None,
            server: None,
            startup,
            junit: std::env::var_os("HOLON_JUNIT").map(PathBuf::from),
            // `cargo holon-test` printed them already before it ran this test target.
            checks_shown: std::env::var_os(CHECKS_SHOWN).is_some(),
        }
    }

    /// The agent function for the function pass.
    pub fn function(mut self, agent: Arc<dyn Agent>) -> Harness {
        self.agent = Some(agent);
        self
    }

    /// The server for the MCP pass: a binary run with `PORT` set.
    pub fn server_binary(mut self, path: impl AsRef<Path>) -> Harness {
        self.server = Some(ServerSpec::Binary(path.as_ref().to_path_buf()));
        self
    }

    /// The server for the MCP pass: a shell command, run in the manifest's folder with `PORT`
    /// set, so a server in any language can be tested.
    pub fn server_command(mut self, command: impl Into<String>) -> Harness {
        self.server = Some(ServerSpec::Command(command.into()));
        self
    }

    /// How long the server may take to answer its first `initialize` (default 30 s, or
    /// `HOLON_STARTUP_TIMEOUT_S`).
    pub fn startup_timeout(mut self, limit: Duration) -> Harness {
        self.startup = limit;
        self
    }

    /// Also writes the run as a JUnit XML report to `path` (default: `HOLON_JUNIT`), one
    /// `testcase` per trial that ran; its folder is created if missing.
    pub fn junit(mut self, path: impl AsRef<Path>) -> Harness {
        self.junit = Some(path.as_ref().to_path_buf());
        self
    }

    /// The publish checks' warnings were printed already (by the command line).
    pub(crate) fn checks_shown(mut self) -> Harness {
        self.checks_shown = true;
        self
    }

    /// Runs with the process's own arguments (libtest's: filters, `--exact`, `--list`, ...).
    pub fn run(self) -> ExitCode {
        self.run_with(&Arguments::from_args())
    }

    /// Runs with explicit libtest arguments and returns the exit code: 0 all passed, 101 a
    /// trial failed, 1 the manifest was refused.
    pub fn run_with(self, args: &Arguments) -> ExitCode {
        ExitCode::from(self.run_code(args))
    }

    /// [`Harness::run_with`] as a number, for callers that map it further.
    pub fn run_code(self, args: &Arguments) -> u8 {
        let started = std::time::Instant::now();
        let report = if self.checks_shown {
            check::check_file(&self.manifest)
        } else {
            checks(&self.manifest)
        };
        let color = use_color(args);
        if !report.accepted() || (report.warnings() > 0 && !self.checks_shown) {
            eprint!("{}", check::render_human(&report, color));
            if github::enabled() {
                print!("{}", github::render_check(&report));
            }
        }
        let lines = github::enabled().then(|| github::example_lines(&report));
        let manifest = match report.into_manifest() {
            Ok(m) => Arc::new(m),
            Err(_) => return EXIT_REFUSED,
        };
        let gateway = match Gateway::new(&manifest) {
            Ok(g) => Arc::new(g),
            Err(e) => {
                eprintln!("error: the manifest's schemas do not compile: {e}");
                return EXIT_REFUSED;
            }
        };
        let mut trials = Vec::new();
        if let Some(agent) = &self.agent {
            trials.extend(function::trials(&manifest, agent.clone()));
        }
        let shared = self.server.as_ref().map(|spec| {
            Arc::new(mcp::Shared::new(
                manifest.clone(),
                gateway.clone(),
                spec.clone(),
                self.startup,
            ))
        });
        if let Some(shared) = &shared {
            let s = shared.clone();
            trials.push(record::trial("mcp::tools/list", move || {
                s.tools_list().map_err(Failed::from)
            }));
            for example in &manifest.examples {
                let (s, example) = (shared.clone(), example.clone());
                trials.push(record::trial(format!("mcp::{}", example.name), move || {
                    s.call(&example).map_err(Failed::from)
                }));
            }
        }
        let conclusion = libtest_mimic::run(args, trials);
        if process::stopping() {
            // A signal or the watchdog is ending the process with its own code (130, 143,
            // 101): servers stopping under it made the trials end early, not pass or fail.
            loop {
                std::thread::park();
            }
        }
        if let Some(shared) = &shared
            && let Some(output) = shared.stop()
            && conclusion.has_failed()
        {
            eprintln!("\n--- server output (last lines) ---\n{output}\n---");
        }
        let records = record::take();
        if let Some(lines) = &lines {
            github::print_failures(&manifest, lines, &records);
        }
        let code = if conclusion.has_failed() {
            EXIT_FAILED
        } else {
            0
        };
        match &self.junit {
            Some(path) if !args.list => {
                match junit::write(path, &manifest.name, &records, started.elapsed()) {
                    Ok(()) => code,
                    Err(message) => {
                        eprintln!("error: {message}");
                        code.max(EXIT_REFUSED)
                    }
                }
            }
            _ => code,
        }
    }
}

/// Set by `cargo holon-test` for the test target it runs: the publish checks' warnings (and
/// `source-commit-stale`) were printed already, so the harness does not print them twice.
pub(crate) const CHECKS_SHOWN: &str = "HOLON_CHECKS_SHOWN";

/// The publish checks of the manifest at `path`, with `source-commit-stale` added when the
/// manifest is accepted: what `cargo holon-test` and the test target report before any trial.
pub(crate) fn checks(path: &Path) -> check::Report {
    let mut report = check::check_file(path);
    if report.accepted() {
        provenance::check(&mut report);
    }
    report
}

fn use_color(args: &Arguments) -> bool {
    use std::io::IsTerminal;
    match args.color {
        Some(libtest_mimic::ColorSetting::Always) => true,
        Some(libtest_mimic::ColorSetting::Never) => false,
        _ => std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal(),
    }
}

//! The test harness: every example becomes trials, `function::<name>` in-process and
//! `mcp::<name>` through the real server, plus `mcp::tools/list`. Built on libtest-mimic, so
//! `cargo test` and `cargo nextest run` drive it with libtest's arguments.

mod compare;
mod files;
mod flight;
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

use libtest_mimic::{Arguments, Failed, Trial};

pub(crate) use compare::json_eq;
pub(crate) use flight::{CONCURRENCY_VAR, DEFAULT_CONCURRENCY, parse_concurrency};
pub(crate) use process::ServerSpec;
pub(crate) use verdict::Got;

use crate::check;
use crate::exit;
use crate::runtime::Agent;

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
    bless: bool,
    explore: crate::explore::Asked,
    concurrency: Option<usize>,
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
            bless: std::env::var("HOLON_BLESS").is_ok_and(|v| v == "1"),
            explore: Default::default(),
            concurrency: None,
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

    /// After the run, write the agent's actual answers into the examples that differ (default
    /// off, or `HOLON_BLESS=1`): see the README's "Blessing the examples".
    pub fn bless(mut self, on: bool) -> Harness {
        self.bless = on;
        self
    }

    /// Cases per explore trial (`explore::function`, `explore::mcp`): inputs generated from
    /// `interface.input` between the examples. Default 100; 0 turns explore off.
    /// `HOLON_EXPLORE_CASES` and `--explore-cases` win over this.
    pub fn explore_cases(mut self, cases: u32) -> Harness {
        self.explore.cases = Some(cases);
        self
    }

    /// The explore seed (default: one derived from the manifest's bytes, the same on every
    /// machine). `HOLON_EXPLORE_SEED` and `--explore-seed` win over this.
    pub fn explore_seed(mut self, seed: u64) -> Harness {
        self.explore.seed = Some(seed);
        self
    }

    /// Whether `explore::mcp` requires the server's answer to equal the function's for the same
    /// input (default on, when both passes run). Turn it off for an agent whose answers vary
    /// from call to call, such as one with a model behind it.
    pub fn explore_differential(mut self, on: bool) -> Harness {
        self.explore.no_differential = !on;
        self
    }

    /// The command line's explore settings, which win over the environment, and the command
    /// that replays a `--server-cmd` run.
    #[cfg(feature = "cli")]
    pub(crate) fn explore_from_cli(
        mut self,
        cases: Option<u32>,
        seed: Option<u64>,
        replay: String,
    ) -> Harness {
        self.explore.cli_cases = cases;
        self.explore.cli_seed = seed;
        self.explore.cli_replay = Some(replay);
        self
    }

    /// How many calls may be in flight at once, in the MCP pass and in the function pass for
    /// an agent that awaits (default 16, or `HOLON_CONCURRENCY`), whatever the core count and
    /// libtest's `--test-threads`; 1 sends one call at a time. Kept within 1 to 1024.
    pub fn concurrency(mut self, calls: usize) -> Harness {
        self.concurrency = Some(calls.clamp(1, flight::MAX_CONCURRENCY));
        self
    }

    /// Runs with the process's own arguments (libtest's: filters, `--exact`, `--list`, ...).
    pub fn run(self) -> ExitCode {
        ExitCode::from(self.run_code(&Arguments::from_args()))
    }

    /// Runs with explicit libtest arguments and returns the exit code: 0 all passed, 101 a
    /// trial failed, 1 the manifest was refused.
    pub(crate) fn run_code(self, args: &Arguments) -> u8 {
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
            Err(_) => return exit::REFUSED,
        };
        let gateway = manifest.gateway.clone();
        if self.bless {
            crate::bless::start();
        }
        let explore = match self.explore.resolve(&self.manifest) {
            Ok(settings) => Arc::new(settings),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::REFUSED;
            }
        };
        let concurrency = match self
            .concurrency
            .map(Ok)
            .or_else(|| flight::concurrency_from_env().transpose())
        {
            Some(Ok(n)) => n,
            Some(Err(e)) => {
                eprintln!("error: {e}");
                return exit::REFUSED;
            }
            None => DEFAULT_CONCURRENCY,
        };
        // The calls a pass makes ahead of its trials are those of the trials that will run.
        let runs = |name: &str| {
            let trial = Trial::test(name, || Ok(()));
            !args.list && !args.is_filtered_out(&trial) && !args.is_ignored(&trial)
        };
        let selected = |pass: &str| -> Vec<usize> {
            (manifest.examples.iter().enumerate())
                .filter(|(_, e)| runs(&format!("{pass}::{}", e.name)))
                .map(|(i, _)| i)
                .collect()
        };
        let mut trials = Vec::new();
        let mut flights = Vec::new();
        if let Some(agent) = &self.agent {
            let threads = args
                .test_threads
                .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
                .unwrap_or(1);
            let (function_trials, flight) =
                function::trials(&manifest, agent.clone(), concurrency, threads);
            trials.extend(function_trials);
            if let Some(flight) = flight {
                flight.select(selected("function"));
                flights.push(flight);
            }
        }
        // The function the explore trials call: the same gate and limits as the function
        // pass; a function that blocks its thread is answered `timeout`, its thread abandoned.
        let reference = match &self.agent {
            Some(agent) if explore.cases > 0 => Some(Arc::new(crate::runtime::Runner::new(
                manifest.clone(),
                agent.clone(),
            ))),
            _ => None,
        };
        let explore_function = || -> Option<crate::explore::Call> {
            let runner = reference.clone()?;
            Some(Box::new(move |input: &serde_json::Value| {
                function::answer(&runner, input.clone())
            }))
        };
        let explorer =
            crate::explore::Explorer::new(manifest.clone(), gateway.clone(), explore.clone());
        if let Some(call) = explore_function() {
            let pass = crate::explore::Pass::Function;
            trials.push(explorer.trial("explore::function", call, None, pass));
        }
        let shared = self.server.as_ref().map(|spec| {
            let shared = Arc::new(mcp::Shared::new(
                manifest.clone(),
                gateway.clone(),
                spec.clone(),
                self.startup,
                concurrency,
            ));
            shared.select(runs("mcp::tools/list"), selected("mcp"));
            shared
        });
        if let Some(shared) = &shared {
            let s = shared.clone();
            trials.push(record::trial("mcp::tools/list", move || {
                s.tools_list().map_err(Failed::from)
            }));
            for (index, example) in manifest.examples.iter().enumerate() {
                let (s, name) = (shared.clone(), example.name.clone());
                trials.push(record::trial(format!("mcp::{name}"), move || {
                    let result = s.call(index);
                    if let Err(why) = &result {
                        crate::bless::unanswered(crate::bless::Pass::Mcp, &name, why);
                    }
                    result.map_err(Failed::from)
                }));
            }
            if explore.cases > 0 {
                let s = shared.clone();
                let differential = explore.differential.then(explore_function).flatten();
                let all = shared.clone();
                trials.push(explorer.trial(
                    "explore::mcp",
                    Box::new(move |input: &serde_json::Value| s.answer(input)),
                    Some((
                        Box::new(move |inputs: &[serde_json::Value]| all.answer_all(inputs)),
                        concurrency,
                    )),
                    crate::explore::Pass::Server {
                        reference: differential,
                    },
                ));
            }
        }
        let conclusion = libtest_mimic::run(args, trials);
        if process::stopping() {
            // A signal is ending the process with its own code (130, 143): servers stopping
            // under it made the trials end early, not pass or fail.
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
        let notes =
            (flights.iter().map(|f| f.retry_note())).chain(shared.iter().map(|s| s.retry_note()));
        for note in notes.flatten() {
            eprintln!("\n{note}");
        }
        let records = record::take();
        if let Some(lines) = &lines {
            github::print_failures(&manifest, lines, &records);
        }
        let code = if self.bless {
            crate::bless::finish(&self.manifest, &manifest, conclusion.num_failed)
        } else if conclusion.has_failed() {
            exit::FAILED
        } else {
            0
        };
        match &self.junit {
            Some(path) if !args.list => {
                match junit::write(path, &manifest.name, &records, started.elapsed()) {
                    Ok(()) => code,
                    Err(message) => {
                        eprintln!("error: {message}");
                        code.max(exit::REFUSED)
                    }
                }
            }
            _ => code,
        }
    }
}

/// A trial whose end is kept for the reports (JUnit, annotations).
pub(crate) fn recorded_trial(
    name: impl Into<String>,
    run: impl FnOnce() -> Result<(), Failed> + Send + 'static,
) -> Trial {
    record::trial(name, run)
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
    crate::exit::color(match args.color {
        Some(libtest_mimic::ColorSetting::Always) => Some(true),
        Some(libtest_mimic::ColorSetting::Never) => Some(false),
        _ => None,
    })
}

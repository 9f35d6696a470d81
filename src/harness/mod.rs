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
use crate::explore::{self, Explorer};
use crate::manifest::Manifest;
use crate::runtime::{Agent, Runner};

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
        let run = match self.prepare(args) {
            Ok(run) => run,
            Err(code) => return code,
        };
        let mut trials = Vec::new();
        let flight = self.function_trials(&run, args, &mut trials);
        // The function the explore trials call: the same gate and limits as the function
        // pass; a function that blocks its thread is answered `timeout`, its thread abandoned.
        let reference = match &self.agent {
            Some(agent) if run.explore.cases > 0 => {
                Some(Arc::new(Runner::new(run.manifest.clone(), agent.clone())))
            }
            _ => None,
        };
        let explorer = Explorer::new(
            run.manifest.clone(),
            run.manifest.gateway.clone(),
            run.explore.clone(),
        );
        if let Some(call) = explore_call(&reference) {
            trials.push(explorer.trial("explore::function", call, None, explore::Pass::Function));
        }
        let shared = self.mcp_trials(&run, args, &explorer, &reference, &mut trials);
        let conclusion = libtest_mimic::run(args, trials);
        if process::stopping() {
            // A signal is ending the process with its own code (130, 143): servers stopping
            // under it made the trials end early, not pass or fail.
            loop {
                std::thread::park();
            }
        }
        self.conclude(&run, args, &conclusion, flight, shared, started)
    }

    /// The checks (printed when they refuse, or warn and were not shown yet), then the settings
    /// of the run; the exit code when the run cannot go on.
    fn prepare(&self, args: &Arguments) -> Result<Run, u8> {
        let report = if self.checks_shown {
            check::check_file(&self.manifest)
        } else {
            checks(&self.manifest)
        };
        if !report.accepted() || (report.warnings() > 0 && !self.checks_shown) {
            eprint!("{}", check::render_human(&report, use_color(args)));
            if github::enabled() {
                print!("{}", github::render_check(&report));
            }
        }
        let lines = github::enabled().then(|| github::example_lines(&report));
        let manifest = Arc::new(report.into_manifest().map_err(|_| exit::REFUSED)?);
        if self.bless {
            crate::bless::start();
        }
        let refuse = |e: String| {
            eprintln!("error: {e}");
            exit::REFUSED
        };
        let explore = Arc::new(self.explore.resolve(&self.manifest).map_err(refuse)?);
        let concurrency = match self.concurrency {
            Some(n) => n,
            None => flight::concurrency_from_env()
                .map_err(refuse)?
                .unwrap_or(DEFAULT_CONCURRENCY),
        };
        Ok(Run {
            manifest,
            explore,
            concurrency,
            lines,
        })
    }

    /// The `function::<example>` trials, and the flight that makes their calls ahead of them.
    fn function_trials(
        &self,
        run: &Run,
        args: &Arguments,
        trials: &mut Vec<Trial>,
    ) -> Option<Arc<function::Flight>> {
        let agent = self.agent.as_ref()?;
        let threads = args
            .test_threads
            .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
            .unwrap_or(1);
        let (function_trials, flight) =
            function::trials(&run.manifest, agent.clone(), run.concurrency, threads);
        trials.extend(function_trials);
        flight.select(selected(args, &run.manifest, "function"));
        Some(flight)
    }

    /// `mcp::tools/list`, the `mcp::<example>` trials and `explore::mcp`, all through one
    /// server shared by the process.
    fn mcp_trials(
        &self,
        run: &Run,
        args: &Arguments,
        explorer: &Arc<Explorer>,
        reference: &Option<Arc<Runner>>,
        trials: &mut Vec<Trial>,
    ) -> Option<Arc<mcp::Shared>> {
        let spec = self.server.as_ref()?;
        let shared = Arc::new(mcp::Shared::new(
            run.manifest.clone(),
            run.manifest.gateway.clone(),
            spec.clone(),
            self.startup,
            run.concurrency,
        ));
        shared.select(
            runs(args, "mcp::tools/list"),
            selected(args, &run.manifest, "mcp"),
        );
        let s = shared.clone();
        trials.push(record::trial("mcp::tools/list", move || {
            s.tools_list().map_err(Failed::from)
        }));
        for (index, example) in run.manifest.examples.iter().enumerate() {
            let (s, name) = (shared.clone(), example.name.clone());
            trials.push(record::trial(format!("mcp::{name}"), move || {
                let result = s.call(index);
                if let Err(why) = &result {
                    crate::bless::unanswered(crate::bless::Pass::Mcp, &name, why);
                }
                result.map_err(Failed::from)
            }));
        }
        if run.explore.cases > 0 {
            let (one, all) = (shared.clone(), shared.clone());
            let differential = if run.explore.differential {
                explore_call(reference)
            } else {
                None
            };
            trials.push(explorer.trial(
                "explore::mcp",
                Box::new(move |input: &serde_json::Value| one.answer(input)),
                Some((
                    Box::new(move |inputs: &[serde_json::Value]| all.answer_all(inputs)),
                    run.concurrency,
                )),
                explore::Pass::Server {
                    reference: differential,
                },
            ));
        }
        Some(shared)
    }

    /// After the trials: the server stopped (its output shown when a trial failed), the notes,
    /// the annotations, `--bless`, the JUnit report, and the exit code.
    fn conclude(
        &self,
        run: &Run,
        args: &Arguments,
        conclusion: &libtest_mimic::Conclusion,
        flight: Option<Arc<function::Flight>>,
        shared: Option<Arc<mcp::Shared>>,
        started: std::time::Instant,
    ) -> u8 {
        if let Some(shared) = &shared
            && let Some(output) = shared.stop()
            && conclusion.has_failed()
        {
            eprintln!("\n--- server output (last lines) ---\n{output}\n---");
        }
        let notes =
            (flight.iter().map(|f| f.retry_note())).chain(shared.iter().map(|s| s.retry_note()));
        for note in notes.flatten() {
            eprintln!("\n{note}");
        }
        let records = record::take();
        if let Some(lines) = &run.lines {
            github::print_failures(&run.manifest, lines, &records);
        }
        let code = if self.bless {
            crate::bless::finish(&self.manifest, &run.manifest, conclusion.num_failed)
        } else if conclusion.has_failed() {
            exit::FAILED
        } else {
            exit::OK
        };
        match &self.junit {
            Some(path) if !args.list => {
                match junit::write(path, &run.manifest.name, &records, started.elapsed()) {
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

/// What a run goes on with once the checks passed.
struct Run {
    manifest: Arc<Manifest>,
    explore: Arc<explore::Settings>,
    concurrency: usize,
    /// Each example's line and column, for annotations (under GitHub Actions only).
    lines: Option<Vec<(u64, u64)>>,
}

/// Whether libtest will run the trial of this name: the calls a pass makes ahead of its trials
/// are those of the trials that will run.
fn runs(args: &Arguments, name: &str) -> bool {
    let trial = Trial::test(name, || Ok(()));
    !args.list && !args.is_filtered_out(&trial) && !args.is_ignored(&trial)
}

/// The examples whose `<pass>::<name>` trial will run.
fn selected(args: &Arguments, manifest: &Manifest, pass: &str) -> Vec<usize> {
    (manifest.examples.iter().enumerate())
        .filter(|(_, e)| runs(args, &format!("{pass}::{}", e.name)))
        .map(|(i, _)| i)
        .collect()
}

/// The function as explore calls it, one input at a time, when there is one to call.
fn explore_call(reference: &Option<Arc<Runner>>) -> Option<explore::Call> {
    let runner = reference.clone()?;
    Some(Box::new(move |input: &serde_json::Value| {
        function::answer(&runner, input.clone())
    }))
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

//! The test harness: every example becomes trials, `function::<name>` in-process and
//! `mcp::<name>` through the real server, plus `mcp::tools/list` and the explore trials. Built
//! on libtest-mimic, so `cargo test` and `cargo nextest run` drive it with libtest's arguments.
//!
//! An implementation crate of holon-kit: an agent's `tests/holon.rs` reaches [`Harness`] as
//! `holon_kit::harness::Harness` (the `harness` feature), and the command line (`holon-cli`)
//! drives it through [`command`]. Its other items follow holon-kit's version and make no
//! promise of their own.
//!
//! A run's state is the run's: the settings, the trials' records and what `--bless` collects
//! travel in one context passed down, so two runs in one process are independent. What belongs
//! to the process is only what a signal must reach (the server groups to stop) and the one
//! thread that forks servers (`process`).

mod bless;
// The harness supervises server process groups, a Unix notion: see `supervise`.
#[cfg(not(unix))]
compile_error!(
    "the holon-kit harness (the `harness` and `cli` features, `cargo holon-test`) runs on Linux and macOS; on Windows, run it under WSL (the `runtime` feature, what an agent ships, builds on Windows)"
);

pub mod command;
mod compare;
mod context;
pub mod exit;
mod explore;
mod faults;
mod files;
mod flight;
mod function;
mod github;
mod junit;
mod mcp;
mod process;
mod provenance;
mod record;
mod remote;
mod settings;
mod setup;
#[cfg(target_os = "linux")]
mod strays;
mod supervise;
mod tls;
mod upstream;
mod verdict;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Arguments, Trial};

use crate::context::Run;
use crate::explore::Explorer;
use crate::process::ServerSpec;
use crate::record::{Fault, Records};
use crate::settings::Layer;
use holon_core::check;
use holon_core::manifest::Manifest;
use holon_runtime::{Agent, Runner};

/// A `harness = false` test target in five lines:
///
/// ```no_run
/// # async fn run(input: serde_json::Value, _ctx: holon_runtime::Ctx) -> Result<serde_json::Value, holon_runtime::Failure> { Ok(input) }
/// fn main() -> std::process::ExitCode {
///     holon_harness::Harness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/holon.yaml"))
///         .function(holon_runtime::agent(run))
///         .server_binary("target/debug/my-agent") // env!("CARGO_BIN_EXE_my-agent")
///         .run()
/// }
/// ```
///
/// (In an agent, both come from `holon-kit`: `holon_kit::harness::Harness`, `holon_kit::agent`.)
///
/// Each setting comes from the command line (`cargo holon-test --concurrency 4`), else the
/// environment (`HOLON_CONCURRENCY`), else this builder, else its default.
pub struct Harness {
    manifest: PathBuf,
    agent: Option<Arc<dyn Agent>>,
    server: Option<ServerSpec>,
    /// What this builder says (below the environment).
    given: Layer,
    /// What the command line says (above the environment), for a `--server-cmd` run.
    command_line: Layer,
    /// The command that replays a `--server-cmd` run, for explore's reports.
    replay: Option<String>,
    /// Variables for the server process, beside `PORT`.
    server_env: Vec<(String, String)>,
    /// The headers and the extra TLS roots of a `--url` run.
    remote: (Vec<remote::Header>, Option<PathBuf>),
    checks_shown: bool,
}

impl Harness {
    /// A harness for the manifest at `path`.
    pub fn new(path: impl AsRef<Path>) -> Harness {
        Harness {
            manifest: path.as_ref().to_path_buf(),
            agent: None,
            server: None,
            given: Layer::default(),
            command_line: Layer::default(),
            replay: None,
            server_env: Vec::new(),
            remote: (Vec::new(), None),
            // `cargo holon-test` printed them already before it ran this test target.
            checks_shown: std::env::var_os(settings::CHECKS_SHOWN).is_some(),
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

    /// Sets a variable in the server process's environment (beside `PORT` and `HOST`), e.g. a
    /// setting the agent reads at start.
    pub fn server_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Harness {
        self.server_env.push((key.into(), value.into()));
        self
    }

    /// How long the server may take to answer its first `initialize` (default 30 s;
    /// `HOLON_STARTUP_TIMEOUT_S` and `--startup-timeout` win over this).
    pub fn startup_timeout(mut self, limit: Duration) -> Harness {
        self.given.startup = Some(limit);
        self
    }

    /// Also writes the run as a JUnit XML report to `path`, one `testcase` per trial that ran;
    /// its folder is created if missing (`HOLON_JUNIT` and `--junit` win over this).
    pub fn junit(mut self, path: impl AsRef<Path>) -> Harness {
        self.given.junit = Some(path.as_ref().to_path_buf());
        self
    }

    /// After the run, write the agent's actual answers into the examples that differ (default
    /// off; `HOLON_BLESS` and `--bless` win over this): see the README's "Blessing the
    /// examples".
    pub fn bless(mut self, on: bool) -> Harness {
        self.given.bless = Some(on);
        self
    }

    /// Cases per explore trial (`explore::function`, `explore::mcp`): inputs generated from
    /// `interface.input` between the examples. Default 100; 0 turns explore off; at most
    /// 100,000 (past it the run stops, naming the call). `HOLON_EXPLORE_CASES` and
    /// `--explore-cases` win over this.
    pub fn explore_cases(mut self, cases: u32) -> Harness {
        self.given.explore_cases = Some(cases);
        self
    }

    /// The explore seed (default: one derived from the manifest's bytes, the same on every
    /// machine). `HOLON_EXPLORE_SEED` and `--explore-seed` win over this.
    pub fn explore_seed(mut self, seed: u64) -> Harness {
        self.given.explore_seed = Some(seed);
        self
    }

    /// Whether `explore::mcp` requires the server's answer to equal the function's for the same
    /// input (default on, when both passes run). Turn it off for an agent whose answers vary
    /// from call to call, such as one with a model behind it.
    pub fn explore_differential(mut self, on: bool) -> Harness {
        self.given.explore_differential = Some(on);
        self
    }

    /// How many calls may be in flight at once, in the MCP pass and in the function pass for
    /// an agent that awaits (default 16), whatever the core count and libtest's
    /// `--test-threads`; 1 sends one call at a time. Kept within 1 to 1024.
    /// `HOLON_CONCURRENCY` and `--concurrency` win over this.
    pub fn concurrency(mut self, calls: usize) -> Harness {
        self.given.concurrency = Some(calls.clamp(1, settings::MAX_CONCURRENCY));
        self
    }

    /// Whether the `faults::` trials run (default on, when `holon-test.toml` declares upstreams
    /// and they are replayed): every success example with each recorded upstream exchange
    /// failing in turn. `HOLON_FAULTS` and `--faults` win over this.
    pub fn faults(mut self, on: bool) -> Harness {
        self.given.faults = Some(on);
        self
    }

    /// Runs with the process's own arguments (libtest's: filters, `--exact`, `--list`, ...).
    /// Run as nextest's setup script (`HOLON_NEXTEST_SETUP=1`, see the scaffold's
    /// `.config/nextest.toml`), it starts the server once for the whole nextest run instead.
    pub fn run(self) -> ExitCode {
        if let Some(role) = setup::role() {
            let startup = settings::resolve(&self.command_line, &self.given, &self.manifest, None)
                .map(|s| s.startup)
                .unwrap_or(settings::DEFAULT_STARTUP);
            return ExitCode::from(setup::run(
                role,
                &self.manifest,
                self.server.as_ref(),
                &self.server_env,
                startup,
            ));
        }
        ExitCode::from(self.run_code(&Arguments::from_args()))
    }

    /// Runs with explicit libtest arguments and returns the exit code: 0 all passed, 101 a
    /// trial failed, 1 the manifest was refused.
    pub(crate) fn run_code(self, args: &Arguments) -> u8 {
        let started = std::time::Instant::now();
        tls::install_provider();
        let (run, held) = match self.prepare(args) {
            Ok((run, held)) => (Arc::new(run), held),
            Err(code) => return code,
        };
        let mut trials = Vec::new();
        let flight = self.function_trials(&run, args, &mut trials);
        // The function the explore trials call: the same gate and limits as the function
        // pass; a function that blocks its thread is answered `timeout` and given up on.
        let reference = match &self.agent {
            Some(agent) if run.settings.explore.cases > 0 => {
                let runner = Arc::new(Runner::new(run.manifest.clone(), agent.clone()));
                Some(Arc::new(function::Explore::new(&run, runner)))
            }
            _ => None,
        };
        let explorer = Explorer::new(run.manifest.clone(), Arc::new(run.settings.explore.clone()));
        if let Some(function) = &reference {
            let (explorer, function) = (explorer.clone(), function.clone());
            trials.push(record::trial(
                &run.records,
                "explore::function",
                move || {
                    let (one, all) = (function.clone(), function.clone());
                    let call: explore::Call =
                        Box::new(move |input: &serde_json::Value| one.one(input));
                    let batch: explore::Batch =
                        Box::new(move |inputs: &[serde_json::Value]| all.all(inputs));
                    let batch = function.batches().then(|| (batch, function.concurrency()));
                    explorer
                        .run(
                            "explore::function",
                            &call,
                            batch.as_ref(),
                            &explore::Pass::Function,
                        )
                        .map_err(Fault::from)
                },
            ));
        }
        let shared = match self.mcp_trials(&run, args, &explorer, &reference, &mut trials) {
            Ok(shared) => shared,
            Err(why) => {
                eprintln!("error: {why}");
                return exit::REFUSED;
            }
        };
        // A server already running is asked who it is before any trial: serving another
        // manifest is the run's first failure, and a server that announces none is said once.
        if let Some(shared) = &shared
            && run.settings.server_url.is_some()
            && runs(args, "mcp::initialize")
        {
            match shared.connect_first() {
                Ok(Some(note)) => eprintln!("{note}"),
                Ok(None) => {}
                Err(mismatch) => eprintln!("error: {mismatch}"),
            }
        }
        let function = match (&reference, &self.agent) {
            (Some(function), _) => Some(function.clone()),
            (None, Some(agent)) => {
                let runner = Arc::new(Runner::new(run.manifest.clone(), agent.clone()));
                Some(Arc::new(function::Explore::new(&run, runner)))
            }
            (None, None) => None,
        };
        // A server already running calls its real upstreams, where no fault can be planted.
        let faults = faults::Faults::trials(
            &run,
            function,
            shared.clone().filter(|s| !s.running()),
            self.command(),
            |name| runs(args, name),
            &mut trials,
        );
        let conclusion = libtest_mimic::run(args, trials);
        if process::stopping() {
            // A signal is ending the process with its own code (130, 143): servers stopping
            // under it made the trials end early, not pass or fail.
            loop {
                std::thread::park();
            }
        }
        if !args.list {
            match &faults {
                Some(faults) => faults.conclude(held, use_color(args)),
                None => faults::print_deferred(held, &Default::default(), use_color(args)),
            }
        }
        self.conclude(&run, args, &conclusion, flight, shared, started)
    }

    /// The command that runs these tests: `cargo holon-test`, or the `--server-cmd` line.
    fn command(&self) -> String {
        match &self.replay {
            Some(line) => line.clone(),
            None => "cargo holon-test".to_string(),
        }
    }

    /// The checks (printed when they refuse, or warn and were not shown yet), then the settings
    /// of the run; the exit code when the run cannot go on.
    fn prepare(&self, args: &Arguments) -> Result<(Run, check::Report), u8> {
        let (report, held) = if self.checks_shown {
            let mut report = check::check_file(&self.manifest);
            let held = faults::hold_back(&mut report);
            (report, held)
        } else {
            faults::checks(&self.manifest)
        };
        if !report.accepted() || (report.warnings() > 0 && !self.checks_shown) {
            eprint!("{}", check::render_human(&report, use_color(args)));
            if github::enabled() {
                print!("{}", github::render_check(&report));
            }
        }
        let lines = github::enabled().then(|| github::example_lines(&report));
        let manifest = Arc::new(check::into_manifest(report).map_err(|_| exit::REFUSED)?);
        let refuse = |e: String| {
            eprintln!("error: {e}");
            exit::REFUSED
        };
        let mut settings = settings::resolve(
            &self.command_line,
            &self.given,
            &self.manifest,
            self.replay.as_deref(),
        )
        .map_err(refuse)?;
        let config = holon_core::config::read(&manifest.dir()).map_err(|report| {
            eprint!("{}", check::render_human(&report, use_color(args)));
            exit::REFUSED
        })?;
        let upstreams = match config.filter(|c| !c.upstreams.is_empty()) {
            None => None,
            Some(config) => {
                if settings.upstream == upstream::Mode::Live {
                    // The real model's answers vary from call to call.
                    settings.explore.differential = false;
                }
                let command = self.command();
                let start = upstream::Start {
                    manifest: &manifest,
                    config,
                    mode: settings.upstream,
                    function: self.agent.is_some(),
                    command,
                    seed: settings.explore.seed,
                    bless: settings.bless,
                };
                let mut upstreams = upstream::Upstreams::start(start).map_err(refuse)?;
                if let Some(seed) = upstreams.recorded_seed()
                    && settings.explore.seed_from_manifest
                {
                    upstreams.use_seed(seed);
                    // The recorded cases, drawn again.
                    let old = settings.explore.seed.to_string();
                    settings.explore.replay =
                        settings.explore.replay.replace(&old, &seed.to_string());
                    settings.explore.seed = seed;
                    settings.explore.seed_from_manifest = false;
                }
                Some(Arc::new(upstreams))
            }
        };
        let functions = match &self.agent {
            Some(_) => Some(Arc::new(function::runtime(threads(args)).map_err(refuse)?)),
            None => None,
        };
        let bless = settings
            .bless
            .then(|| Arc::new(bless::Collector::default()));
        let run = Run {
            manifest,
            settings,
            records: Arc::new(Records::default()),
            bless,
            lines,
            upstreams,
            functions,
        };
        Ok((run, held))
    }

    /// The `function::<example>` trials, and the flight that makes their calls ahead of them.
    fn function_trials(
        &self,
        run: &Run,
        args: &Arguments,
        trials: &mut Vec<Trial>,
    ) -> Option<Arc<function::Flight>> {
        let agent = self.agent.as_ref()?;
        let (function_trials, flight) = function::trials(run, agent.clone(), threads(args));
        trials.extend(function_trials);
        flight.select(selected(args, &run.manifest, "function"));
        Some(flight)
    }

    /// `mcp::tools/list`, the `mcp::<example>` trials and `explore::mcp`, all through one
    /// server shared by the process: the one this process starts, or one already running
    /// (`--url`, `HOLON_SERVER_URL`), whose trials begin with `mcp::initialize`. `Err` when
    /// the address or a header is not usable.
    fn mcp_trials(
        &self,
        run: &Arc<Run>,
        args: &Arguments,
        explorer: &Arc<Explorer>,
        reference: &Option<Arc<function::Explore>>,
        trials: &mut Vec<Trial>,
    ) -> Result<Option<Arc<mcp::Shared>>, String> {
        let target = match (&run.settings.server_url, &self.server) {
            (Some(url), _) => {
                let (headers, ca_cert) = self.remote.clone();
                let remote = remote::Remote::new(url, headers, ca_cert).map_err(|e| {
                    // The command line checked its `--url`; only the variable can be wrong here.
                    match self.command_line.server_url {
                        Some(_) => e,
                        None => format!("`{}`: {e}", settings::SERVER_URL_VAR),
                    }
                })?;
                mcp::Target::Running(Arc::new(remote))
            }
            (None, Some(spec)) => mcp::Target::Start(spec.clone()),
            (None, None) => return Ok(None),
        };
        let running = matches!(target, mcp::Target::Running(_));
        let mut env = self.server_env.clone();
        if let Some(u) = &run.upstreams {
            env.extend(u.server_env().iter().cloned());
        }
        let shared = Arc::new(mcp::Shared::new(run, target, env));
        shared.select(
            runs(args, "mcp::tools/list"),
            selected(args, &run.manifest, "mcp"),
        );
        if running {
            let s = shared.clone();
            trials.push(record::trial(&run.records, "mcp::initialize", move || {
                s.initialize().map_err(Fault::from)
            }));
        }
        let s = shared.clone();
        trials.push(record::trial(&run.records, "mcp::tools/list", move || {
            s.tools_list().map_err(Fault::from)
        }));
        for (index, example) in run.manifest.examples.iter().enumerate() {
            let (s, name) = (shared.clone(), example.name.clone());
            let bless = run.bless.clone();
            trials.push(record::trial(
                &run.records,
                format!("mcp::{name}"),
                move || {
                    let result = s.call(index);
                    if let (Err(why), Some(bless)) = (&result, &bless) {
                        bless.unanswered(bless::Pass::Mcp, &name, &why.message);
                    }
                    result
                },
            ));
        }
        if run.settings.explore.cases > 0 {
            let (one, all) = (shared.clone(), shared.clone());
            let differential: Option<explore::Call> = match reference {
                Some(function) if run.settings.explore.differential => {
                    let function = function.clone();
                    Some(Box::new(move |input: &serde_json::Value| {
                        function.one(input)
                    }))
                }
                _ => None,
            };
            let call: explore::Call = Box::new(move |input: &serde_json::Value| one.answer(input));
            let batch: explore::Batch =
                Box::new(move |inputs: &[serde_json::Value]| all.answer_all(inputs));
            let batches =
                (run.upstreams.as_ref()).is_none_or(|u| u.mode() != upstream::Mode::Replay);
            let batch = batches.then_some((batch, run.settings.concurrency));
            let pass = explore::Pass::Server {
                reference: differential,
            };
            let explorer = explorer.clone();
            let server = shared.clone();
            trials.push(record::trial(&run.records, "explore::mcp", move || {
                if let Some(why) = server.unanswering() {
                    return Err(Fault::from(format!(
                        "explore did not send its cases: {why}"
                    )));
                }
                explorer
                    .run("explore::mcp", &call, batch.as_ref(), &pass)
                    .map_err(Fault::from)
            }));
        }
        Ok(Some(shared))
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
        for shared in run.records.shared() {
            eprintln!("\n{}", record::note(&shared));
        }
        let records = run.records.take();
        if let Some(lines) = &run.lines {
            github::print_failures(&run.manifest, lines, &records);
        }
        let mut code = match &run.bless {
            Some(seen) => bless::finish(&self.manifest, &run.manifest, seen, conclusion.num_failed),
            None if conclusion.has_failed() => exit::FAILED,
            None => exit::OK,
        };
        if let Some(upstreams) = &run.upstreams {
            let names: Vec<String> = run
                .manifest
                .examples
                .iter()
                .map(|e| e.name.clone())
                .collect();
            if let Err(message) = upstreams.finish(&names) {
                eprintln!("error: {message}");
                code = code.max(exit::REFUSED);
            }
        }
        match &run.settings.junit {
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

/// The threads the function pass may compute on: libtest's `--test-threads`, or one per core.
fn threads(args: &Arguments) -> usize {
    args.test_threads
        .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
        .unwrap_or(1)
}

fn use_color(args: &Arguments) -> bool {
    exit::color(match args.color {
        Some(libtest_mimic::ColorSetting::Always) => Some(true),
        Some(libtest_mimic::ColorSetting::Never) => Some(false),
        _ => None,
    })
}

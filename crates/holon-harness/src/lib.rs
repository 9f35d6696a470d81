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

// The harness supervises server process groups, a Unix notion: see `supervise`.
#[cfg(not(unix))]
compile_error!(
    "the holon-kit harness (the `harness` and `cli` features, `cargo holon-test`) runs on Linux and macOS; on Windows, run it under WSL (the `runtime` feature, what an agent ships, builds on Windows)"
);

mod adapter;
mod call;
mod checks;
pub mod command;
mod compare;
mod conclude;
mod config_layer;
mod context;
mod defs;
mod era;
mod error;
pub mod exit;
mod faults;
mod files;
mod flight;
mod function;
mod github;
mod junit;
mod mcp;
mod measure;
mod page;
mod parsers;
mod pass;
mod planted;
mod prepare;
mod process;
mod provenance;
mod record;
mod remote;
mod reporter;
mod settings;
mod setup;
#[cfg(target_os = "linux")]
mod strays;
mod supervise;
mod target;
mod tls;
mod toolchain;
mod trials;
mod verdict;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Arguments, Trial};

use crate::context::Run;
use crate::era::{Era, Protocol};
use crate::error::RunError;
use crate::function::FunctionPass;
use crate::mcp::{McpPass, Server};
use crate::pass::Caller;
use crate::process::ServerSpec;
use crate::record::Fault;
use crate::reporter::Event;
use crate::settings::Layer;
use crate::trials::{runs, second, second_era, selected, threads, use_color};
use holon_core::gateway::Pass;
use holon_explore::Explorer;
use holon_runtime::Agent;

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
/// environment (`HOLON_CONCURRENCY`), else this builder, else `holon-test.toml` beside the
/// manifest (`[run] concurrency = 4`), else its default.
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
    /// The command as the author runs the kit, which a diagnostic's hint names for `explain`:
    /// `cargo holon-test` in a test target, the command line's own name in a run it drives.
    program: String,
    /// Variables for the server process, beside `PORT`.
    server_env: Vec<(String, String)>,
    /// The headers and the extra TLS roots of a `--url` run.
    remote: (Vec<remote::Header>, Option<PathBuf>),
    /// The adapter's function mode, when it is the agent function (`[server] function`).
    adapter: Option<adapter::Adapter>,
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
            program: "cargo holon-test".to_string(),
            server_env: Vec::new(),
            remote: (Vec::new(), None),
            adapter: None,
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
    /// off; `HOLON_BLESS` and `--bless` win over this): see the guide's "Blessing the
    /// examples" (`docs/src/examples.md`).
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

    /// Calls in flight at once (default 16; 1 sends one at a time; outside 1 to 1024 the run
    /// stops, naming the call), in the MCP pass and in the function pass of an agent that awaits,
    /// whatever the core count and `--test-threads`. `HOLON_CONCURRENCY` and `--concurrency` win.
    pub fn concurrency(mut self, calls: usize) -> Harness {
        self.given.concurrency = Some(calls);
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
        // `holon-test call --function` in a Rust package: one call, through this function.
        if let Some(spec) = call::Spec::requested() {
            return ExitCode::from(match spec {
                Ok(spec) => self.call_code(&spec),
                Err(why) => {
                    reporter::say(Event::Error(why.to_string()));
                    exit::USAGE
                }
            });
        }
        if let Some(role) = setup::role() {
            let file = config_layer::beside(&self.manifest);
            let (startup, protocol) =
                settings::resolve(&self.command_line, &self.given, &file, &self.manifest, None)
                    .map(|s| (s.startup, s.protocol))
                    .unwrap_or((settings::DEFAULT_STARTUP, Protocol::Auto));
            let era = match protocol {
                Protocol::Only(era) => era,
                Protocol::Auto => Era::Modern,
            };
            return ExitCode::from(setup::run(
                role,
                &self.manifest,
                self.server.as_ref(),
                &self.server_env,
                (startup, era),
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
            Ok(Some((run, held))) => (Arc::new(run), held),
            // The checks refused the manifest, and said why (in the JUnit report too).
            Ok(None) => return exit::REFUSED,
            Err(error) => return self.stopped(&error, args),
        };
        if let Some(adapter) = &self.adapter {
            adapter.startup(run.settings.startup, run.manifest.runtime.limits.timeout());
        }
        // A measured run stopped by a signal still says what ran: its report comes first.
        let _last_words = run.meter.clone().map(|meter| {
            let words: Arc<dyn Fn() + Send + Sync> = Arc::new(move || meter.interrupted());
            process::say_on_signal(Arc::downgrade(&words));
            process::stop_all_on_signal();
            words
        });
        if !args.list {
            for line in &run.plan.left_out {
                run.reporter
                    .emit(Event::Note(format!("`--max-calls`: {line}")));
            }
            if let Some(note) = run.plan.shard_note(faults::Faults::run_in(&run)) {
                run.reporter.emit(Event::Line(note));
            }
        }
        let mut trials = Vec::new();
        let function = self.agent.as_ref().map(|agent| {
            let pass = Arc::new(FunctionPass::new(&run, agent.clone(), threads(args)));
            pass.select(selected(args, &run.manifest, Pass::Function.name()));
            pass
        });
        let explorer = Explorer::new(run.manifest.clone(), Arc::new(run.settings.explore.clone()));
        if let Some(function) = &function {
            for index in 0..run.manifest.examples.len() {
                trials.extend(pass::example_trial(&run, function.clone(), index));
            }
            if run.settings.explore.cases > 0 {
                trials.push(pass::explore_trial(&run, &explorer, function.clone(), None));
            }
        }
        let mcp = match self.mcp_trials(&run, args, &explorer, function.clone(), &mut trials) {
            Ok(mcp) => mcp,
            Err(error) => return self.stopped(&error, args),
        };
        // A server already running is asked who it is before any trial: serving another
        // manifest is the run's first failure, and a server that announces none is said once.
        if let Some(mcp) = &mcp
            && run.settings.server_url.is_some()
            && (runs(args, "mcp::initialize") || runs(args, &format!("{}::initialize", second())))
        {
            match mcp.server.connect_first() {
                Ok(Some(note)) => run.reporter.emit(Event::Line(note)),
                Ok(None) => {}
                Err(mismatch) => run.reporter.emit(Event::Error(mismatch.to_string())),
            }
        }
        // A server already running calls its real upstreams, where no fault can be planted;
        // the fault trials probe the agent, in the newest era the server speaks.
        let mut passes: Vec<Arc<dyn Caller>> = Vec::new();
        passes.extend(function.clone().map(|f| f as Arc<dyn Caller>));
        passes.extend(
            (mcp.iter().filter_map(|m| m.passes.first()))
                .filter(|m| !m.running())
                .map(|m| m.clone() as Arc<dyn Caller>),
        );
        let faults = faults::Faults::trials(
            &run,
            &passes,
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
            let mut reached = faults.map(|f| f.conclude()).unwrap_or_default();
            for (code, by) in explorer.reached() {
                reached.entry(code).or_insert(by);
            }
            checks::say_deferred(held, &reached, use_color(args), &self.program);
        }
        let mut passes: Vec<Arc<dyn Caller>> = Vec::new();
        passes.extend(function.map(|f| f as Arc<dyn Caller>));
        if let Some(mcp) = &mcp {
            passes.extend(mcp.passes.iter().map(|m| m.clone() as Arc<dyn Caller>));
        }
        self.conclude(
            &run,
            args,
            &conclusion,
            &passes,
            mcp.as_ref(),
            (started, &explorer),
        )
    }

    /// One call by hand (`holon-test call`, or [`call::CALL_VAR`] in a test target): the run
    /// prepared as a test run's is, then the call through the function or the server.
    pub(crate) fn call_code(mut self, spec: &call::Spec) -> u8 {
        self.checks_shown = true;
        let args = Arguments::default();
        let run = match self.prepare(&args) {
            Ok(Some((run, _))) => run,
            Ok(None) => return exit::REFUSED,
            Err(error) => return self.stopped(&error, &args),
        };
        let agent = self.agent.clone().filter(|_| spec.function);
        call::make(&run, spec, agent, self.target(), self.adapter.as_ref())
            .unwrap_or_else(|error| self.stopped(&error, &args))
    }

    /// A run that could not start: the error said, and in the JUnit report (when one is asked
    /// for) as the one failing `testcase`, so a CI report says why no trial ran.
    fn stopped(&self, error: &RunError, args: &Arguments) -> u8 {
        let code = error.report(use_color(args), &self.program);
        if let Some(path) = settings::junit_of(&self.command_line, &self.given)
            && !args.list
            && !matches!(error, RunError::Junit(_))
        {
            let agent = junit::agent_of(&self.manifest);
            if let Err(e) = junit::write_stopped(&path, &agent, &error.to_string()) {
                return code.max(RunError::from(e).report(use_color(args), &self.program));
            }
        }
        code
    }

    /// The command that blesses, replaying: `cargo holon-test --bless`, or the `--server-cmd`
    /// line's.
    fn bless_command(&self) -> String {
        match self.command().strip_prefix(settings::RUST_COMMAND) {
            Some(rest) => format!("{} --bless{rest}", settings::RUST_COMMAND),
            None => format!("{} --bless", self.command()),
        }
    }

    /// The command that runs these tests: `cargo holon-test`, or the `--server-cmd` line.
    fn command(&self) -> String {
        match &self.replay {
            Some(line) => line.clone(),
            None => settings::RUST_COMMAND.to_string(),
        }
    }

    /// `mcp::tools/list`, the `mcp::<example>` trials and `explore::mcp`, all through one
    /// server shared by the process: the one this process starts, or one already running
    /// (`--url`, `HOLON_SERVER_URL`), whose trials begin with `mcp::initialize`; in the newest
    /// era the server speaks, and the same trials of a second era after them
    /// (`mcp::2025-11-25::...`). `Err` when the address or a header is not usable.
    fn mcp_trials(
        &self,
        run: &Arc<Run>,
        args: &Arguments,
        explorer: &Arc<Explorer>,
        function: Option<Arc<FunctionPass>>,
        trials: &mut Vec<Trial>,
    ) -> Result<Option<Mcp>, RunError> {
        let Some(server) = target::server(run, self.target())? else {
            return Ok(None);
        };
        let mcp = Arc::new(McpPass::new(run, server.clone(), 0));
        mcp.select(
            runs(args, "mcp::tools/list"),
            selected(args, &run.manifest, "mcp"),
        );
        if mcp.running() {
            let m = mcp.clone();
            trials.push(record::trial(&run.records, "mcp::initialize", move || {
                m.initialize().map_err(Fault::from)
            }));
        }
        let m = mcp.clone();
        trials.push(record::trial(&run.records, "mcp::tools/list", move || {
            m.tools_list().map_err(Fault::from)
        }));
        for index in 0..run.manifest.examples.len() {
            trials.extend(pass::example_trial(run, mcp.clone(), index));
        }
        let mut passes = vec![mcp.clone()];
        // A measured run calls the server in the newest era it speaks alone: its calls are the
        // ones counted, budgeted by `--max-calls` and paid for upstream.
        let one_era = run.meter.is_some();
        if run.settings.protocol == Protocol::Auto && !one_era {
            passes.extend(second_era(run, args, &server, trials));
        }
        // Explore probes the agent, not the transport: in the newest era the server speaks.
        if run.settings.explore.cases > 0 {
            let reference = function
                .filter(|_| run.settings.explore.differential)
                .map(|f| f as Arc<dyn Caller>);
            trials.push(pass::explore_trial(run, explorer, mcp, reference));
        }
        Ok(Some(Mcp {
            server,
            passes,
            one_era,
        }))
    }

    /// What this harness says of its server, for the MCP pass.
    fn target(&self) -> target::Target<'_> {
        target::Target {
            server: self.server.as_ref(),
            remote: &self.remote,
            url_given: self.command_line.server_url.is_some(),
            env: &self.server_env,
        }
    }
}

/// The MCP pass of a run: its server, and the pass in each era it is tested in (the newest
/// first).
struct Mcp {
    server: Arc<Server>,
    passes: Vec<Arc<McpPass>>,
    /// Whether the run measures its calls, and so tests the server in its newest era alone.
    one_era: bool,
}

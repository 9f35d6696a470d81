//! Before the trials: the checks, then the run's settings from every layer, the upstreams
//! started, the plan of calls (`--repeat`, `--max-calls`, `--partition`), the meter and the
//! reporter, gathered into the [`Run`] every trial shares.

use std::sync::Arc;

use libtest_mimic::Arguments;

use crate::context::{self, Functions, Run};
use crate::error::RunError;
use crate::measure::{Asked, Meter, Plan, Receipts, Setup};
use crate::record::Records;
use crate::reporter::{Event, Reporter};
use crate::trials::{runs, selected, threads, use_color};
use crate::{Harness, checks, config_layer, github, junit, settings};
use holon_bless::Collector;
use holon_core::check;
use holon_core::gateway::Pass;
use holon_core::manifest::Manifest;
use holon_upstream::{Mode, Upstreams};

impl Harness {
    /// The checks (printed when they refuse, or warn and were not shown yet), then the settings
    /// of the run; `None` when the checks refused the manifest (and said why).
    pub(crate) fn prepare(
        &self,
        args: &Arguments,
    ) -> Result<Option<(Run, check::Report)>, RunError> {
        // Under `--bless`, an example output the schema no longer admits is a difference the
        // run writes, not a refusal.
        let bless = settings::blesses(&self.command_line, &self.given);
        let (report, held) = checks::before_run(
            &self.manifest,
            bless,
            self.checks_shown,
            use_color(args),
            &self.program,
        );
        let lines = github::enabled().then(|| github::example_lines(&report));
        let manifest = match check::into_manifest(report) {
            Ok(manifest) => manifest,
            Err(refused) => {
                if let Some(path) = settings::junit_of(&self.command_line, &self.given)
                    && !args.list
                {
                    junit::write_refused(&path, &junit::agent_of(&self.manifest), &refused)?;
                }
                return Ok(None);
            }
        };
        let manifest = Arc::new(manifest);
        let config = holon_config::read(&manifest.dir(), crate::defs::file_keys())
            .map_err(RunError::Config)?;
        let file = config_layer::layer(config.as_ref()).map_err(RunError::Config)?;
        let mut settings = settings::resolve(
            &self.command_line,
            &self.given,
            &file,
            &self.manifest,
            self.replay.as_deref(),
        )?;
        let prices: Vec<(String, Option<holon_config::TokenPrice>)> = (config.iter())
            .flat_map(|c| c.upstreams.iter())
            .map(|u| (u.name.clone(), u.price))
            .collect();
        let upstreams = match config.filter(|c| !c.upstreams.is_empty()) {
            None => None,
            Some(config) => {
                if settings.upstream == Mode::Live {
                    // The real model's answers vary from call to call.
                    settings.explore.differential = false;
                }
                let start = holon_upstream::Start {
                    manifest: &manifest,
                    config,
                    mode: settings.upstream,
                    function: self.agent.is_some(),
                    command: self.command(),
                    seed: settings.explore.seed,
                    bless: settings.bless,
                    force: settings.force,
                };
                let mut upstreams = Upstreams::start(start)?;
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
            Some(_) => Some(Arc::new(
                Functions::new(threads(args)).map_err(|e| RunError::Functions(Arc::new(e)))?,
            )),
            None => None,
        };
        let bless = settings.bless.then(|| Arc::new(Collector::default()));
        let secrets = (upstreams.as_ref()).map_or_else(Default::default, |u| u.secrets().clone());
        let reporter = Reporter::new(secrets.clone());
        let plan = self.plan(args, &manifest, &mut settings, upstreams.as_deref());
        if let Some(u) = upstreams.as_deref().filter(|_| !args.list)
            && let Some(note) = plan.explore_spends(u.mode())
        {
            reporter.emit(Event::Line(note));
        }
        let receipts = match &settings.receipts {
            Some(path) => Some(Receipts::create(path, plan.share())?),
            None => None,
        };
        let live = (upstreams.as_ref()).is_some_and(|u| u.mode() == Mode::Live);
        let meter = match plan.measured {
            Some(pass) if settings.measures(live) => Some(Arc::new(Meter::new(Setup {
                head: plan.head(pass, &settings, upstreams.as_deref()),
                planned: plan.share().0,
                left_out: plan.left_out.clone(),
                manifest: manifest.clone(),
                pass,
                prices: prices.clone(),
                receipts,
                reporter: reporter.clone(),
                upstreams: upstreams.clone(),
            }))),
            _ => None,
        };
        let places = Arc::new(context::Places::new(manifest.clone()));
        let run = Run {
            manifest,
            settings,
            records: Arc::new(Records::new(reporter.clone())),
            reporter,
            bless,
            lines,
            upstreams,
            functions,
            adapter: self.adapter.clone(),
            plan,
            meter,
            prices,
            places,
            bless_command: self.bless_command(),
        };
        Ok(Some((run, held)))
    }

    /// How many calls each pass makes of each example (`--repeat`, `--max-calls`), explore's
    /// cases under the budget, and the fault trials off under it (what they replay is free,
    /// and the budget counts calls to the agent).
    pub(crate) fn plan(
        &self,
        args: &Arguments,
        manifest: &Manifest,
        settings: &mut settings::Settings,
        upstreams: Option<&Upstreams>,
    ) -> Plan {
        let names: Vec<String> = manifest.examples.iter().map(|e| e.name.clone()).collect();
        let mcp = self.server.is_some() || settings.server_url.is_some();
        let function =
            (self.agent.is_some()).then(|| selected(args, manifest, Pass::Function.name()));
        let server = mcp.then(|| selected(args, manifest, Pass::Mcp.name()));
        let explore_trials = [
            self.agent.is_some() && runs(args, "explore::function"),
            mcp && runs(args, "explore::mcp"),
        ]
        .into_iter()
        .filter(|t| *t)
        .count() as u32;
        let mut plan = Plan::new(&Asked {
            names: &names,
            function: function.as_deref(),
            mcp: server.as_deref(),
            repeat: settings.repeat.unwrap_or(1),
            max_calls: settings.max_calls,
            explore: (settings.explore.cases, explore_trials),
            partition: settings.partition,
        });
        if settings.max_calls.is_some() {
            settings.explore.cases = plan.explore_cases;
            let replayed = upstreams.is_some_and(|u| u.mode() == Mode::Replay);
            if settings.faults && replayed {
                settings.faults = false;
                plan.left_out.push(
                    "the fault trials: off (they replay the recordings, and `--max-calls` bounds the calls to the agent; run them without it)".into(),
                );
            }
        }
        plan
    }
}

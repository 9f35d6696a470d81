//! Which trials a run makes: whether libtest will run a trial of a name (its filters), the
//! examples whose trials of a pass will run, and the trials of the second era of a server
//! that speaks both.

use std::sync::Arc;

use libtest_mimic::{Arguments, Trial};

use crate::context::Run;
use crate::era::Era;
use crate::mcp::{McpPass, Server};
use crate::record::{self, Fault};
use holon_core::manifest::Manifest;

/// Whether libtest will run the trial of this name: the calls a pass makes ahead of its trials
/// are those of the trials that will run.
pub(crate) fn runs(args: &Arguments, name: &str) -> bool {
    let trial = Trial::test(name, || Ok(()));
    !args.list && !args.is_filtered_out(&trial) && !args.is_ignored(&trial)
}

/// The examples whose `<prefix>::<name>` trial will run (`function`, `mcp`,
/// `mcp::2025-11-25`).
pub(crate) fn selected(args: &Arguments, manifest: &Manifest, prefix: &str) -> Vec<usize> {
    (manifest.examples.iter().enumerate())
        .filter(|(_, e)| runs(args, &format!("{prefix}::{}", e.name)))
        .map(|(i, _)| i)
        .collect()
}

/// What the trial names of the second era of a server that speaks both begin with:
/// `mcp::2025-11-25` (the `mcp::` trials are those of the newest era it speaks).
pub(crate) fn second() -> String {
    format!("mcp::{}", Era::Legacy.version())
}

/// The trials of the second era of a server that speaks both, 2025-11-25, after the newest's
/// (`mcp::2025-11-25::initialize`, `::tools/list`, `::<example>`), under `--protocol auto`.
/// `--list` lists them all, since it starts no server; a run that will run one of them learns
/// the server's eras first (starting it before the trials) and has none for a server that
/// speaks one era, but for an `--exact` run (nextest runs each trial so), where the trial says
/// that it had nothing to test.
pub(crate) fn second_era(
    run: &Arc<Run>,
    args: &Arguments,
    server: &Arc<Server>,
    trials: &mut Vec<Trial>,
) -> Option<Arc<McpPass>> {
    let prefix = second();
    let name = |what: &str| format!("{prefix}::{what}");
    let examples = selected(args, &run.manifest, &prefix);
    let own = ["tools/list", "initialize"];
    if !args.list && examples.is_empty() && !own.iter().any(|what| runs(args, &name(what))) {
        return None;
    }
    if !args.list && !args.exact && server.eras_tested() < 2 {
        return None;
    }
    let pass = Arc::new(McpPass::new(run, server.clone(), 1));
    pass.select(runs(args, &name("tools/list")), examples);
    let nothing = |pass: &Arc<McpPass>| {
        let pass = pass.clone();
        move || pass.missing()
    };
    if server.running() {
        let m = pass.clone();
        trials.push(record::ignorable(
            &run.records,
            name("initialize"),
            nothing(&pass),
            move || m.initialize().map_err(Fault::from),
        ));
    }
    let m = pass.clone();
    trials.push(record::ignorable(
        &run.records,
        name("tools/list"),
        nothing(&pass),
        move || m.tools_list().map_err(Fault::from),
    ));
    let once = run.plan.once();
    for (index, example) in run.manifest.examples.iter().enumerate() {
        // Another shard's (`--partition`).
        if once.get(index).is_none_or(Vec::is_empty) {
            continue;
        }
        trials.push(record::ignorable(
            &run.records,
            name(&example.name),
            nothing(&pass),
            crate::pass::example_judged(run, pass.clone(), index),
        ));
    }
    Some(pass)
}

/// The threads the function pass may compute on: libtest's `--test-threads`, or one per core.
pub(crate) fn threads(args: &Arguments) -> usize {
    args.test_threads
        .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
        .unwrap_or(1)
}

/// Whether the run writes in colour: libtest's `--color`, else the terminal's say.
pub(crate) fn use_color(args: &Arguments) -> bool {
    crate::exit::color(match args.color {
        Some(libtest_mimic::ColorSetting::Always) => Some(true),
        Some(libtest_mimic::ColorSetting::Never) => Some(false),
        _ => None,
    })
}

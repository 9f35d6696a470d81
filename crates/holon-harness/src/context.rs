//! One run's context: what every part of a run reads and writes (its manifest, settings, the
//! trials' records, what `--bless` collects), passed down rather than kept in the process, so
//! two runs in one process are independent.

use std::sync::{Arc, OnceLock};

use crate::measure::{Meter, Plan};
use crate::record::Records;
use crate::settings::Settings;
use holon_bless::Collector;
use holon_core::manifest::Manifest;
use holon_upstream::Upstreams;

/// One run's context, once the checks passed: what every part of the run reads and writes,
/// passed down rather than kept in the process.
pub(crate) struct Run {
    /// The checked manifest, with its compiled gateway.
    pub manifest: Arc<Manifest>,
    /// The settings, resolved once.
    pub settings: Settings,
    /// Where everything the run says goes, scrubbed of its secrets.
    pub reporter: crate::reporter::Reporter,
    /// Each trial's end, for the reports.
    pub records: Arc<Records>,
    /// What the passes saw, when blessing.
    pub bless: Option<Arc<Collector>>,
    /// Each example's line and column, for annotations (under GitHub Actions only).
    pub lines: Option<Vec<(u64, u64)>>,
    /// The upstreams `holon-test.toml` declares, and their proxies.
    pub upstreams: Option<Arc<Upstreams>>,
    /// The runtime every function call of the run runs on, when there is a function.
    pub functions: Option<Arc<Functions>>,
    /// The function mode of a TypeScript or Python agent, when it is the agent function.
    pub adapter: Option<crate::adapter::Adapter>,
    /// How many calls each pass makes of each example.
    pub plan: Plan,
    /// What the measured calls go through, when the run is measured.
    pub meter: Option<Arc<Meter>>,
    /// Each upstream declared, with its price per million tokens when one is given.
    pub prices: Vec<(String, Option<holon_config::TokenPrice>)>,
    /// Where each example says what it expects, for the report of one that differs.
    pub places: Arc<Places>,
    /// The command that writes the agent's answers into the examples (`cargo holon-test
    /// --bless`, or the run's own command line with `--bless`).
    pub bless_command: String,
}

/// Where each example's `output` or `error` key stands in the manifest (line, column), read
/// from the manifest's text the first time a report needs one: a run that passes never reads
/// it.
pub(crate) struct Places {
    manifest: Arc<Manifest>,
    found: OnceLock<Vec<Option<(u64, u64)>>>,
}

impl Places {
    /// Nothing read yet of `manifest`.
    pub(crate) fn new(manifest: Arc<Manifest>) -> Places {
        Places {
            manifest,
            found: OnceLock::new(),
        }
    }

    /// `--> holon.yaml:28:5`, where example `index` says what it expects.
    pub(crate) fn of(&self, index: usize) -> Option<String> {
        let found = self.found.get_or_init(|| {
            let Ok(root) = holon_core::manifest::yaml::parse(&self.manifest.text) else {
                return Vec::new();
            };
            let Some(holon_core::manifest::yaml::Kind::Seq(items)) =
                root.get("examples").map(|n| &n.kind)
            else {
                return Vec::new();
            };
            (items.iter())
                .map(|item| {
                    let key = item.get("output").or_else(|| item.get("error"))?;
                    Some((key.loc.line, key.loc.column))
                })
                .collect()
        });
        let (line, column) = found.get(index).copied().flatten()?;
        let shown = holon_core::message::path_shown(&self.manifest.path);
        Some(format!("--> {shown}:{line}:{column}"))
    }
}

/// The function pass's runtime, which does not wait for its workers when it is dropped: a
/// function that blocks its thread for ever holds one of them to the end of the process, and
/// the run must end all the same.
pub(crate) struct Functions(Option<tokio::runtime::Runtime>);

impl Functions {
    /// A multi-thread runtime of `threads` workers (two at least).
    pub fn new(threads: usize) -> std::io::Result<Functions> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(2))
            .thread_name("holon-function")
            .enable_all()
            .build()
            .map(|runtime| Functions(Some(runtime)))
    }
}

impl std::ops::Deref for Functions {
    type Target = tokio::runtime::Runtime;

    fn deref(&self) -> &tokio::runtime::Runtime {
        match &self.0 {
            Some(runtime) => runtime,
            None => unreachable!("the runtime is taken out only as it is dropped"),
        }
    }
}

impl Drop for Functions {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

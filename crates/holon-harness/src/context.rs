//! One run's context: what every part of a run reads and writes (its manifest, settings, the
//! trials' records, what `--bless` collects), passed down rather than kept in the process, so
//! two runs in one process are independent.

use std::sync::Arc;

use crate::bless;
use crate::record::Records;
use crate::settings::Settings;
use crate::upstream::Upstreams;
use holon_core::manifest::Manifest;

/// One run's context, once the checks passed: what every part of the run reads and writes,
/// passed down rather than kept in the process.
pub(crate) struct Run {
    /// The checked manifest, with its compiled gateway.
    pub manifest: Arc<Manifest>,
    /// The settings, resolved once.
    pub settings: Settings,
    /// Each trial's end, for the reports.
    pub records: Arc<Records>,
    /// What the passes saw, when blessing.
    pub bless: Option<Arc<bless::Collector>>,
    /// Each example's line and column, for annotations (under GitHub Actions only).
    pub lines: Option<Vec<(u64, u64)>>,
    /// The upstreams `holon-test.toml` declares, and their proxies.
    pub upstreams: Option<Arc<Upstreams>>,
    /// The runtime every function call of the run runs on, when there is a function.
    pub functions: Option<Arc<tokio::runtime::Runtime>>,
}

//! What the page shows, before it is HTML: the run's trials, what explore reached, the
//! measurement, and what the run or the reader has to say; written to its file here.

use std::path::PathBuf;

use crate::measure::{Kind, Picture};
use crate::record::Record;
use holon_core::manifest::Manifest;
use holon_explore::Explored;

/// The most examples (and the most passing trials, and failures in full) a page lists one by
/// one; past it the page stays small (a run of 100,000 calls is a page of a few hundred
/// kilobytes) and says how many it left out.
pub(crate) const LISTED: usize = 500;

/// Calls by status, each with how the gateway counts it.
pub(crate) type Statuses = Vec<(String, u64, Kind)>;

/// One trial as the page shows it.
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    /// As libtest names it (`mcp::a short article`).
    pub name: String,
    /// How long it ran, in milliseconds.
    pub ms: u128,
    /// Why it failed, as the terminal said it (the diff in full, or one line for a cause
    /// reported in full for another trial); `None` when it passed.
    pub failure: Option<String>,
}

impl From<&Record> for Trial {
    fn from(record: &Record) -> Trial {
        Trial {
            name: record.name.clone(),
            ms: record.took.as_millis(),
            // As the terminal said it: a trial that failed of a cause another was reported in
            // full for, in one line.
            failure: record.shown.clone().or_else(|| record.failure.clone()),
        }
    }
}

/// What the page is of: a run, or receipts read back.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A run that just ended: libtest's counts, and its exit code.
    Run {
        /// Trials passed, failed, ignored, filtered out.
        counts: (u64, u64, u64, u64),
        /// The run's exit code.
        code: u8,
    },
    /// Receipts files read as one run.
    Receipts(Vec<PathBuf>),
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    /// The agent's name.
    pub agent: String,
    /// The manifest's version.
    pub version: String,
    /// The manifest's path, as the run was given it.
    pub manifest: String,
    /// The command that runs it again, when there is one.
    pub command: Option<String>,
    /// What the page is of.
    pub source: Source,
    /// Every trial that ran, in the order they ended.
    pub trials: Vec<Trial>,
    /// What explore's trials reached, each with the kind of each status.
    pub explored: Vec<(Explored, Statuses)>,
    /// The measurement, for a measured run.
    pub picture: Option<Picture>,
    /// What the run or the reader has to say, a line each.
    pub notes: Vec<String>,
}

impl Page {
    /// A page of `manifest`'s run or receipts, with nothing in it yet.
    pub(crate) fn new(manifest: &Manifest, source: Source) -> Page {
        Page {
            agent: manifest.name.clone(),
            version: manifest.version.to_string(),
            manifest: holon_core::message::path_shown(&manifest.path),
            command: None,
            source,
            trials: Vec::new(),
            explored: Vec::new(),
            picture: None,
            notes: Vec::new(),
        }
    }

    /// What explore's trials reached, each status classed as the gateway counts it.
    pub(crate) fn explore(&mut self, manifest: &Manifest, explored: Vec<Explored>) {
        self.explored = explored
            .into_iter()
            .map(|e| {
                let kinds = (e.statuses.iter())
                    .map(|(code, n)| (code.clone(), *n as u64, kind_of(manifest, code)))
                    .collect();
                (e, kinds)
            })
            .collect();
    }
}

/// How the gateway counts a call that ended in `code`.
fn kind_of(manifest: &Manifest, code: &str) -> Kind {
    if code == "success" {
        Kind::Success
    } else if manifest.error(code).is_some() {
        Kind::Declared
    } else {
        Kind::Against
    }
}

//! The outcome of checking one manifest: every diagnostic, what they count, and the checked
//! manifest when nothing refused it (reached only through [`into_manifest`]).

use std::path::{Path, PathBuf};

use super::diagnostic::{Diagnostic, Severity};
use crate::bump::{Bump, Change};
use crate::manifest::Manifest;
use crate::manifest::identity::Identity;
use crate::manifest::yaml::{Loc, Node};

/// The outcome of checking one manifest.
#[derive(Debug)]
pub struct Report {
    /// The file checked.
    pub path: PathBuf,
    /// Its text (empty when it could not be read as text).
    pub source: String,
    /// Every problem found, errors and warnings, in file order; past a check's first 1,000
    /// problems, one diagnostic of that check counts the rest.
    pub diagnostics: Vec<Diagnostic>,
    pub(super) manifest: Option<Box<Manifest>>,
    /// The tree the checks read, while `manifest` is there: [`into_manifest`] computes the
    /// manifest's identity from it (only what takes the manifest pays for that).
    pub(super) root: Option<Box<Node>>,
    /// Problems found but not in `diagnostics` (errors, warnings), beyond the one diagnostic
    /// that counts them.
    pub(super) unlisted: [usize; 2],
    /// What `--against` found, when the manifest was compared with the published one.
    pub(super) against: Option<Box<Against>>,
}

impl Report {
    /// True when no diagnostic is an error.
    pub fn accepted(&self) -> bool {
        self.errors() == 0
    }

    /// Number of errors found, listed or not.
    pub fn errors(&self) -> usize {
        self.count(Severity::Error, self.unlisted[0])
    }

    /// Number of warnings found, listed or not.
    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning, self.unlisted[1])
    }

    fn count(&self, severity: Severity, unlisted: usize) -> usize {
        let listed = self.diagnostics.iter().filter(|d| d.severity == severity);
        listed.count() + unlisted
    }

    /// Moves the diagnostics `take` picks out of this report, into a report of the same file
    /// (which refuses nothing it did not refuse here, and carries no manifest).
    pub fn split_off(&mut self, take: impl Fn(&Diagnostic) -> bool) -> Report {
        let (taken, kept) = std::mem::take(&mut self.diagnostics)
            .into_iter()
            .partition(|d| take(d));
        self.diagnostics = kept;
        Report {
            path: self.path.clone(),
            source: self.source.clone(),
            diagnostics: taken,
            // What went unlisted stays counted here: it was not looked at.
            unlisted: [0, 0],
            manifest: None,
            root: None,
            against: None,
        }
    }
}

/// The checked manifest a report accepted, or the report that refused it: the one way to a
/// `Manifest`. (A free function, not a method of `Report`, which holon-kit re-exports: the
/// manifest model is the workspace's own.)
pub fn into_manifest(report: Report) -> Result<Manifest, Report> {
    match report.manifest {
        Some(mut m) => {
            let document = report.root.map(|root| root.to_json());
            m.identity = document.as_ref().and_then(Identity::of_document);
            Ok(*m)
        }
        None => Err(report),
    }
}

impl Report {
    /// A refusal of a file that could not be read at all (`file-unreadable`), e.g. a path that
    /// names no manifest.
    pub(crate) fn unreadable(path: &Path, message: impl Into<String>) -> Report {
        Report::refused(path, "file-unreadable", Loc::default(), message)
    }

    /// A refusal of the whole file by one check, at `loc`.
    pub(super) fn refused(
        path: &Path,
        check: &'static str,
        loc: Loc,
        message: impl Into<String>,
    ) -> Report {
        Report {
            path: path.to_path_buf(),
            source: String::new(),
            diagnostics: vec![Diagnostic::error(check, "", loc, message)],
            manifest: None,
            root: None,
            unlisted: [0, 0],
            against: None,
        }
    }
}

/// What `--against` found, as the report carries it for its renderers.
#[derive(Debug)]
pub struct Against {
    /// The published manifest, as messages name it.
    pub label: String,
    /// Its `version`, when it could be read.
    pub version: Option<String>,
    /// The bump the changes need together; `None` when the manifests were not compared.
    pub required: Option<Bump>,
    /// Each difference, located: the largest bump first, then in file order.
    pub changes: Vec<Located>,
}

/// A change and where it is, in the document its side names.
#[derive(Debug)]
pub struct Located {
    /// What changed, and the version it needs.
    pub change: Change,
    /// Its line and column in that document.
    pub loc: Loc,
}

//! The outcome of checking one manifest: every diagnostic, what they count, and the checked
//! manifest when nothing refused it (reached only through [`into_manifest`]).

use std::path::{Path, PathBuf};

use super::diagnostic::{Diagnostic, Severity};
use crate::bump::{Bump, Change};
use crate::ids::{self, Id};
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

/// `read` applied to the located tree of `report`'s manifest: the tree its checks read, while
/// the report holds an accepted manifest (a check added after these, in the test harness, then
/// parses nothing: a thousand examples cost as much to parse again as to check), else the text
/// parsed again; `None` when the text is not YAML. (A free function, as [`into_manifest`] is:
/// the tree is the workspace's own, not part of the `Report` holon-kit re-exports.)
pub fn with_tree<R>(report: &Report, read: impl FnOnce(&Node) -> R) -> Option<R> {
    match report.root.as_deref() {
        Some(root) => Some(read(root)),
        None => crate::manifest::yaml::parse(&report.source)
            .ok()
            .map(|root| read(&root)),
    }
}

/// The checked manifest a report accepted, or the report that refused it: the one way to a
/// `Manifest`. (A free function, not a method of `Report`, which holon-kit re-exports: the
/// manifest model is the workspace's own.)
pub fn into_manifest(report: Report) -> Result<Manifest, Report> {
    if !report.accepted() {
        return Err(report);
    }
    match report.manifest {
        Some(mut m) => {
            m.identity = report.root.as_deref().and_then(Identity::of_tree);
            Ok(*m)
        }
        None => Err(report),
    }
}

/// The check `--bless` can mend: an example's output that `interface.output` no longer admits
/// (a new required field, say) is a difference for the run to write, not a refusal.
pub const MENDED_BY_BLESS: &str = ids::EXAMPLE_OUTPUT_INVALID.name();

/// The report a run that blesses goes by: each `example-output-invalid` error becomes a
/// warning, since the run writes the agent's answer over that output when `interface.output`
/// admits the answer (and checks the rewritten file again before it writes it); every other
/// error still refuses. `check` alone, and a run that does not bless, refuse as before.
pub fn for_bless(mut report: Report) -> Report {
    let mendable = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .all(|d| d.check == MENDED_BY_BLESS);
    if !mendable || report.manifest.is_none() {
        return report;
    }
    for d in &mut report.diagnostics {
        if d.severity == Severity::Error {
            d.severity = Severity::Warning;
            d.hint = Some(
                "`--bless` writes the agent's answer over this output when `interface.output` admits it"
                    .into(),
            );
        }
    }
    // A check lists at most 1,000 problems and counts the rest: those are this check's too.
    report.unlisted = [0, report.unlisted[0] + report.unlisted[1]];
    report
}

impl Report {
    /// A refusal of a file that could not be read at all (`file-unreadable`), e.g. a path that
    /// names no manifest.
    pub(crate) fn unreadable(path: &Path, message: impl Into<String>) -> Report {
        Report::refused(path, ids::FILE_UNREADABLE, Loc::default(), message)
    }

    /// A refusal of the whole file by one check, at `loc`.
    pub(super) fn refused(path: &Path, check: Id, loc: Loc, message: impl Into<String>) -> Report {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// word-stats' manifest with `reading_time_s` renamed in its schema (every example's
    /// output now misses a required field), and with `also` changed in it.
    fn changed(also: impl Fn(String) -> String) -> Report {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/word-stats/holon.yaml");
        let text = std::fs::read_to_string(&path).expect("word-stats' manifest");
        let text = text.replace(
            "required: [characters, words, top_words, reading_time_s]",
            "required: [characters, words, top_words, reading_time_s, language]",
        );
        let text = text.replace(
            "      reading_time_s: { type: integer",
            "      language: { type: string, maxLength: 8, description: The language. }\n      reading_time_s: { type: integer",
        );
        crate::check::check_str(&also(text), &path)
    }

    #[test]
    fn bless_mends_an_output_the_schema_no_longer_admits_and_nothing_else() {
        let report = changed(|t| t);
        assert_eq!(report.errors(), 1, "{:?}", report.diagnostics);
        let report = match into_manifest(report) {
            Ok(_) => panic!("a run that does not bless refuses the manifest"),
            Err(report) => report,
        };
        let blessing = for_bless(report);
        assert!(blessing.accepted(), "{:?}", blessing.diagnostics);
        assert_eq!(blessing.warnings(), 1);
        assert!(
            blessing.diagnostics[0]
                .hint
                .as_deref()
                .is_some_and(|h| h.contains("--bless"))
        );
        assert!(into_manifest(blessing).is_ok());
        // Another error beside it still refuses, blessing or not.
        let worse = changed(|t| t.replace("version: 1.0.0", "version: one"));
        let worse = for_bless(worse);
        assert!(!worse.accepted());
        assert!(into_manifest(worse).is_err());
    }
}

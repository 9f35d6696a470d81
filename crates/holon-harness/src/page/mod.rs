//! `--report PATH.html` and `holon-test report RECEIPTS --out PATH.html`: the run as one page
//! to look at. One self-contained file: inline CSS and SVG the kit draws (`svg`), no script, a
//! Content-Security-Policy that lets nothing be fetched, so it works from `file://` and as a CI
//! artifact. It holds the trials with their failures in full (the diffs), explore (the cases by
//! status, the failure shrunk), the fault trials, and for a measured run the figures the
//! `measure:` lines say, drawn: each example's success rate with its interval, latency against
//! `timeout_s`, the statuses stacked, the upstream spend and the margin. Every text on it is
//! escaped (`escape`). A large run is drawn in aggregate: at most 500 examples and trials
//! are listed one by one (`model::LISTED`), the rest counted.

mod escape;
mod html;
mod model;
mod svg;

use std::path::{Path, PathBuf};

use crate::context::Run;
use crate::error::PageError;
use crate::record::Record;
use holon_core::manifest::Manifest;
use holon_explore::Explored;
pub(crate) use model::{Page, Source, Trial};

impl Page {
    /// The page as HTML.
    pub(crate) fn render(&self) -> String {
        html::render(self)
    }

    /// Writes the page to `path`, its folder made if missing.
    pub(crate) fn write(&self, path: &Path) -> Result<(), PageError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| PageError::Folder {
                dir: dir.to_path_buf(),
                why: lower(&e),
            })?;
        }
        std::fs::write(path, self.render()).map_err(|e| PageError::Write {
            path: path.to_path_buf(),
            why: lower(&e),
        })
    }
}

/// The system's reason, lowercase as every message is.
fn lower(e: &std::io::Error) -> String {
    e.to_string().to_lowercase()
}

/// The page of a run that just ended: its trials, what explore reached, the measurement, and
/// the shared causes' notes; `code` is the run's exit code so far.
pub(crate) fn of_run(
    run: &Run,
    records: &[Record],
    explored: Vec<Explored>,
    conclusion: &libtest_mimic::Conclusion,
    code: u8,
) -> Page {
    let counts = (
        conclusion.num_passed,
        conclusion.num_failed,
        conclusion.num_ignored,
        conclusion.num_filtered_out,
    );
    let mut page = Page::new(&run.manifest, Source::Run { counts, code });
    page.command = Some(run.bless_command.replacen(" --bless", "", 1));
    page.trials = records.iter().map(Trial::from).collect();
    page.explore(&run.manifest, explored);
    page.picture = run.meter.as_ref().and_then(|m| m.picture());
    page.notes = (run.records.shared().iter())
        .map(|shared| {
            run.reporter
                .clean(&crate::record::note(shared))
                .into_owned()
        })
        .collect();
    page
}

/// The page of receipts read back: the measurement, and what the reader had to say.
pub(crate) fn of_receipts(
    manifest: &Manifest,
    files: &[PathBuf],
    measured: crate::measure::Measured,
) -> Page {
    let mut page = Page::new(manifest, Source::Receipts(files.to_vec()));
    page.picture = Some(measured.picture);
    page.notes = measured.notes;
    page
}

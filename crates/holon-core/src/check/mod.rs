//! The publish checks: everything the registry refuses, refused here first, all at once.
//!
//! For a tool that runs them itself, and says them its own way:
//!
//! ```no_run
//! use std::fmt::Write;
//! let report = holon_core::check::check_file(std::path::Path::new("holon.yaml"));
//! let mut located = String::new();
//! for d in &report.diagnostics {
//!     writeln!(located, "{}:{}:{} {} {}", report.path.display(), d.line, d.column, d.check, d.message)?;
//! }
//! // As `holon-test check` says them, and as `--format json` does.
//! let human = holon_core::check::render_human(&report, false);
//! let json = holon_core::check::render_json(&report);
//! # Ok::<(), std::fmt::Error>(())
//! ```

pub mod against;
mod codes;
mod collect;
mod diagnostic;
mod examples;
mod file;
mod keywords;
mod lints;
pub mod render;
mod report;
mod run;
pub mod schema;
mod shape;
mod structure;

use std::path::Path;

pub use diagnostic::{Diagnostic, Severity};
pub use file::MAX_FILE_BYTES;
pub use render::{annotation, render_github};
pub use render::{render_human, render_json};
pub use shape::json_schema;
pub use structure::{suggest, valid_name};

use crate::ids::Id;
use crate::manifest::yaml::Loc;
pub use collect::Diagnostics;
pub use report::{MENDED_BY_BLESS, Report, for_bless, into_manifest, with_tree};

/// One problem of another file the kit reads beside the manifest (`holon-test.toml`, a
/// recording), located in that file.
#[derive(Debug, Clone)]
pub struct Problem {
    /// Stable kebab-case id.
    pub check: Id,
    /// RFC 6901 pointer into the file's document (empty for the whole file).
    pub pointer: String,
    /// Where it is in the file.
    pub loc: Loc,
    /// What is wrong: lowercase, no trailing period, names in backticks.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
}

impl Problem {
    /// A problem at `pointer`, located at `loc`.
    pub fn new(
        check: Id,
        pointer: impl Into<String>,
        loc: Loc,
        message: impl Into<String>,
    ) -> Problem {
        Problem {
            check,
            pointer: pointer.into(),
            loc,
            message: message.into(),
            hint: None,
        }
    }

    /// The same problem with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Problem {
        self.hint = Some(hint.into());
        self
    }
}

/// The report of a file the kit reads beside the manifest: its problems as errors, printed and
/// serialized like a manifest's (rustc style, JSON, annotations). It never holds a manifest.
pub fn file_report(path: &Path, source: &str, problems: Vec<Problem>) -> Report {
    let diagnostics = problems
        .into_iter()
        .map(|p| {
            let d = Diagnostic::error(p.check, p.pointer, p.loc, p.message);
            match p.hint {
                Some(hint) => d.with_hint(hint),
                None => d,
            }
        })
        .collect();
    Report {
        path: path.to_path_buf(),
        source: source.to_string(),
        diagnostics,
        unlisted: [0, 0],
        manifest: None,
        root: None,
        against: None,
    }
}

/// A refusal of a file that could not be read at all (`file-unreadable`), e.g. a path that
/// names no manifest, for a tool that wants the report anyway (`check --format json`).
pub fn unreadable(path: &Path, message: impl Into<String>) -> Report {
    Report::unreadable(path, message)
}

/// The bytes of a manifest file, read as `check` reads it (a regular file only, bounded, never
/// blocking), or why not.
pub fn read_manifest(path: &Path) -> Result<Vec<u8>, String> {
    file::read(path, MAX_FILE_BYTES).map_err(|e| match e {
        file::ReadError::NotRegular(m) | file::ReadError::Unreadable(m) => m,
    })
}

/// Reads and checks a manifest file.
pub fn check_file(path: &Path) -> Report {
    match run::read_file(path) {
        Ok(text) => run::check_source(&text, path, Some(&run::files_dir(path))),
        Err(refusal) => *refusal,
    }
}

/// Checks manifest text; `path` names it in messages. File handles in examples are not
/// looked up (the runtime checks its embedded manifest this way, far from any `files/`).
pub fn check_str(text: &str, path: &Path) -> Report {
    run::check_source(text, path, None)
}

/// Checks text as if it were the file at `path`, file handles looked up in `files/` beside it:
/// `--bless` checks a rewrite this way before it writes it.
pub fn check_as_file(text: &str, path: &Path) -> Report {
    run::check_source(text, path, Some(&run::files_dir(path)))
}

//! The publish checks: everything the registry refuses, refused here first, all at once.
//!
//! For a tool that runs them itself:
//!
//! ```no_run
//! let report = holon_core::check::check_file(std::path::Path::new("holon.yaml"));
//! for d in &report.diagnostics {
//!     println!("{}:{}:{} {} {}", report.path.display(), d.line, d.column, d.check, d.message);
//! }
//! if !report.accepted() {
//!     eprint!("{}", holon_core::check::render_human(&report, false));
//! }
//! println!("{}", holon_core::check::render_json(&report));
//! ```

mod codes;
mod collect;
mod diagnostic;
mod examples;
mod file;
mod lints;
pub mod render;
mod report;
pub mod schema;
mod shape;
mod structure;

use std::path::Path;
use std::sync::Arc;

pub use diagnostic::{Diagnostic, Severity};
pub use render::{annotation, render_github};
pub use render::{render_human, render_json};
pub use shape::json_schema;
pub use structure::{suggest, valid_name};

use crate::gateway::Gateway;
use crate::manifest::yaml::{self, Kind, Loc, Node};
use crate::manifest::{ErrorDecl, Interface, Manifest};
pub use collect::Diagnostics;
pub use report::{MENDED_BY_BLESS, Report, for_bless, into_manifest};

/// Largest manifest file read at all.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// One problem of another file the kit reads beside the manifest (`holon-test.toml`, a
/// recording), located in that file.
#[derive(Debug, Clone)]
pub struct Problem {
    /// Stable kebab-case id.
    pub check: &'static str,
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
        check: &'static str,
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
    let fail = |message: String| Report::unreadable(path, message);
    let bytes = match file::read(path, MAX_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(file::ReadError::Unreadable(message)) => return fail(message),
        Err(file::ReadError::NotRegular(message)) => {
            return Report::refused(path, "file-not-regular", Loc::default(), message);
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => {
            let dir = crate::manifest::folder_of(path);
            check_source(&text, path, Some(&dir.join("files")))
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            // Everything before the bad byte is text, so the byte has a line and a column.
            let text = e
                .as_bytes()
                .get(..at)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default();
            let last_line = text.rsplit('\n').next().unwrap_or_default();
            let loc = Loc {
                line: text.matches('\n').count() as u64 + 1,
                column: last_line.chars().count() as u64 + 1,
            };
            Report::refused(
                path,
                "file-not-text",
                loc,
                format!("the file is not UTF-8 text (invalid byte at offset {at})"),
            )
        }
    }
}

/// Checks manifest text; `path` names it in messages. File handles in examples are not
/// looked up (the runtime checks its embedded manifest this way, far from any `files/`).
pub fn check_str(text: &str, path: &Path) -> Report {
    check_source(text, path, None)
}

/// Checks text as if it were the file at `path`, file handles looked up in `files/` beside it:
/// `--bless` checks a rewrite this way before it writes it.
pub fn check_as_file(text: &str, path: &Path) -> Report {
    let dir = crate::manifest::folder_of(path);
    check_source(text, path, Some(&dir.join("files")))
}

fn check_source(text: &str, path: &Path, files_dir: Option<&Path>) -> Report {
    let (mut out, unlisted, manifest, root) = match parse(text) {
        Ok(root) => {
            let mut found = Diagnostics::new(&root);
            let manifest = run(path, files_dir, &mut found).map(|mut m| {
                m.text = Arc::from(text);
                m
            });
            let found = found.into_found();
            (found.list, found.unlisted, manifest, Some(Box::new(root)))
        }
        Err(refusal) => (vec![refusal], [0, 0], None, None),
    };
    out.sort_by(|a, b| {
        (a.line, a.column)
            .cmp(&(b.line, b.column))
            .then(a.severity.cmp_key().cmp(&b.severity.cmp_key()))
    });
    // Kept where `--bless` could mend every error (`for_bless`); `into_manifest` takes it only
    // from a report that refuses nothing.
    let manifest =
        if (out.iter()).any(|d| d.severity == Severity::Error && d.check != MENDED_BY_BLESS) {
            None
        } else {
            manifest.map(Box::new)
        };
    Report {
        path: path.to_path_buf(),
        source: text.to_string(),
        diagnostics: out,
        root: manifest.as_ref().and(root),
        manifest,
        unlisted,
    }
}

impl Severity {
    fn cmp_key(self) -> u8 {
        match self {
            Severity::Error => 0,
            Severity::Warning => 1,
        }
    }
}

/// The text as a located tree whose root is a mapping, or the one diagnostic that refuses it.
fn parse(text: &str) -> Result<Node, Diagnostic> {
    // Only blanks, comments and document markers: nothing an author wrote yet.
    let blank = |l: &str| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    };
    if text.lines().all(blank) {
        return Err(Diagnostic::error(
            "empty-manifest",
            "",
            Loc { line: 1, column: 1 },
            "the manifest is empty",
        )
        .with_hint("run `cargo holon-test new NAME` to start from a template"));
    }
    let root =
        yaml::parse(text).map_err(|e| Diagnostic::error(e.check, e.pointer, e.loc, e.message))?;
    if !matches!(root.kind, Kind::Map(_)) {
        return Err(Diagnostic::error(
            "wrong-type",
            "",
            root.loc,
            format!("the manifest must be a mapping, not {}", root.type_name()),
        ));
    }
    Ok(root)
}

/// Every check on the tree in `out`; the manifest, when every part of it could be read.
fn run(path: &Path, files_dir: Option<&Path>, out: &mut Diagnostics) -> Option<Manifest> {
    let root = out.root();
    let parts = structure::read(out);
    // Each schema's subschemas are found once, for every check and lint that reads them.
    let input = (parts.input.as_ref()).map(|s| (s, schema::subschemas(s, "/interface/input")));
    let output = (parts.output.as_ref()).map(|s| (s, schema::subschemas(s, "/interface/output")));
    // The validators the checks compile are the ones the examples are validated with.
    let input_validator =
        (input.as_ref()).and_then(|(s, subs)| schema::check(s, "/interface/input", subs, out));
    let output_validator =
        (output.as_ref()).and_then(|(s, subs)| schema::check(s, "/interface/output", subs, out));
    if let Some((s, subs)) = &input {
        lints::input(s, subs, out);
        lints::empty_keywords(subs, out);
    }
    if let Some((_, subs)) = &output {
        lints::output(subs, out);
        lints::empty_keywords(subs, out);
    }
    codes::check(&parts.errors, out);
    let errors_node = root.get("interface").and_then(|i| i.get("errors"));
    let errors_known = errors_node.is_none_or(|n| matches!(n.kind, Kind::Seq(_)));
    let examples = examples::check(
        &parts.examples,
        &examples::Context {
            input: input_validator.as_ref(),
            output: output_validator.as_ref(),
            errors: &parts.errors,
            errors_known,
            limits: parts.limits,
            files_dir,
        },
        out,
    );
    error_examples_lint(&parts, &examples, out);
    let limits = parts.limits?;
    let errors: Vec<ErrorDecl> = parts.errors.into_iter().map(|(_, d)| d).collect();
    Some(Manifest {
        path: path.to_path_buf(),
        name: parts.name?,
        version: parts.version?,
        description: parts.description?,
        capability: parts.capability?,
        interface: Interface {
            input: parts.input?,
            output: parts.output?,
            errors: errors.clone(),
        },
        runtime: crate::manifest::Runtime {
            tool: parts.tool?,
            limits,
        },
        pricing: parts.pricing?,
        source: parts.source,
        examples,
        gateway: Arc::new(Gateway::new(
            input_validator?,
            output_validator?,
            limits.max_input_bytes,
            errors.clone(),
        )),
        text: Arc::from(""),
        identity: None,
    })
}

fn error_examples_lint(
    parts: &structure::Parts,
    examples: &[crate::manifest::Example],
    out: &mut Diagnostics,
) {
    let used: std::collections::HashSet<&str> = (examples.iter())
        .filter_map(|e| match &e.expect {
            crate::manifest::Expect::Error(c) => Some(c.as_str()),
            crate::manifest::Expect::Output(_) => None,
        })
        .collect();
    for (i, decl) in &parts.errors {
        if !used.contains(decl.code.as_str()) {
            out.warning(
                "error-without-example",
                format!("/interface/errors/{i}/code"),
                format!("declared error `{}` has no example", decl.code),
            )
            .hint(
                "add an example whose `error` is this code, so the tests prove the agent raises it",
            );
        }
    }
}

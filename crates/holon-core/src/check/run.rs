//! The checks in order: a manifest file read as text, the text as a located tree, every check
//! on the tree, and the report they make, with the manifest when nothing refused it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::collect::Diagnostics;
use super::diagnostic::{Diagnostic, Severity};
use super::file::{self, MAX_FILE_BYTES};
use super::report::{MENDED_BY_BLESS, Report};
use super::{codes, examples, keywords, lints, schema, structure};
use crate::gateway::Gateway;
use crate::ids;
use crate::manifest::yaml::{self, Kind, Loc, Node};
use crate::manifest::{ErrorDecl, Interface, Manifest};

/// The `files/` folder beside the manifest at `path`, where its examples' handles are.
pub(super) fn files_dir(path: &Path) -> PathBuf {
    crate::manifest::folder_of(path).join("files")
}

/// A manifest file's text, read as [`check_file`] reads it, or the report that refuses it.
pub(super) fn read_file(path: &Path) -> Result<String, Box<Report>> {
    let bytes = match file::read(path, MAX_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(file::ReadError::Unreadable(message)) => {
            return Err(Box::new(Report::unreadable(path, message)));
        }
        Err(file::ReadError::NotRegular(message)) => {
            let refused = Report::refused(path, ids::FILE_NOT_REGULAR, Loc::default(), message);
            return Err(Box::new(refused));
        }
    };
    String::from_utf8(bytes).map_err(|e| {
        let (loc, message) = text_of(e.as_bytes()).err().unwrap_or_default();
        Box::new(Report::refused(path, ids::FILE_NOT_TEXT, loc, message))
    })
}

/// The bytes of a manifest as text, or where the first byte that is not UTF-8 is and a message
/// that says so.
pub(super) fn text_of(bytes: &[u8]) -> Result<&str, (Loc, String)> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        // Everything before the bad byte is text, so the byte has a line and a column.
        let text = bytes
            .get(..at)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default();
        let last_line = text.rsplit('\n').next().unwrap_or_default();
        let loc = Loc {
            line: text.matches('\n').count() as u64 + 1,
            column: last_line.chars().count() as u64 + 1,
        };
        (
            loc,
            format!("the file is not UTF-8 text (invalid byte at offset {at})"),
        )
    })
}

pub(super) fn check_source(text: &str, path: &Path, files_dir: Option<&Path>) -> Report {
    match parse(text) {
        Ok(root) => {
            let mut report = check_parsed(text, path, files_dir, Ok(&root));
            report.keep_tree(Some(Box::new(root)));
            report
        }
        Err(refusal) => check_parsed(text, path, files_dir, Err(refusal)),
    }
}

/// The checks of `text`, already read into the tree `parsed` (or refused by the reader): the
/// report holds no tree ([`Report::keep_tree`]).
pub(super) fn check_parsed(
    text: &str,
    path: &Path,
    files_dir: Option<&Path>,
    parsed: Result<&Node, Diagnostic>,
) -> Report {
    let (mut out, unlisted, manifest) = match parsed {
        Ok(root) => {
            let mut found = Diagnostics::new(root);
            let manifest = checks(path, files_dir, &mut found).map(|mut m| {
                m.text = Arc::from(text);
                m
            });
            let found = found.into_found();
            (found.list, found.unlisted, manifest)
        }
        Err(refusal) => (vec![refusal], [0, 0], None),
    };
    sort(&mut out);
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
        root: None,
        manifest,
        unlisted,
        against: None,
    }
}

/// Diagnostics in file order, errors before warnings at one place.
pub(super) fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (a.line, a.column)
            .cmp(&(b.line, b.column))
            .then(a.severity.cmp_key().cmp(&b.severity.cmp_key()))
    });
}

impl Report {
    /// Keeps the tree the checks read while the report holds a manifest, for [`into_manifest`]
    /// to compute the manifest's identity from; a refused report drops it.
    pub(super) fn keep_tree(&mut self, root: Option<Box<Node>>) {
        self.root = self.manifest.as_ref().and(root);
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
pub(super) fn parse(text: &str) -> Result<Node, Diagnostic> {
    parse_by(text, yaml::parse)
}

/// [`parse`], the YAML read by `read` (which reads as [`yaml::parse`] does).
pub(super) fn parse_by(
    text: &str,
    read: impl FnOnce(&str) -> Result<Node, yaml::YamlError>,
) -> Result<Node, Diagnostic> {
    // Only blanks, comments and document markers: nothing an author wrote yet.
    let blank = |l: &str| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    };
    if text.lines().all(blank) {
        return Err(Diagnostic::error(
            ids::EMPTY_MANIFEST,
            "",
            Loc { line: 1, column: 1 },
            "the manifest is empty",
        )
        .with_hint("run `cargo holon-test new NAME` to start from a template"));
    }
    let root = read(text).map_err(|e| Diagnostic::error(e.check, e.pointer, e.loc, e.message))?;
    if !matches!(root.kind, Kind::Map(_)) {
        return Err(Diagnostic::error(
            ids::WRONG_TYPE,
            "",
            root.loc,
            format!("the manifest must be a mapping, not {}", root.type_name()),
        ));
    }
    Ok(root)
}

/// Every check on the tree in `out`; the manifest, when every part of it could be read.
fn checks(path: &Path, files_dir: Option<&Path>, out: &mut Diagnostics) -> Option<Manifest> {
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
        keywords::check(subs, out);
    }
    if let Some((_, subs)) = &output {
        lints::output(subs, out);
        lints::empty_keywords(subs, out);
        keywords::check(subs, out);
    }
    codes::check(&parts.errors, out);
    let errors_node = root.get("interface").and_then(|i| i.get("errors"));
    let errors_known = errors_node.is_none_or(|n| matches!(n.kind, Kind::Seq(_)));
    let examples = examples::check(
        root.get("examples").is_some(),
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
    // With no `examples` at all, the structure pass said so (once, at a misspelt key when that
    // is why): no example is the one fact, not three.
    if root.get("examples").is_some() {
        error_examples_lint(&parts, &examples, out);
    }
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
            // A transient code cannot be an example (`--bless` and `call --save` never write
            // one): a fault trial is what proves it.
            let hint = if decl.retryable {
                "a code marked `retryable: true` is transient, so no example can show it (`--bless` and `call --save` never write one): a fault trial that reaches it proves the agent raises it, and the run then drops this warning (the fault trials run on the upstreams `holon-test.toml` declares)"
            } else {
                "add an example whose `error` is this code, so the tests prove the agent raises it"
            };
            out.warning(
                ids::ERROR_WITHOUT_EXAMPLE,
                format!("/interface/errors/{i}/code"),
                format!("declared error `{}` has no example", decl.code),
            )
            .hint(hint);
        }
    }
}

//! `check --against`: the manifest compared with the one published ([`crate::bump`]), and the
//! version that allows. A published version is immutable: with any difference, `version` must be
//! greater than the published one (`version-not-bumped`), and by at least the bump the
//! differences need (`version-bump-too-small`). What cannot be compared says why, as a
//! diagnostic like any other: the published manifest unreadable (`against-unreadable`), refused
//! by its own checks (`against-refused`, and what could be read is compared), or another
//! agent's (`against-other-agent`).
//!
//! The published manifest is read and checked on a thread of its own while this one is: the
//! two are as large as each other, and comparing them takes a fraction of either.

use std::path::Path;

use semver::Version;

use super::collect::Diagnostics;
use std::sync::OnceLock;

pub use super::report::{Against, Located};

use super::diagnostic::{Diagnostic, Severity};
use super::report::Report;
use super::run::{check_parsed, files_dir, parse, parse_by, read_file, sort, text_of};
use crate::bump::{self, Bump, Side};
use crate::ids::{self, Id};
use crate::manifest::reuse;
use crate::manifest::yaml::{Kind, Loc, Locator, Node};

/// The published manifest to compare with: where it was read from, and its bytes or why they
/// could not be read.
#[derive(Debug)]
pub struct Published {
    /// How messages name it: the path given, or `REV:path` for a git revision.
    pub label: String,
    /// Its bytes, or why they could not be read.
    pub bytes: Result<Vec<u8>, Unreadable>,
}

/// Why the published manifest could not be read, and what to do about it.
#[derive(Debug, Clone)]
pub struct Unreadable {
    /// What went wrong: lowercase, names in backticks.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
}

/// The largest stack the published manifest's side gets on its thread: the main thread's usual
/// size, since the YAML reader recurses once per level of nesting.
const STACK: usize = 8 * 1024 * 1024;

/// Checks the manifest at `path`, then compares it with `published`: the report holds the
/// publish checks' diagnostics, the version's, and the comparison (`render_human` lists the
/// changes, `render_json` writes them under `against`).
///
/// The published manifest is read, checked and compared on a thread of its own while this one
/// is read and checked. Where it shares most of its lines with this one, it is read through
/// this one's tree (`manifest::reuse`), which costs a fraction of reading it whole.
pub fn check_against(path: &Path, published: Published) -> Report {
    let (text, refusal) = match read_file(path) {
        Ok(text) => (Some(text), None),
        Err(refusal) => (None, Some(refusal)),
    };
    let known = text.as_deref();
    // This manifest's tree, once read: the other thread waits for it, and a guard sets it
    // (as unread) on every way out, so that it never waits for ever.
    let tree: OnceLock<Result<Node, Diagnostic>> = OnceLock::new();
    let (theirs, report) = std::thread::scope(|scope| {
        let side = || published_side(&published, known, &tree);
        let spawned = std::thread::Builder::new()
            .name("against".into())
            .stack_size(STACK)
            .spawn_scoped(scope, side);
        let fill = Fill(&tree);
        let report = known.map(|text| {
            let parsed = tree.get_or_init(|| parse(text)).as_ref();
            check_parsed(
                text,
                path,
                Some(&files_dir(path)),
                parsed.map_err(Clone::clone),
            )
        });
        drop(fill);
        let theirs = match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(Unreadable {
                    message: format!(
                        "the published manifest `{}` could not be checked",
                        published.label
                    ),
                    hint: None,
                })
            }),
            // No thread to be had: the same work here.
            Err(_) => published_side(&published, known, &tree),
        };
        (theirs, report)
    });
    let mut report = match (report, refusal) {
        (Some(report), _) => report,
        (None, Some(refusal)) => *refusal,
        (None, None) => Report::unreadable(path, "the manifest was not read"),
    };
    let new = tree.into_inner().and_then(Result::ok);
    let mut found = Vec::new();
    let against = match theirs {
        Err(why) => {
            found.push((
                ids::AGAINST_UNREADABLE,
                String::new(),
                why.message,
                why.hint,
            ));
            Against {
                label: published.label,
                version: None,
                required: None,
                changes: Vec::new(),
            }
        }
        Ok(side) => {
            if let Some(refusal) = side.refused {
                found.push((ids::AGAINST_REFUSED, String::new(), refusal, None));
            }
            found.extend(side.found);
            side.against
        }
    };
    add(&mut report, new.as_ref(), found);
    report.against = Some(Box::new(against));
    // A comparison that refuses the manifest leaves it no checked manifest to run; one that
    // accepts it keeps the tree its identity is computed from.
    if !report.accepted() {
        report.manifest = None;
    }
    report.keep_tree(new.map(Box::new));
    report
}

/// Sets the tree, as unread, when it was not set: on a panic of the thread that reads it, the
/// thread that waits for it goes on.
struct Fill<'a>(&'a OnceLock<Result<Node, Diagnostic>>);

impl Drop for Fill<'_> {
    fn drop(&mut self) {
        let _ = self.0.set(Err(Diagnostic::error(
            ids::FILE_UNREADABLE,
            "",
            Loc::default(),
            "the manifest was not read",
        )));
    }
}

/// What the published manifest's side found: whether its own checks refused it, the
/// comparison, and the version's diagnostics.
struct Theirs {
    refused: Option<String>,
    against: Against,
    found: Vec<Found>,
}

/// The published manifest read (through `known`'s tree where it can be), checked, and compared
/// with this manifest's tree once that is read.
fn published_side(
    published: &Published,
    known: Option<&str>,
    tree: &OnceLock<Result<Node, Diagnostic>>,
) -> Result<Theirs, Unreadable> {
    let label = &published.label;
    let bytes = published.bytes.as_ref().map_err(Clone::clone)?;
    let text = text_of(bytes).map_err(|(loc, message)| Unreadable {
        message: format!(
            "the published manifest `{label}` cannot be read: {message} (at {label}:{}:{})",
            loc.line, loc.column
        ),
        hint: None,
    })?;
    // This manifest, once read: only when there is a text to read.
    let ours = || known.and_then(|_| tree.wait().as_ref().ok());
    let plan = known.and_then(|known| reuse::plan(text, known));
    let parsed = match (plan, known) {
        (Some(plan), Some(known)) => match ours() {
            Some(new) => parse_by(text, |t| reuse::parse(t, Some(&plan), known, new)),
            None => parse(text),
        },
        _ => parse(text),
    };
    let report = check_parsed(
        text,
        Path::new(label),
        None,
        parsed.as_ref().map_err(Clone::clone),
    );
    let first_error = report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error);
    let Ok(old) = parsed else {
        let why = first_error.map_or_else(String::new, |d| {
            format!(
                ": {} (`{}` at {label}:{}:{})",
                d.message, d.check, d.line, d.column
            )
        });
        return Err(Unreadable {
            message: format!(
                "the published manifest `{label}` cannot be compared: it is not a manifest{why}"
            ),
            hint: None,
        });
    };
    let refused = first_error.map(|d| {
        let errors = report.errors();
        format!(
            "the published manifest `{label}` fails its own publish checks ({errors} error{}, the first `{}` at {label}:{}:{}: {}): what could be read was compared",
            if errors == 1 { "" } else { "s" },
            d.check,
            d.line,
            d.column,
            d.message
        )
    });
    let mut found = Vec::new();
    let against = compare(label.clone(), &old, ours(), &mut found);
    Ok(Theirs {
        refused,
        against,
        found,
    })
}

/// A diagnostic `--against` adds: its check, pointer, message and hint.
type Found = (Id, String, String, Option<String>);

/// The comparison of the published tree `old` with `new` (`None` when this manifest could not
/// be read: its own diagnostics say why), and the version's diagnostics.
fn compare(label: String, old: &Node, new: Option<&Node>, found: &mut Vec<Found>) -> Against {
    let version = string(old, "version").map(str::to_string);
    let mut against = Against {
        label,
        version,
        required: None,
        changes: Vec::new(),
    };
    let Some(new) = new else {
        return against;
    };
    if let (Some(theirs), Some(ours)) = (string(old, "name"), string(new, "name"))
        && theirs != ours
    {
        found.push((
            ids::AGAINST_OTHER_AGENT,
            "/name".to_string(),
            format!(
                "`name` is `{ours}`, and the published manifest `{}` is `{theirs}`'s: another agent, not a version of this one, so nothing was compared",
                against.label
            ),
            Some("compare with a version of this agent's own manifest".to_string()),
        ));
        return against;
    }
    let changes = bump::compare(old, new);
    let required = bump::required(&changes);
    let (in_new, in_old) = (Locator::new(new), Locator::new(old));
    let mut located: Vec<Located> = (changes.into_iter())
        .map(|change| {
            let loc = match change.side {
                Side::Manifest => locate(&in_new, &change.pointer),
                Side::Published => locate(&in_old, &change.pointer),
            };
            Located { change, loc }
        })
        .collect();
    located.sort_by(|a, b| {
        (b.change.bump.cmp(&a.change.bump))
            .then(a.change.side.cmp(&b.change.side))
            .then((a.loc.line, a.loc.column).cmp(&(b.loc.line, b.loc.column)))
    });
    if let (Some(theirs), Some(ours)) = (semver_of(old), semver_of(new)) {
        version_rule(&theirs, &ours, required, &located, found);
    }
    against.required = Some(required);
    against.changes = located;
    against
}

/// Where a change is: a mapping's member at its key (where "`maxLength` lowered" or "property
/// removed" reads best), anything else at its node.
fn locate(tree: &Locator, at: &str) -> Loc {
    at.rsplit_once('/')
        .and_then(|(parent, last)| tree.locate_key(parent, &crate::pointer::unescape(last)))
        .unwrap_or_else(|| tree.locate(at))
}

/// `version-not-bumped` and `version-bump-too-small`.
fn version_rule(
    theirs: &Version,
    ours: &Version,
    required: Bump,
    changes: &[Located],
    found: &mut Vec<Found>,
) {
    let Some(first) = changes.iter().find(|c| c.change.bump == required) else {
        return;
    };
    let need = required.name();
    let next = next_version(theirs, required);
    let pointer = match first.change.pointer.as_str() {
        "" => "/",
        p => p,
    };
    let which = match changes.len() {
        1 => format!(
            "1 change, which needs a {need} version (at `{pointer}`: {})",
            first.change.message
        ),
        n => format!(
            "{n} changes; the first that needs a {need} version is at `{pointer}`: {}",
            first.change.message
        ),
    };
    let hint = format!(
        "set `version` to `{next}`, a {need} version after `{theirs}`{}",
        zero_note(theirs, required)
    );
    let order = ours.cmp_precedence(theirs);
    if order != std::cmp::Ordering::Greater {
        let said = if order == std::cmp::Ordering::Equal {
            format!("`version` is still `{ours}`, the published version")
        } else {
            format!("`version` is `{ours}`, below the published `{theirs}`")
        };
        found.push((
            ids::VERSION_NOT_BUMPED,
            "/version".to_string(),
            format!(
                "{said}: a published version is immutable, and this manifest differs from it in {which}"
            ),
            Some(hint),
        ));
        return;
    }
    let achieved = achieved(theirs, ours);
    if achieved < required {
        let which = match changes.len() {
            1 => format!(
                "the 1 change since needs a {need} version (at `{pointer}`: {})",
                first.change.message
            ),
            n => format!(
                "the {n} changes since need a {need} version; the first that does is at `{pointer}`: {}",
                first.change.message
            ),
        };
        found.push((
            ids::VERSION_BUMP_TOO_SMALL,
            "/version".to_string(),
            format!(
                "`version` `{ours}` is a {} version after the published `{theirs}`, but {which}",
                achieved.name()
            ),
            Some(hint),
        ));
    }
}

/// The bump from `theirs` to the greater `ours`. Below 1.0.0 a major change bumps the minor
/// number (and below 0.1.0 the patch number), as Cargo reads versions; a release after its
/// own pre-release promises nothing about the pre-release, so it is any bump.
fn achieved(theirs: &Version, ours: &Version) -> Bump {
    if ours.major > theirs.major {
        return Bump::Major;
    }
    let triple = |v: &Version| (v.major, v.minor, v.patch);
    if triple(ours) == triple(theirs) {
        return Bump::Major;
    }
    match (theirs.major, theirs.minor) {
        (0, 0) => Bump::Major,
        (0, _) if ours.minor > theirs.minor => Bump::Major,
        (0, _) => Bump::Minor,
        _ if ours.minor > theirs.minor => Bump::Minor,
        _ => Bump::Patch,
    }
}

/// The smallest version after `theirs` that makes a `need` bump.
fn next_version(theirs: &Version, need: Bump) -> Version {
    if !theirs.pre.is_empty() {
        return Version::new(theirs.major, theirs.minor, theirs.patch);
    }
    let (major, minor, patch) = (theirs.major, theirs.minor, theirs.patch);
    match (need, major, minor) {
        (Bump::Major, 0, 0) => Version::new(0, 0, patch + 1),
        (Bump::Major, 0, _) => Version::new(0, minor + 1, 0),
        (Bump::Major, _, _) => Version::new(major + 1, 0, 0),
        (Bump::Minor, 0, _) => Version::new(0, minor, patch + 1),
        (Bump::Minor, _, _) => Version::new(major, minor + 1, 0),
        _ => Version::new(major, minor, patch + 1),
    }
}

/// How a version below 1.0.0 counts, when that is what the hint relies on.
fn zero_note(theirs: &Version, need: Bump) -> &'static str {
    match (theirs.major, need) {
        (0, Bump::Major | Bump::Minor) => {
            " (below 1.0.0, a major change bumps the minor number and a minor one the patch number, as Cargo reads versions)"
        }
        _ => "",
    }
}

fn string<'a>(root: &'a Node, key: &str) -> Option<&'a str> {
    match &root.get(key)?.kind {
        Kind::String(s) => Some(s.as_str()),
        _ => None,
    }
}

fn semver_of(root: &Node) -> Option<Version> {
    Version::parse(string(root, "version")?.trim()).ok()
}

/// Adds the diagnostics `--against` found to the report, located in this manifest's tree
/// (when it could be read), in file order among the others.
fn add(report: &mut Report, new: Option<&Node>, found: Vec<Found>) {
    let mut added: Vec<Diagnostic> = match new {
        Some(tree) => {
            let mut out = Diagnostics::new(tree);
            for (check, pointer, message, hint) in found {
                let added = out.error(check, pointer, message);
                if let Some(hint) = hint {
                    added.hint(hint);
                }
            }
            out.into_list()
        }
        None => (found.into_iter())
            .map(|(check, pointer, message, hint)| {
                let d = Diagnostic::error(check, pointer, Loc::default(), message);
                match hint {
                    Some(hint) => d.with_hint(hint),
                    None => d,
                }
            })
            .collect(),
    };
    // A problem of the whole comparison is of the whole file: line 0, as `render_human`
    // shows one.
    for d in &mut added {
        if d.pointer.is_empty() {
            d.line = 0;
            d.column = 0;
        }
    }
    report.diagnostics.extend(added);
    sort(&mut report.diagnostics);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn the_bump_a_version_makes_counts_zero_versions_as_cargo_does() {
        assert_eq!(achieved(&v("1.2.3"), &v("2.0.0")), Bump::Major);
        assert_eq!(achieved(&v("1.2.3"), &v("1.3.0")), Bump::Minor);
        assert_eq!(achieved(&v("1.2.3"), &v("1.2.4")), Bump::Patch);
        assert_eq!(achieved(&v("1.2.3"), &v("1.2.4-rc.1")), Bump::Patch);
        assert_eq!(achieved(&v("0.2.3"), &v("0.3.0")), Bump::Major);
        assert_eq!(achieved(&v("0.2.3"), &v("0.2.4")), Bump::Minor);
        assert_eq!(achieved(&v("0.0.3"), &v("0.0.4")), Bump::Major);
        assert_eq!(achieved(&v("2.0.0-rc.1"), &v("2.0.0")), Bump::Major);
    }

    #[test]
    fn the_next_version_is_the_smallest_that_makes_the_bump() {
        assert_eq!(next_version(&v("1.2.3"), Bump::Major), v("2.0.0"));
        assert_eq!(next_version(&v("1.2.3"), Bump::Minor), v("1.3.0"));
        assert_eq!(next_version(&v("1.2.3"), Bump::Patch), v("1.2.4"));
        assert_eq!(next_version(&v("0.2.3"), Bump::Major), v("0.3.0"));
        assert_eq!(next_version(&v("0.2.3"), Bump::Minor), v("0.2.4"));
        assert_eq!(next_version(&v("0.0.3"), Bump::Minor), v("0.0.4"));
        assert_eq!(next_version(&v("2.0.0-rc.1"), Bump::Major), v("2.0.0"));
        for (from, need) in [
            ("1.2.3", Bump::Major),
            ("1.2.3", Bump::Minor),
            ("1.2.3", Bump::Patch),
            ("0.2.3", Bump::Major),
            ("0.2.3", Bump::Minor),
            ("0.0.3", Bump::Patch),
        ] {
            let next = next_version(&v(from), need);
            assert!(achieved(&v(from), &next) >= need, "{from} -> {next}");
        }
    }
}

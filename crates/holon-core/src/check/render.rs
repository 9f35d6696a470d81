//! Printing a report: rustc-style text for people, one JSON document for tools.

use std::collections::HashMap;
use std::fmt::Write;

use super::report::Against;
use super::{Diagnostic, Report, Severity};
use crate::bump::{Bump, Side};

/// The command a hint names for `explain` when the caller does not say how the author runs the
/// kit: the name every install gives it.
pub const PROGRAM: &str = "holon-test";

/// The report as rustc prints diagnostics: `error[id]: message`, the location, the source line
/// with a caret, the hint, and a summary line; each hint ends by naming `holon-test explain ID`.
pub fn render_human(report: &Report, color: bool) -> String {
    human(report, color, PROGRAM)
}

/// [`render_human`], each hint naming `explain` as the author runs the kit: `program` is
/// `cargo holon-test`, `holon-test`, or however the author typed it.
pub fn human(report: &Report, color: bool, program: &str) -> String {
    let mut lines = Lines {
        text: report.source.lines().collect(),
        marks: HashMap::new(),
    };
    let shown = report.path.display().to_string();
    let mut out = String::new();
    for d in &report.diagnostics {
        diagnostic(&mut out, d, &mut lines, (&shown, program), color);
    }
    if let Some(against) = &report.against {
        changes(&mut out, against, &shown, color);
    }
    let (errors, warnings) = (report.errors(), report.warnings());
    let plural = |n: usize, w: &str| {
        if n == 1 {
            format!("1 {w}")
        } else {
            format!("{n} {w}s")
        }
    };
    if errors > 0 {
        let _ = writeln!(
            out,
            "{}: `{shown}` refused: {}, {}",
            paint(color, "1;31", "error"),
            plural(errors, "error"),
            plural(warnings, "warning")
        );
    } else {
        let _ = writeln!(
            out,
            "{}: `{shown}` accepted with {}",
            paint(color, "1;32", "ok"),
            plural(warnings, "warning")
        );
    }
    out
}

/// What `--against` found: a line that says against what and which version the changes need,
/// then each change on a line of its own, under its bump (major, minor, patch), with where it
/// is (the published manifest's place for what was removed) and its pointer.
fn changes(out: &mut String, against: &Against, shown: &str, color: bool) {
    let label = &against.label;
    let version = (against.version.as_ref())
        .map(|v| format!(" (version {v})"))
        .unwrap_or_default();
    let Some(required) = against.required else {
        let _ = writeln!(
            out,
            "{}: against `{label}`{version}: not compared (the errors above say why)\n",
            paint(color, "1", "note")
        );
        return;
    };
    let summary = match (required, against.changes.len()) {
        (Bump::None, _) => "the same document: no new version needed".to_string(),
        (_, 1) => format!("1 change, which needs a {} version", required.name()),
        (_, n) => format!("{n} changes, which need a {} version", required.name()),
    };
    let _ = writeln!(
        out,
        "{}: against `{label}`{version}: {summary}",
        paint(color, "1", "note")
    );
    for bump in [Bump::Major, Bump::Minor, Bump::Patch] {
        let mut group = against.changes.iter().filter(|c| c.change.bump == bump);
        let Some(first) = group.next() else {
            continue;
        };
        let style = match bump {
            Bump::Major => "1;31",
            Bump::Minor => "1;33",
            _ => "1;34",
        };
        let _ = writeln!(out, "{}", paint(color, style, &format!("{}:", bump.name())));
        for c in std::iter::once(first).chain(group) {
            let file = match c.change.side {
                Side::Manifest => shown,
                Side::Published => label.as_str(),
            };
            let place = if c.loc.line > 0 {
                format!("{file}:{}:{}", c.loc.line, c.loc.column)
            } else {
                file.to_string()
            };
            let pointer = if c.change.pointer.is_empty() {
                String::new()
            } else {
                format!(" {}", c.change.pointer)
            };
            let _ = writeln!(out, "  {place}{pointer}: {}", c.change.message);
        }
    }
    out.push('\n');
}

/// `text` in the ANSI style `code`, when colour is on.
fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// A diagnostic's hint as a report prints it: what to do, when the check says, then where the
/// id is explained (`run `holon-test explain ID``).
pub fn hint(d: &Diagnostic, program: &str) -> String {
    let explain = format!("run `{program} explain {}`", d.check);
    match &d.hint {
        Some(hint) if hint.ends_with('?') => format!("{hint} {explain}"),
        Some(hint) => format!("{hint}; {explain}"),
        None => explain,
    }
}

/// One diagnostic: the headline, the location, the source line with a caret, the hint.
fn diagnostic(
    out: &mut String,
    d: &Diagnostic,
    lines: &mut Lines,
    (shown, program): (&str, &str),
    color: bool,
) {
    let paint = |code: &str, text: &str| paint(color, code, text);
    let (label, code) = match d.severity {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
    };
    let _ = writeln!(
        out,
        "{}{}",
        paint(code, &format!("{label}[{}]", d.check)),
        paint("1", &format!(": {}", d.message))
    );
    let gutter_width = d.line.to_string().len();
    let pad = " ".repeat(gutter_width);
    if d.line > 0 {
        let _ = writeln!(
            out,
            "{pad}{} {shown}:{}:{}",
            paint("1;34", "-->"),
            d.line,
            d.column
        );
        if let Some((text, before)) =
            lines.window((d.line - 1) as usize, d.column.saturating_sub(1) as usize)
        {
            let bar = paint("1;34", "|");
            let _ = writeln!(out, "{pad} {bar}");
            let _ = writeln!(out, "{} {bar} {}", paint("1;34", &d.line.to_string()), text);
            let caret_at = text
                .chars()
                .take(before)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect::<String>();
            let _ = writeln!(out, "{pad} {bar} {caret_at}{}", paint(code, "^"));
        }
    } else {
        let _ = writeln!(out, "{pad}{} {shown}", paint("1;34", "-->"));
    }
    let _ = writeln!(
        out,
        "{pad} {} hint: {}",
        paint("1;34", "="),
        hint(d, program)
    );
    out.push('\n');
}

/// Widest source line shown whole; a longer one (a payload written on one line can be megabytes)
/// is cut to a window around the column.
const MAX_SHOWN: usize = 100;

/// Every how many characters a long line's byte offset is noted.
const STRIDE: usize = 1024;

/// The source's lines, and for each long line a diagnostic was shown on, its [`Marks`]: many
/// diagnostics on one long line (a flow mapping of unknown keys) cost a window each, not a
/// count of the line each.
struct Lines<'a> {
    text: Vec<&'a str>,
    marks: HashMap<usize, Marks>,
}

impl Lines<'_> {
    /// Line `index` (from 0), as [`window`] cuts it around the character `before`.
    fn window(&mut self, index: usize, before: usize) -> Option<(String, usize)> {
        let line = self.text.get(index)?.trim_end();
        if line.len() <= MAX_SHOWN {
            return Some((line.to_string(), before));
        }
        let marks = self.marks.entry(index).or_insert_with(|| Marks::of(line));
        Some(marks.window(line, before))
    }
}

/// A long line's length in characters, and the byte offset of every [`STRIDE`]th character.
struct Marks {
    chars: usize,
    offsets: Vec<usize>,
}

impl Marks {
    fn of(line: &str) -> Marks {
        let mut marks = Marks {
            chars: 0,
            offsets: Vec::new(),
        };
        for (at, _) in line.char_indices() {
            if marks.chars.is_multiple_of(STRIDE) {
                marks.offsets.push(at);
            }
            marks.chars += 1;
        }
        marks
    }

    /// The byte offset of character `n` of `line` (its length past the end).
    fn byte(&self, line: &str, n: usize) -> usize {
        let mark = n / STRIDE;
        let from = self.offsets.get(mark).copied().unwrap_or(line.len());
        line.get(from..)
            .and_then(|rest| rest.char_indices().nth(n - mark * STRIDE))
            .map_or(line.len(), |(at, _)| from + at)
    }

    /// The part of `line` to print and how many of its characters come before the caret.
    fn window(&self, line: &str, before: usize) -> (String, usize) {
        let len = self.chars;
        if len <= MAX_SHOWN {
            return (line.to_string(), before);
        }
        let start = before.saturating_sub(MAX_SHOWN / 2).min(len - MAX_SHOWN);
        let (from, to) = (self.byte(line, start), self.byte(line, start + MAX_SHOWN));
        let mut shown = line.get(from..to).unwrap_or_default().to_string();
        let mut caret = before - start;
        if start > 0 {
            shown.insert_str(0, "...");
            caret += 3;
        }
        if start + MAX_SHOWN < len {
            shown.push_str("...");
        }
        (shown, caret)
    }
}

/// The part of `line` to print and how many of its characters come before the caret.
#[cfg(test)]
fn window(line: &str, before: usize) -> (String, usize) {
    Marks::of(line).window(line, before)
}

/// The report as one JSON document:
/// `{"manifest", "accepted", "diagnostics": [{severity, check, pointer, line, column, message}]}`,
/// and after a comparison with the published manifest, `"against": {"manifest", "version",
/// "required_bump", "changes": [{pointer, bump, message}]}`.
pub fn render_json(report: &Report) -> String {
    let mut doc = serde_json::json!({
        "manifest": report.path.display().to_string(),
        "accepted": report.accepted(),
        "diagnostics": report.diagnostics,
    });
    if let (Some(against), serde_json::Value::Object(fields)) = (&report.against, &mut doc) {
        let changes: Vec<serde_json::Value> = (against.changes.iter())
            .map(|c| {
                serde_json::json!({
                    "pointer": c.change.pointer,
                    "bump": c.change.bump.name(),
                    "message": c.change.message,
                })
            })
            .collect();
        fields.insert(
            "against".into(),
            serde_json::json!({
                "manifest": against.label,
                "version": against.version,
                "required_bump": against.required.map(Bump::name),
                "changes": changes,
            }),
        );
    }
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The report as GitHub Actions workflow commands, one line a diagnostic
/// (`::error file=F,line=L,col=C,title=ID::message`, then the hint), so each shows on the pull
/// request's diff at its line. `file` is the manifest's path as the workflow sees it (relative
/// to the repository's root); `program` is how the hint names `explain`.
pub fn render_github(report: &Report, file: &str, program: &str) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let message = format!("{}\nhint: {}", d.message, hint(d, program));
        out.push_str(&annotation(
            level, file, d.line, d.column, d.check, &message,
        ));
        out.push('\n');
    }
    out
}

/// One workflow command, escaped as GitHub's runner reads it: `%`, CR and LF in the message;
/// also `:` and `,` in a property (a path may hold either). Line 0 means the whole file.
pub fn annotation(
    level: &str,
    file: &str,
    line: u64,
    column: u64,
    title: &str,
    message: &str,
) -> String {
    let mut props = format!("file={}", escape_property(file));
    if line > 0 {
        props.push_str(&format!(",line={line}"));
        if column > 0 {
            props.push_str(&format!(",col={column}"));
        }
    }
    props.push_str(&format!(",title={}", escape_property(title)));
    format!("::{level} {props}::{}", escape_data(message))
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::window;

    #[test]
    fn annotations_escape_as_the_runner_reads_them() {
        assert_eq!(
            super::annotation(
                "error",
                "a,b:c.yaml",
                3,
                7,
                "yaml-syntax",
                "50% off\r\nnext: line"
            ),
            "::error file=a%2Cb%3Ac.yaml,line=3,col=7,title=yaml-syntax::50%25 off%0D%0Anext: line"
        );
        assert_eq!(
            super::annotation("warning", "m\n.yaml", 0, 0, "t", "whole file"),
            "::warning file=m%0A.yaml,title=t::whole file"
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_caret() {
        assert_eq!(window("a: 1", 3), ("a: 1".to_string(), 3));
        let line = format!("{}X{}", "a".repeat(1000), "b".repeat(1000));
        let (shown, caret) = window(&line, 1000);
        assert_eq!(shown.chars().nth(caret), Some('X'), "{shown}");
        assert!(
            shown.starts_with("...") && shown.ends_with("..."),
            "{shown}"
        );
        assert_eq!(shown.chars().count(), 106);
        let (shown, caret) = window(&line, 1999);
        assert_eq!(shown.chars().nth(caret), Some('b'));
        assert!(!shown.ends_with("..."));
    }

    #[test]
    fn colour_paints_the_same_text() {
        let report = crate::check::check_str(
            "name: Bad Name\nversion: 1\n",
            std::path::Path::new("holon.yaml"),
        );
        let plain = super::render_human(&report, false);
        let painted = super::render_human(&report, true);
        assert!(
            painted.contains("\x1b[1;31merror[invalid-name]\x1b[0m"),
            "{painted}"
        );
        assert!(painted.contains("\x1b[1;34m-->\x1b[0m"), "{painted}");
        assert!(painted.contains("\x1b[1;31merror\x1b[0m: `holon.yaml` refused"));
        let mut stripped = String::new();
        let mut rest = painted.as_str();
        while let Some(at) = rest.find('\x1b') {
            stripped.push_str(&rest[..at]);
            rest = &rest[at + rest[at..].find('m').unwrap() + 1..];
        }
        stripped.push_str(rest);
        assert_eq!(stripped, plain);
        assert!(!plain.contains('\x1b'));
    }
}

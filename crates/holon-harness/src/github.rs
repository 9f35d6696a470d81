//! GitHub Actions annotations: when `GITHUB_ACTIONS=true`, check diagnostics and failing example
//! trials are also printed as workflow commands, so each shows on the pull request's diff at
//! its line in `holon.yaml`.

use std::path::Path;

use super::record::Record;
use super::reporter::{Event, Reporter};
use holon_core::check::{self, Report};
use holon_core::manifest::Manifest;

/// True inside a GitHub Actions job.
pub fn enabled() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// The manifest's path as the workflow names files: relative to the repository's root
/// (`GITHUB_WORKSPACE`) when it lies inside it, else as given.
pub fn file_for(path: &Path) -> String {
    let inside = std::env::var_os("GITHUB_WORKSPACE").and_then(|root| {
        let root = std::fs::canonicalize(root).ok()?;
        let file = std::fs::canonicalize(path).ok()?;
        file.strip_prefix(&root).ok().map(Path::to_path_buf)
    });
    inside
        .as_deref()
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Every diagnostic of `report` as a workflow command, a line each, the hints naming
/// `program`'s `explain`.
pub fn render_check(report: &Report, program: &str) -> String {
    check::render_github(report, &file_for(&report.path), program)
}

/// Where each example starts in the manifest (line, column), by index.
pub fn example_lines(report: &Report) -> Vec<(u64, u64)> {
    use holon_core::manifest::yaml::Kind;
    let lines =
        holon_core::check::with_tree(report, |root| match root.get("examples").map(|n| &n.kind) {
            Some(Kind::Seq(items)) => items.iter().map(|n| (n.loc.line, n.loc.column)).collect(),
            _ => Vec::new(),
        });
    lines.unwrap_or_default()
}

/// Every failed example trial as an `::error` at its example's line, with the first line of
/// the reason (for an output that differs, its first differing path) and the gateway status; a
/// failed trial of no example (`mcp::tools/list`) on the file as a whole.
pub(crate) fn annotate_failures(
    reporter: &Reporter,
    (manifest, lines): (&Manifest, &[(u64, u64)]),
    records: &[Record],
) {
    let file = file_for(&manifest.path);
    for record in records {
        let Some(failure) = &record.failure else {
            continue;
        };
        let example = record
            .name
            .split_once("::")
            .and_then(|(_, name)| manifest.examples.iter().position(|e| e.name == name));
        let (line, column) = example
            .and_then(|i| lines.get(i).copied())
            .unwrap_or((0, 0));
        let first = failure
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("failed");
        let reason = match &record.cause {
            Some(cause) => format!("{first}; gateway status: {}", cause.status),
            None => first.to_string(),
        };
        let annotation = check::annotation("error", &file, line, column, &record.name, &reason);
        reporter.emit(Event::Output(format!("{annotation}\n")));
    }
}

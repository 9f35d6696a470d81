//! `explain ID`: what a diagnostic id means, why the registry or the gateway cares, a manifest
//! that triggers it and the fix, as `rustc --explain` does; `explain --list` (or no id) lists
//! every id. The table is `holon_core::ids`.

use holon_core::ids::{self, Entry, Severity};

/// What `explain` prints on stdout: the explanation of `asked` (any case, or pasted from a
/// report as `warning[string-unbounded]`), or every id when there is none or `list`; for an
/// unknown id, the error to print on stderr, naming the nearest id. `program` is how the
/// author runs the kit.
pub fn answer(asked: Option<&str>, list: bool, program: &str) -> Result<String, String> {
    let asked = asked.filter(|a| !a.trim().is_empty() && !list);
    let Some(asked) = asked else {
        return Ok(listing());
    };
    match ids::find(asked) {
        Ok(entry) => Ok(explanation(entry)),
        Err(nearest) => Err(format!(
            "error: no diagnostic has the id `{}` (did you mean `{}`?)\n  = hint: `{program} explain --list` lists every id",
            asked.trim(),
            nearest.id
        )),
    }
}

/// One line an id: the id, its severity, what it means.
fn listing() -> String {
    let width = ids::ENTRIES.iter().map(|e| e.id.len()).max().unwrap_or(0);
    ids::ENTRIES
        .iter()
        .map(|e| format!("{:width$}  {:7}  {}\n", e.id, severity(e), e.summary))
        .collect()
}

/// The id's headline, then its explanation.
fn explanation(entry: &Entry) -> String {
    format!(
        "{}[{}]: {}\n\n{}",
        severity(entry),
        entry.id,
        entry.summary,
        entry.text
    )
}

/// `error` or `warning`, as a report prints it.
fn severity(entry: &Entry) -> &'static str {
    match entry.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

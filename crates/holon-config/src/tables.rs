//! What reading `holon-test.toml`'s tables shares: where a byte offset is (line and column),
//! and the problems every table reports alike (an unknown key with its "did you mean", a value
//! of the wrong type), each located as the publish checks locate a manifest's.

use toml::Spanned;
use toml::de::DeValue;

use holon_core::check::Problem;
use holon_core::ids;
use holon_core::manifest::yaml::Loc;

/// `unknown-field` for the key `name` (at `at`, `loc`) in `within` (`[server]`, a price), with
/// the closest of `known` as a hint, or `otherwise`.
pub(crate) fn unknown(
    name: &str,
    at: impl Into<String>,
    loc: Loc,
    within: &str,
    known: &[&str],
    otherwise: &str,
) -> Problem {
    let p = Problem::new(
        ids::UNKNOWN_FIELD,
        at,
        loc,
        format!("unknown field `{name}` in {within}"),
    );
    match holon_core::check::suggest(name, known) {
        Some(s) => p.hint(format!("did you mean `{s}`?")),
        None => p.hint(otherwise),
    }
}

pub(crate) fn wrong_type(
    text: &str,
    at: &str,
    value: &Spanned<DeValue<'_>>,
    want: &str,
) -> Problem {
    Problem::new(
        ids::WRONG_TYPE,
        at,
        loc(text, value.span().start),
        format!("expected {want}, found {}", value.get_ref().type_str()),
    )
}

/// Line and column (from 1, in characters) of a byte offset.
pub(crate) fn loc(text: &str, at: usize) -> Loc {
    let before = text.get(..at).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Loc {
        line: before.matches('\n').count() as u64 + 1,
        column: before.get(line_start..).unwrap_or("").chars().count() as u64 + 1,
    }
}

/// Where a table's header is, for a problem of the whole table.
pub(crate) fn find_table(text: &str, header: &str) -> Loc {
    loc(text, text.find(header).unwrap_or(0))
}

/// `invalid-value` for a value of the right type that is not one the key takes: "`name` is
/// what, not `value`" (`what`: "a whole number of at least 0").
pub(crate) fn not_one(
    text: &str,
    at: impl Into<String>,
    name: &str,
    value: &Spanned<DeValue<'_>>,
    what: &str,
) -> Problem {
    Problem::new(
        ids::INVALID_VALUE,
        at,
        loc(text, value.span().start),
        format!(
            "`{name}` is {what}, not `{}`",
            text.get(value.span()).unwrap_or("")
        ),
    )
}

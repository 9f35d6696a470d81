//! Every key of a schema in `interface` is a keyword of JSON Schema 2020-12 or an extension of
//! the author's own (`x-...`): the gateway's validator ignores any other, so `requried` in
//! `interface.output` leaves every field optional without a word. A warning, since the registry
//! accepts it; with a "did you mean" when a keyword is one slip away.

use super::collect::Diagnostics;
use super::diagnostic::dotted;
use super::schema::Subschemas;
use crate::gateway::schema::{KEYWORDS, is_keyword};
use crate::ids::{self, Id};

/// The check's id.
const UNKNOWN: Id = ids::SCHEMA_UNKNOWN_KEYWORD;

/// Keywords of earlier drafts that 2020-12 renamed or replaced: what to write instead.
const RENAMED: &[(&str, &str)] = &[
    ("definitions", "`$defs`"),
    ("dependencies", "`dependentRequired` or `dependentSchemas`"),
    (
        "additionalItems",
        "`items` (beside `prefixItems`, it says what 2019-09's `additionalItems` said)",
    ),
    ("$recursiveRef", "`$dynamicRef`"),
    ("$recursiveAnchor", "`$dynamicAnchor`"),
];

/// A warning for each key of a subschema in `subs` that no 2020-12 vocabulary reads. One pass
/// over the keys, each looked up in a fixed list: linear in the schema's size. A key whose value
/// is `null` is left to `schema-empty-keyword`, which says what most likely happened.
pub fn check(subs: &Subschemas, out: &mut Diagnostics) {
    for (ptr, obj) in subs {
        for (key, value) in obj.iter() {
            if is_keyword(key) || value.is_null() {
                continue;
            }
            if out.full(UNKNOWN) {
                out.tally(UNKNOWN);
                continue;
            }
            let (at, loc) = out.key(ptr, key);
            let place = if ptr.is_empty() {
                String::new()
            } else {
                format!(" in `{}`", dotted(ptr))
            };
            let renamed = RENAMED.iter().find(|(old, _)| old == key);
            let near = nearest(key);
            let mut message = format!(
                "`{key}`{place} is not a keyword of JSON Schema 2020-12: the gateway ignores it"
            );
            let hint = match (renamed, near) {
                (Some((_, instead)), _) => format!("2020-12 names it {instead}"),
                (None, Some(known)) => {
                    message.push_str(&format!(", and checks no `{known}` here"));
                    format!("did you mean `{known}`?")
                }
                (None, None) => format!(
                    "an annotation of your own starts with `x-` (`x-{key}`), which every tool leaves alone"
                ),
            };
            out.warning(UNKNOWN, at, message).at(loc).hint(hint);
        }
    }
}

/// The keyword one slip away from `key`: the same word in another case, or one edit (a letter
/// added, dropped, changed, or two swapped) away, two for a long word. A word no closer is
/// not guessed at: `unit` is not `uniqueItems`.
fn nearest(key: &str) -> Option<&'static str> {
    let lower = key.to_lowercase();
    let allowed = if key.chars().count() >= 8 { 2 } else { 1 };
    KEYWORDS
        .iter()
        .map(|k| (strsim::osa_distance(&lower, &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_keyword_one_slip_away_is_named_and_a_word_further_is_not() {
        for (typo, meant) in [
            ("requried", "required"),
            ("maxLenght", "maxLength"),
            ("propertis", "properties"),
            ("additonalProperties", "additionalProperties"),
            ("minimun", "minimum"),
            ("maxlength", "maxLength"),
            ("tpye", "type"),
            ("example", "examples"),
        ] {
            assert_eq!(nearest(typo), Some(meant), "{typo}");
        }
        for far in ["unit", "nullable", "color", "x"] {
            assert_eq!(nearest(far), None, "{far}");
        }
    }
}

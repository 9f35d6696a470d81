//! The diff printed when an answer differs from its example: by JSON path, then side by side.
//! Numbers are compared as `holon_core::json::equal` compares them, by value and exactly: `1`
//! and `1.0` are the same, and two integers past 2^53 that differ are told apart.

use std::fmt::Write;

use serde_json::Value;

use holon_core::json::number_equal;
use holon_core::message::{short, type_of};
use holon_core::pointer;

/// The most differences printed by path; the count of the others follows them.
const SHOWN: usize = 20;

/// How the answer differs from the example at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The example has a member or an item there; the answer does not.
    Missing,
    /// The answer has a member or an item the example does not.
    Extra,
    /// Values of different JSON types: the answer's, then the example's (`a string`,
    /// `an integer`).
    Type(&'static str, &'static str),
    /// Values of one type that differ.
    Value,
}

impl Kind {
    /// The difference in a few words, the same for every place it occurs.
    pub fn words(&self) -> String {
        match self {
            Kind::Missing => "missing from the answer".to_string(),
            Kind::Extra => "not in the example".to_string(),
            Kind::Type(actual, expected) => format!("{actual} where the example has {expected}"),
            Kind::Value => "another value".to_string(),
        }
    }
}

/// One place where the answer differs from the example.
#[derive(Debug, Clone)]
pub struct Difference<'a> {
    /// The RFC 6901 pointer of the place (`/top_words/0/count`; empty for the whole value).
    pub path: String,
    /// How it differs.
    pub kind: Kind,
    /// The example's value there, if it has one.
    pub expected: Option<&'a Value>,
    /// The answer's value there, if it has one.
    pub actual: Option<&'a Value>,
}

impl Difference<'_> {
    /// The place for a message: the pointer in backticks, `/` for the whole value.
    pub fn place(&self) -> String {
        if self.path.is_empty() {
            "`/`".to_string()
        } else {
            format!("`{}`", self.path)
        }
    }
}

/// Every place where `actual` differs from `expected`, in the example's order (members the
/// answer adds come after the example's own), found without recursion.
pub fn differences<'a>(expected: &'a Value, actual: &'a Value) -> Vec<Difference<'a>> {
    let missing = |path, ev| {
        Step::Found(Difference {
            path,
            kind: Kind::Missing,
            expected: Some(ev),
            actual: None,
        })
    };
    let extra = |path, av| {
        Step::Found(Difference {
            path,
            kind: Kind::Extra,
            expected: None,
            actual: Some(av),
        })
    };
    let mut found = Vec::new();
    let mut stack = vec![Step::Compare(String::new(), expected, actual)];
    while let Some(step) = stack.pop() {
        let (path, e, a) = match step {
            Step::Found(d) => {
                found.push(d);
                continue;
            }
            Step::Compare(path, e, a) => (path, e, a),
        };
        let mut next = Vec::new();
        match (e, a) {
            (Value::Object(em), Value::Object(am)) => {
                for (key, ev) in em {
                    let at = pointer::child(&path, key);
                    next.push(match am.get(key) {
                        Some(av) => Step::Compare(at, ev, av),
                        None => missing(at, ev),
                    });
                }
                for (key, av) in am.iter().filter(|(k, _)| !em.contains_key(*k)) {
                    next.push(extra(pointer::child(&path, key), av));
                }
            }
            (Value::Array(ei), Value::Array(ai)) => {
                for (i, (ev, av)) in ei.iter().zip(ai).enumerate() {
                    next.push(Step::Compare(format!("{path}/{i}"), ev, av));
                }
                for (i, ev) in ei.iter().enumerate().skip(ai.len()) {
                    next.push(missing(format!("{path}/{i}"), ev));
                }
                for (i, av) in ai.iter().enumerate().skip(ei.len()) {
                    next.push(extra(format!("{path}/{i}"), av));
                }
            }
            (Value::Number(x), Value::Number(y)) if number_equal(x, y) => {}
            (Value::Number(_), Value::Number(_)) => next.push(value(path, e, a, Kind::Value)),
            _ if std::mem::discriminant(e) != std::mem::discriminant(a) => {
                next.push(value(path, e, a, Kind::Type(type_of(a), type_of(e))));
            }
            _ if e != a => next.push(value(path, e, a, Kind::Value)),
            _ => {}
        }
        // Reversed onto the stack, so that they come off it in order.
        stack.extend(next.into_iter().rev());
    }
    found
}

/// What is left of a walk, in order: a pair of values to compare, or a difference found.
enum Step<'a> {
    Compare(String, &'a Value, &'a Value),
    Found(Difference<'a>),
}

/// A difference between the two values at `path`.
fn value<'a>(path: String, e: &'a Value, a: &'a Value, kind: Kind) -> Step<'a> {
    Step::Found(Difference {
        path,
        kind,
        expected: Some(e),
        actual: Some(a),
    })
}

/// The differences between what the agent returned and the example, by JSON path, then
/// side by side.
pub fn diff(expected: &Value, actual: &Value) -> String {
    let mut out = String::new();
    let found = differences(expected, actual);
    if !found.is_empty() {
        let _ = writeln!(out, "differences by path:");
        for d in found.iter().take(SHOWN) {
            let _ = writeln!(out, "  {}", line(d));
        }
        if found.len() > SHOWN {
            let _ = writeln!(out, "  (and {} more)", found.len() - SHOWN);
        }
    }
    let left = serde_json::to_string_pretty(expected).unwrap_or_default();
    let right = serde_json::to_string_pretty(actual).unwrap_or_default();
    let _ = writeln!(out, "side by side (< expected, > actual):");
    // The comparison's own header (`Diff < left / right > :`) would say it twice.
    let compared = pretty_assertions::StrComparison::new(&left, &right).to_string();
    let body = compared
        .split_once('\n')
        .map_or(compared.as_str(), |(_, b)| b);
    let _ = write!(out, "{body}");
    out
}

/// One difference on one line: the place, then both sides.
fn line(d: &Difference) -> String {
    let shown = |v: Option<&Value>| v.map_or_else(String::new, short);
    match &d.kind {
        Kind::Missing => format!(
            "{}: missing from the answer; the example has {}",
            d.place(),
            shown(d.expected)
        ),
        Kind::Extra => format!(
            "{}: not in the example; the answer has {}",
            d.place(),
            shown(d.actual)
        ),
        Kind::Type(actual, expected) => format!(
            "{}: the answer has {} ({actual}), the example {} ({expected})",
            d.place(),
            shown(d.actual),
            shown(d.expected)
        ),
        Kind::Value => format!(
            "{}: the answer has {}, the example {}",
            d.place(),
            shown(d.actual),
            shown(d.expected)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_names_the_path() {
        let d = diff(&json!({"words": 11}), &json!({"words": "11"}));
        assert!(
            d.contains("`/words`: the answer has \"11\" (a string), the example 11 (an integer)"),
            "{d}"
        );
    }

    #[test]
    fn numbers_differ_exactly_as_equality_says() {
        // Past 2^53 a float cannot tell these apart; equality can, and so must the diff.
        let (big, bigger) = (
            json!({"n": 9007199254740993u64}),
            json!({"n": 9007199254740992u64}),
        );
        assert!(!holon_core::json::equal(&big, &bigger));
        let found = differences(&big, &bigger);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].path.as_str(), &found[0].kind),
            ("/n", &Kind::Value)
        );
        // `1` and `1.0` are the same number.
        assert!(differences(&json!([1, {"a": 2.0}]), &json!([1.0, {"a": 2}])).is_empty());
    }

    #[test]
    fn every_kind_of_difference_in_the_example_s_order() {
        let expected = json!({"a": 1, "b": [1, 2, 3], "c": {"d": true}, "e": "x"});
        let actual = json!({"a": 1, "b": [1, 5], "c": {"d": "true"}, "f": null});
        let found: Vec<(String, Kind)> = differences(&expected, &actual)
            .into_iter()
            .map(|d| (d.path, d.kind))
            .collect();
        assert_eq!(
            found,
            [
                ("/b/1".to_string(), Kind::Value),
                ("/b/2".to_string(), Kind::Missing),
                ("/c/d".to_string(), Kind::Type("a string", "a boolean")),
                ("/e".to_string(), Kind::Missing),
                ("/f".to_string(), Kind::Extra),
            ]
        );
    }

    #[test]
    fn many_differences_are_cut_and_counted() {
        let expected = Value::Array((0..50).map(|i| json!(i)).collect());
        let actual = Value::Array((0..50).map(|i| json!(i + 1)).collect());
        let d = diff(&expected, &actual);
        assert!(
            d.contains("`/19`: the answer has 20, the example 19"),
            "{d}"
        );
        assert!(!d.contains("`/20`:"), "{d}");
        assert!(d.contains("  (and 30 more)\n"), "{d}");
    }
}

//! Deep equality of JSON values, numbers by value, and the diff printed when they differ.

use std::fmt::Write;

use assert_json_diff::{CompareMode, Config, NumericMode, assert_json_matches_no_panic};
use serde_json::Value;

/// Deep equality: same shape, same keys (in any order), same strings and booleans, numbers
/// equal by value (`1` equals `1.0`, `"1"` does not). Iterative, so no payload overflows it.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if number_eq(x, y) => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y))
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                // Both sides usually list their keys in the same order (the manifest's, the
                // output type's): pair them without hashing, looking up only where orders part.
                for ((kx, xv), (ky, yv)) in x.iter().zip(y) {
                    if kx == ky {
                        stack.push((xv, yv));
                    } else {
                        match y.get(kx) {
                            Some(yv) => stack.push((xv, yv)),
                            None => return false,
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

fn number_eq(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The differences between what the agent returned and the example, by JSON path, then
/// side by side.
pub fn diff(expected: &Value, actual: &Value) -> String {
    let mut out = String::new();
    let config = Config::new(CompareMode::Strict).numeric_mode(NumericMode::AssumeFloat);
    if let Err(paths) = assert_json_matches_no_panic(actual, expected, config) {
        let paths = paths.replace("lhs", "actual").replace("rhs", "expected");
        let _ = writeln!(
            out,
            "differences by path (`actual` is what the agent returned):"
        );
        for line in paths.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let left = serde_json::to_string_pretty(expected).unwrap_or_default();
    let right = serde_json::to_string_pretty(actual).unwrap_or_default();
    let _ = writeln!(out, "side by side (< expected, > actual):");
    let _ = write!(
        out,
        "{}",
        pretty_assertions::StrComparison::new(&left, &right)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_nothing_else_is_loose() {
        assert!(json_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": "1"})));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!json_eq(&json!({"a": 0.33}), &json!({"a": 0.3})));
        assert!(!json_eq(&json!([1, 2]), &json!([2, 1])));
        assert!(json_eq(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
        assert!(json_eq(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"a": 1, "c": 3, "b": 2})
        ));
        assert!(!json_eq(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"a": 1, "c": 2, "b": 3})
        ));
        assert!(!json_eq(&json!({"a": 1, "b": 2}), &json!({"a": 1, "c": 2})));
    }

    #[test]
    fn diff_names_the_path() {
        let d = diff(&json!({"words": 11}), &json!({"words": "11"}));
        assert!(d.contains(".words"), "{d}");
    }
}

//! The diff printed when an answer differs from its example: by JSON path, then side by side.
//! (Equality itself is `holon_core::json::equal`.)

use std::fmt::Write;

use assert_json_diff::{CompareMode, Config, NumericMode, assert_json_matches_no_panic};
use serde_json::Value;

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
    fn diff_names_the_path() {
        let d = diff(&json!({"words": 11}), &json!({"words": "11"}));
        assert!(d.contains(".words"), "{d}");
    }
}

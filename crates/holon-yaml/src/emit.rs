//! JSON values written as YAML: scalars quoted only where YAML needs it, flow collections in
//! the style the author used, block collections at a given indentation.

use serde_json::Value;

/// How the author wrote the flow collection being replaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flow {
    /// `{ a: 1 }` rather than `{a: 1}` (mappings only).
    pub padded: bool,
    /// JSON inside YAML: `{"a": "x"}`, every key and string quoted.
    pub json: bool,
}

impl Flow {
    /// JSON inside YAML, unpadded: `{"a": "x", "b": [1]}`.
    pub const JSON: Flow = Flow {
        padded: false,
        json: true,
    };

    /// The style of an existing flow collection's text.
    pub fn of(text: &str) -> Flow {
        let inner = text.get(1..).unwrap_or("");
        Flow {
            padded: inner.starts_with([' ', '\t']),
            json: inner.trim_start().starts_with('"'),
        }
    }
}

/// A value on one line as JSON text that is also a YAML flow node (`{"a": "x", "b": [1]}`),
/// every key and string quoted, the characters YAML does not allow raw escaped: a node that reads
/// back the same in any YAML reader and in any JSON reader.
pub fn json(value: &Value) -> String {
    flow(value, Flow::JSON)
}

/// A value on one line, as flow YAML.
pub fn flow(value: &Value, style: Flow) -> String {
    let mut out = String::new();
    flow_into(&mut out, value, style);
    out
}

fn flow_into(out: &mut String, value: &Value, style: Flow) {
    let (open, close) = if style.padded {
        ("{ ", " }")
    } else {
        ("{", "}")
    };
    match value {
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) => {
            out.push_str(open);
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&string(k, true, style.json));
                out.push_str(": ");
                flow_into(out, v, style);
            }
            out.push_str(close);
        }
        Value::Array(items) => {
            // Authors pad mappings (`{ text: "" }`) but rarely sequences (`[text]`).
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow_into(out, v, style);
            }
            out.push(']');
        }
        scalar => out.push_str(&self::scalar(scalar, true, style.json)),
    }
}

/// A scalar, as YAML reads it back to the same JSON value.
pub fn scalar(value: &Value, in_flow: bool, json: bool) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s, in_flow, json),
        // Only scalars reach here; a collection is written whole on one line.
        other => flow(other, Flow::default()),
    }
}

/// A value over several lines in block style, every line indented by `indent` spaces, lines
/// joined by `nl`, no line break at the end. A child that fits within `width` stays on one line
/// in flow style, as an author writes `- { word: a, count: 1 }`.
pub fn block(value: &Value, indent: usize, nl: &str, width: usize, style: Flow) -> String {
    let mut lines = Vec::new();
    block_lines(&mut lines, value, indent, width, style);
    lines.join(nl)
}

fn fits(value: &Value, used: usize, width: usize, style: Flow) -> Option<String> {
    let text = match value {
        Value::Object(_) | Value::Array(_) => flow(value, style),
        scalar => self::scalar(scalar, false, style.json),
    };
    (used + text.chars().count() <= width || !is_collection(value)).then_some(text)
}

fn is_collection(value: &Value) -> bool {
    match value {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn block_lines(lines: &mut Vec<String>, value: &Value, indent: usize, width: usize, style: Flow) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let head = format!("{pad}{}:", string(k, false, style.json));
                match fits(v, head.chars().count() + 1, width, style) {
                    Some(text) => lines.push(format!("{head} {text}")),
                    None => {
                        lines.push(head);
                        block_lines(lines, v, indent + 2, width, style);
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for v in items {
                match fits(v, indent + 2, width, style) {
                    Some(text) => lines.push(format!("{pad}- {text}")),
                    None => {
                        // The item's first line follows the dash; the rest line up under it.
                        let first = lines.len();
                        block_lines(lines, v, indent + 2, width, style);
                        if let Some(line) = lines.get_mut(first) {
                            line.replace_range(indent..indent + 2, "- ");
                        }
                    }
                }
            }
        }
        other => lines.push(format!(
            "{pad}{}",
            fits(other, indent, width, style).unwrap_or_default()
        )),
    }
}

/// A string, plain where YAML reads it back as the same string, double-quoted otherwise.
pub fn string(s: &str, in_flow: bool, json: bool) -> String {
    if !json && plain_ok(s, in_flow) {
        s.to_string()
    } else {
        quoted(s)
    }
}

/// Whether `s` can be written without quotes: it must read back as this exact string in any
/// YAML reader, YAML 1.1 ones included (`yes`, `on`, `1_000`, `0x1F`, `.5` are quoted).
pub fn plain_ok(s: &str, in_flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) || first.is_ascii_digit() {
        return false;
    }
    if s.starts_with(['+', '.']) || s.ends_with([' ', '\t', ':']) || s.starts_with(' ') {
        return false;
    }
    if s.chars().any(|c| {
        c.is_control() || matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\t')
    }) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s == "<<" {
        return false;
    }
    if in_flow && s.contains([',', '[', ']', '{', '}', ':']) {
        return false;
    }
    const WORDS: [&str; 12] = [
        "null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", ".nan",
    ];
    !WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

/// A double-quoted YAML string: JSON's escapes, and every character YAML does not allow raw in
/// a stream escaped as `\uXXXX` (C0 and C1 controls, DEL, the line and paragraph separators
/// YAML 1.1 folds, the byte-order mark, and the noncharacters U+FFFE and U+FFFF).
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_quoted_only_where_yaml_needs_it() {
        for plain in ["examples", "a b", "x-y", "Ünïcode", "a:b", "e.g."] {
            assert_eq!(string(plain, false, false), plain, "{plain}");
        }
        for needs in [
            "yes",
            "No",
            "null",
            "~",
            "1.0",
            "1",
            "0x1F",
            "-1",
            ".5",
            "+1",
            "*star",
            "&amp",
            "#hash",
            "a: b",
            "a #b",
            "",
            " lead",
            "trail ",
            "line\nbreak",
            "tab\t",
            "<<",
            "!tag",
            "'q'",
            "\"q\"",
            "@at",
            "`bt",
            "|",
            ">",
            "%",
            "- item",
            "key:",
        ] {
            assert!(string(needs, false, false).starts_with('"'), "{needs:?}");
        }
        assert_eq!(string("a,b", true, false), "\"a,b\"");
        assert_eq!(string("a,b", false, false), "a,b");
    }

    #[test]
    fn flow_keeps_the_authors_padding_and_json_style() {
        let v = json!({"words": 8, "longest": "examples", "tags": ["a", "yes"]});
        assert_eq!(
            flow(&v, Flow::of("{ words: 9 }")),
            "{ words: 8, longest: examples, tags: [a, \"yes\"] }"
        );
        assert_eq!(
            flow(&v, Flow::of("{words: 9}")),
            "{words: 8, longest: examples, tags: [a, \"yes\"]}"
        );
        assert_eq!(
            flow(&v, Flow::of("{\"words\": 9}")),
            "{\"words\": 8, \"longest\": \"examples\", \"tags\": [\"a\", \"yes\"]}"
        );
    }

    #[test]
    fn json_style_reads_back_as_the_same_value_and_escapes_what_yaml_refuses_raw() {
        let v = json!({"name": "a\u{7f}b\u{85}c\u{2028}d\u{feff}e\u{fffe}f\u{ffff}", "n": [1, 2.5, null, true]});
        assert_eq!(
            json(&v),
            "{\"name\": \"a\\u007fb\\u0085c\\u2028d\\ufeffe\\ufffef\\uffff\", \"n\": [1, 2.5, null, true]}"
        );
        let back: Value = serde_json::from_str(&json(&v)).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn block_lines_up_nested_values() {
        let v =
            json!({"words": 2, "top": [{"word": "a", "count": 1}], "deep": {"x": {"z": [1, 2]}}});
        assert_eq!(
            block(&v, 4, "\n", 100, Flow::default()),
            "    words: 2\n    top: [{word: a, count: 1}]\n    deep: {x: {z: [1, 2]}}"
        );
        assert_eq!(
            block(&v, 4, "\n", 20, Flow::default()),
            "    words: 2\n    top:\n      - word: a\n        count: 1\n    deep:\n      x: {z: [1, 2]}"
        );
    }
}

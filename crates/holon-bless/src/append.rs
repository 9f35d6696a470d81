//! `holon-test call ... --save NAME`: a call made into an example, appended to `examples` after
//! the last one, in the style of the ones there (the items' indentation, the author's flow
//! style), every other byte kept. As `--bless` writes: under the lock on the manifest's folder,
//! the file read again, the new text read back as exactly the intended document and passed
//! through the publish checks, then renamed into place. A name already taken is refused, and
//! nothing is written.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{BlessError, RewriteError};
use crate::layout::{Shape, lay_out};
use crate::write::Locked;
use holon_core::manifest::{Expect, yaml};
use holon_yaml::{self as emit, Flow};

/// Lines at most this long: the examples' values stay on one line up to it.
const WIDTH: usize = 100;

/// Appends the example `name`, `input` answered by `answer`, to the manifest at `path`.
pub fn append(path: &Path, name: &str, input: &Value, answer: &Expect) -> Result<(), BlessError> {
    let mut locked = Locked::open(path)?;
    let taken = (locked.doc.get("examples").and_then(Value::as_array))
        .is_some_and(|all| all.iter().any(|e| e.get("name") == Some(&json_str(name))));
    if taken {
        return Err(BlessError::Taken {
            path: locked.path.clone(),
            name: name.to_string(),
        });
    }
    let mut example = Map::new();
    example.insert("name".into(), json_str(name));
    example.insert("input".into(), input.clone());
    example.insert(answer.key().into(), answer.value());
    let example = Value::Object(example);
    let new = appended(&locked.text, &example)?;
    let mut intended = std::mem::take(&mut locked.doc);
    if let Some(Value::Array(all)) = intended.get_mut("examples") {
        all.push(example);
    }
    let reread = yaml::parse(&new).map_err(|e| RewriteError::Unreadable {
        line: e.loc.line,
        column: e.loc.column,
        message: e.message.clone(),
    })?;
    if reread.to_json() != intended {
        return Err(RewriteError::Differs.into());
    }
    locked.put(&new)
}

fn json_str(s: &str) -> Value {
    Value::String(s.to_string())
}

/// `text` with `example` after the last item of its `examples` sequence.
fn appended(text: &str, example: &Value) -> Result<String, RewriteError> {
    let root = lay_out(text)?;
    let Some((_, examples)) = root.entry(text, "examples") else {
        return Err(RewriteError::NoExamples);
    };
    let Shape::Seq(_, items) = &examples.shape else {
        return Err(RewriteError::NotASequence);
    };
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    // The author's flow style, from the first example's input written in flow.
    let style = (items.iter())
        .filter_map(|item| item.entry(text, "input"))
        .find(|(_, input)| input.is_flow())
        .and_then(|(_, input)| text.get(input.start..input.end))
        .map(Flow::of)
        .unwrap_or_default();
    if root.is_flow() || examples.is_flow() {
        // `examples: [ ... ]`: one more item before the closing bracket.
        let close = examples.end.saturating_sub(1);
        let item = emit::flow(example, style);
        let sep = if items.is_empty() { "" } else { ", " };
        return Ok(format!("{}{sep}{item}{}", &text[..close], &text[close..]));
    }
    let Some(last) = items.last() else {
        return Err(RewriteError::NotASequence);
    };
    // The new item's dash where the others' are, its keys where theirs are.
    let dash = examples.col;
    let keys = last.col.max(dash + 2);
    let mut lines = Vec::new();
    for (key, value) in example.as_object().into_iter().flatten() {
        let head = format!("{}{key}:", " ".repeat(keys));
        // The name plain where YAML allows; the values in the author's flow style.
        let json = style.json && key != "name";
        let one = match value {
            Value::Object(_) | Value::Array(_) => emit::flow(value, style),
            scalar => emit::scalar(scalar, false, json),
        };
        let collection = matches!(value, Value::Object(m) if !m.is_empty())
            || matches!(value, Value::Array(a) if !a.is_empty());
        if !collection || head.chars().count() + 1 + one.chars().count() <= WIDTH {
            lines.push(format!("{head} {one}"));
        } else {
            lines.push(head);
            lines.push(emit::block(value, keys + 2, nl, WIDTH, style));
        }
    }
    let mut lines = lines.join(nl);
    let dash_line = format!("{}-{}", " ".repeat(dash), " ".repeat(keys - dash - 1));
    lines.replace_range(..keys, &dash_line);
    // After the line the last item ends on; a file with no line break at its end gets one.
    let end = match text[last.end..].find('\n') {
        Some(at) => last.end + at + 1,
        None => text.len(),
    };
    let before = &text[..end];
    let lead = if before.ends_with('\n') { "" } else { nl };
    Ok(format!("{before}{lead}{lines}{nl}{}", &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn example(name: &str) -> Value {
        json!({"name": name, "input": {"text": "a b"}, "output": {"words": 2}})
    }

    #[test]
    fn the_new_example_lines_up_with_the_others_and_keeps_the_rest() {
        let text = "name: x\nexamples:\n  # the first\n  - name: one\n    input: { text: a }\n    output: { words: 1 }  # kept\n# after\nlimits: {}\n";
        let new = appended(text, &example("two")).unwrap();
        assert_eq!(
            new,
            "name: x\nexamples:\n  # the first\n  - name: one\n    input: { text: a }\n    output: { words: 1 }  # kept\n  - name: two\n    input: { text: a b }\n    output: { words: 2 }\n# after\nlimits: {}\n"
        );
        let unindented = "examples:\n- name: one\n  input: {\"text\": \"a\"}\n  error: empty";
        assert_eq!(
            appended(unindented, &example("two")).unwrap(),
            "examples:\n- name: one\n  input: {\"text\": \"a\"}\n  error: empty\n- name: two\n  input: {\"text\": \"a b\"}\n  output: {\"words\": 2}\n"
        );
        let flow = "examples: [{name: one, input: {text: a}, error: empty}]\nx: 1\n";
        assert_eq!(
            appended(flow, &example("two")).unwrap(),
            "examples: [{name: one, input: {text: a}, error: empty}, {name: two, input: {text: a b}, output: {words: 2}}]\nx: 1\n"
        );
    }
}

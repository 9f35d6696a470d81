//! The surgical rewrite: the text of the changed `output`/`error` nodes replaced, every other
//! byte kept, and the result read back to prove it says exactly what was intended.

use std::ops::Range;

use granit_parser::ScalarStyle;
use serde_json::{Map, Value};

use crate::error::RewriteError;
use crate::layout::{Laid, Shape, lay_out};
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Expect, yaml};
use holon_yaml::{self as emit, Flow};

/// One replaced range of the original text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Edit {
    /// Bytes of the original text that were replaced.
    pub range: Range<usize>,
    /// What stands there now.
    pub text: String,
}

/// The new text, and exactly where it differs from the old.
#[derive(Debug)]
pub(crate) struct Rewritten {
    pub text: String,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "the property test proves nothing outside them moved"
        )
    )]
    pub edits: Vec<Edit>,
}

/// Lines at most this long stay on one line; a longer line the author wrote is the limit
/// instead, so a rewrite never breaks a line the author kept whole.
const WIDTH: usize = 100;

/// Rewrites `examples[index]` of `text` to say each answer. Refuses, with the reason, whatever
/// it cannot rewrite exactly; never returns a text that reads back differently from the
/// intended document.
pub(crate) fn rewrite(text: &str, changes: &[(usize, Expect)]) -> Result<Rewritten, RewriteError> {
    let doc = yaml::parse(text).map_err(|e| RewriteError::NotYaml {
        line: e.loc.line,
        column: e.loc.column,
        message: e.message.clone(),
    })?;
    let mut intended = doc.to_json();
    let root = lay_out(text)?;
    let Some((_, examples)) = root.entry(text, "examples") else {
        return Err(RewriteError::NoExamples);
    };
    let Shape::Seq(_, items) = &examples.shape else {
        return Err(RewriteError::NotASequence);
    };
    let in_flow = root.is_flow() || examples.is_flow();
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits = Vec::new();
    for (index, answer) in changes {
        let at = format!("examples[{index}]");
        let item = items
            .get(*index)
            .ok_or_else(|| RewriteError::Missing { at: at.clone() })?;
        let old = ["output", "error"]
            .iter()
            .find_map(|k| item.entry(text, k).map(|e| (*k, e)));
        let Some((old_name, (key, value))) = old else {
            return Err(RewriteError::NoAnswer { at });
        };
        let at = format!("{at}.{old_name}");
        let old = doc_value(&intended, *index, old_name);
        let new = ordered_like(&answer.value(), &old);
        let target = Target {
            key,
            value,
            same_key: old_name == answer.key(),
            new_key: answer.key(),
            in_flow: in_flow || item.is_flow(),
            json: false,
            nl,
            at,
        };
        let written = if target.same_key {
            descend(text, &root, target, &old, &new, &mut edits)?
        } else {
            edits.push(edit(text, &root, &target, &new)?);
            new
        };
        set_answer(&mut intended, *index, old_name, answer.key(), written)?;
    }
    edits.sort_by_key(|e| e.range.start);
    let overlap =
        (edits.iter().zip(edits.iter().skip(1))).any(|(a, b)| a.range.end > b.range.start);
    if overlap {
        return Err(RewriteError::Overlap);
    }
    let mut out = String::with_capacity(text.len() + 256);
    let mut from = 0;
    for e in &edits {
        out.push_str(&text[from..e.range.start]);
        out.push_str(&e.text);
        from = e.range.end;
    }
    out.push_str(&text[from..]);
    let reread = yaml::parse(&out).map_err(|e| RewriteError::Unreadable {
        line: e.loc.line,
        column: e.loc.column,
        message: e.message.clone(),
    })?;
    if reread.to_json() != intended {
        return Err(RewriteError::Differs);
    }
    Ok(Rewritten { text: out, edits })
}

fn doc_value(doc: &Value, index: usize, key: &str) -> Value {
    doc.pointer(&format!("/examples/{index}/{key}"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The example's mapping with the old key replaced by the new one, in the same place.
fn set_answer(
    doc: &mut Value,
    index: usize,
    old: &str,
    new: &str,
    value: Value,
) -> Result<(), RewriteError> {
    let Some(Value::Object(example)) = doc.pointer_mut(&format!("/examples/{index}")) else {
        return Err(RewriteError::NotAMapping { index });
    };
    let mut out = Map::with_capacity(example.len());
    for (k, v) in std::mem::take(example) {
        if k == old {
            out.insert(new.to_string(), value.clone());
        } else if k != new {
            out.insert(k, v);
        }
    }
    *example = out;
    Ok(())
}

/// `new` with its keys in `old`'s order where both have them (the author's order), the
/// agent's new keys after, all the way down.
fn ordered_like(new: &Value, old: &Value) -> Value {
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            let mut out = Map::with_capacity(n.len());
            for (k, ov) in o {
                if let Some(nv) = n.get(k) {
                    out.insert(k.clone(), ordered_like(nv, ov));
                }
            }
            for (k, nv) in n {
                if !out.contains_key(k) {
                    out.insert(k.clone(), nv.clone());
                }
            }
            Value::Object(out)
        }
        (Value::Array(n), Value::Array(o)) => Value::Array(
            n.iter()
                .enumerate()
                .map(|(i, nv)| {
                    o.get(i)
                        .map_or_else(|| nv.clone(), |ov| ordered_like(nv, ov))
                })
                .collect(),
        ),
        (n, _) => n.clone(),
    }
}

struct Target<'a> {
    key: &'a Laid,
    value: &'a Laid,
    same_key: bool,
    new_key: &'static str,
    in_flow: bool,
    /// Inside a JSON-style flow collection: strings stay quoted.
    json: bool,
    nl: &'a str,
    at: String,
}

/// The edits that turn `old` into `new` under one key, as deep as the two keep the same
/// keys: a changed field is rewritten alone, and the comments and layout of its siblings stay.
/// Returns the value the text then holds (an unchanged field keeps its own spelling, `1` for
/// `1.0`).
fn descend(
    text: &str,
    root: &Laid,
    t: Target,
    old: &Value,
    new: &Value,
    out: &mut Vec<Edit>,
) -> Result<Value, RewriteError> {
    if json_eq(old, new) {
        return Ok(old.clone());
    }
    if let (Value::Object(o), Value::Object(n), Shape::Map(_, entries)) = (old, new, &t.value.shape)
    {
        // Only a mapping written out key by key, with the same keys, is edited field by field:
        // not an alias, not one built by a merge key (`<<`).
        let written_keys = entries.len() == o.len()
            && n.len() == o.len()
            && n.keys()
                .all(|k| o.contains_key(k) && t.value.entry(text, k).is_some());
        if written_keys && t.value.anchor == 0 {
            let json = t.json || (t.value.is_flow() && Flow::of(&text[t.value.start..]).json);
            let mut written = Map::with_capacity(n.len());
            for (k, nv) in n {
                let (key, value) = t.value.entry(text, k).unwrap_or_else(|| unreachable!());
                let child = Target {
                    key,
                    value,
                    same_key: true,
                    new_key: t.new_key,
                    in_flow: t.in_flow || t.value.is_flow(),
                    json,
                    nl: t.nl,
                    at: format!("{}.{k}", t.at),
                };
                written.insert(k.clone(), descend(text, root, child, &o[k], nv, out)?);
            }
            return Ok(Value::Object(written));
        }
    }
    out.push(edit(text, root, &t, new)?);
    Ok(new.clone())
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

fn line_end(text: &str, at: usize) -> usize {
    text[at..].find(['\n', '\r']).map_or(text.len(), |i| at + i)
}

/// Refuses what a rewrite cannot do without changing more than the value: a block scalar, or
/// an anchor other nodes use.
fn rewritable(root: &Laid, t: &Target) -> Result<(), RewriteError> {
    let (at, key, value) = (t.at.as_str(), t.key, t.value);
    if let Shape::Scalar(ScalarStyle::Literal | ScalarStyle::Folded) = value.shape {
        return Err(RewriteError::BlockScalar { at: at.to_string() });
    }
    // The rewrite replaces the key too when it changes, the value only otherwise.
    let first = if t.same_key { value.start } else { key.start };
    let mut defined = Vec::new();
    value.anchors(&mut defined);
    if !defined.is_empty() {
        let mut used = Vec::new();
        root.aliases_outside(&(first..value.end), &mut used);
        if defined.iter().any(|(id, _)| used.contains(id)) {
            return Err(RewriteError::SharedAnchor { at: at.to_string() });
        }
    }
    Ok(())
}

/// The new value on one line, when it fits there: a scalar always, a collection in flow style
/// when the old one was not a block and the line stays within `width`.
fn inline(text: &str, t: &Target, new: &Value, style: Flow, width: usize) -> Option<String> {
    let value = t.value;
    let collection = matches!(new, Value::Object(m) if !m.is_empty())
        || matches!(new, Value::Array(a) if !a.is_empty());
    if !collection {
        return Some(emit::scalar(new, t.in_flow, style.json));
    }
    let s = emit::flow(new, style);
    if t.in_flow {
        return Some(s);
    }
    if value.is_block_collection() {
        return None;
    }
    // The line as it would read: what comes before the value, the value, what follows.
    let before = text[line_start(text, value.start)..value.start]
        .chars()
        .count();
    let after = text[value.end..line_end(text, value.end)].chars().count();
    (before + s.chars().count() + after <= width).then_some(s)
}

fn edit(text: &str, root: &Laid, t: &Target, new: &Value) -> Result<Edit, RewriteError> {
    let Target { key, value, nl, .. } = *t;
    let at = t.at.as_str();
    rewritable(root, t)?;
    // Between the key and the value: `:`, then spaces, an anchor or tag, or a comment.
    let gap = &text[key.end..value.start];
    let colon = gap
        .find(':')
        .map(|i| key.end + i + 1)
        .ok_or_else(|| RewriteError::NoColon { at: at.to_string() })?;
    let clean_gap = text[colon..value.start]
        .chars()
        .all(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
    let same_line = !text[key.start..value.start].contains('\n');
    let old_text = &text[value.start..value.end];
    let style = if value.is_flow() {
        Flow::of(old_text)
    } else {
        Flow {
            padded: true,
            // A string the author quoted stays quoted, as do those of a JSON-style mapping.
            json: t.json || matches!(value.shape, Shape::Scalar(ScalarStyle::DoubleQuoted)),
        }
    };
    let key_line = &text[line_start(text, key.start)..line_end(text, key.start)];
    let width = WIDTH.max(key_line.chars().count());
    let inline = inline(text, t, new, style, width);
    let key_text = if t.same_key {
        String::new()
    } else {
        let raw = &text[key.start..key.end];
        match raw.chars().next() {
            Some(q @ ('"' | '\'')) => format!("{q}{}{q}", t.new_key),
            _ => t.new_key.to_string(),
        }
    };
    let (range, replacement) = match inline {
        Some(s) if !t.same_key => (key.start..value.end, format!("{key_text}: {s}")),
        Some(s) if clean_gap && !same_line => (colon..value.end, format!(" {s}")),
        Some(s) => (value.start..value.end, s),
        None => {
            if !t.same_key || (same_line && clean_gap) {
                let indent = key.col + 2;
                let head = if t.same_key {
                    String::new()
                } else {
                    format!("{key_text}:")
                };
                let from = if t.same_key { colon } else { key.start };
                let body = emit::block(new, indent, nl, width, style);
                (from..value.end, format!("{head}{nl}{body}"))
            } else if !same_line {
                // The value already stands on lines of its own: the new one takes its place,
                // at its indentation.
                let indent = value.col;
                if indent <= key.col {
                    return Err(RewriteError::Shallow { at: at.to_string() });
                }
                let body = emit::block(new, indent, nl, width, style);
                (value.start..value.end, body[indent..].to_string())
            } else {
                // An anchor or tag before the value on the key's line: the block goes below it.
                let mut from = value.start;
                while from > colon && matches!(text.as_bytes().get(from - 1), Some(b' ' | b'\t')) {
                    from -= 1;
                }
                let body = emit::block(new, key.col + 2, nl, width, style);
                (from..value.end, format!("{nl}{body}"))
            }
        }
    };
    Ok(Edit {
        range,
        text: replacement,
    })
}

#[cfg(test)]
mod tests;

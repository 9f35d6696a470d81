//! Where each node of a manifest sits in its text: the byte span and the style of every node,
//! from the events of granit-parser, the parser the manifest reader uses.

use granit_parser::{Event, Options, Parser, ScalarStyle, Span, StructureStyle};

use crate::error::LayoutError;

/// One node as written: its bytes in the text, how it is written, and its children.
#[derive(Debug)]
pub(crate) struct Laid {
    /// First byte of the node's content (after any anchor or tag).
    pub start: usize,
    /// One past its last byte: the closing bracket of a flow collection, the end of the last
    /// child of a block collection, the end of a scalar's token.
    pub end: usize,
    /// Column of `start`, from 0, in characters.
    pub col: usize,
    pub shape: Shape,
    /// The anchor the node defines (`&name`), 0 when none.
    pub anchor: usize,
}

#[derive(Debug)]
pub(crate) enum Shape {
    Scalar(ScalarStyle),
    Alias(usize),
    Seq(StructureStyle, Vec<Laid>),
    Map(StructureStyle, Vec<(Laid, Laid)>),
}

impl Laid {
    /// The value under the plain or quoted key `name`, with the key.
    pub fn entry<'a>(&'a self, text: &str, name: &str) -> Option<(&'a Laid, &'a Laid)> {
        match &self.shape {
            Shape::Map(_, entries) => entries
                .iter()
                .find(|(k, _)| key_text(text, k) == Some(name))
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// Every anchor defined in this node or below it.
    pub fn anchors(&self, out: &mut Vec<(usize, usize)>) {
        if self.anchor != 0 {
            out.push((self.anchor, self.start));
        }
        match &self.shape {
            Shape::Seq(_, items) => items.iter().for_each(|i| i.anchors(out)),
            Shape::Map(_, entries) => entries.iter().for_each(|(k, v)| {
                k.anchors(out);
                v.anchors(out);
            }),
            Shape::Scalar(_) | Shape::Alias(_) => {}
        }
    }

    /// Every alias in this node or below it, outside the byte range `skip`.
    pub fn aliases_outside(&self, skip: &std::ops::Range<usize>, out: &mut Vec<usize>) {
        if self.start >= skip.start && self.end <= skip.end {
            return;
        }
        match &self.shape {
            Shape::Alias(id) => out.push(*id),
            Shape::Seq(_, items) => items.iter().for_each(|i| i.aliases_outside(skip, out)),
            Shape::Map(_, entries) => entries.iter().for_each(|(k, v)| {
                k.aliases_outside(skip, out);
                v.aliases_outside(skip, out);
            }),
            Shape::Scalar(_) => {}
        }
    }

    pub fn is_flow(&self) -> bool {
        matches!(
            self.shape,
            Shape::Seq(StructureStyle::Flow, _) | Shape::Map(StructureStyle::Flow, _)
        )
    }

    pub fn is_block_collection(&self) -> bool {
        matches!(
            self.shape,
            Shape::Seq(StructureStyle::Block, _) | Shape::Map(StructureStyle::Block, _)
        )
    }
}

/// The decoded text of a scalar key, when it is a plain or quoted scalar.
fn key_text<'t>(text: &'t str, key: &Laid) -> Option<&'t str> {
    let raw = text.get(key.start..key.end)?;
    match key.shape {
        Shape::Scalar(ScalarStyle::Plain) => Some(raw),
        Shape::Scalar(ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) => {
            // Only a key with nothing to unescape compares by its inner text.
            let inner = raw.get(1..raw.len().checked_sub(1)?)?;
            (!inner.contains(['\\', '\'', '"'])).then_some(inner)
        }
        _ => None,
    }
}

/// The layout of a one-document YAML text. The caller has already read it with
/// `manifest::yaml::parse`, so depth and alias budgets hold.
pub(crate) fn lay_out(text: &str) -> Result<Laid, LayoutError> {
    let mut options = Options::default();
    options.set_emit_comments(false);
    let mut events = Vec::new();
    for item in Parser::new_from_str_with_options(text, options) {
        let (event, span) = item.map_err(|e| LayoutError::Stopped(e.to_string()))?;
        // Only nodes: stream and document markers, comments and anchor names are not.
        if matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(..)
                | Event::SequenceStart(..)
                | Event::SequenceEnd
                | Event::MappingStart(..)
                | Event::MappingEnd
        ) {
            events.push((event, span));
        }
    }
    let mut at = 0;
    let root = node(text, &events, &mut at)?;
    Ok(root)
}

fn range(span: &Span) -> Result<(usize, usize), LayoutError> {
    span.byte_range()
        .map(|r| (r.start, r.end))
        .ok_or(LayoutError::NoOffsets)
}

fn node(text: &str, events: &[(Event, Span)], at: &mut usize) -> Result<Laid, LayoutError> {
    let Some((event, span)) = events.get(*at) else {
        return Err(LayoutError::EndedEarly);
    };
    *at += 1;
    let (start, end) = range(span)?;
    let col = span.start.col();
    match event {
        Event::Scalar(_, style, anchor, _) => Ok(Laid {
            start,
            end: trim_end(text, start, end),
            col,
            shape: Shape::Scalar(*style),
            anchor: *anchor,
        }),
        Event::Alias(id) => Ok(Laid {
            start,
            end,
            col,
            shape: Shape::Alias(*id),
            anchor: 0,
        }),
        Event::SequenceStart(style, anchor, _) => {
            let mut items = Vec::new();
            loop {
                match events.get(*at) {
                    Some((Event::SequenceEnd, close)) => {
                        *at += 1;
                        let end = close_of(*style, close, &items, start)?;
                        // A block sequence's span starts at its first item's content; it
                        // starts at that item's `-`.
                        let (start, col) = match (style, items.first()) {
                            (StructureStyle::Block, Some(first)) => {
                                let dash = back_to_dash(text, first.start);
                                (dash, first.col.saturating_sub(first.start - dash))
                            }
                            _ => (start, col),
                        };
                        return Ok(Laid {
                            start,
                            end,
                            col,
                            shape: Shape::Seq(*style, items),
                            anchor: *anchor,
                        });
                    }
                    Some(_) => items.push(node(text, events, at)?),
                    None => return Err(LayoutError::Unclosed("sequence")),
                }
            }
        }
        Event::MappingStart(style, anchor, _) => {
            let mut entries: Vec<(Laid, Laid)> = Vec::new();
            loop {
                match events.get(*at) {
                    Some((Event::MappingEnd, close)) => {
                        *at += 1;
                        let last = entries.last().map(|(_, v)| v.end.max(v.start));
                        let end = match style {
                            StructureStyle::Flow => range(close)?.1,
                            StructureStyle::Block => last.unwrap_or(start),
                        };
                        return Ok(Laid {
                            start,
                            end,
                            col,
                            shape: Shape::Map(*style, entries),
                            anchor: *anchor,
                        });
                    }
                    Some(_) => {
                        let key = node(text, events, at)?;
                        let value = node(text, events, at)?;
                        entries.push((key, value));
                    }
                    None => return Err(LayoutError::Unclosed("mapping")),
                }
            }
        }
        _ => Err(LayoutError::Unexpected),
    }
}

fn close_of(
    style: StructureStyle,
    close: &Span,
    items: &[Laid],
    start: usize,
) -> Result<usize, LayoutError> {
    Ok(match style {
        StructureStyle::Flow => range(close)?.1,
        StructureStyle::Block => items.last().map_or(start, |i| i.end),
    })
}

fn back_to_dash(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = from;
    while at > 0 && matches!(bytes.get(at - 1), Some(b' ' | b'\t')) {
        at -= 1;
    }
    if at > 0 && bytes.get(at - 1) == Some(&b'-') {
        at - 1
    } else {
        from
    }
}

/// A block scalar's token runs over the line breaks and blank lines after its last line; the
/// node ends at its last character of content.
fn trim_end(text: &str, start: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = end.min(bytes.len());
    while end > start && matches!(bytes.get(end - 1), Some(b'\n' | b'\r' | b' ' | b'\t')) {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice<'t>(text: &'t str, n: &Laid) -> &'t str {
        &text[n.start..n.end]
    }

    #[test]
    fn spans_of_block_and_flow_nodes() {
        let text = "a: &x {b: 1, c: [2, 3]}  # note\nd:\n  e: |\n    one\n    two\n\n  f: \"q\"\n# after\ng:\n- 1\n- x: y\n";
        let root = lay_out(text).unwrap();
        let (_, a) = root.entry(text, "a").unwrap();
        assert_eq!(slice(text, a), "{b: 1, c: [2, 3]}");
        assert_ne!(a.anchor, 0);
        let (_, d) = root.entry(text, "d").unwrap();
        assert_eq!(slice(text, d), "e: |\n    one\n    two\n\n  f: \"q\"");
        let (_, e) = d.entry(text, "e").unwrap();
        // A block scalar's span starts at its content, not at its `|`.
        assert_eq!(slice(text, e), "one\n    two");
        let (k, f) = d.entry(text, "f").unwrap();
        assert_eq!((slice(text, k), slice(text, f)), ("f", "\"q\""));
        let (_, g) = root.entry(text, "g").unwrap();
        assert_eq!(slice(text, g), "- 1\n- x: y");
        assert_eq!(g.col, 0);
    }
}

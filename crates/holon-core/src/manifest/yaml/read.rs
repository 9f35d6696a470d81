//! The located tree built straight from granit-parser's events, one pass and no recursion:
//! anchors and aliases, merge keys, one document, and the budgets that bound what a file costs.

use std::collections::HashSet;

use granit_parser::{ErrorKind, Event, Options, Parser, ScalarStyle, ScanError, Span, Tag};

use super::scalar::{self, Shape, Tagged};
use super::tree::{Key, Kind, Loc, Node, YamlError};
use crate::ids;

/// Nesting the YAML reader accepts at all; payload bounds (64) are checked later, on the tree,
/// with a message that names the example.
pub const MAX_YAML_DEPTH: usize = 160;

/// Nodes the YAML reader accepts at all: three payloads at the gateway's bound of 200,000 values.
/// The reader's time grows with the nodes, so this bounds what any file up to the size limit
/// costs to check (BENCHMARKS.md); a manifest needs far fewer.
pub const MAX_YAML_NODES: usize = 600_000;

/// The parser's events (every node, every end, comments and markers, and each node an alias
/// repeats).
const MAX_EVENTS: usize = 3 * MAX_YAML_NODES;
const MAX_ALIASES: usize = 10_000;
const MAX_ANCHORS: usize = 10_000;
/// Events inside anchored nodes, counted once for each anchor they are under.
const MAX_RECORDED: usize = 200_000;
/// Events that aliases repeat, in all.
const MAX_REPLAYED: usize = 1_000_000;
const MAX_MERGE_KEYS: usize = 10_000;
/// Bytes of scalar text, aliases' repeats included.
const MAX_SCALAR_BYTES: usize = 64 * 1024 * 1024;

const ALIAS_BOMB: &str =
    "aliases expand the document past what a manifest may hold (an alias bomb?)";
const TOO_LARGE: &str = "the document is too large or too complex for a manifest";
const TWO_DOCUMENTS: &str = "the file holds more than one YAML document";

/// Reads one YAML document into a located tree (repeated keys are kept; the caller refuses
/// them).
pub(super) fn read(text: &str) -> Result<Node, YamlError> {
    let mut options = Options::default();
    // As the reader of the previous versions set them: a block nesting limit above the depth
    // budget, so that the budget is what refuses a deep document, with its own message.
    options.block_nesting_limit = options.block_nesting_limit.max(MAX_YAML_DEPTH + 1);
    options.max_buffered_comment_events = 32;
    let mut reader = Reader::default();
    let mut last = Loc::default();
    for item in Parser::new_from_str_with_options(text, options) {
        let (event, span) = item.map_err(|e| scan_error(e, text))?;
        last = loc(&span);
        reader.event(event, last)?;
    }
    Ok(reader.root.unwrap_or(Node {
        kind: Kind::Null,
        loc: last,
    }))
}

fn loc(span: &Span) -> Loc {
    Loc {
        line: span.start.line() as u64,
        column: span.start.col() as u64 + 1,
    }
}

/// An open collection.
enum Frame {
    Seq {
        items: Vec<Node>,
        loc: Loc,
        anchor: usize,
    },
    Map {
        entries: Vec<(Key, Node)>,
        /// The key read, waiting for its value; `None` when a key comes next.
        key: Option<Key>,
        /// The key read is `<<`: its value is merged into this mapping.
        merging: bool,
        /// The values of `<<` keys, in order.
        merges: Vec<Node>,
        loc: Loc,
        anchor: usize,
    },
}

/// One step of a tree replayed for an alias, for the budgets.
enum Step {
    Scalar(usize),
    Start,
    End,
}

#[derive(Default)]
struct Reader {
    stack: Vec<Frame>,
    root: Option<Node>,
    /// Each anchor's node, by the parser's id, once it is complete.
    anchored: Vec<Option<Node>>,
    defined: HashSet<usize>,
    /// Anchored collections open on the stack.
    open_anchored: usize,
    documents: usize,
    events: usize,
    nodes: usize,
    depth: usize,
    aliases: usize,
    recorded: usize,
    replayed: usize,
    merge_keys: usize,
    scalar_bytes: usize,
}

impl Reader {
    fn event(&mut self, event: Event<'_>, at: Loc) -> Result<(), YamlError> {
        self.count_event(at)?;
        match event {
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(too_complex(TWO_DOCUMENTS.to_string(), at));
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tagged = Tagged::of(tag.as_deref());
                self.count_node(at)?;
                self.count_bytes(value.len() + tag_len(tag.as_deref()), at)?;
                self.define(anchor, at)?;
                if tagged
                    .requires()
                    .is_some_and(|shape| shape != Shape::Scalar)
                {
                    return Err(unsupported_tag(tag.as_deref(), at));
                }
                let merge_key = value == "<<"
                    && (tagged == Tagged::Merge || (tag.is_none() && style == ScalarStyle::Plain));
                if merge_key && self.expects_key() {
                    spend(&mut self.merge_keys, 1, MAX_MERGE_KEYS, TOO_LARGE, at)?;
                }
                self.record(self.open_anchored + usize::from(anchor != 0), at)?;
                let kind = scalar::resolve(value, style, tagged)
                    .map_err(|why| syntax(why.message(), at))?;
                if self.expects_key() {
                    if anchor != 0 {
                        self.anchor(
                            anchor,
                            &Node {
                                kind: kind.clone(),
                                loc: at,
                            },
                        );
                    }
                    self.key(kind, at, merge_key)?;
                } else {
                    self.value(Node { kind, loc: at }, anchor)?;
                }
            }
            Event::SequenceStart(_, anchor, tag) => {
                self.open(anchor, tag.as_deref(), Shape::Seq, at)?;
                self.stack.push(Frame::Seq {
                    items: Vec::new(),
                    loc: at,
                    anchor,
                });
            }
            Event::MappingStart(_, anchor, tag) => {
                self.open(anchor, tag.as_deref(), Shape::Map, at)?;
                self.stack.push(Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    merging: false,
                    merges: Vec::new(),
                    loc: at,
                    anchor,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                self.depth = self.depth.saturating_sub(1);
                self.record(self.open_anchored, at)?;
                self.close()?;
            }
            Event::Alias(id) => self.alias(id, at)?,
            Event::DocumentEnd | Event::StreamEnd => self.check_alias_ratio(at)?,
            _ => {}
        }
        Ok(())
    }

    /// The budgets a collection's start counts against.
    fn open(
        &mut self,
        anchor: usize,
        tag: Option<&Tag>,
        shape: Shape,
        at: Loc,
    ) -> Result<(), YamlError> {
        self.count_node(at)?;
        self.enter(at)?;
        self.count_bytes(tag_len(tag), at)?;
        self.define(anchor, at)?;
        if Tagged::of(tag).requires().is_some_and(|s| s != shape) {
            return Err(unsupported_tag(tag, at));
        }
        self.record(self.open_anchored + usize::from(anchor != 0), at)?;
        if anchor != 0 {
            self.open_anchored += 1;
        }
        Ok(())
    }

    /// The collection on top of the stack is complete.
    fn close(&mut self) -> Result<(), YamlError> {
        let (node, anchor) = match self.stack.pop() {
            Some(Frame::Seq { items, loc, anchor }) => (
                Node {
                    kind: Kind::Seq(items),
                    loc,
                },
                anchor,
            ),
            Some(Frame::Map {
                mut entries,
                merges,
                loc,
                anchor,
                ..
            }) => {
                merge(&mut entries, merges);
                (
                    Node {
                        kind: Kind::Map(entries),
                        loc,
                    },
                    anchor,
                )
            }
            None => return Ok(()),
        };
        if anchor != 0 {
            self.open_anchored = self.open_anchored.saturating_sub(1);
        }
        self.value(node, anchor)
    }

    /// A complete node: the root, an item, or the value of the key read.
    fn value(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        if anchor != 0 {
            self.anchor(anchor, &node);
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                key,
                merging,
                merges,
                ..
            }) => {
                if std::mem::take(merging) {
                    check_merge_source(&node)?;
                    merges.push(node);
                } else if let Some(key) = key.take() {
                    entries.push((key, node));
                } else {
                    // A collection as a key, refused once read whole, as the previous
                    // reader did (what is wrong inside it is said first).
                    let at = node.loc;
                    return self.key(take_kind(node), at, false);
                }
            }
        }
        Ok(())
    }

    /// `node` is the anchor `id`'s, for the aliases that follow.
    fn anchor(&mut self, id: usize, node: &Node) {
        if self.anchored.len() <= id {
            self.anchored.resize_with(id + 1, || None);
        }
        if let Some(slot) = self.anchored.get_mut(id) {
            *slot = Some(node.clone());
        }
    }

    /// A collection as a key. Located at the mapping it is a key of, as the previous reader
    /// did (the root mapping's place was not known to it).
    fn key_not_scalar(&self) -> YamlError {
        let loc = match self.stack.as_slice() {
            [_, .., Frame::Map { loc, .. }] => *loc,
            _ => Loc::default(),
        };
        syntax("a mapping key must be a scalar".to_string(), loc)
    }

    /// Many aliases to few anchors: the shape of an alias bomb, refused at the document's end.
    fn check_alias_ratio(&mut self, at: Loc) -> Result<(), YamlError> {
        if self.aliases >= 100 && self.aliases > 10 * self.defined.len() {
            return Err(too_complex(ALIAS_BOMB.to_string(), at));
        }
        Ok(())
    }

    /// A mapping's key, written as `kind`.
    fn key(&mut self, kind: Kind, at: Loc, merge_key: bool) -> Result<(), YamlError> {
        let name = match kind {
            Kind::String(s) => s,
            Kind::Number(n) => n.to_string(),
            Kind::Bool(b) => b.to_string(),
            Kind::Null => "null".to_string(),
            Kind::Seq(_) | Kind::Map(_) => return Err(self.key_not_scalar()),
        };
        if let Some(Frame::Map { key, merging, .. }) = self.stack.last_mut() {
            if merge_key {
                *merging = true;
            } else {
                *key = Some(Key { name, loc: at });
            }
        }
        Ok(())
    }

    /// `*id`: the anchored node again, counted against the budgets as if written out.
    fn alias(&mut self, id: usize, at: Loc) -> Result<(), YamlError> {
        spend(&mut self.aliases, 1, MAX_ALIASES, ALIAS_BOMB, at)?;
        let Some(target) = self.anchored.get_mut(id).and_then(Option::take) else {
            let message = if self.defined.contains(&id) {
                "recursive references require weak recursion types"
            } else {
                "alias references unknown anchor"
            };
            return Err(syntax(message.to_string(), at));
        };
        // The budgets first, as the alias's events would have met them one by one; the copy
        // only once they hold, so that no depth or size goes uncounted.
        replay(&target, |step| self.replay_step(step, at))?;
        // A repeat is located where the alias is, every node of it.
        let mut node = target.clone();
        relocate(&mut node, at);
        if let Some(slot) = self.anchored.get_mut(id) {
            *slot = Some(target);
        }
        if self.expects_key() {
            return self.key(take_kind(node), at, false);
        }
        self.value(node, 0)
    }

    fn replay_step(&mut self, step: Step, at: Loc) -> Result<(), YamlError> {
        spend(&mut self.replayed, 1, MAX_REPLAYED, ALIAS_BOMB, at)?;
        self.count_event(at)?;
        match step {
            Step::Scalar(bytes) => {
                self.count_node(at)?;
                self.count_bytes(bytes, at)?;
            }
            Step::Start => {
                self.count_node(at)?;
                self.enter(at)?;
            }
            Step::End => self.depth = self.depth.saturating_sub(1),
        }
        self.record(self.open_anchored, at)
    }

    fn count_event(&mut self, at: Loc) -> Result<(), YamlError> {
        spend(&mut self.events, 1, MAX_EVENTS, TOO_LARGE, at)
    }

    fn count_node(&mut self, at: Loc) -> Result<(), YamlError> {
        spend(&mut self.nodes, 1, MAX_YAML_NODES, TOO_LARGE, at)
    }

    fn count_bytes(&mut self, bytes: usize, at: Loc) -> Result<(), YamlError> {
        spend(
            &mut self.scalar_bytes,
            bytes,
            MAX_SCALAR_BYTES,
            TOO_LARGE,
            at,
        )
    }

    fn enter(&mut self, at: Loc) -> Result<(), YamlError> {
        self.depth += 1;
        if self.depth > MAX_YAML_DEPTH {
            return Err(too_complex(
                format!("the document is nested deeper than {MAX_YAML_DEPTH} levels"),
                at,
            ));
        }
        Ok(())
    }

    fn define(&mut self, anchor: usize, at: Loc) -> Result<(), YamlError> {
        if anchor != 0 && self.defined.insert(anchor) && self.defined.len() > MAX_ANCHORS {
            return Err(too_complex(TOO_LARGE.to_string(), at));
        }
        Ok(())
    }

    /// Events kept for anchors: `copies` of one event.
    fn record(&mut self, copies: usize, at: Loc) -> Result<(), YamlError> {
        spend(&mut self.recorded, copies, MAX_RECORDED, ALIAS_BOMB, at)
    }

    fn expects_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Map {
                key: None,
                merging: false,
                ..
            })
        )
    }
}

/// The events `node` was read from, in order (a key as one scalar), without recursion.
fn replay(
    node: &Node,
    mut step: impl FnMut(Step) -> Result<(), YamlError>,
) -> Result<(), YamlError> {
    enum Open<'a> {
        Seq(std::slice::Iter<'a, Node>),
        Map(std::slice::Iter<'a, (Key, Node)>),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut next = Some(node);
    loop {
        if let Some(node) = next.take() {
            match &node.kind {
                Kind::Seq(items) => {
                    step(Step::Start)?;
                    stack.push(Open::Seq(items.iter()));
                }
                Kind::Map(entries) => {
                    step(Step::Start)?;
                    stack.push(Open::Map(entries.iter()));
                }
                kind => step(Step::Scalar(scalar_len(kind)))?,
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        match top {
            Open::Seq(items) => next = items.next(),
            Open::Map(entries) => {
                if let Some((key, value)) = entries.next() {
                    step(Step::Scalar(key.name.len()))?;
                    next = Some(value);
                }
            }
        }
        if next.is_none() {
            stack.pop();
            step(Step::End)?;
        }
    }
}

/// The length of a scalar as written, near enough: what its text was is not kept.
fn scalar_len(kind: &Kind) -> usize {
    match kind {
        Kind::String(s) => s.len(),
        Kind::Bool(true) => 4,
        Kind::Bool(false) => 5,
        Kind::Number(n) => n.to_string().len(),
        Kind::Null | Kind::Seq(_) | Kind::Map(_) => 0,
    }
}

/// A `<<` key's value: a mapping, a sequence of mappings, or null.
fn check_merge_source(node: &Node) -> Result<(), YamlError> {
    let misfit = match &node.kind {
        Kind::Map(_) | Kind::Null => None,
        Kind::Seq(items) => items.iter().find(|i| !matches!(i.kind, Kind::Map(_))),
        _ => Some(node),
    };
    match misfit {
        None => Ok(()),
        Some(misfit) => Err(syntax(
            "yAML merge value must be mapping or sequence of mappings".to_string(),
            misfit.loc,
        )),
    }
}

/// The entries of the `<<` keys' mappings, after the mapping's own, each key only if the
/// mapping has none of that name yet (its own keys win, then the earlier merged ones). A
/// merged entry is located where its mapping is named (`*base`), every node of it.
fn merge(entries: &mut Vec<(Key, Node)>, merges: Vec<Node>) {
    if merges.is_empty() {
        return;
    }
    let mut seen: HashSet<String> = entries.iter().map(|(k, _)| k.name.clone()).collect();
    let mut add = |source: Node, entries: &mut Vec<(Key, Node)>| {
        let at = source.loc;
        if let Kind::Map(more) = take_kind(source) {
            for (mut key, mut value) in more {
                if seen.insert(key.name.clone()) {
                    key.loc = at;
                    relocate(&mut value, at);
                    entries.push((key, value));
                }
            }
        }
    };
    for source in merges {
        let loc = source.loc;
        match take_kind(source) {
            Kind::Seq(items) => {
                for item in items {
                    add(item, entries);
                }
            }
            kind => add(Node { kind, loc }, entries),
        }
    }
}

/// Every node and key under `node`, and `node`, located at `at`.
fn relocate(node: &mut Node, at: Loc) {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        node.loc = at;
        match &mut node.kind {
            Kind::Seq(items) => stack.extend(items.iter_mut()),
            Kind::Map(entries) => {
                for (key, value) in entries.iter_mut() {
                    key.loc = at;
                    stack.push(value);
                }
            }
            _ => {}
        }
    }
}

/// A node's content (a `Node` is dropped without recursion, so it cannot be taken apart).
fn take_kind(mut node: Node) -> Kind {
    std::mem::replace(&mut node.kind, Kind::Null)
}

fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |tag| {
        let (handle, suffix) = tag.parts();
        handle.len() + suffix.len()
    })
}

/// Adds `add` to a budget's `count`; past `max`, the document is refused with `message`.
fn spend(
    count: &mut usize,
    add: usize,
    max: usize,
    message: &str,
    at: Loc,
) -> Result<(), YamlError> {
    *count = count.saturating_add(add);
    if *count > max {
        return Err(too_complex(message.to_string(), at));
    }
    Ok(())
}

fn too_complex(message: String, loc: Loc) -> YamlError {
    YamlError {
        check: ids::YAML_TOO_COMPLEX,
        message,
        loc,
        pointer: String::new(),
    }
}

fn syntax(message: String, loc: Loc) -> YamlError {
    YamlError {
        check: ids::YAML_SYNTAX,
        message,
        loc,
        pointer: String::new(),
    }
}

fn unsupported_tag(tag: Option<&Tag>, at: Loc) -> YamlError {
    let spelled = tag.map(Tag::original).unwrap_or_default();
    syntax(format!("unsupported tag `{spelled}`"), at)
}

fn scan_error(err: ScanError, text: &str) -> YamlError {
    let mark = err.marker();
    let mut at = Loc {
        line: mark.line() as u64,
        column: mark.col() as u64 + 1,
    };
    // The scanner marks where the token it was reading began (a plain scalar at the end of the
    // line before); a tab is located where it is.
    if err.info().contains("tab") {
        at = tab_from_line(text, at.line).unwrap_or(at);
    }
    match err.kind() {
        ErrorKind::UnknownAnchor => {
            return syntax("alias references unknown anchor".to_string(), at);
        }
        ErrorKind::MultipleDocumentsUnsupported => {
            return too_complex(TWO_DOCUMENTS.to_string(), at);
        }
        _ => {}
    }
    let message = sentence(&err.info());
    let lower = message.to_lowercase();
    if lower.contains("recursion limit") {
        return too_complex(
            format!("the document is nested deeper than {MAX_YAML_DEPTH} levels"),
            at,
        );
    }
    if lower.contains("budget") || lower.contains("limit") || lower.contains("depth") {
        return too_complex(message, at);
    }
    syntax(message, at)
}

/// The first tab of `text` on line `from` (from 1) or after it, where it stands (line and
/// column from 1, the column in characters).
fn tab_from_line(text: &str, from: u64) -> Option<Loc> {
    (text.split('\n').enumerate())
        .skip(from.saturating_sub(1) as usize)
        .find_map(|(index, line)| {
            let column = line.chars().position(|c| c == '\t')?;
            Some(Loc {
                line: index as u64 + 1,
                column: column as u64 + 1,
            })
        })
}

/// The parser's words as a message: the first line, lowercase first letter, no trailing period.
fn sentence(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    let cut = first
        .find(" at line ")
        .map_or(first, |i| first.get(..i).unwrap_or(first));
    let cut = cut.trim_end_matches('.');
    let mut chars = cut.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => "the file is not valid YAML".to_string(),
    }
}

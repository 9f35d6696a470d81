//! YAML to a located tree: every node keeps its line and column.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::ids::{self, Id};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

/// A line and column in the manifest file, both counted from 1 (0 when unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    /// Line, from 1.
    pub line: u64,
    /// Column, from 1.
    pub column: u64,
}

/// One YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// What the node holds.
    pub kind: Kind,
    /// Where the node starts.
    pub loc: Loc,
}

/// The shape of a node, in JSON's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `null` or `~` or nothing.
    Null,
    /// `true` or `false` (strict booleans: `yes` stays a string).
    Bool(bool),
    /// An integer or a float.
    Number(Number),
    /// A string scalar, quoted or plain (`1.0` quoted stays a string).
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order, each key with its own location.
    Map(Vec<(Key, Node)>),
}

/// A mapping key and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The key as text (a number or boolean key is written as JSON would write it).
    pub name: String,
    /// Where the key starts.
    pub loc: Loc,
}

/// Why a file is not a YAML document we can read.
#[derive(Debug, Clone)]
pub struct YamlError {
    /// Stable id of the problem: `yaml-syntax`, `yaml-duplicate-key` or `yaml-too-complex`.
    pub check: Id,
    /// What is wrong, lowercase.
    pub message: String,
    /// Where, when the parser knows.
    pub loc: Loc,
    /// The JSON pointer of the node at fault, when there is one (a duplicate key's); empty
    /// otherwise.
    pub pointer: String,
}

/// Nesting the YAML reader accepts at all; payload bounds (64) are checked later, on the tree,
/// with a message that names the example.
pub const MAX_YAML_DEPTH: usize = 160;

/// Nodes the YAML reader accepts at all: three payloads at the gateway's bound of 200,000 values.
/// The reader's time grows with the nodes (about 2 us each), so this bounds what any file up
/// to the size limit costs to check (BENCHMARKS.md); a manifest needs far fewer.
pub const MAX_YAML_NODES: usize = 600_000;

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        strict_booleans: true,
        with_snippet: false,
        budget: serde_saphyr::budget! {
            max_depth: MAX_YAML_DEPTH,
            max_nodes: MAX_YAML_NODES,
            max_events: 3 * MAX_YAML_NODES,
            max_aliases: 10_000,
            max_anchors: 10_000,
            max_recorded_anchor_events: 200_000,
            max_documents: 1,
        },
    }
}

/// Parses one YAML document into a located tree; a key written twice in its mapping is
/// refused at the second one, with its JSON pointer (`/runtime/tool`).
pub fn parse(text: &str) -> Result<Node, YamlError> {
    let mut options = options();
    // Repeated keys are found on the tree rather than by the reader: the text is read once
    // (its own refusal gave no pointer, so the text was read again to find one), and keys are
    // compared as JSON will hold them, so `1:` and `"1":` are the same key.
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    let root = serde_saphyr::from_str_with_options::<Node>(text, options).map_err(classify)?;
    match first_duplicate(&root) {
        Some(refusal) => Err(refusal),
        None => Ok(root),
    }
}

/// The key written twice that comes first in the document, refused at its second place. Each
/// mapping's keys go through a set, so a mapping of any size is read once; the walks have no
/// recursion, and the pointer is worked out only for the key found.
pub(crate) fn first_duplicate(root: &Node) -> Option<YamlError> {
    let mut first: Option<&Key> = None;
    let mut stack = vec![root];
    let mut seen = HashSet::new();
    while let Some(node) = stack.pop() {
        match &node.kind {
            Kind::Map(entries) => {
                seen.clear();
                for (key, value) in entries {
                    if !seen.insert(key.name.as_str()) {
                        // A mapping's first repeat is its earliest.
                        if first.is_none_or(|k| {
                            (k.loc.line, k.loc.column) > (key.loc.line, key.loc.column)
                        }) {
                            first = Some(key);
                        }
                        break;
                    }
                    stack.push(value);
                }
            }
            Kind::Seq(items) => stack.extend(items),
            _ => {}
        }
    }
    let key = first?;
    Some(YamlError {
        check: ids::YAML_DUPLICATE_KEY,
        message: format!("duplicate key `{}`", key.name),
        loc: key.loc,
        pointer: pointer_of(root, key).unwrap_or_default(),
    })
}

/// The JSON pointer of the mapping entry whose key is `key` (by identity).
fn pointer_of(root: &Node, key: &Key) -> Option<String> {
    let mut stack = vec![(String::new(), root)];
    while let Some((pointer, node)) = stack.pop() {
        match &node.kind {
            Kind::Map(entries) => {
                for (k, value) in entries {
                    let child = crate::pointer::child(&pointer, &k.name);
                    if std::ptr::eq(k, key) {
                        return Some(child);
                    }
                    stack.push((child, value));
                }
            }
            Kind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((format!("{pointer}/{i}"), item));
                }
            }
            _ => {}
        }
    }
    None
}

fn classify(err: serde_saphyr::Error) -> YamlError {
    let loc = err
        .location()
        .map(|l| Loc {
            line: l.line(),
            column: l.column(),
        })
        .unwrap_or_default();
    let mut inner = &err;
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = inner
    {
        inner = error;
    }
    if let Some(known) = known_breach(inner, loc) {
        return known;
    }
    let full = err.to_string();
    // The parser's text ends with its own location; ours is printed separately.
    let message = strip_location(&full);
    let lower = message.to_lowercase();
    if lower.contains("recursion limit") {
        return too_complex(
            format!("the document is nested deeper than {MAX_YAML_DEPTH} levels"),
            loc,
        );
    }
    let check = if lower.contains("duplicate") {
        ids::YAML_DUPLICATE_KEY
    } else if lower.contains("budget") || lower.contains("limit") || lower.contains("depth") {
        ids::YAML_TOO_COMPLEX
    } else {
        ids::YAML_SYNTAX
    };
    YamlError {
        check,
        message,
        loc,
        pointer: String::new(),
    }
}

fn too_complex(message: String, loc: Loc) -> YamlError {
    YamlError {
        check: ids::YAML_TOO_COMPLEX,
        message,
        loc,
        pointer: String::new(),
    }
}

/// The errors the parser reports by kind: its own words for these name its options and print
/// its internal types, and a manifest author needs to know what is wrong with the file.
fn known_breach(inner: &serde_saphyr::Error, loc: Loc) -> Option<YamlError> {
    use serde_saphyr::budget::BudgetBreach;
    const ALIAS_BOMB: &str =
        "aliases expand the document past what a manifest may hold (an alias bomb?)";
    let message = match inner {
        serde_saphyr::Error::DuplicateMappingKey { key, .. } => {
            let message = match key {
                Some(k) => format!("duplicate key `{k}`"),
                None => "duplicate key".to_string(),
            };
            return Some(YamlError {
                check: ids::YAML_DUPLICATE_KEY,
                message,
                loc,
                pointer: String::new(),
            });
        }
        serde_saphyr::Error::MultipleDocuments { .. } => {
            "the file holds more than one YAML document".to_string()
        }
        serde_saphyr::Error::Budget { breach, .. } => match breach {
            BudgetBreach::Documents { .. } => {
                "the file holds more than one YAML document".to_string()
            }
            BudgetBreach::Depth { .. } => {
                format!("the document is nested deeper than {MAX_YAML_DEPTH} levels")
            }
            BudgetBreach::Aliases { .. }
            | BudgetBreach::RecordedAnchorEvents { .. }
            | BudgetBreach::RecordedAnchorBytes { .. }
            | BudgetBreach::AliasAnchorRatio { .. } => ALIAS_BOMB.to_string(),
            _ => "the document is too large or too complex for a manifest".to_string(),
        },
        serde_saphyr::Error::AliasReplayCounterOverflow { .. }
        | serde_saphyr::Error::AliasReplayLimitExceeded { .. }
        | serde_saphyr::Error::AliasExpansionLimitExceeded { .. }
        | serde_saphyr::Error::AliasReplayStackDepthExceeded { .. } => ALIAS_BOMB.to_string(),
        _ => return None,
    };
    Some(too_complex(message, loc))
}

fn strip_location(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    let cut = first.find(" at line ").map_or(first, |i| &first[..i]);
    let cut = cut.trim_end_matches('.');
    let mut chars = cut.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => "the file is not valid YAML".to_string(),
    }
}

fn loc_of<T>(s: &Spanned<T>) -> Loc {
    Loc {
        line: s.referenced.line(),
        column: s.referenced.column(),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<Kind>::deserialize(d)?;
        let loc = loc_of(&spanned);
        Ok(Node {
            kind: spanned.value,
            loc,
        })
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_none<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        Kind::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Kind, E> {
        Ok(Kind::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Kind, E> {
        Ok(Kind::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Kind, E> {
        Ok(Kind::Number(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Kind, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Kind, E> {
        self.visit_f64(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Kind, E> {
        Number::from_f64(v)
            .map(Kind::Number)
            .ok_or_else(|| E::custom("`.nan` and `.inf` have no JSON equivalent"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
        Ok(Kind::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Kind, E> {
        Ok(Kind::String(v))
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Kind, E> {
        Err(E::custom("binary values have no JSON equivalent"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Kind::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1024));
        while let Some(key) = map.next_key::<Spanned<Kind>>()? {
            let loc = loc_of(&key);
            let name = match key.value {
                Kind::String(s) => s,
                Kind::Number(n) => n.to_string(),
                Kind::Bool(b) => b.to_string(),
                Kind::Null => "null".to_string(),
                Kind::Seq(_) | Kind::Map(_) => {
                    return Err(de::Error::custom("a mapping key must be a scalar"));
                }
            };
            let value = map.next_value::<Node>()?;
            entries.push((Key { name, loc }, value));
        }
        Ok(Kind::Map(entries))
    }
}

impl Node {
    /// The node as a JSON value, built without recursion so that no depth overflows the stack.
    pub fn to_json(&self) -> Value {
        enum Frame<'a> {
            Seq(std::slice::Iter<'a, Node>, Vec<Value>),
            Map(
                std::slice::Iter<'a, (Key, Node)>,
                Map<String, Value>,
                Option<String>,
            ),
        }
        let mut stack: Vec<Frame> = Vec::new();
        let mut current: &Node = self;
        loop {
            // Descend: a scalar is finished at once, a container opens a frame.
            let mut done = match &current.kind {
                Kind::Null => Some(Value::Null),
                Kind::Bool(b) => Some(Value::Bool(*b)),
                Kind::Number(n) => Some(Value::Number(n.clone())),
                Kind::String(s) => Some(Value::String(s.clone())),
                Kind::Seq(items) => {
                    stack.push(Frame::Seq(items.iter(), Vec::with_capacity(items.len())));
                    None
                }
                Kind::Map(entries) => {
                    stack.push(Frame::Map(
                        entries.iter(),
                        Map::with_capacity(entries.len()),
                        None,
                    ));
                    None
                }
            };
            // Climb: hand finished values to their parents until one has a next child.
            loop {
                let Some(top) = stack.last_mut() else {
                    return done.unwrap_or(Value::Null);
                };
                match top {
                    Frame::Seq(iter, out) => {
                        if let Some(v) = done.take() {
                            out.push(v);
                        }
                        if let Some(next) = iter.next() {
                            current = next;
                            break;
                        }
                    }
                    Frame::Map(iter, out, pending) => {
                        if let Some(v) = done.take()
                            && let Some(k) = pending.take()
                        {
                            out.insert(k, v);
                        }
                        if let Some((k, next)) = iter.next() {
                            *pending = Some(k.name.clone());
                            current = next;
                            break;
                        }
                    }
                }
                done = Some(match stack.pop() {
                    Some(Frame::Seq(_, out)) => Value::Array(out),
                    Some(Frame::Map(_, out, _)) => Value::Object(out),
                    None => Value::Null,
                });
            }
        }
    }

    /// The value under `key` when this node is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The location of the node at an RFC 6901 pointer below this one, or of the deepest node
    /// on the way there. (A key's own location, where "this property is unexpected" points, is
    /// `locate_key`'s.) For many lookups in one tree, a [`Locator`].
    pub fn locate(&self, pointer: &str) -> Loc {
        Locator::new(self).locate(pointer)
    }

    /// The location of the key `name` in the mapping at `pointer`, if both exist.
    pub fn locate_key(&self, pointer: &str, name: &str) -> Option<Loc> {
        Locator::new(self).locate_key(pointer, name)
    }

    /// A short name for the node's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::String(_) => "a string",
            Kind::Seq(_) => "a sequence",
            Kind::Map(_) => "a mapping",
        }
    }
}

/// Mappings up to this many keys are searched in order; a larger one through an index of its
/// keys, built the first time it is searched.
const INDEXED: usize = 16;

/// Lookups by pointer in one tree, for a caller that makes many (the checks locate every
/// diagnostic they add): a large mapping is indexed by key the first time it is searched, so
/// a lookup costs the depth of its pointer, not the size of the mappings on the way, and
/// locating one diagnostic per key of a mapping stays linear in its keys.
pub struct Locator<'a> {
    root: &'a Node,
    /// For each large mapping searched so far (by address), the place of each key's first entry.
    index: RefCell<HashMap<*const Node, HashMap<&'a str, usize>>>,
}

impl<'a> Locator<'a> {
    /// Lookups in the tree under `root`.
    pub fn new(root: &'a Node) -> Locator<'a> {
        Locator {
            root,
            index: RefCell::new(HashMap::new()),
        }
    }

    /// The tree looked up in.
    pub fn root(&self) -> &'a Node {
        self.root
    }

    /// The location of the node at `pointer`, or of the deepest node on the way there.
    pub fn locate(&self, pointer: &str) -> Loc {
        let mut node = self.root;
        for segment in crate::pointer::tokens(pointer) {
            match self.step(node, &segment) {
                Some(next) => node = next,
                None => break,
            }
        }
        node.loc
    }

    /// The location of the key `name` in the mapping at `pointer`, if both exist.
    pub fn locate_key(&self, pointer: &str, name: &str) -> Option<Loc> {
        let mut node = self.root;
        for segment in crate::pointer::tokens(pointer) {
            node = self.step(node, &segment)?;
        }
        self.entry(node, name).map(|(key, _)| key.loc)
    }

    /// The child of `node` that one pointer token names.
    fn step(&self, node: &'a Node, segment: &str) -> Option<&'a Node> {
        match &node.kind {
            Kind::Map(_) => self.entry(node, segment).map(|(_, value)| value),
            Kind::Seq(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
    }

    /// The first entry of the key `name` in `node`, when it is a mapping.
    fn entry(&self, node: &'a Node, name: &str) -> Option<&'a (Key, Node)> {
        let Kind::Map(entries) = &node.kind else {
            return None;
        };
        if entries.len() <= INDEXED {
            return entries.iter().find(|(k, _)| k.name == name);
        }
        let mut index = self.index.borrow_mut();
        let keys = index.entry(std::ptr::from_ref(node)).or_insert_with(|| {
            let mut keys = HashMap::with_capacity(entries.len());
            for (i, (key, _)) in entries.iter().enumerate() {
                keys.entry(key.name.as_str()).or_insert(i);
            }
            keys
        });
        keys.get(name).and_then(|&i| entries.get(i))
    }
}

impl Drop for Node {
    // A deep tree dropped by the default glue recurses once per level; flatten it first.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        take_children(&mut self.kind, &mut stack);
        while let Some(mut node) = stack.pop() {
            take_children(&mut node.kind, &mut stack);
        }
    }
}

fn take_children(kind: &mut Kind, stack: &mut Vec<Node>) {
    match kind {
        Kind::Seq(items) => stack.append(items),
        Kind::Map(entries) => stack.extend(std::mem::take(entries).into_iter().map(|(_, v)| v)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_locations_of_nested_nodes() {
        let node = parse("a:\n  b: [1, 2]\n  c: yes\n").unwrap();
        assert_eq!(
            node.locate("/a/b/1"),
            Loc {
                line: 2,
                column: 10
            }
        );
        assert_eq!(node.locate_key("/a", "c"), Some(Loc { line: 3, column: 3 }));
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": {"b": [1, 2], "c": "yes"}})
        );
    }

    #[test]
    fn refuses_duplicate_keys() {
        let err = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.check.name(), "yaml-duplicate-key", "{err:?}");
        assert_eq!(err.message, "duplicate key `a`");
        assert_eq!(err.loc.line, 2);
    }

    #[test]
    fn refuses_the_first_duplicate_in_the_document_with_its_pointer() {
        // The nested mapping's repeat comes first in the text, though the root's is shallower.
        let err = parse("a:\n  x: 1\n  x: 2\nb: [{y: 1, y: 2}]\na: 3\n").unwrap_err();
        assert_eq!(
            (err.check.name(), err.pointer.as_str()),
            ("yaml-duplicate-key", "/a/x")
        );
        assert_eq!((err.loc.line, err.loc.column), (3, 3));
        let err = parse("b: [{y: 1, y: 2}]\na: 3\na: 4\n").unwrap_err();
        assert_eq!(err.pointer, "/b/0/y");
        // Keys are compared as JSON holds them.
        let err = parse("1: one\n\"1\": again\n").unwrap_err();
        assert_eq!((err.pointer.as_str(), err.loc.line), ("/1", 2));
    }

    #[test]
    fn refuses_deep_nesting() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let err = parse(&text).unwrap_err();
        assert_eq!(err.check.name(), "yaml-too-complex", "{err:?}");
        assert_eq!(err.message, "the document is nested deeper than 160 levels");
    }

    #[test]
    fn refuses_a_document_of_more_nodes_than_the_budget() {
        let text = format!("[{}]", vec!["0"; MAX_YAML_NODES + 1].join(","));
        let err = parse(&text).unwrap_err();
        assert_eq!(err.check.name(), "yaml-too-complex", "{err:?}");
        assert_eq!(
            err.message,
            "the document is too large or too complex for a manifest"
        );
    }

    #[test]
    fn refuses_a_second_document() {
        let err = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(err.check.name(), "yaml-too-complex", "{err:?}");
        assert_eq!(err.message, "the file holds more than one YAML document");
        assert_eq!(err.loc.line, 2);
    }

    #[test]
    fn refuses_alias_bombs() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let err = parse(&text).unwrap_err();
        assert_eq!(err.check.name(), "yaml-too-complex", "{err:?}");
        assert!(err.message.contains("alias bomb"), "{err:?}");
    }
}

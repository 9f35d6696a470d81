//! The located tree: every node keeps its line and column, and lookups by JSON pointer.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::ids::Id;
use serde_json::{Map, Number, Value};

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

/// The tree reads as the JSON value [`Node::to_json`] builds: the manifest's identity hashes it
/// in canonical form without building that value.
impl crate::json::Document for Node {
    fn shape(&self) -> crate::json::Shape<'_, Node> {
        use crate::json::Shape;
        match &self.kind {
            Kind::Null => Shape::Null,
            Kind::Bool(b) => Shape::Bool(*b),
            Kind::Number(n) => Shape::Number(n),
            Kind::String(s) => Shape::String(s),
            Kind::Seq(items) => Shape::Array(items),
            // A tree `parse` read has no key twice (it refuses them).
            Kind::Map(entries) => {
                Shape::Object(entries.iter().map(|(k, v)| (k.name.as_str(), v)).collect())
            }
        }
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

//! Two located trees compared as the documents they hold: locations, key order, quoting and
//! layout ignored, numbers by value. Iterative, and linear in the trees' size: a mapping whose
//! keys come in another order is matched through an index of its keys, not a search of each.

use std::collections::HashMap;

use crate::json::number_equal;
use crate::manifest::yaml::{Key, Kind, Node};

/// Mappings up to this many keys are searched in order when their orders part; a larger one
/// through an index of its keys.
const INDEXED: usize = 16;

/// The entries of a mapping looked up by key, for a mapping of any size.
pub(super) struct Entries<'a> {
    entries: &'a [(Key, Node)],
    index: Option<HashMap<&'a str, &'a Node>>,
}

impl<'a> Entries<'a> {
    /// The entries of `node`, when it is a mapping; a large one is indexed at once.
    pub(super) fn of(node: &'a Node) -> Option<Entries<'a>> {
        let Kind::Map(entries) = &node.kind else {
            return None;
        };
        Some(Entries::new(entries))
    }

    fn new(entries: &'a [(Key, Node)]) -> Entries<'a> {
        let index = (entries.len() > INDEXED).then(|| {
            let mut index = HashMap::with_capacity(entries.len());
            for (key, value) in entries {
                index.entry(key.name.as_str()).or_insert(value);
            }
            index
        });
        Entries { entries, index }
    }

    /// The value under `name`.
    pub(super) fn get(&self, name: &str) -> Option<&'a Node> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self
                .entries
                .iter()
                .find(|(k, _)| k.name == name)
                .map(|(_, v)| v),
        }
    }

    /// The keys, in document order.
    pub(super) fn keys(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.entries.iter().map(|(k, _)| k.name.as_str())
    }
}

/// The keys of two mappings, each once: `new`'s in its order, then those only `old` has, in
/// its order.
pub(super) fn union<'a>(old: &Entries<'a>, new: &Entries<'a>) -> Vec<&'a str> {
    let mut keys: Vec<&'a str> = new.keys().collect();
    keys.extend(old.keys().filter(|k| new.get(k).is_none()));
    keys
}

/// Whether two nodes hold the same JSON value.
pub fn same(a: &Node, b: &Node) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (&a.kind, &b.kind) {
            (Kind::Null, Kind::Null) => {}
            (Kind::Bool(x), Kind::Bool(y)) if x == y => {}
            (Kind::String(x), Kind::String(y)) if x == y => {}
            (Kind::Number(x), Kind::Number(y)) if number_equal(x, y) => {}
            (Kind::Seq(x), Kind::Seq(y)) if x.len() == y.len() => stack.extend(x.iter().zip(y)),
            (Kind::Map(x), Kind::Map(y)) if x.len() == y.len() => {
                // Usually in the same order: paired without hashing until the orders part.
                let mut other: Option<Entries> = None;
                for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                    if other.is_none() && kx.name == ky.name {
                        stack.push((vx, vy));
                        continue;
                    }
                    let index = other.get_or_insert_with(|| Entries::new(y));
                    match index.get(&kx.name) {
                        Some(vy) => stack.push((vx, vy)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// The pointer (below `at`) of the first place, in document order, where `old` and `new`
/// differ; `None` when they hold the same value.
pub fn first_difference(old: &Node, new: &Node, at: &str) -> Option<String> {
    let mut stack = vec![(at.to_string(), old, new)];
    while let Some((at, old, new)) = stack.pop() {
        match (&old.kind, &new.kind) {
            (Kind::Seq(x), Kind::Seq(y)) => {
                if x.len() != y.len() {
                    // The items both have come first; past them, the first one only one has.
                    let first = x.len().min(y.len());
                    if x.iter().zip(y).all(|(a, b)| same(a, b)) {
                        return Some(format!("{at}/{first}"));
                    }
                }
                for (i, (a, b)) in x.iter().zip(y).enumerate().rev() {
                    stack.push((format!("{at}/{i}"), a, b));
                }
            }
            (Kind::Map(x), Kind::Map(y)) => {
                let (ox, oy) = (Entries::new(x), Entries::new(y));
                let mut pairs = Vec::new();
                for name in union(&ox, &oy) {
                    let here = crate::pointer::child(&at, name);
                    match (ox.get(name), oy.get(name)) {
                        (Some(a), Some(b)) => pairs.push((here, a, b)),
                        _ => {
                            if pairs.iter().all(|(_, a, b)| same(a, b)) {
                                return Some(here);
                            }
                            break;
                        }
                    }
                }
                stack.extend(pairs.into_iter().rev());
            }
            _ if same(old, new) => {}
            _ => return Some(at),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::yaml::parse;

    #[test]
    fn layout_order_quoting_and_number_forms_are_the_same_document() {
        let a = parse("a: 1\nb: [x, {c: 2.0}]\n# a comment\n").unwrap();
        let b = parse("{b: ['x', {\"c\": 2}], a: 1.0}").unwrap();
        assert!(same(&a, &b));
        assert_eq!(first_difference(&a, &b, ""), None);
        let c = parse("{b: ['x', {c: '2'}], a: 1}").unwrap();
        assert!(!same(&a, &c));
        assert_eq!(first_difference(&a, &c, "").as_deref(), Some("/b/1/c"));
    }

    #[test]
    fn the_first_difference_is_the_first_in_document_order() {
        let a = parse("a: [1, 2, 3]\nb: 1\n").unwrap();
        let b = parse("a: [1, 5, 3, 4]\nb: 2\n").unwrap();
        assert_eq!(first_difference(&a, &b, "/x").as_deref(), Some("/x/a/1"));
        let b = parse("a: [1, 2, 3, 4]\nb: 1\n").unwrap();
        assert_eq!(first_difference(&a, &b, "").as_deref(), Some("/a/3"));
        let b = parse("a: [1, 2, 3]\nc: 1\n").unwrap();
        assert_eq!(first_difference(&a, &b, "").as_deref(), Some("/c"));
    }

    #[test]
    fn large_mappings_in_another_order_are_matched_by_key() {
        let keys: Vec<String> = (0..1000).map(|i| format!("k{i}: {i}")).collect();
        let a = parse(&keys.join("\n")).unwrap();
        let reversed: Vec<String> = keys.iter().rev().cloned().collect();
        let b = parse(&reversed.join("\n")).unwrap();
        assert!(same(&a, &b));
        let changed = reversed.join("\n").replace("k500: 500", "k500: 501");
        let c = parse(&changed).unwrap();
        assert!(!same(&a, &c));
        assert_eq!(first_difference(&a, &c, "").as_deref(), Some("/k500"));
    }
}

//! YAML to a located tree: every node keeps its line and column. The tree is built from the
//! parser's events directly (`read`), each scalar's meaning decided by `scalar`.

mod read;
mod scalar;
mod tree;

use std::collections::HashSet;

use crate::ids;

pub use read::{MAX_YAML_DEPTH, MAX_YAML_NODES};
pub use tree::{Key, Kind, Loc, Locator, Node, YamlError};

/// Parses one YAML document into a located tree; a key written twice in its mapping is
/// refused at the second one, with its JSON pointer (`/runtime/tool`).
pub fn parse(text: &str) -> Result<Node, YamlError> {
    // Repeated keys are found on the tree rather than by the reader: the text is read once,
    // and keys are compared as JSON will hold them, so `1:` and `"1":` are the same key.
    let root = read::read(text)?;
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
    fn a_tab_is_located_where_it_is() {
        // In indentation, in a block sequence, after a plain scalar's line, in a flow mapping.
        for (text, at) in [
            ("a:\n  b: 1\n\tc: 2\n", (3, 1)),
            ("a:\n  - b\n\t- c\n", (3, 1)),
            ("a: b\n\tc: d\n", (2, 1)),
            ("a:\n  b: c\n\t  d: e\n", (3, 1)),
            ("a:\n  b:\n\tc: 1\n", (3, 1)),
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!(err.check.name(), "yaml-syntax", "{text:?}: {err:?}");
            assert_eq!((err.loc.line, err.loc.column), at, "{text:?}: {err:?}");
        }
        // A tab inside a flow mapping is whitespace, as YAML has it.
        assert!(parse("a: {b: 1,\tc: 2}\n").is_ok());
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

    #[test]
    fn accepts_a_document_of_exactly_the_node_budget() {
        // The sequence and its items: the budget exactly.
        let text = format!("[{}]", vec!["0"; MAX_YAML_NODES - 1].join(","));
        assert!(parse(&text).is_ok());
    }

    #[test]
    fn aliases_repeat_their_node_located_at_the_alias() {
        let node = parse("a: &x [1, {b: 2}]\nc: *x\n").unwrap();
        assert_eq!(node.to_json()["c"], serde_json::json!([1, {"b": 2}]));
        let at = Loc { line: 2, column: 4 };
        assert_eq!((node.locate("/c"), node.locate("/c/1/b")), (at, at));
        assert_eq!(node.locate_key("/c/1", "b"), Some(at));
        // An anchored key is repeated too (and is then a duplicate).
        let err = parse("&k key: 1\n*k : 2\n").unwrap_err();
        assert_eq!((err.pointer.as_str(), err.loc.line), ("/key", 2));
    }

    #[test]
    fn refuses_unknown_and_recursive_aliases() {
        let err = parse("a: *nope\n").unwrap_err();
        assert_eq!(
            (err.check.name(), err.message.as_str()),
            ("yaml-syntax", "alias references unknown anchor")
        );
        let err = parse("a: &x [*x]\n").unwrap_err();
        assert_eq!(
            err.message,
            "recursive references require weak recursion types"
        );
        assert_eq!((err.loc.line, err.loc.column), (1, 8));
    }

    #[test]
    fn refuses_many_aliases_to_few_anchors_at_the_end() {
        let text = format!("a: &x [1]\nb: [{}]\n", vec!["*x"; 120].join(", "));
        let err = parse(&text).unwrap_err();
        assert_eq!(err.check.name(), "yaml-too-complex", "{err:?}");
        assert!(err.message.contains("alias bomb"), "{err:?}");
        assert_eq!(err.loc.line, 3);
    }

    #[test]
    fn merge_keys_add_what_the_mapping_lacks_located_at_the_merge() {
        let text = "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nc:\n  x: 0\n  <<: [*a, *b]\n  z: 3\n";
        let node = parse(text).unwrap();
        assert_eq!(
            node.to_json()["c"],
            serde_json::json!({"x": 0, "z": 3, "y": 2})
        );
        assert_eq!(
            node.locate_key("/c", "y"),
            Some(Loc {
                line: 5,
                column: 12
            })
        );
        // A quoted `<<` is an ordinary key; an empty merge merges nothing.
        assert_eq!(
            parse("\"<<\": {x: 1}\n").unwrap().to_json(),
            serde_json::json!({"<<": {"x": 1}})
        );
        assert_eq!(
            parse("c:\n  <<:\n").unwrap().to_json(),
            serde_json::json!({"c": {}})
        );
        let err = parse("c:\n  <<: [{x: 1}, 2]\n").unwrap_err();
        assert_eq!(
            err.message,
            "yAML merge value must be mapping or sequence of mappings"
        );
        assert_eq!((err.loc.line, err.loc.column), (2, 16));
    }

    #[test]
    fn a_collection_as_a_key_is_refused_at_its_mapping() {
        let err = parse("a:\n  ? [1]\n  : 2\n").unwrap_err();
        assert_eq!(err.message, "a mapping key must be a scalar");
        assert_eq!((err.loc.line, err.loc.column), (2, 3));
        // The root mapping's place is not given, as before.
        assert_eq!(parse("? [1]\n: 2\n").unwrap_err().loc, Loc::default());
    }

    #[test]
    fn tags_stand_only_on_their_kind_of_node() {
        let err = parse("a: !!str {b: 1}\n").unwrap_err();
        assert_eq!(
            (err.message.as_str(), err.loc.column),
            ("unsupported tag `!!str`", 10)
        );
        assert_eq!(
            parse("a: !!map x\n").unwrap_err().message,
            "unsupported tag `!!map`"
        );
        let node = parse("a: !!map {b: !!str 1, c: ! 2, d: !custom 3}\n").unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": {"b": "1", "c": "2", "d": 3}})
        );
    }

    #[test]
    fn a_syntax_error_is_in_the_parsers_words() {
        let err = parse("a: {b: 1\nc: 2\n").unwrap_err();
        assert_eq!(err.check.name(), "yaml-syntax", "{err:?}");
        assert_eq!(
            err.message,
            "while parsing a flow mapping, did not find expected ',' or '}'"
        );
    }

    #[test]
    fn an_empty_file_is_null() {
        assert_eq!(parse("").unwrap().kind, Kind::Null);
        assert_eq!(parse("# only a comment\n").unwrap().kind, Kind::Null);
    }
}

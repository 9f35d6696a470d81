//! Integer-valued floats where `interface.input` says `integer`: JSON Schema counts `10.0`,
//! `1e1` and `-0` as integers, so the gate admits them, and the function must receive them as
//! the integers the schema promised (a `usize` field refuses `10.0`).

use std::collections::HashSet;

use serde_json::Value;

/// Rewrites, in place, every integer-valued float in `input` that `schema` types as `integer`
/// (alone or in a list of types), at any depth: through `properties`, `patternProperties`,
/// `additionalProperties`, `unevaluatedProperties`, `prefixItems`, `items`,
/// `unevaluatedItems`, local `$ref`s (`#`, `#/$defs/...`), `allOf`, `anyOf`, `oneOf`,
/// `if`/`then`/`else` and `dependentSchemas`.
///
/// It may rewrite a float a branch that does not finally apply calls an integer (a
/// `patternProperties` schema is applied to every property, an `anyOf` branch whether or not it
/// matched): `10.0` and `10` are the same JSON Schema number, so no verdict changes, and a
/// float field in the function still reads an integer. The walk is iterative and visits each
/// (schema, value) pair once, so a `$ref` cycle ends; the payload is already inside the
/// gateway's bounds when it runs.
pub fn coerce(schema: &Value, input: &mut Value) {
    // The common case: no float anywhere, nothing to walk.
    if !has_integral_float(input) {
        return;
    }
    let found = marked(schema, input);
    for path in found {
        if let Some(value) = at_mut(input, &path)
            && let Some(integer) = as_integer(value)
        {
            *value = integer;
        }
    }
}

fn has_integral_float(input: &Value) -> bool {
    let mut stack = vec![input];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(_) if as_integer(value).is_some() => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// The integer a float stands for, when it is integer-valued and an `i64` or `u64` holds it.
fn as_integer(value: &Value) -> Option<Value> {
    let Value::Number(n) = value else {
        return None;
    };
    if !n.is_f64() {
        return None;
    }
    let f = n.as_f64()?;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    // 2^64 and -2^63 are exact as f64; the casts below are exact inside these ranges.
    if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        Some(Value::from(f as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
        Some(Value::from(f as i64))
    } else {
        None
    }
}

/// One step from a value to a child.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The paths of the floats to rewrite: a walk over (schema, value) pairs, each node of the
/// value remembered by its parent so that a path is built only for a float that is rewritten.
fn marked(root: &Value, input: &Value) -> Vec<Vec<Owned>> {
    // Node 0 is the input itself; every other node is (parent, step).
    let mut nodes: Vec<(usize, Step<'_>)> = vec![(0, Step::Index(0))];
    let mut seen: HashSet<(*const Value, *const Value)> = HashSet::new();
    let mut stack: Vec<(&Value, &Value, usize)> = vec![(root, input, 0)];
    let mut hits: Vec<usize> = Vec::new();
    while let Some((schema, value, node)) = stack.pop() {
        if !seen.insert((std::ptr::from_ref(schema), std::ptr::from_ref(value))) {
            continue;
        }
        let Value::Object(s) = schema else {
            continue;
        };
        if says_integer(s.get("type")) && as_integer(value).is_some() {
            hits.push(node);
        }
        stack.extend(in_place(root, s).into_iter().map(|sub| (sub, value, node)));
        // Schemas that apply to the value's children.
        match value {
            Value::Object(map) => {
                let properties = s.get("properties").and_then(Value::as_object);
                let patterns = s.get("patternProperties").and_then(Value::as_object);
                let rest = [
                    s.get("additionalProperties"),
                    s.get("unevaluatedProperties"),
                ];
                for (key, child) in map {
                    let named = properties.and_then(|p| p.get(key));
                    let mut subs: Vec<&Value> = named.into_iter().collect();
                    subs.extend(patterns.into_iter().flat_map(|p| p.values()));
                    if named.is_none() {
                        subs.extend(rest.into_iter().flatten());
                    }
                    if subs.is_empty() {
                        continue;
                    }
                    nodes.push((node, Step::Key(key)));
                    let id = nodes.len() - 1;
                    stack.extend(subs.into_iter().map(|sub| (sub, child, id)));
                }
            }
            Value::Array(items) => {
                let prefix = s.get("prefixItems").and_then(Value::as_array);
                let rest = [s.get("items"), s.get("unevaluatedItems")];
                for (index, child) in items.iter().enumerate() {
                    let subs: Vec<&Value> = match prefix.and_then(|p| p.get(index)) {
                        Some(sub) => vec![sub],
                        None => rest.into_iter().flatten().collect(),
                    };
                    if subs.is_empty() {
                        continue;
                    }
                    nodes.push((node, Step::Index(index)));
                    let id = nodes.len() - 1;
                    stack.extend(subs.into_iter().map(|sub| (sub, child, id)));
                }
            }
            _ => {}
        }
    }
    hits.into_iter().map(|node| path_to(&nodes, node)).collect()
}

/// The schemas that apply to the value itself: references, combinators, conditionals and
/// dependent schemas.
fn in_place<'a>(root: &'a Value, s: &'a serde_json::Map<String, Value>) -> Vec<&'a Value> {
    let mut subs = Vec::new();
    for key in ["$ref", "$dynamicRef"] {
        if let Some(target) = s
            .get(key)
            .and_then(Value::as_str)
            .and_then(|r| local(root, r))
        {
            subs.push(target);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = s.get(key) {
            subs.extend(branches);
        }
    }
    for key in ["if", "then", "else"] {
        subs.extend(s.get(key));
    }
    if let Some(Value::Object(dependent)) = s.get("dependentSchemas") {
        subs.extend(dependent.values());
    }
    subs
}

/// The steps from the input to a node of the walk.
fn path_to(nodes: &[(usize, Step<'_>)], mut node: usize) -> Vec<Owned> {
    let mut path = Vec::new();
    while node != 0 {
        let Some(&(parent, step)) = nodes.get(node) else {
            break;
        };
        path.push(match step {
            Step::Key(k) => Owned::Key(k.to_string()),
            Step::Index(i) => Owned::Index(i),
        });
        node = parent;
    }
    path.reverse();
    path
}

/// A step kept past the walk, when the input is borrowed mutably to rewrite it.
enum Owned {
    Key(String),
    Index(usize),
}

fn at_mut<'v>(mut value: &'v mut Value, path: &[Owned]) -> Option<&'v mut Value> {
    for step in path {
        value = match (step, value) {
            (Owned::Key(k), Value::Object(map)) => map.get_mut(k)?,
            (Owned::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

fn says_integer(types: Option<&Value>) -> bool {
    match types {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// The schema a local reference (`#`, `#/$defs/name`) points at; other references are not
/// followed (a checked manifest fetches nothing, so its `$ref`s that compile are local).
fn local<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    root.pointer(&percent_decoded(fragment)?)
}

/// A URI fragment's `%XX` escapes decoded (`#/$defs/a%20b`); `None` when they are not UTF-8.
fn percent_decoded(fragment: &str) -> Option<String> {
    if !fragment.contains('%') {
        return Some(fragment.to_string());
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&here) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (here, hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn coerced(schema: Value, input: &str) -> String {
        let mut value: Value = serde_json::from_str(input).expect("JSON");
        super::coerce(&schema, &mut value);
        value.to_string()
    }

    #[test]
    fn integer_valued_floats_become_integers_where_the_schema_says_integer() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "number"}, "c": {"type": ["integer", "null"]}}});
        assert_eq!(
            coerced(schema.clone(), r#"{"a": 10.0, "b": 10.0, "c": 1e1}"#),
            r#"{"a":10,"b":10.0,"c":10}"#
        );
        assert_eq!(coerced(schema.clone(), r#"{"a": -0}"#), r#"{"a":0}"#);
        assert_eq!(coerced(schema.clone(), r#"{"a": -3.0}"#), r#"{"a":-3}"#);
        // Not integer-valued, or beyond what an integer type holds: left for the gate.
        assert_eq!(coerced(schema.clone(), r#"{"a": 1.5}"#), r#"{"a":1.5}"#);
        assert_eq!(coerced(schema, r#"{"a": 1e300}"#), r#"{"a":1e+300}"#);
    }

    #[test]
    fn every_applicator_is_followed() {
        let schema = json!({
            "$defs": {"n": {"type": "integer"}, "tree": {"type": "object", "properties": {
                "v": {"$ref": "#/$defs/n"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "integer"}},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                          "items": {"$ref": "#/$defs/n"}},
                "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "all": {"allOf": [{"minimum": 0}, {"$ref": "#/$defs/n"}]},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}},
                "tree": {"$ref": "#/$defs/tree"}
            }
        });
        let input = r#"{"items": [1.0, 2e0], "tuple": ["x", 3.0, 4.0], "any": 5.0, "all": 6.0,
            "map": {"k": 7.0}, "tree": {"v": 8.0, "kids": [{"v": 9.0, "kids": [{"v": 1e1}]}]}}"#;
        assert_eq!(
            coerced(schema, input),
            r#"{"items":[1,2],"tuple":["x",3,4],"any":5,"all":6,"map":{"k":7},"tree":{"v":8,"kids":[{"v":9,"kids":[{"v":10}]}]}}"#
        );
    }

    #[test]
    fn a_ref_cycle_without_descent_ends() {
        let schema = json!({"allOf": [{"$ref": "#"}], "type": "integer"});
        assert_eq!(coerced(schema, "2.0"), "2");
    }

    #[test]
    fn floats_the_schema_does_not_type_as_integer_are_left_alone() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}},
                            "additionalProperties": false});
        assert_eq!(coerced(schema, r#"{"b": 2.0}"#), r#"{"b":2.0}"#);
    }
}

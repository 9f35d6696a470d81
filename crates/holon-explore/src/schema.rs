//! The input schema as the generators read it: local `$ref`s followed, `allOf` merged, the
//! JSON type a node admits, its bounds, and the file handles a handle property draws from.

use serde_json::{Map, Value};

use crate::error::Unservable;

/// How deep required values may nest before the generators give up on a schema.
pub const MAX_DEPTH: usize = 24;

/// `pattern` of a file handle property, as the guides write it.
pub const HANDLE_PATTERN: &str = "^holon://files/";

/// `interface.input` with what the generators need beside it.
pub struct Schemas<'a> {
    /// The whole input schema, for `$ref`s.
    pub root: &'a Value,
    /// Handles a `holon://files/` property may take: the files beside the manifest.
    pub handles: Vec<String>,
    /// `runtime.limits.max_input_bytes`.
    pub max_bytes: u64,
}

impl<'a> Schemas<'a> {
    /// A node with its `$ref` followed and its `allOf` merged in, so the generators see one
    /// flat set of keywords. `Err` names a `$ref` that does not resolve locally.
    pub fn resolve(&self, node: &Value) -> Result<Value, Unservable> {
        let mut node = node.clone();
        for _ in 0..32 {
            let Some(target) = node.get("$ref").and_then(Value::as_str).map(str::to_string) else {
                break;
            };
            let Some(pointer) = target.strip_prefix('#') else {
                return Err(Unservable::NotLocal { target });
            };
            let found = self
                .root
                .pointer(pointer)
                .ok_or_else(|| Unservable::Dangling {
                    target: target.clone(),
                })?;
            let mut rest = node.as_object().cloned().unwrap_or_default();
            rest.remove("$ref");
            node = merge(found, &Value::Object(rest));
        }
        if let Some(all) = node.get("allOf").and_then(Value::as_array).cloned() {
            let mut rest = node.as_object().cloned().unwrap_or_default();
            rest.remove("allOf");
            let mut merged = Value::Object(rest);
            for part in &all {
                merged = merge(&merged, &self.resolve(part)?);
            }
            node = merged;
        }
        Ok(node)
    }

    /// The handles to draw from when `node` is a file handle property.
    pub fn handles_for(&self, node: &Value) -> Option<&[String]> {
        let pattern = node.get("pattern").and_then(Value::as_str)?;
        (pattern.starts_with(HANDLE_PATTERN) && !self.handles.is_empty())
            .then_some(self.handles.as_slice())
    }
}

/// Two schemas' keywords as one: properties joined, `required` joined, the tighter of each
/// bound; otherwise `b`'s keyword where `a` has none. The gate judges what this misses.
pub fn merge(a: &Value, b: &Value) -> Value {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return match b {
            Value::Bool(true) => a.clone(),
            _ => b.clone(),
        };
    };
    let mut out = a.clone();
    for (key, value) in b {
        let merged = match (key.as_str(), out.get(key)) {
            (_, None) => value.clone(),
            ("properties" | "$defs", Some(Value::Object(mine))) => {
                let mut joined = mine.clone();
                for (name, schema) in value.as_object().into_iter().flatten() {
                    let next = match joined.get(name) {
                        Some(existing) => merge(existing, schema),
                        None => schema.clone(),
                    };
                    joined.insert(name.clone(), next);
                }
                Value::Object(joined)
            }
            ("required", Some(Value::Array(mine))) => {
                let mut joined = mine.clone();
                for name in value.as_array().into_iter().flatten() {
                    if !joined.contains(name) {
                        joined.push(name.clone());
                    }
                }
                Value::Array(joined)
            }
            (
                "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties",
                Some(mine),
            ) => pick(mine, value, |x, y| x >= y),
            (
                "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties",
                Some(mine),
            ) => pick(mine, value, |x, y| x <= y),
            (_, Some(mine)) => mine.clone(),
        };
        out.insert(key.clone(), merged);
    }
    Value::Object(out)
}

fn pick(a: &Value, b: &Value, keep_a: impl Fn(f64, f64) -> bool) -> Value {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if !keep_a(x, y) => b.clone(),
        _ => a.clone(),
    }
}

/// The JSON types a node admits, from `type` or, without one, from the keywords it uses.
pub fn types(node: &Value) -> Vec<&'static str> {
    const ALL: [&str; 7] = [
        "null", "boolean", "integer", "number", "string", "array", "object",
    ];
    let named = |t: &str| ALL.iter().copied().find(|a| *a == t);
    match node.get("type") {
        Some(Value::String(t)) => named(t).into_iter().collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .filter_map(named)
            .collect(),
        _ => {
            let has = |keys: &[&str]| keys.iter().any(|k| node.get(*k).is_some());
            let mut out = Vec::new();
            if has(&[
                "properties",
                "required",
                "additionalProperties",
                "minProperties",
            ]) {
                out.push("object");
            }
            if has(&[
                "items",
                "prefixItems",
                "minItems",
                "maxItems",
                "uniqueItems",
            ]) {
                out.push("array");
            }
            if has(&["minLength", "maxLength", "pattern", "format"]) {
                out.push("string");
            }
            if has(&[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ]) {
                out.push("number");
            }
            if out.is_empty() {
                out.extend(["null", "boolean", "integer", "string"]);
            }
            out
        }
    }
}

/// A numeric keyword.
pub fn num(node: &Value, key: &str) -> Option<f64> {
    node.get(key).and_then(Value::as_f64)
}

/// A count keyword (`minLength`, `maxItems`, ...).
pub fn count(node: &Value, key: &str) -> Option<u64> {
    node.get(key).and_then(|v| {
        v.as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
    })
}

/// The declared properties, in order.
pub fn properties(node: &Value) -> Vec<(&String, &Value)> {
    node.get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

/// The names in `required`.
pub fn required(node: &Value) -> Vec<&str> {
    node.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The bounds of an integer node: inclusive, exclusive bounds moved inside.
pub fn int_bounds(node: &Value) -> (Option<i64>, Option<i64>) {
    let lo = [
        num(node, "minimum").map(f64::ceil),
        num(node, "exclusiveMinimum").map(|x| x.floor() + 1.0),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::max);
    let hi = [
        num(node, "maximum").map(f64::floor),
        num(node, "exclusiveMaximum").map(|x| x.ceil() - 1.0),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::min);
    let fit = |x: f64| x.clamp(i64::MIN as f64, i64::MAX as f64) as i64;
    (lo.map(fit), hi.map(fit))
}

/// A number bound and whether it is exclusive.
pub type Bound = Option<(f64, bool)>;

/// The bounds of a number node, lower and upper.
pub fn number_bounds(node: &Value) -> (Bound, Bound) {
    let lower = match (num(node, "minimum"), num(node, "exclusiveMinimum")) {
        (Some(m), Some(x)) if x >= m => Some((x, true)),
        (Some(m), _) => Some((m, false)),
        (None, Some(x)) => Some((x, true)),
        (None, None) => None,
    };
    let upper = match (num(node, "maximum"), num(node, "exclusiveMaximum")) {
        (Some(m), Some(x)) if x <= m => Some((x, true)),
        (Some(m), _) => Some((m, false)),
        (None, Some(x)) => Some((x, true)),
        (None, None) => None,
    };
    (lower, upper)
}

/// A number as JSON: an integer when it is whole and fits, so `2` stays `2`.
pub fn number_value(x: f64) -> Option<Value> {
    if !x.is_finite() {
        return None;
    }
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        return Some(Value::from(x as i64));
    }
    serde_json::Number::from_f64(x).map(Value::Number)
}

/// An object from `(name, value)` pairs, in order.
pub fn object(pairs: impl IntoIterator<Item = (String, Value)>) -> Value {
    Value::Object(pairs.into_iter().collect::<Map<String, Value>>())
}

/// The `format`s explore draws plausible values for, as RE2 patterns.
pub fn format_pattern(format: &str) -> Option<&'static str> {
    Some(match format {
        "date" => r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])",
        "time" => r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z",
        "date-time" => {
            r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,3})?(Z|[+-]0[0-9]:00)"
        }
        "email" => r"[a-z][a-z0-9._]{0,11}@[a-z]{1,10}\.(com|org|net)",
        "hostname" => r"[a-z][a-z0-9-]{0,14}[a-z0-9](\.[a-z]{2,6}){1,2}",
        "ipv4" => {
            r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}"
        }
        "ipv6" => r"[0-9a-f]{1,4}(:[0-9a-f]{1,4}){7}",
        "uri" | "iri" | "uri-reference" | "iri-reference" => {
            r"https://[a-z]{1,12}\.(com|org)(/[a-zA-Z0-9_-]{1,8}){0,3}"
        }
        "uuid" => r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
        _ => return None,
    })
}

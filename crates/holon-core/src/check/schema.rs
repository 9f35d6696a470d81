//! Publish checks on `interface.input` and `interface.output`: the dialect, the 2020-12
//! meta-schema, RE2 patterns and bounded `uniqueItems`.

use serde_json::{Map, Value};

use super::collect::Diagnostics;
use super::diagnostic::dotted;
use crate::ids;
use holon_re2 as re2;

/// The one dialect the registry takes.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
/// Largest `maxItems` allowed beside `uniqueItems: true`.
pub const MAX_UNIQUE_ITEMS: u64 = 1000;

/// A schema's subschemas, each with its pointer, sorted by pointer.
pub type Subschemas<'a> = Vec<(String, &'a Map<String, Value>)>;

/// Every schema object inside `schema` (itself included), with its pointer, found without
/// recursion. Only positions that hold schemas are visited: the values under `enum`, `const`,
/// `default` or `examples` are data, not schemas.
pub fn subschemas<'a>(schema: &'a Value, pointer: &str) -> Subschemas<'a> {
    use crate::gateway::schema::{NAMED_SCHEMAS, ONE_SCHEMA, SCHEMA_LIST};
    // Two keywords of earlier drafts whose schemas an author still writes: checked all the
    // same (and warned as not 2020-12 by `keywords`).
    let one = |k: &str| ONE_SCHEMA.contains(&k) || k == "additionalItems";
    let named = |k: &str| NAMED_SCHEMAS.contains(&k) || k == "definitions";
    let mut found = Vec::new();
    let mut stack = vec![(pointer.to_string(), schema)];
    while let Some((ptr, value)) = stack.pop() {
        let Value::Object(obj) = value else { continue };
        for (key, child) in obj {
            // The keywords below are plain words: none needs escaping in a pointer.
            let k = key.as_str();
            if one(k) {
                stack.push((format!("{ptr}/{k}"), child));
            } else if SCHEMA_LIST.contains(&k) || (k == "items" && child.is_array()) {
                if let Value::Array(items) = child {
                    for (i, item) in items.iter().enumerate() {
                        stack.push((format!("{ptr}/{k}/{i}"), item));
                    }
                }
            } else if named(k)
                && let Value::Object(children) = child
            {
                let base = format!("{ptr}/{k}");
                for (name, item) in children {
                    stack.push((crate::pointer::child(&base, name), item));
                }
            }
        }
        found.push((ptr, obj));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// Checks one schema at `pointer` (`/interface/input` or `/interface/output`), whose
/// subschemas are `subs`. Returns its compiled validator when it passes, to validate the
/// examples with.
pub fn check(
    schema: &Value,
    pointer: &str,
    subs: &Subschemas,
    out: &mut Diagnostics,
) -> Option<jsonschema::Validator> {
    let before = out.count();
    object_at_root(schema, pointer, out);
    if let Some(dialect) = schema.get("$schema")
        && dialect.as_str() != Some(DIALECT)
    {
        out.error(
            ids::SCHEMA_DIALECT,
            format!("{pointer}/$schema"),
            format!("`$schema` is {dialect}, the registry takes only JSON Schema 2020-12"),
        )
        .hint(format!("remove `$schema` or set it to `{DIALECT}`"));
    }
    let meta = jsonschema::draft202012::meta::validator();
    // Most schemas are valid: a yes/no walk builds no error.
    let errors = (!meta.is_valid(schema)).then(|| meta.iter_errors(schema));
    for error in errors.into_iter().flatten() {
        out.error(
            ids::SCHEMA_INVALID,
            format!("{pointer}{}", error.instance_path().as_str()),
            format!(
                "not valid JSON Schema 2020-12: {}",
                crate::message::sentence(&error.to_string())
            ),
        );
    }
    for (ptr, obj) in subs {
        gateway_rules(ptr, obj, out);
    }
    if out.count() > before {
        return None;
    }
    match crate::gateway::schema::compile(schema) {
        Ok(validator) => Some(validator),
        Err(message) => {
            out.error(
                ids::SCHEMA_COMPILE,
                pointer,
                format!("the schema does not compile: {message}"),
            );
            None
        }
    }
}

/// MCP carries arguments and `structuredContent` as JSON objects, so both schemas must describe
/// one at the root.
fn object_at_root(schema: &Value, pointer: &str, out: &mut Diagnostics) {
    let what = if pointer.ends_with("input") {
        "tool arguments"
    } else {
        "`structuredContent`"
    };
    let (at, shown) = match schema.get("type") {
        Some(Value::String(t)) if t == "object" => return,
        Some(t) => (format!("{pointer}/type"), format!("`type` is {t}")),
        None => (pointer.to_string(), "there is no `type`".to_string()),
    };
    out.error(
        ids::SCHEMA_NOT_OBJECT,
        at,
        format!(
            "`{}` must be `type: object` at its root, and {shown}",
            dotted(pointer)
        ),
    )
    .hint(format!("MCP sends {what} as a JSON object"));
}

/// What the gateway adds to JSON Schema for one schema object: RE2 patterns, bounded
/// `uniqueItems`.
fn gateway_rules(ptr: &str, obj: &Map<String, Value>, out: &mut Diagnostics) {
    if let Some(Value::String(pattern)) = obj.get("pattern")
        && let Some(message) = not_re2(pattern)
    {
        out.error(ids::PATTERN_NOT_RE2, format!("{ptr}/pattern"), message)
            .hint(RE2_HINT);
    }
    if let Some(Value::Object(props)) = obj.get("patternProperties") {
        for name in props.keys() {
            if let Some(message) = not_re2(name) {
                let (at, loc) = out.key(&format!("{ptr}/patternProperties"), name);
                out.error(ids::PATTERN_NOT_RE2, at, message)
                    .at(loc)
                    .hint(RE2_HINT);
            }
        }
    }
    if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
        let max = obj.get("maxItems").and_then(Value::as_f64);
        if !max.is_some_and(|m| m <= MAX_UNIQUE_ITEMS as f64) {
            let what = match max {
                Some(m) => format!("`maxItems` is {m}"),
                None => "there is no `maxItems`".to_string(),
            };
            out.error(ids::UNIQUE_ITEMS_UNBOUNDED, format!("{ptr}/uniqueItems"), format!("`uniqueItems: true` needs `maxItems` <= {MAX_UNIQUE_ITEMS} on the same node, and {what}"))
                .hint("uniqueness compares every pair of items; bound the array or drop `uniqueItems`");
        }
    }
}

const RE2_HINT: &str =
    "the gateway runs patterns on RE2: no backreferences, no lookaround, repeats up to 1000";

/// Why `pattern` does not compile under RE2, when it does not.
fn not_re2(pattern: &str) -> Option<String> {
    let e = re2::check(pattern).err()?;
    Some(format!(
        "pattern `{pattern}` does not compile under RE2: {e}"
    ))
}

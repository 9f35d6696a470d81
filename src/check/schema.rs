//! Publish checks on `interface.input` and `interface.output`: the dialect, the 2020-12
//! meta-schema, RE2 patterns and bounded `uniqueItems`.

use serde_json::{Map, Value};

use super::diagnostic::Diagnostic;
use super::re2;
use crate::gateway::bounds::escape;
use crate::manifest::yaml::Node;

/// The one dialect the registry takes.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
/// Largest `maxItems` allowed beside `uniqueItems: true`.
pub const MAX_UNIQUE_ITEMS: u64 = 1000;

/// Every schema object inside `schema` (itself included), with its pointer, found without
/// recursion. Only positions that hold schemas are visited: the values under `enum`, `const`,
/// `default` or `examples` are data, not schemas.
pub fn subschemas<'a>(schema: &'a Value, pointer: &str) -> Vec<(String, &'a Map<String, Value>)> {
    const ONE: &[&str] = &[
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
        "contentSchema",
    ];
    const MANY: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];
    const NAMED: &[&str] = &[
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    let mut found = Vec::new();
    let mut stack = vec![(pointer.to_string(), schema)];
    while let Some((ptr, value)) = stack.pop() {
        let Value::Object(obj) = value else { continue };
        for (key, child) in obj {
            let k = key.as_str();
            if ONE.contains(&k) {
                stack.push((format!("{ptr}/{}", escape(k)), child));
            } else if MANY.contains(&k) || (k == "items" && child.is_array()) {
                if let Value::Array(items) = child {
                    for (i, item) in items.iter().enumerate() {
                        stack.push((format!("{ptr}/{k}/{i}"), item));
                    }
                }
            } else if NAMED.contains(&k)
                && let Value::Object(named) = child
            {
                for (name, item) in named {
                    stack.push((format!("{ptr}/{}/{}", escape(k), escape(name)), item));
                }
            }
        }
        found.push((ptr, obj));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// Checks one schema at `pointer` (`/interface/input` or `/interface/output`). Returns its
/// compiled validator when it passes, to validate the examples with.
pub fn check(
    schema: &Value,
    pointer: &str,
    root: &Node,
    out: &mut Vec<Diagnostic>,
) -> Option<jsonschema::Validator> {
    let before = out.len();
    // MCP carries arguments and `structuredContent` as JSON objects, so both schemas must
    // describe one at the root.
    let what = if pointer.ends_with("input") {
        "tool arguments"
    } else {
        "`structuredContent`"
    };
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        found => {
            let (at, shown) = match found {
                Some(t) => (format!("{pointer}/type"), format!("`type` is {t}")),
                None => (pointer.to_string(), "there is no `type`".to_string()),
            };
            out.push(
                Diagnostic::error(
                    "schema-not-object",
                    &at,
                    root.locate(&at),
                    format!(
                        "`{}` must be `type: object` at its root, and {shown}",
                        super::diagnostic::dotted(pointer)
                    ),
                )
                .with_hint(format!("MCP sends {what} as a JSON object")),
            );
        }
    }
    if let Some(dialect) = schema.get("$schema")
        && dialect.as_str() != Some(DIALECT)
    {
        let ptr = format!("{pointer}/$schema");
        out.push(
            Diagnostic::error(
                "schema-dialect",
                &ptr,
                root.locate(&ptr),
                format!("`$schema` is {dialect}, the registry takes only JSON Schema 2020-12"),
            )
            .with_hint(format!("remove `$schema` or set it to `{DIALECT}`")),
        );
    }
    let meta = jsonschema::draft202012::meta::validator();
    for error in meta.iter_errors(schema) {
        let ptr = format!("{pointer}{}", error.instance_path().as_str());
        out.push(Diagnostic::error(
            "schema-invalid",
            &ptr,
            root.locate(&ptr),
            format!(
                "not valid JSON Schema 2020-12: {}",
                crate::gateway::schema::sentence(&error.to_string())
            ),
        ));
    }
    for (ptr, obj) in subschemas(schema, pointer) {
        if let Some(Value::String(pattern)) = obj.get("pattern") {
            let at = format!("{ptr}/pattern");
            check_pattern(pattern, &at, root.locate(&at), out);
        }
        if let Some(Value::Object(props)) = obj.get("patternProperties") {
            for name in props.keys() {
                let at = format!("{ptr}/patternProperties/{}", escape(name));
                let loc = root
                    .locate_key(&format!("{ptr}/patternProperties"), name)
                    .unwrap_or_else(|| root.locate(&at));
                check_pattern(name, &at, loc, out);
            }
        }
        if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
            let max = obj.get("maxItems").and_then(Value::as_f64);
            if !max.is_some_and(|m| m <= MAX_UNIQUE_ITEMS as f64) {
                let at = format!("{ptr}/uniqueItems");
                let what = match max {
                    Some(m) => format!("`maxItems` is {m}"),
                    None => "there is no `maxItems`".to_string(),
                };
                out.push(
                    Diagnostic::error("unique-items-unbounded", &at, root.locate(&at), format!("`uniqueItems: true` needs `maxItems` <= {MAX_UNIQUE_ITEMS} on the same node, and {what}"))
                        .with_hint("uniqueness compares every pair of items; bound the array or drop `uniqueItems`"),
                );
            }
        }
    }
    if out.len() > before {
        return None;
    }
    match crate::gateway::schema::compile(schema) {
        Ok(validator) => Some(validator),
        Err(message) => {
            out.push(Diagnostic::error(
                "schema-compile",
                pointer,
                root.locate(pointer),
                format!("the schema does not compile: {message}"),
            ));
            None
        }
    }
}

fn check_pattern(
    pattern: &str,
    pointer: &str,
    loc: crate::manifest::yaml::Loc,
    out: &mut Vec<Diagnostic>,
) {
    if let Err(e) = re2::check(pattern) {
        out.push(
            Diagnostic::error("pattern-not-re2", pointer, loc, format!("pattern `{pattern}` does not compile under RE2: {e}"))
                .with_hint("the gateway runs patterns on RE2: no backreferences, no lookaround, repeats up to 1000"),
        );
    }
}

//! Warnings from the guides' habits: bounded strings and numbers, defaults, descriptions, a
//! closed input, no bare objects in the output, an example for every declared code.

use serde_json::{Map, Value};

use super::diagnostic::Diagnostic;
use super::schema::subschemas;
use crate::gateway::bounds::escape;
use crate::manifest::yaml::Node;

fn types(obj: &Map<String, Value>) -> Vec<&str> {
    match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn fixed(obj: &Map<String, Value>) -> bool {
    obj.contains_key("enum") || obj.contains_key("const")
}

/// Lints on `interface.input`: the four habits that make an input schema usable by a caller.
pub fn input(schema: &Value, root: &Node, out: &mut Vec<Diagnostic>) {
    let base = "/interface/input";
    if let Value::Object(obj) = schema
        && obj.get("additionalProperties") != Some(&Value::Bool(false))
        && obj.get("unevaluatedProperties") != Some(&Value::Bool(false))
    {
        out.push(
                Diagnostic::warning("input-open", base, root.locate(base), "the input does not set `additionalProperties: false`")
                    .with_hint("a closed input makes a typo in a field name fail at the gate instead of being ignored"),
            );
    }
    for (ptr, obj) in subschemas(schema, base) {
        let ts = types(obj);
        if ts.contains(&"string") && !fixed(obj) && !obj.contains_key("maxLength") {
            out.push(
                Diagnostic::warning(
                    "string-unbounded",
                    &ptr,
                    root.locate(&ptr),
                    format!(
                        "the string at `{}` has no `maxLength`",
                        super::diagnostic::dotted(&ptr)
                    ),
                )
                .with_hint("bound every string, so a caller knows what you accept"),
            );
        }
        if (ts.contains(&"integer") || ts.contains(&"number")) && !fixed(obj) {
            let low = obj.contains_key("minimum") || obj.contains_key("exclusiveMinimum");
            let high = obj.contains_key("maximum") || obj.contains_key("exclusiveMaximum");
            if !(low && high) {
                let missing = match (low, high) {
                    (false, false) => "`minimum` or `maximum`",
                    (false, true) => "`minimum`",
                    _ => "`maximum`",
                };
                out.push(
                    Diagnostic::warning(
                        "number-unbounded",
                        &ptr,
                        root.locate(&ptr),
                        format!(
                            "the number at `{}` has no {missing}",
                            super::diagnostic::dotted(&ptr)
                        ),
                    )
                    .with_hint("bound every number, so a caller knows what you accept"),
                );
            }
        }
        if let Some(Value::Object(props)) = obj.get("properties") {
            let required: Vec<&str> = match obj.get("required") {
                Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for (name, prop) in props {
                let at = format!("{ptr}/properties/{}", escape(name));
                let loc = root
                    .locate_key(&format!("{ptr}/properties"), name)
                    .unwrap_or_else(|| root.locate(&at));
                let Value::Object(p) = prop else { continue };
                if !required.contains(&name.as_str()) && !p.contains_key("default") {
                    out.push(
                        Diagnostic::warning(
                            "optional-without-default",
                            &at,
                            loc,
                            format!("optional property `{name}` has no `default`"),
                        )
                        .with_hint("a default lets a calling agent leave it out with confidence"),
                    );
                }
                if !p.contains_key("description") {
                    out.push(
                        Diagnostic::warning(
                            "property-without-description",
                            &at,
                            loc,
                            format!("property `{name}` has no `description`"),
                        )
                        .with_hint(
                            "the description is what an orchestrator reads to build the call",
                        ),
                    );
                }
            }
        }
    }
}

/// Lints on `interface.output`: a field typed as a bare `object` tells a caller nothing.
pub fn output(schema: &Value, root: &Node, out: &mut Vec<Diagnostic>) {
    for (ptr, obj) in subschemas(schema, "/interface/output") {
        let shaped = [
            "properties",
            "patternProperties",
            "additionalProperties",
            "$ref",
            "allOf",
            "anyOf",
            "oneOf",
            "unevaluatedProperties",
            "enum",
            "const",
        ]
        .iter()
        .any(|k| obj.contains_key(*k));
        if types(obj) == ["object"] && !shaped {
            out.push(
                Diagnostic::warning("output-bare-object", &ptr, root.locate(&ptr), format!("`{}` is a bare `object`", super::diagnostic::dotted(&ptr)))
                    .with_hint("declare its `properties`: a caller that cannot predict the shape cannot use the answer"),
            );
        }
    }
}

/// A schema keyword with no value is almost always a split flow mapping: in
/// `{ type: string, description: The word, lowercased. }` the comma ends the description and
/// `lowercased.` becomes a keyword of its own, `null`, that every client then sees.
pub fn empty_keywords(schema: &Value, pointer: &str, root: &Node, out: &mut Vec<Diagnostic>) {
    // Keywords whose value may be `null` on purpose.
    const DATA: &[&str] = &["const", "default", "examples", "enum"];
    for (ptr, obj) in subschemas(schema, pointer) {
        for (key, value) in obj {
            if value.is_null() && !DATA.contains(&key.as_str()) {
                let at = format!("{ptr}/{}", escape(key));
                let loc = root
                    .locate_key(&ptr, key)
                    .unwrap_or_else(|| root.locate(&at));
                out.push(
                    Diagnostic::warning("schema-empty-keyword", &at, loc, format!("`{key}` in `{}` has no value", super::diagnostic::dotted(&ptr)))
                        .with_hint("in a flow mapping `{ ... }` a comma ends the value before it: quote text that holds `, `"),
                );
            }
        }
    }
}

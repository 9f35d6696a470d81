//! Warnings from the guides' habits: bounded strings and numbers, defaults, descriptions, a
//! closed input, no bare objects in the output, an example for every declared code.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::collect::Diagnostics;
use super::diagnostic::dotted;
use super::schema::Subschemas;
use crate::ids;

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
pub fn input(schema: &Value, subs: &Subschemas, out: &mut Diagnostics) {
    let base = "/interface/input";
    if let Value::Object(obj) = schema
        && obj.get("additionalProperties") != Some(&Value::Bool(false))
        && obj.get("unevaluatedProperties") != Some(&Value::Bool(false))
    {
        out.warning(
            ids::INPUT_OPEN,
            base,
            "the input does not set `additionalProperties: false`",
        )
        .hint(
            "a closed input makes a typo in a field name fail at the gate instead of being ignored",
        );
    }
    for (ptr, obj) in subs {
        unbounded(ptr, obj, out);
        properties(ptr, obj, out);
    }
}

/// A string with no `maxLength`, a number without both bounds (unless `enum` or `const` fix it).
fn unbounded(ptr: &str, obj: &Map<String, Value>, out: &mut Diagnostics) {
    let ts = types(obj);
    if ts.contains(&"string") && !fixed(obj) && !obj.contains_key("maxLength") {
        out.warning(
            ids::STRING_UNBOUNDED,
            ptr,
            format!("the string at `{}` has no `maxLength`", dotted(ptr)),
        )
        .hint("bound every string, so a caller knows what you accept");
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
            out.warning(
                ids::NUMBER_UNBOUNDED,
                ptr,
                format!("the number at `{}` has no {missing}", dotted(ptr)),
            )
            .hint("bound every number, so a caller knows what you accept");
        }
    }
}

/// An optional property with no `default`, a property with no `description`.
fn properties(ptr: &str, obj: &Map<String, Value>, out: &mut Diagnostics) {
    let Some(Value::Object(props)) = obj.get("properties") else {
        return;
    };
    // A set: a schema may list as many required names as properties.
    let required: HashSet<&str> = match obj.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => HashSet::new(),
    };
    let parent = format!("{ptr}/properties");
    const OPTIONAL: ids::Id = ids::OPTIONAL_WITHOUT_DEFAULT;
    const UNDESCRIBED: ids::Id = ids::PROPERTY_WITHOUT_DESCRIPTION;
    for (name, prop) in props {
        let Value::Object(p) = prop else { continue };
        let optional = !required.contains(&name.as_str()) && !p.contains_key("default");
        let undescribed = !p.contains_key("description");
        // Past what both checks list, a property is only counted: no key to look up, no text.
        if (!optional || out.full(OPTIONAL)) && (!undescribed || out.full(UNDESCRIBED)) {
            for (check, found) in [(OPTIONAL, optional), (UNDESCRIBED, undescribed)] {
                if found {
                    out.tally(check);
                }
            }
            continue;
        }
        let (at, loc) = out.key(&parent, name);
        if optional {
            out.warning(
                OPTIONAL,
                &at,
                format!("optional property `{name}` has no `default`"),
            )
            .at(loc)
            .hint("a default lets a calling agent leave it out with confidence");
        }
        if undescribed {
            out.warning(
                UNDESCRIBED,
                &at,
                format!("property `{name}` has no `description`"),
            )
            .at(loc)
            .hint("the description is what an orchestrator reads to build the call");
        }
    }
}

/// Lints on `interface.output`: a field typed as a bare `object` tells a caller nothing.
pub fn output(subs: &Subschemas, out: &mut Diagnostics) {
    for (ptr, obj) in subs {
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
            let message = format!("`{}` is a bare `object`", dotted(ptr));
            out.warning(ids::OUTPUT_BARE_OBJECT, ptr.as_str(), message)
                .hint("declare its `properties`: a caller that cannot predict the shape cannot use the answer");
        }
    }
}

/// A schema keyword with no value is almost always a split flow mapping: in
/// `{ type: string, description: The word, lowercased. }` the comma ends the description and
/// `lowercased.` becomes a keyword of its own, `null`, that every client then sees.
pub fn empty_keywords(subs: &Subschemas, out: &mut Diagnostics) {
    // Keywords whose value may be `null` on purpose.
    const DATA: &[&str] = &["const", "default", "examples", "enum"];
    for (ptr, obj) in subs {
        for (key, value) in obj.iter() {
            if value.is_null() && !DATA.contains(&key.as_str()) {
                let (at, loc) = out.key(ptr, key);
                let message = format!("`{key}` in `{}` has no value", dotted(ptr));
                out.warning(ids::SCHEMA_EMPTY_KEYWORD, at, message)
                    .at(loc)
                    .hint("in a flow mapping `{ ... }` a comma ends the value before it: quote text that holds `, `");
            }
        }
    }
}

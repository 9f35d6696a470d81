//! The manifest's shape, declared once: every section's fields, which are required, and what
//! each holds. The structure pass takes its field lists from here, and
//! `cargo holon-test schema` prints the same table as a JSON Schema of `holon.yaml` for
//! editors, so the two cannot drift.

use serde_json::{Map, Value, json};

use crate::gateway::Status;

/// One field of a section.
pub struct Field {
    /// The key.
    pub name: &'static str,
    /// Whether it must be there, and which check says so.
    pub required: Required,
    /// What it holds.
    pub value: Shape,
    /// Hover text in an editor.
    pub description: &'static str,
}

/// Whether a field must be there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Required {
    /// Refused as `missing-field` by the structure pass.
    Always,
    /// Required too, but refused by a check of its own with a more precise id
    /// (`example-name-missing`, `error-description-missing`...).
    ByItsOwnCheck,
    /// May be left out.
    No,
}

/// What a field holds.
pub enum Shape {
    /// A string matching a pattern.
    Pattern(&'static str),
    /// A string with something other than blanks in it.
    Text,
    /// Any string.
    String,
    /// `true` or `false`.
    Bool,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A number above `exclusive_minimum` (if any), at least `minimum` (if any), at most `maximum`
    /// (if any).
    Number {
        exclusive_minimum: Option<f64>,
        minimum: Option<f64>,
        maximum: Option<f64>,
        /// The unit messages name the bounds in (`seconds`), if any.
        unit: Option<&'static str>,
    },
    /// An integer of at least 1.
    PositiveInteger,
    /// A declared error code: the code format, none of the reserved codes.
    Code,
    /// A JSON Schema 2020-12 (a mapping, or `true`/`false`).
    Schema,
    /// Any JSON value (an example's input or output).
    Any,
    /// A mapping with these fields.
    Section(&'static [Field]),
    /// A sequence of mappings with these fields, each holding exactly one of the fields named
    /// in the second list (when it names any).
    SeqOf(&'static [Field], &'static [&'static str]),
}

impl Shape {
    /// For a number field, why `n` is out of its bounds (`None` when it is within them, or the
    /// field is not a number): the one place a number's bounds are judged.
    pub fn out_of_bounds(&self, key: &str, n: f64) -> Option<String> {
        let Shape::Number {
            exclusive_minimum,
            minimum,
            maximum,
            unit,
        } = self
        else {
            return None;
        };
        let within = exclusive_minimum.is_none_or(|m| n > m)
            && minimum.is_none_or(|m| n >= m)
            && maximum.is_none_or(|m| n <= m);
        if within {
            return None;
        }
        if *minimum == Some(0.0) && exclusive_minimum.is_none() && maximum.is_none() {
            return Some(format!("`{key}` cannot be negative ({n})"));
        }
        let mut parts = Vec::new();
        if let Some(m) = exclusive_minimum {
            parts.push(format!("more than {m}"));
        }
        if let Some(m) = minimum {
            parts.push(format!("at least {m}"));
        }
        if let Some(m) = maximum {
            parts.push(format!("at most {m}"));
        }
        let unit = unit.map(|u| format!(" {u}")).unwrap_or_default();
        Some(format!(
            "`{key}` must be {}{unit}, not {n}",
            parts.join(" and ")
        ))
    }
}

/// `^[a-z][a-z0-9-]{1,63}$`
pub const NAME_PATTERN: &str = "^[a-z][a-z0-9-]{1,63}$";
/// MCP tool names: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub const TOOL_PATTERN: &str = "^[A-Za-z0-9_.-]{1,128}$";
/// Error codes.
pub const CODE_PATTERN: &str = "^[a-z][a-z0-9_]*$";
/// Semantic versions, as semver.org writes the grammar.
const SEMVER_PATTERN: &str = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$";
/// ISO 4217 codes.
const CURRENCY_PATTERN: &str = "^[A-Z]{3}$";

/// The manifest's top level.
pub const TOP: &[Field] = &[
    Field {
        name: "name",
        required: Required::Always,
        value: Shape::Pattern(NAME_PATTERN),
        description: "The agent's name on the registry: 2 to 64 lowercase letters, digits and `-`, starting with a letter.",
    },
    Field {
        name: "version",
        required: Required::Always,
        value: Shape::Pattern(SEMVER_PATTERN),
        description: "The version, as a semantic version (`1.0.0`). A published version is immutable: change anything, bump it.",
    },
    Field {
        name: "description",
        required: Required::Always,
        value: Shape::Text,
        description: "What the agent does, for the caller deciding whether to call it; also the MCP tool's description.",
    },
    Field {
        name: "capability",
        required: Required::Always,
        value: Shape::Text,
        description: "The capability class callers pick agents by (`text.statistics`).",
    },
    Field {
        name: "interface",
        required: Required::Always,
        value: Shape::Section(INTERFACE),
        description: "The gate (`input`), the billing rule (`output`) and the declared failures (`errors`).",
    },
    Field {
        name: "runtime",
        required: Required::Always,
        value: Shape::Section(RUNTIME),
        description: "The one MCP tool the server exposes, and the limits the gateway enforces on every call.",
    },
    Field {
        name: "pricing",
        required: Required::Always,
        value: Shape::Section(PRICING),
        description: "What one billed call costs, and what is billed.",
    },
    Field {
        name: "source",
        required: Required::No,
        value: Shape::Section(SOURCE),
        description: "Where the deployed code lives, and its commit.",
    },
    Field {
        name: "examples",
        required: Required::Always,
        value: Shape::SeqOf(EXAMPLE, &EXAMPLE_OUTCOMES),
        description: "Real runs: each an input and the output or declared error code the agent answers. Each becomes a test of both passes.",
    },
];

/// `interface`.
pub const INTERFACE: &[Field] = &[
    Field {
        name: "input",
        required: Required::Always,
        value: Shape::Schema,
        description: "JSON Schema 2020-12 of the arguments: the gate. A call it refuses never reaches the agent and is not billed.",
    },
    Field {
        name: "output",
        required: Required::Always,
        value: Shape::Schema,
        description: "JSON Schema 2020-12 of the output: the billing rule. An output it refuses is not billed, and counts against the success rate.",
    },
    Field {
        name: "errors",
        required: Required::No,
        value: Shape::SeqOf(ERROR, &[]),
        description: "The declared failures: the only codes a caller may receive from the agent besides the gateway's own.",
    },
];

/// One entry of `interface.errors`.
pub const ERROR: &[Field] = &[
    Field {
        name: "code",
        required: Required::Always,
        value: Shape::Code,
        description: "The code, `^[a-z][a-z0-9_]*$`, none of the gateway's reserved codes.",
    },
    Field {
        name: "description",
        required: Required::ByItsOwnCheck,
        value: Shape::String,
        description: "What the failure means, for the caller deciding what to do next.",
    },
    Field {
        name: "retryable",
        required: Required::No,
        value: Shape::Bool,
        description: "Whether trying the same call again could succeed (default `false`).",
    },
    Field {
        name: "billed",
        required: Required::No,
        value: Shape::Bool,
        description: "Whether this failure is billed under `charge_on: attempt` (default `false`).",
    },
];

/// `runtime`.
pub const RUNTIME: &[Field] = &[
    Field {
        name: "tool",
        required: Required::Always,
        value: Shape::Pattern(TOOL_PATTERN),
        description: "The name of the one MCP tool the server exposes: 1 to 128 of `A-Z a-z 0-9 _ - .`.",
    },
    Field {
        name: "limits",
        required: Required::Always,
        value: Shape::Section(LIMITS),
        description: "The limits the gateway enforces on every call.",
    },
];

/// `runtime.limits`.
pub const LIMITS: &[Field] = &[
    Field {
        name: "timeout_s",
        required: Required::Always,
        value: Shape::Number {
            exclusive_minimum: Some(0.0),
            minimum: None,
            maximum: Some(86_400.0),
            unit: Some("seconds"),
        },
        description: "Seconds a call may run before the gateway cancels it (more than 0, at most 86400).",
    },
    Field {
        name: "max_input_bytes",
        required: Required::Always,
        value: Shape::PositiveInteger,
        description: "The largest input the gateway admits, in bytes of compact JSON.",
    },
];

/// `pricing`.
pub const PRICING: &[Field] = &[
    Field {
        name: "price",
        required: Required::Always,
        value: Shape::Number {
            exclusive_minimum: None,
            minimum: Some(0.0),
            maximum: None,
            unit: None,
        },
        description: "The price of one billed call, in `currency`.",
    },
    Field {
        name: "currency",
        required: Required::Always,
        value: Shape::Pattern(CURRENCY_PATTERN),
        description: "A three-letter ISO 4217 code (`EUR`, `USD`).",
    },
    Field {
        name: "charge_on",
        required: Required::No,
        value: Shape::OneOf(&["success", "attempt"]),
        description: "`success` (default): only a successful, schema-valid output is billed. `attempt`: declared failures marked `billed: true` are billed too.",
    },
];

/// `source`.
pub const SOURCE: &[Field] = &[
    Field {
        name: "repository",
        required: Required::Always,
        value: Shape::Text,
        description: "Where the code lives.",
    },
    Field {
        name: "commit",
        required: Required::Always,
        value: Shape::Text,
        description: "The commit of the code deployed; `cargo holon-test` warns (`source-commit-stale`) when it does not hold the code under test.",
    },
];

/// The fields of an example of which it holds exactly one (`example-outcome`).
pub const EXAMPLE_OUTCOMES: [&str; 2] = ["output", "error"];

/// One entry of `examples`.
pub const EXAMPLE: &[Field] = &[
    Field {
        name: "name",
        required: Required::ByItsOwnCheck,
        value: Shape::String,
        description: "A unique name; the tests are named after it (`mcp::<name>`).",
    },
    Field {
        name: "input",
        required: Required::ByItsOwnCheck,
        value: Shape::Any,
        description: "The call's arguments; valid against `interface.input`.",
    },
    Field {
        name: "output",
        required: Required::No,
        value: Shape::Any,
        description: "What the agent answers, exactly; valid against `interface.output`. Exactly one of `output` and `error`.",
    },
    Field {
        name: "error",
        required: Required::No,
        value: Shape::String,
        description: "The declared error code the agent fails with. Exactly one of `output` and `error`.",
    },
];

/// The names a section allows, and those the structure pass requires.
pub fn names(fields: &[Field]) -> (Vec<&'static str>, Vec<&'static str>) {
    let allowed = fields.iter().map(|f| f.name).collect();
    let required = fields
        .iter()
        .filter(|f| f.required == Required::Always)
        .map(|f| f.name)
        .collect();
    (allowed, required)
}

/// The JSON Schema (2020-12) of `holon.yaml`, for editors: descriptions for hover text, `enum`s
/// for closed values, patterns for names and codes, and no field the checks would refuse.
pub fn json_schema() -> Value {
    let mut root = section(TOP);
    if let Value::Object(map) = &mut root {
        let mut head = Map::new();
        head.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        head.insert("title".into(), json!("holon.yaml"));
        head.insert(
            "description".into(),
            json!(
                "The manifest of a Holon agent: an MCP server with one tool. Generated by `cargo holon-test schema` from the publish checks' own table."
            ),
        );
        head.append(map);
        head.insert("$defs".into(), json!({ "schema": interface_schema() }));
        *map = head;
    }
    root
}

/// A schema of `interface`, as the checks read it: JSON Schema 2020-12 whose every key is a
/// keyword (or `x-...`), in every subschema, so an editor underlines `requried` where `check`
/// warns `schema-unknown-keyword`.
fn interface_schema() -> Value {
    use crate::gateway::schema::{KEYWORDS, NAMED_SCHEMAS, ONE_SCHEMA, SCHEMA_LIST};
    let one = json!({ "$ref": "#/$defs/schema" });
    let many = json!({ "type": "array", "items": { "$ref": "#/$defs/schema" } });
    let named = json!({ "type": "object", "additionalProperties": { "$ref": "#/$defs/schema" } });
    let mut properties = Map::new();
    for (keys, value) in [
        (ONE_SCHEMA, one),
        (SCHEMA_LIST, many),
        (NAMED_SCHEMAS, named),
    ] {
        for key in keys {
            properties.insert((*key).into(), value.clone());
        }
    }
    json!({
        "type": ["object", "boolean"],
        "propertyNames": { "anyOf": [ { "enum": KEYWORDS }, { "pattern": "^x-" } ] },
        "properties": properties,
    })
}

fn section(fields: &[Field]) -> Value {
    let mut properties = Map::new();
    for field in fields {
        let mut value = shape(&field.value);
        if let Value::Object(map) = &mut value {
            map.insert("description".into(), json!(field.description));
        }
        properties.insert(field.name.into(), value);
    }
    let required: Vec<&str> = fields
        .iter()
        .filter(|f| f.required != Required::No)
        .map(|f| f.name)
        .collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": properties,
    })
}

fn shape(value: &Shape) -> Value {
    match value {
        Shape::Pattern(p) => json!({ "type": "string", "pattern": p }),
        Shape::Text => json!({ "type": "string", "pattern": "\\S" }),
        Shape::String => json!({ "type": "string" }),
        Shape::Bool => json!({ "type": "boolean" }),
        Shape::OneOf(values) => json!({ "type": "string", "enum": values }),
        Shape::Number {
            exclusive_minimum,
            minimum,
            maximum,
            ..
        } => {
            let mut map = Map::new();
            map.insert("type".into(), json!("number"));
            if let Some(m) = exclusive_minimum {
                map.insert("exclusiveMinimum".into(), json!(m));
            }
            if let Some(m) = minimum {
                map.insert("minimum".into(), json!(m));
            }
            if let Some(m) = maximum {
                map.insert("maximum".into(), json!(m));
            }
            Value::Object(map)
        }
        Shape::PositiveInteger => json!({ "type": "integer", "minimum": 1 }),
        Shape::Code => json!({
            "type": "string",
            "pattern": CODE_PATTERN,
            "not": { "enum": Status::RESERVED.iter().map(Status::code).collect::<Vec<_>>() },
        }),
        Shape::Schema => json!({ "$ref": "#/$defs/schema" }),
        Shape::Any => json!({}),
        Shape::Section(fields) => section(fields),
        Shape::SeqOf(fields, exactly_one) => {
            let mut items = section(fields);
            if let (Value::Object(map), false) = (&mut items, exactly_one.is_empty()) {
                let each: Vec<Value> = (exactly_one.iter())
                    .map(|name| json!({ "required": [name] }))
                    .collect();
                map.insert("oneOf".into(), Value::Array(each));
            }
            json!({ "type": "array", "items": items })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_str;

    /// A manifest the checks accept, as JSON (which is YAML).
    fn base() -> Value {
        json!({
            "name": "probe",
            "version": "1.0.0",
            "description": "A probe.",
            "capability": "text.probe",
            "interface": {
                "input": {"type": "object", "additionalProperties": false, "properties": {}},
                "output": {"type": "object", "additionalProperties": false, "properties": {}}
            },
            "runtime": {"tool": "probe", "limits": {"timeout_s": 30, "max_input_bytes": 1000}},
            "pricing": {"price": 0.001, "currency": "EUR", "charge_on": "success"},
            "examples": [{"name": "one", "input": {}, "output": {}}]
        })
    }

    /// Every number field of the table, with its pointer.
    fn numbers(fields: &'static [Field], at: &str, out: &mut Vec<(String, &'static Shape)>) {
        for field in fields {
            let here = format!("{at}/{}", field.name);
            match &field.value {
                Shape::Number { .. } => out.push((here, &field.value)),
                Shape::Section(inner) => numbers(inner, &here, out),
                _ => {}
            }
        }
    }

    /// Whether the checks refuse `value` at `pointer` as out of its bounds.
    fn refused(pointer: &str, value: f64) -> bool {
        let mut doc = base();
        *doc.pointer_mut(pointer)
            .expect("the base has every number field") = json!(value);
        let report = check_str(&doc.to_string(), std::path::Path::new("holon.yaml"));
        report
            .diagnostics
            .iter()
            .any(|d| d.check == "invalid-value" && d.pointer == pointer)
    }

    #[test]
    fn the_structure_pass_refuses_exactly_what_the_table_bounds() {
        let mut found = Vec::new();
        numbers(TOP, "", &mut found);
        assert!(found.len() >= 2, "{}", found.len());
        for (pointer, shape) in found {
            let Shape::Number {
                exclusive_minimum,
                minimum,
                maximum,
                ..
            } = shape
            else {
                unreachable!("only numbers are collected");
            };
            if let Some(m) = exclusive_minimum {
                assert!(
                    refused(&pointer, *m),
                    "{pointer} at its exclusive minimum {m}"
                );
                assert!(!refused(&pointer, m + 0.001), "{pointer} just above {m}");
            }
            if let Some(m) = minimum {
                assert!(!refused(&pointer, *m), "{pointer} at its minimum {m}");
                assert!(refused(&pointer, m - 1.0), "{pointer} one below {m}");
            }
            if let Some(m) = maximum {
                assert!(!refused(&pointer, *m), "{pointer} at its maximum {m}");
                assert!(refused(&pointer, m + 1.0), "{pointer} one past {m}");
            }
        }
    }
}

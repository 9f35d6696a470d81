//! Compiling the manifest's schemas and turning validation errors into located violations.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

use crate::message::{sentence, type_of};
use crate::pointer;

/// Every keyword of JSON Schema 2020-12, in all its vocabularies (core, applicator,
/// unevaluated, validation, meta-data, format annotation, content): what the gateway's
/// validator reads. It ignores any other key, so a misspelt keyword checks nothing.
pub const KEYWORDS: &[&str] = &[
    // Core.
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    // Applicator.
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    // Unevaluated.
    "unevaluatedItems",
    "unevaluatedProperties",
    // Validation.
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    // Meta-data.
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    // Format annotation.
    "format",
    // Content.
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The 2020-12 keywords whose value is one schema.
pub const ONE_SCHEMA: &[&str] = &[
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
    "contentSchema",
];

/// The 2020-12 keywords whose value is a list of schemas.
pub const SCHEMA_LIST: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];

/// The 2020-12 keywords whose value maps names to schemas.
pub const NAMED_SCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
];

/// Whether `key` is read by JSON Schema 2020-12, or is an extension of the author's own
/// (`x-...`), which every tool leaves alone.
pub fn is_keyword(key: &str) -> bool {
    key.starts_with("x-") || KEYWORDS.contains(&key)
}

/// One way an instance breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// RFC 6901 pointer inside the instance, down to the offending property.
    pub pointer: String,
    /// What is wrong, lowercase.
    pub message: String,
}

impl Violation {
    /// Where it is, for messages: the pointer, or `/` for the whole instance.
    pub fn at(&self) -> &str {
        if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        }
    }
}

/// Compiles a JSON Schema 2020-12 document with the `regex` pattern engine. Remote `$ref`s are
/// never fetched (the crate is built without resolvers), so a schema that needs one fails here.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::draft202012::options()
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .map_err(|e| sentence(&e.to_string()))
}

/// One violation per property `rule` refuses, at the property.
fn not_allowed<'a>(
    base: &'a str,
    names: &'a [String],
    rule: &'a str,
) -> impl Iterator<Item = Violation> + 'a {
    names.iter().map(move |name| Violation {
        pointer: pointer::child(base, name),
        message: format!("property `{name}` is not allowed ({rule})"),
    })
}

/// Every violation of `validator` by `instance`, each pointing at the exact property.
pub fn violations(validator: &Validator, instance: &Value) -> Vec<Violation> {
    // Most instances are valid: a yes/no walk stops early and builds no error.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for error in validator.iter_errors(instance) {
        push(&mut out, &error);
    }
    out
}

/// The violations of the first error `validator` finds in `instance` (none when it is
/// valid): the walk stops there, for a caller that only needs to know that, and where.
pub fn first_violations(validator: &Validator, instance: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Err(error) = validator.validate(instance) {
        push(&mut out, &error);
    }
    out
}

/// The violations one validation error stands for: one per property for the errors that
/// name several.
fn push(out: &mut Vec<Violation>, error: &jsonschema::ValidationError<'_>) {
    let base = error.instance_path().as_str().to_string();
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            out.push(Violation {
                pointer: pointer::child(&base, &name),
                message: format!("missing required property `{name}`"),
            });
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            out.extend(not_allowed(
                &base,
                unexpected,
                "`additionalProperties: false`",
            ));
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            out.extend(not_allowed(&base, unexpected, "`unevaluatedProperties`"));
        }
        ValidationErrorKind::Type { .. } => out.push(Violation {
            pointer: base,
            message: format!("{} (found {})", said(error), type_of(error.instance())),
        }),
        _ => out.push(Violation {
            pointer: base,
            message: said(error),
        }),
    }
}

/// The validator's words for `error`, the value it names cut short: a message leads with the
/// instance in full (a text of a million characters, an input of a thousand), and the reason
/// comes after it.
fn said(error: &jsonschema::ValidationError<'_>) -> String {
    let words = error.to_string();
    let whole = error.instance().to_string();
    let short = crate::message::short(error.instance());
    match words.strip_prefix(&whole) {
        Some(rest) if short != whole => sentence(&format!("{short}{rest}")),
        _ => sentence(&words),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_property_that_is_missing_or_extra() {
        let schema = json!({
            "type": "object",
            "required": ["words"],
            "additionalProperties": false,
            "properties": {"words": {"type": "integer"}, "n": {"type": "object", "unevaluatedProperties": false}}
        });
        let v = compile(&schema).unwrap();
        let found = violations(&v, &json!({"extra": 1, "n": {"deep": 2}}));
        let pointers: Vec<_> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert!(pointers.contains(&"/words"), "{found:?}");
        assert!(pointers.contains(&"/extra"), "{found:?}");
        assert!(pointers.contains(&"/n/deep"), "{found:?}");
        let wrong = violations(&v, &json!({"words": "11"}));
        assert_eq!(wrong[0].pointer, "/words");
        assert_eq!(
            wrong[0].message,
            "\"11\" is not of type \"integer\" (found a string)"
        );
    }
}

//! What a difference in a schema does to the values it admits ([`Effect`]), and so to a caller
//! on either side ([`Flow`]): the version it needs and the words that say it; the keywords by
//! what they constrain; the helpers the walk shares.

use std::collections::BTreeSet;

use super::change::Bump;
use super::tree::Entries;
use crate::manifest::yaml::{Kind, Node};
use crate::message::short;
use crate::pointer;

/// Which schema is compared, and so which way a difference breaks a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// The gate: a call it refuses now that it admitted before breaks a caller.
    Input,
    /// The billing rule: an answer it admits now that it did not before breaks a caller.
    Output,
}

/// What a difference does to the values a schema admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// It admits fewer values.
    Narrower,
    /// It admits more values.
    Wider,
    /// It admits some values it did not, and refuses some it admitted.
    Other,
    /// The rules cannot tell.
    Unproven,
    /// It admits the same values: only what it says changed.
    Annotation,
    /// The value an omitted property takes changed.
    Default,
}

impl Flow {
    pub(super) fn bump(self, effect: Effect) -> Bump {
        use Effect::*;
        match (self, effect) {
            (_, Other | Unproven) => Bump::Major,
            (Flow::Input, Narrower) | (Flow::Output, Wider) => Bump::Major,
            (Flow::Input, Wider | Default) | (Flow::Output, Narrower) => Bump::Minor,
            (_, Annotation) | (Flow::Output, Default) => Bump::Patch,
        }
    }

    /// What the difference does to a caller, as the end of a message.
    pub(super) fn phrase(self, effect: Effect) -> &'static str {
        use Effect::*;
        match (self, effect) {
            (Flow::Input, Narrower) => "a call admitted before is refused now",
            (Flow::Input, Wider) => {
                "calls refused before are admitted now, and every call admitted before still is"
            }
            (Flow::Input, Other) => "some calls admitted before are refused now",
            (Flow::Input, Unproven) => {
                "not proven compatible, so taken as breaking: a call admitted before may be refused now"
            }
            (Flow::Input, Default) => "a call that leaves it out means something else now",
            (Flow::Output, Narrower) => "every answer given now could be given before",
            (Flow::Output, Wider | Other) => {
                "an answer can be given now that could not be given before"
            }
            (Flow::Output, Unproven) => {
                "not proven compatible, so taken as breaking: an answer may be given now that could not be given before"
            }
            (Flow::Output, Default) => "a `default` in the output is only an annotation",
            (_, Annotation) => "what it says changed, not what it admits",
        }
    }
}

/// The keywords whose values are only annotations: they change what a schema says, not what it
/// admits. (Keywords the validator does not know are annotations too.)
pub(super) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$schema",
];

/// Bounds from above: lowering one refuses values.
pub(super) const UPPER: &[&str] = &[
    "maxLength",
    "maxItems",
    "maxProperties",
    "maximum",
    "exclusiveMaximum",
    "maxContains",
];

/// Bounds from below: raising one refuses values.
pub(super) const LOWER: &[&str] = &[
    "minLength",
    "minItems",
    "minProperties",
    "minimum",
    "exclusiveMinimum",
    "minContains",
];

/// Keywords whose changes these rules do not judge: any difference is not proven compatible.
pub(super) const UNJUDGED: &[&str] = &[
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "patternProperties",
];

/// The JSON Schema types; `number` includes `integer`.
pub(super) const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// What a schema admits for the property `name` it does not declare, and the pointer of that
/// rule below `at`: `{}` when one of its `patternProperties` matches the name (both sides'
/// patterns are compared on their own), else its `additionalProperties` (`{}` when absent).
pub(super) fn undeclared<'n>(
    schema: &Entries<'n>,
    empty: &'n Node,
    at: &str,
    name: &str,
) -> (&'n Node, String) {
    let patterns = schema.get("patternProperties").and_then(Entries::of);
    let matched = patterns.is_some_and(|p| {
        p.keys().any(|pattern| {
            // A pattern that does not compile here is taken to match: the property then counts
            // as admitted with any value, the side that judges more changes breaking.
            regex::Regex::new(pattern).map_or(true, |re| re.is_match(name))
        })
    });
    let at = pointer::child(at, "additionalProperties");
    match schema.get("additionalProperties") {
        Some(rule) if !matched => (rule, at),
        _ => (empty, at),
    }
}

/// The types a `type` keyword admits (`None` for all of them); `number` brings `integer`.
pub(super) fn type_set(node: Option<&Node>) -> Result<BTreeSet<&'static str>, ()> {
    let Some(node) = node else {
        return Ok(TYPES.into_iter().collect());
    };
    let named = |n: &Node| match &n.kind {
        Kind::String(s) => TYPES.into_iter().find(|t| t == s).ok_or(()),
        _ => Err(()),
    };
    let mut set: BTreeSet<&'static str> = match &node.kind {
        Kind::Seq(items) => items.iter().map(named).collect::<Result<_, _>>()?,
        _ => std::iter::once(named(node)).collect::<Result<_, _>>()?,
    };
    if set.contains("number") {
        set.insert("integer");
    }
    Ok(set)
}

pub(super) fn compare_sets(old: &BTreeSet<&str>, new: &BTreeSet<&str>) -> Effect {
    match (new.is_superset(old), new.is_subset(old)) {
        (true, true) => Effect::Annotation,
        (true, false) => Effect::Wider,
        (false, true) => Effect::Narrower,
        (false, false) => Effect::Other,
    }
}

/// A value as a message shows it, cut short, in backticks.
pub(super) fn shown(node: &Node) -> String {
    format!("`{}`", short(&node.to_json()))
}

pub(super) fn shown_opt(node: Option<&Node>) -> String {
    node.map(|n| short(&n.to_json())).unwrap_or_default()
}

/// Up to three canonical values in backticks, and how many more.
pub(super) fn several(values: &[&(String, usize)]) -> String {
    let mut parts: Vec<String> = (values.iter().take(3))
        .map(|(v, _)| {
            let v: String = if v.chars().count() > 60 {
                v.chars().take(57).chain("...".chars()).collect()
            } else {
                v.clone()
            };
            format!("`{v}`")
        })
        .collect();
    if values.len() > 3 {
        parts.push(format!("and {} more", values.len() - 3));
    }
    parts.join(", ")
}

/// Whether a mapping anywhere in `node` has one of `keys` (found without recursion).
pub(super) fn has_key(node: &Node, keys: &[&str]) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        match &node.kind {
            Kind::Map(entries) => {
                for (key, value) in entries {
                    if keys.contains(&key.name.as_str()) {
                        return true;
                    }
                    stack.push(value);
                }
            }
            Kind::Seq(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

//! The manifest's own shape: required fields, unknown keys, types and formats.
//!
//! This reads the located YAML tree by hand rather than through `serde(deny_unknown_fields)`,
//! so that every problem is reported in one run, each at its own line and column.

use serde_json::Value;

use super::collect::Diagnostics;
use super::diagnostic::dotted;
use super::shape;
use crate::ids;
use crate::manifest::yaml::{Kind, Node};
use crate::manifest::{ChargeOn, ErrorDecl, Limits, Pricing, Source};

/// The fields of a manifest as far as they could be read; `None` where a field was missing or
/// malformed (a diagnostic says so).
#[derive(Debug, Default)]
pub struct Parts {
    pub name: Option<String>,
    pub version: Option<String>,
    pub description: Option<String>,
    pub capability: Option<String>,
    pub input: Option<Value>,
    pub output: Option<Value>,
    pub errors: Vec<(usize, ErrorDecl)>,
    pub tool: Option<String>,
    pub limits: Option<Limits>,
    pub pricing: Option<Pricing>,
    pub source: Option<Source>,
    pub examples: Vec<RawExample>,
}

/// One example as written: each part may be missing.
#[derive(Debug)]
pub struct RawExample {
    pub index: usize,
    pub name: Option<String>,
    pub input: Option<Value>,
    pub output: Option<Value>,
    pub error: Option<String>,
}

/// Reads the tree into [`Parts`], adding a diagnostic for every problem.
pub fn read(out: &mut Diagnostics) -> Parts {
    let root = out.root();
    let mut parts = Parts::default();
    if !fields(root, "", "the manifest", shape::TOP, out) {
        return parts;
    }
    parts.name = string(root, "", "name", out).filter(|s| {
        let valid = valid_name(s);
        if !valid {
            out.error(ids::INVALID_NAME, "/name", format!("`{s}` is not a valid agent name"))
                .hint("a name matches `^[a-z][a-z0-9-]{1,63}$`: lowercase letters, digits and `-`, starting with a letter");
        }
        valid
    });
    parts.version = string(root, "", "version", out).filter(|s| match semver::Version::parse(s) {
        Ok(_) => true,
        Err(e) => {
            out.error(
                ids::INVALID_VERSION,
                "/version",
                format!("`{s}` is not a semantic version: {e}"),
            )
            .hint("write it as MAJOR.MINOR.PATCH, e.g. `1.0.0`");
            false
        }
    });
    parts.description = nonempty(root, "", "description", out);
    parts.capability = nonempty(root, "", "capability", out);
    if let Some(interface) = root.get("interface") {
        read_interface(interface, &mut parts, out);
    }
    if let Some(runtime) = root.get("runtime") {
        read_runtime(runtime, &mut parts, out);
    }
    if let Some(pricing) = root.get("pricing") {
        parts.pricing = read_pricing(pricing, out);
    }
    if let Some(source) = root.get("source") {
        parts.source = read_source(source, out);
    }
    if let Some(examples) = root.get("examples") {
        parts.examples = read_examples(examples, out);
    }
    parts
}

fn read_interface(node: &Node, parts: &mut Parts, out: &mut Diagnostics) {
    if !fields(node, "/interface", "`interface`", shape::INTERFACE, out) {
        return;
    }
    parts.input = schema(node, "/interface", "input", out);
    parts.output = schema(node, "/interface", "output", out);
    if let Some(errors) = node.get("errors") {
        parts.errors = read_errors(errors, out);
    }
}

fn read_runtime(node: &Node, parts: &mut Parts, out: &mut Diagnostics) {
    if !fields(node, "/runtime", "`runtime`", shape::RUNTIME, out) {
        return;
    }
    parts.tool = string(node, "/runtime", "tool", out).filter(|s| {
        let valid = valid_tool(s);
        if !valid {
            out.error(
                ids::INVALID_TOOL_NAME,
                "/runtime/tool",
                format!("`{s}` is not a valid MCP tool name"),
            )
            .hint("a tool name is 1 to 128 of `A-Z a-z 0-9 _ - .`");
        }
        valid
    });
    parts.limits = node.get("limits").and_then(|l| read_limits(l, out));
}

fn read_source(node: &Node, out: &mut Diagnostics) -> Option<Source> {
    if !fields(node, "/source", "`source`", shape::SOURCE, out) {
        return None;
    }
    let repository = nonempty(node, "/source", "repository", out);
    let commit = nonempty(node, "/source", "commit", out);
    Some(Source {
        repository: repository?,
        commit: commit?,
    })
}

fn read_errors(node: &Node, out: &mut Diagnostics) -> Vec<(usize, ErrorDecl)> {
    let Kind::Seq(items) = &node.kind else {
        wrong_type(
            "/interface/errors",
            node,
            "a sequence of declared errors",
            out,
        );
        return Vec::new();
    };
    let mut decls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ptr = format!("/interface/errors/{i}");
        if !fields(item, &ptr, "a declared error", shape::ERROR, out) {
            continue;
        }
        let code = string(item, &ptr, "code", out);
        // A missing description is a check of its own (`error-description-missing`).
        let description = string(item, &ptr, "description", out);
        let retryable = boolean(item, &ptr, "retryable", out).unwrap_or(false);
        let billed = boolean(item, &ptr, "billed", out).unwrap_or(false);
        if let Some(code) = code {
            decls.push((
                i,
                ErrorDecl {
                    code,
                    description: description.unwrap_or_default(),
                    retryable,
                    billed,
                },
            ));
        }
    }
    decls
}

fn read_limits(node: &Node, out: &mut Diagnostics) -> Option<Limits> {
    let ptr = "/runtime/limits";
    if !fields(node, ptr, "`runtime.limits`", shape::LIMITS, out) {
        return None;
    }
    let timeout_s = bounded(node, ptr, "timeout_s", shape::LIMITS, out);
    let max_input_bytes = match node.get("max_input_bytes") {
        Some(Node {
            kind: Kind::Number(num),
            ..
        }) => match num.as_u64() {
            Some(v) if v > 0 => Some(v),
            _ => {
                out.error(
                    ids::INVALID_VALUE,
                    "/runtime/limits/max_input_bytes",
                    format!("`max_input_bytes` must be a positive integer, not {num}"),
                );
                None
            }
        },
        Some(n) => {
            wrong_type(
                "/runtime/limits/max_input_bytes",
                n,
                "a positive integer",
                out,
            );
            None
        }
        None => None,
    };
    Some(Limits {
        timeout_s: timeout_s?,
        max_input_bytes: max_input_bytes?,
    })
}

fn read_pricing(node: &Node, out: &mut Diagnostics) -> Option<Pricing> {
    let ptr = "/pricing";
    if !fields(node, ptr, "`pricing`", shape::PRICING, out) {
        return None;
    }
    let price = bounded(node, ptr, "price", shape::PRICING, out);
    let currency = string(node, ptr, "currency", out).filter(|s| {
        let valid = s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase());
        if !valid {
            out.error(
                ids::INVALID_VALUE,
                "/pricing/currency",
                format!("`{s}` is not a currency code"),
            )
            .hint("use a three-letter ISO 4217 code such as `EUR` or `USD`");
        }
        valid
    });
    let charge_on = match string(node, ptr, "charge_on", out).as_deref() {
        None if node.get("charge_on").is_none() => Some(ChargeOn::Success),
        None => None,
        Some("success") => Some(ChargeOn::Success),
        Some("attempt") => Some(ChargeOn::Attempt),
        Some(other) => {
            let added = out.error(
                ids::INVALID_VALUE,
                "/pricing/charge_on",
                format!("`charge_on` is `success` or `attempt`, not `{other}`"),
            );
            if let Some(s) = suggest(other, &["success", "attempt"]) {
                added.hint(format!("did you mean `{s}`?"));
            }
            None
        }
    };
    Some(Pricing {
        price: price?,
        currency: currency?,
        charge_on: charge_on?,
    })
}

fn read_examples(node: &Node, out: &mut Diagnostics) -> Vec<RawExample> {
    let Kind::Seq(items) = &node.kind else {
        wrong_type("/examples", node, "a sequence of examples", out);
        return Vec::new();
    };
    let mut examples = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let ptr = format!("/examples/{index}");
        // name, input and the outcome have checks of their own, with their own ids.
        if !fields(item, &ptr, "an example", shape::EXAMPLE, out) {
            continue;
        }
        examples.push(RawExample {
            index,
            name: string(item, &ptr, "name", out),
            input: item.get("input").map(Node::to_json),
            output: item.get("output").map(Node::to_json),
            error: string(item, &ptr, "error", out),
        });
    }
    examples
}

fn schema(parent: &Node, ptr: &str, key: &str, out: &mut Diagnostics) -> Option<Value> {
    let node = parent.get(key)?;
    match node.kind {
        Kind::Map(_) | Kind::Bool(_) => Some(node.to_json()),
        _ => {
            wrong_type(
                &format!("{ptr}/{key}"),
                node,
                "a JSON Schema (a mapping)",
                out,
            );
            None
        }
    }
}

/// Checks that `node` is a mapping with only the keys of `section` and every one it requires.
/// Returns false when it is not a mapping at all.
fn fields(
    node: &Node,
    ptr: &str,
    what: &str,
    section: &[shape::Field],
    out: &mut Diagnostics,
) -> bool {
    let (allowed, required) = shape::names(section);
    let (allowed, required) = (allowed.as_slice(), required.as_slice());
    let Kind::Map(entries) = &node.kind else {
        wrong_type(ptr, node, "a mapping", out);
        return false;
    };
    let given = |name: &str| entries.iter().any(|(k, _)| k.name == name);
    // A required field missing because its key is misspelt is said once, at the misspelling.
    let mut misspelt: Vec<&str> = Vec::new();
    for (key, _) in entries {
        if !allowed.contains(&key.name.as_str()) {
            let meant = suggest(&key.name, allowed);
            let renames = meant.filter(|m| required.contains(m) && !given(m));
            let message = match renames {
                Some(m) => format!(
                    "unknown field `{}` in {}, which has no `{m}`: a misspelt `{m}`?",
                    key.name,
                    place(ptr)
                ),
                None => format!("unknown field `{}` in {}", key.name, place(ptr)),
            };
            misspelt.extend(renames);
            let added = out
                .error(
                    ids::UNKNOWN_FIELD,
                    crate::pointer::child(ptr, &key.name),
                    message,
                )
                .at(key.loc);
            if !added.listed() {
                continue;
            }
            match meant {
                Some(s) => added.hint(format!("did you mean `{s}`?")),
                None => added.hint(format!("expected one of {}", list(allowed))),
            }
        }
    }
    for name in required {
        if !given(name) && !misspelt.contains(name) {
            out.error(
                ids::MISSING_FIELD,
                format!("{ptr}/{name}"),
                format!("missing field `{name}` in {what}"),
            );
        }
    }
    true
}

/// The string under `key`, if there is one; any other value is a `wrong-type`.
fn string(parent: &Node, ptr: &str, key: &str, out: &mut Diagnostics) -> Option<String> {
    let node = parent.get(key)?;
    match &node.kind {
        Kind::String(s) => Some(s.clone()),
        _ => {
            wrong_type(&format!("{ptr}/{key}"), node, "a string", out);
            None
        }
    }
}

fn nonempty(parent: &Node, ptr: &str, key: &str, out: &mut Diagnostics) -> Option<String> {
    let s = string(parent, ptr, key, out)?;
    if s.trim().is_empty() {
        out.error(
            ids::INVALID_VALUE,
            format!("{ptr}/{key}"),
            format!("`{key}` is empty"),
        );
        return None;
    }
    Some(s)
}

/// A number field within the bounds its entry in `fields` (the `shape` table) declares: the
/// bounds are written there once, for this pass and the editor schema alike.
fn bounded(
    parent: &Node,
    ptr: &str,
    key: &str,
    fields: &[shape::Field],
    out: &mut Diagnostics,
) -> Option<f64> {
    let n = number(parent, ptr, key, out)?;
    let declared = fields.iter().find(|f| f.name == key).map(|f| &f.value);
    match declared.and_then(|shape| shape.out_of_bounds(key, n)) {
        Some(why) => {
            out.error(ids::INVALID_VALUE, format!("{ptr}/{key}"), why);
            None
        }
        None => Some(n),
    }
}

fn number(parent: &Node, ptr: &str, key: &str, out: &mut Diagnostics) -> Option<f64> {
    let node = parent.get(key)?;
    match &node.kind {
        Kind::Number(n) => n.as_f64(),
        _ => {
            wrong_type(&format!("{ptr}/{key}"), node, "a number", out);
            None
        }
    }
}

fn boolean(parent: &Node, ptr: &str, key: &str, out: &mut Diagnostics) -> Option<bool> {
    let node = parent.get(key)?;
    match &node.kind {
        Kind::Bool(b) => Some(*b),
        _ => {
            wrong_type(&format!("{ptr}/{key}"), node, "`true` or `false`", out);
            None
        }
    }
}

/// How a message names the mapping at `ptr`.
fn place(ptr: &str) -> String {
    if ptr.is_empty() {
        "the manifest".to_string()
    } else {
        format!("`{}`", dotted(ptr))
    }
}

fn wrong_type(ptr: &str, node: &Node, expected: &str, out: &mut Diagnostics) {
    out.error(
        ids::WRONG_TYPE,
        ptr,
        format!(
            "{} must be {expected}, not {}",
            place(ptr),
            node.type_name()
        ),
    );
}

/// The closest allowed word, when it is close enough to be what the author meant.
pub fn suggest<'a>(word: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (strsim::jaro_winkler(word, a), *a))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, a)| a)
}

fn list(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `^[a-z][a-z0-9-]{1,63}$`
pub fn valid_name(s: &str) -> bool {
    let b = s.as_bytes();
    (2..=64).contains(&b.len())
        && b.first().is_some_and(u8::is_ascii_lowercase)
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// MCP tool names: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub fn valid_tool(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

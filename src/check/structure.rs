//! The manifest's own shape: required fields, unknown keys, types and formats.
//!
//! This reads the located YAML tree by hand rather than through `serde(deny_unknown_fields)`,
//! so that every problem is reported in one run, each at its own line and column.

use serde_json::Value;

use super::diagnostic::Diagnostic;
use super::shape;
use crate::manifest::yaml::{Kind, Loc, Node};
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

/// Reads the tree into [`Parts`], pushing a diagnostic for every problem.
pub fn read(root: &Node, out: &mut Vec<Diagnostic>) -> Parts {
    let mut parts = Parts::default();
    if !fields(root, "", "the manifest", shape::TOP, out) {
        return parts;
    }
    parts.name = string(root, "", "name", out).and_then(|(s, loc)| {
        if valid_name(&s) {
            Some(s)
        } else {
            out.push(
                Diagnostic::error("invalid-name", "/name", loc, format!("`{s}` is not a valid agent name"))
                    .with_hint("a name matches `^[a-z][a-z0-9-]{1,63}$`: lowercase letters, digits and `-`, starting with a letter"),
            );
            None
        }
    });
    parts.version =
        string(root, "", "version", out).and_then(|(s, loc)| match semver::Version::parse(&s) {
            Ok(_) => Some(s),
            Err(e) => {
                out.push(
                    Diagnostic::error(
                        "invalid-version",
                        "/version",
                        loc,
                        format!("`{s}` is not a semantic version: {e}"),
                    )
                    .with_hint("write it as MAJOR.MINOR.PATCH, e.g. `1.0.0`"),
                );
                None
            }
        });
    parts.description = nonempty(root, "", "description", out);
    parts.capability = nonempty(root, "", "capability", out);

    if let Some(interface) = root.get("interface")
        && fields(
            interface,
            "/interface",
            "`interface`",
            shape::INTERFACE,
            out,
        )
    {
        parts.input = schema(interface, "/interface", "input", out);
        parts.output = schema(interface, "/interface", "output", out);
        if let Some(errors) = interface.get("errors") {
            parts.errors = read_errors(errors, out);
        }
    }
    if let Some(runtime) = root.get("runtime")
        && fields(runtime, "/runtime", "`runtime`", shape::RUNTIME, out)
    {
        parts.tool = string(runtime, "/runtime", "tool", out).and_then(|(s, loc)| {
            if valid_tool(&s) {
                Some(s)
            } else {
                out.push(
                    Diagnostic::error(
                        "invalid-tool-name",
                        "/runtime/tool",
                        loc,
                        format!("`{s}` is not a valid MCP tool name"),
                    )
                    .with_hint("a tool name is 1 to 128 of `A-Z a-z 0-9 _ - .`"),
                );
                None
            }
        });
        parts.limits = runtime.get("limits").and_then(|l| read_limits(l, out));
    }
    if let Some(pricing) = root.get("pricing") {
        parts.pricing = read_pricing(pricing, out);
    }
    if let Some(source) = root.get("source")
        && fields(source, "/source", "`source`", shape::SOURCE, out)
    {
        let repository = nonempty(source, "/source", "repository", out);
        let commit = nonempty(source, "/source", "commit", out);
        if let (Some(repository), Some(commit)) = (repository, commit) {
            parts.source = Some(Source { repository, commit });
        }
    }
    if let Some(examples) = root.get("examples") {
        parts.examples = read_examples(examples, out);
    }
    parts
}

fn read_errors(node: &Node, out: &mut Vec<Diagnostic>) -> Vec<(usize, ErrorDecl)> {
    let Kind::Seq(items) = &node.kind else {
        out.push(wrong_type(
            "/interface/errors",
            node,
            "a sequence of declared errors",
        ));
        return Vec::new();
    };
    let mut decls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ptr = format!("/interface/errors/{i}");
        if !fields(item, &ptr, "a declared error", shape::ERROR, out) {
            continue;
        }
        let code = string(item, &ptr, "code", out).map(|(s, _)| s);
        // A missing description is a check of its own (`error-description-missing`).
        let description = match item.get("description") {
            None => None,
            Some(_) => string(item, &ptr, "description", out).map(|(s, _)| s),
        };
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

fn read_limits(node: &Node, out: &mut Vec<Diagnostic>) -> Option<Limits> {
    let ptr = "/runtime/limits";
    if !fields(node, ptr, "`runtime.limits`", shape::LIMITS, out) {
        return None;
    }
    let timeout_s = number(node, ptr, "timeout_s", out).and_then(|(n, loc)| {
        if n > 0.0 && n <= 86_400.0 {
            Some(n)
        } else {
            out.push(Diagnostic::error(
                "invalid-value",
                "/runtime/limits/timeout_s",
                loc,
                format!("`timeout_s` must be more than 0 and at most 86400 seconds, not {n}"),
            ));
            None
        }
    });
    let max_input_bytes = match node.get("max_input_bytes") {
        Some(
            n @ Node {
                kind: Kind::Number(num),
                ..
            },
        ) => match num.as_u64() {
            Some(v) if v > 0 => Some(v),
            _ => {
                out.push(Diagnostic::error(
                    "invalid-value",
                    "/runtime/limits/max_input_bytes",
                    n.loc,
                    format!("`max_input_bytes` must be a positive integer, not {num}"),
                ));
                None
            }
        },
        Some(n) => {
            out.push(wrong_type(
                "/runtime/limits/max_input_bytes",
                n,
                "a positive integer",
            ));
            None
        }
        None => None,
    };
    Some(Limits {
        timeout_s: timeout_s?,
        max_input_bytes: max_input_bytes?,
    })
}

fn read_pricing(node: &Node, out: &mut Vec<Diagnostic>) -> Option<Pricing> {
    let ptr = "/pricing";
    if !fields(node, ptr, "`pricing`", shape::PRICING, out) {
        return None;
    }
    let price = number(node, ptr, "price", out).and_then(|(n, loc)| {
        if n >= 0.0 {
            Some(n)
        } else {
            out.push(Diagnostic::error(
                "invalid-value",
                "/pricing/price",
                loc,
                format!("`price` cannot be negative ({n})"),
            ));
            None
        }
    });
    let currency = string(node, ptr, "currency", out).and_then(|(s, loc)| {
        if s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase()) {
            Some(s)
        } else {
            out.push(
                Diagnostic::error(
                    "invalid-value",
                    "/pricing/currency",
                    loc,
                    format!("`{s}` is not a currency code"),
                )
                .with_hint("use a three-letter ISO 4217 code such as `EUR` or `USD`"),
            );
            None
        }
    });
    let charge_on = match node.get("charge_on") {
        None => Some(ChargeOn::Success),
        Some(_) => string(node, ptr, "charge_on", out).and_then(|(s, loc)| match s.as_str() {
            "success" => Some(ChargeOn::Success),
            "attempt" => Some(ChargeOn::Attempt),
            other => {
                let d = Diagnostic::error(
                    "invalid-value",
                    "/pricing/charge_on",
                    loc,
                    format!("`charge_on` is `success` or `attempt`, not `{other}`"),
                );
                out.push(match suggest(other, &["success", "attempt"]) {
                    Some(s) => d.with_hint(format!("did you mean `{s}`?")),
                    None => d,
                });
                None
            }
        }),
    };
    Some(Pricing {
        price: price?,
        currency: currency?,
        charge_on: charge_on?,
    })
}

fn read_examples(node: &Node, out: &mut Vec<Diagnostic>) -> Vec<RawExample> {
    let Kind::Seq(items) = &node.kind else {
        out.push(wrong_type("/examples", node, "a sequence of examples"));
        return Vec::new();
    };
    let mut examples = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let ptr = format!("/examples/{index}");
        // name, input and the outcome have checks of their own, with their own ids.
        if !fields(item, &ptr, "an example", shape::EXAMPLE, out) {
            continue;
        }
        let name = match item.get("name") {
            None => None,
            Some(_) => string(item, &ptr, "name", out).map(|(s, _)| s),
        };
        let error = match item.get("error") {
            None => None,
            Some(_) => string(item, &ptr, "error", out).map(|(s, _)| s),
        };
        examples.push(RawExample {
            index,
            name,
            input: item.get("input").map(Node::to_json),
            output: item.get("output").map(Node::to_json),
            error,
        });
    }
    examples
}

fn schema(parent: &Node, ptr: &str, key: &str, out: &mut Vec<Diagnostic>) -> Option<Value> {
    let node = parent.get(key)?;
    match node.kind {
        Kind::Map(_) | Kind::Bool(_) => Some(node.to_json()),
        _ => {
            out.push(wrong_type(
                &format!("{ptr}/{key}"),
                node,
                "a JSON Schema (a mapping)",
            ));
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
    out: &mut Vec<Diagnostic>,
) -> bool {
    let (allowed, required) = shape::names(section);
    let (allowed, required) = (allowed.as_slice(), required.as_slice());
    let Kind::Map(entries) = &node.kind else {
        out.push(wrong_type(ptr, node, "a mapping"));
        return false;
    };
    for (key, _) in entries {
        if !allowed.contains(&key.name.as_str()) {
            let where_ = if ptr.is_empty() {
                "the manifest".to_string()
            } else {
                format!("`{}`", super::diagnostic::dotted(ptr))
            };
            let d = Diagnostic::error(
                "unknown-field",
                format!("{ptr}/{}", crate::gateway::bounds::escape(&key.name)),
                key.loc,
                format!("unknown field `{}` in {where_}", key.name),
            );
            out.push(match suggest(&key.name, allowed) {
                Some(s) => d.with_hint(format!("did you mean `{s}`?")),
                None => d.with_hint(format!("expected one of {}", list(allowed))),
            });
        }
    }
    for name in required {
        if !entries.iter().any(|(k, _)| k.name == *name) {
            out.push(Diagnostic::error(
                "missing-field",
                format!("{ptr}/{name}"),
                node.loc,
                format!("missing field `{name}` in {what}"),
            ));
        }
    }
    true
}

fn string(parent: &Node, ptr: &str, key: &str, out: &mut Vec<Diagnostic>) -> Option<(String, Loc)> {
    let node = parent.get(key)?;
    match &node.kind {
        Kind::String(s) => Some((s.clone(), node.loc)),
        _ => {
            out.push(wrong_type(&format!("{ptr}/{key}"), node, "a string"));
            None
        }
    }
}

fn nonempty(parent: &Node, ptr: &str, key: &str, out: &mut Vec<Diagnostic>) -> Option<String> {
    let (s, loc) = string(parent, ptr, key, out)?;
    if s.trim().is_empty() {
        out.push(Diagnostic::error(
            "invalid-value",
            format!("{ptr}/{key}"),
            loc,
            format!("`{key}` is empty"),
        ));
        return None;
    }
    Some(s)
}

fn number(parent: &Node, ptr: &str, key: &str, out: &mut Vec<Diagnostic>) -> Option<(f64, Loc)> {
    let node = parent.get(key)?;
    match &node.kind {
        Kind::Number(n) => n.as_f64().map(|f| (f, node.loc)),
        _ => {
            out.push(wrong_type(&format!("{ptr}/{key}"), node, "a number"));
            None
        }
    }
}

fn boolean(parent: &Node, ptr: &str, key: &str, out: &mut Vec<Diagnostic>) -> Option<bool> {
    let node = parent.get(key)?;
    match &node.kind {
        Kind::Bool(b) => Some(*b),
        _ => {
            out.push(wrong_type(
                &format!("{ptr}/{key}"),
                node,
                "`true` or `false`",
            ));
            None
        }
    }
}

fn wrong_type(ptr: &str, node: &Node, expected: &str) -> Diagnostic {
    let name = if ptr.is_empty() {
        "the manifest".to_string()
    } else {
        format!("`{}`", super::diagnostic::dotted(ptr))
    };
    Diagnostic::error(
        "wrong-type",
        ptr,
        node.loc,
        format!("{name} must be {expected}, not {}", node.type_name()),
    )
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
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// MCP tool names: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub fn valid_tool(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

//! The TypeScript types of `interface`: `Input`, `Output`, `ErrorCode` (a union of the declared
//! codes) and `Ctx` (the runtime package's, whose `fail` takes only those; for an agent with an
//! adapter of its own, an interface), for the agent to import.

use std::fmt::Write;

use serde_json::Value;

use super::schema::{Interface, Object, Ty, header};

/// The file, beside `holon.yaml`.
pub const FILE: &str = "holon.types.ts";

/// The text of `holon.types.ts`; `runtime`, for an agent on the `holon-kit` package.
pub fn render(interface: &Interface, runtime: bool) -> String {
    let mut out = String::new();
    for line in header("npx holon-test", runtime).lines() {
        let _ = writeln!(out, "// {line}");
    }
    if runtime {
        let _ = writeln!(
            out,
            "\nimport type {{ Ctx as RuntimeCtx }} from 'holon-kit';"
        );
    }
    for (name, ty, doc) in [
        (
            "Input",
            &interface.input,
            "The call's arguments: `interface.input`.",
        ),
        (
            "Output",
            &interface.output,
            "A successful answer: `interface.output`.",
        ),
    ] {
        let _ = writeln!(out, "\n/** {doc} */");
        match ty {
            Ty::Object(object) => {
                let _ = writeln!(out, "export interface {name} {}", fields(object, 0));
            }
            other => {
                let _ = writeln!(out, "export type {name} = {};", ty_of(other, 0));
            }
        }
    }
    let codes: Vec<String> = (interface.codes.iter()).map(|c| format!("'{c}'")).collect();
    let codes = match codes.is_empty() {
        true => "never".to_string(),
        false => codes.join(" | "),
    };
    let _ = write!(
        out,
        "
/** The codes `interface.errors` declares: the only codes `ctx.fail` takes. */
export type ErrorCode = {codes};
"
    );
    if runtime {
        let _ = write!(
            out,
            "
/**
 * What the agent function gets beside its input: `ctx.fail` takes only the declared codes,
 * `await ctx.download(handle)` gives a `holon://files/` handle's bytes, `ctx.signal` is aborted
 * at `runtime.limits.timeout_s`.
 */
export type Ctx = RuntimeCtx<ErrorCode>;
"
        );
        return out;
    }
    let _ = write!(
        out,
        "
/** What the agent function gets beside its input. */
export interface Ctx {{
  /** A declared failure, to throw: `throw ctx.fail(code, message)`. */
  fail(code: ErrorCode, message: string): Error;
  /** Aborted when the run passes `runtime.limits.timeout_s`: stop working then, the call is over. */
  readonly signal: AbortSignal;
}}
"
    );
    out
}

/// An object type's body, `{ ... }`, at `indent` levels.
fn fields(object: &Object, indent: usize) -> String {
    if object.fields.is_empty() && !object.open {
        return "Record<string, never>".into();
    }
    let pad = "  ".repeat(indent + 1);
    let mut out = String::from("{\n");
    for field in &object.fields {
        if let Some(doc) = &field.doc {
            let _ = writeln!(out, "{pad}/** {} */", comment(doc));
        }
        let optional = if field.required { "" } else { "?" };
        let _ = writeln!(
            out,
            "{pad}{}{optional}: {};",
            key(&field.name),
            ty_of(&field.ty, indent + 1)
        );
    }
    if object.open {
        let _ = writeln!(out, "{pad}[key: string]: unknown;");
    }
    out.push_str(&"  ".repeat(indent));
    out.push('}');
    out
}

fn ty_of(ty: &Ty, indent: usize) -> String {
    match ty {
        Ty::Any => "unknown".into(),
        Ty::Never => "never".into(),
        Ty::Null => "null".into(),
        Ty::Bool => "boolean".into(),
        Ty::Int | Ty::Number => "number".into(),
        Ty::Str => "string".into(),
        Ty::Literal(value) => literal(value),
        Ty::Array(item) => match **item {
            Ty::Union(_) => format!("Array<{}>", ty_of(item, indent)),
            _ => format!("{}[]", ty_of(item, indent)),
        },
        Ty::Map(value) => format!("Record<string, {}>", ty_of(value, indent)),
        Ty::Object(object) => fields(object, indent),
        Ty::Union(types) => {
            let parts: Vec<String> = types.iter().map(|t| ty_of(t, indent)).collect();
            parts.join(" | ")
        }
    }
}

/// A literal type: strings, numbers, booleans and `null` are types of their own; an array or
/// an object is not, and is typed by its shape's kind.
fn literal(value: &Value) -> String {
    match value {
        Value::Array(_) => "unknown[]".into(),
        Value::Object(_) => "Record<string, unknown>".into(),
        other => other.to_string(),
    }
}

/// A property's key: bare where it is an identifier (a reserved word is a valid key), quoted
/// otherwise.
fn key(name: &str) -> String {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    match identifier {
        true => name.to_string(),
        false => Value::String(name.to_string()).to_string(),
    }
}

/// A description inside `/** */`, on one line, unable to close the comment.
fn comment(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("*/", "*\\/")
}

//! The Python types of `interface`: `TypedDict`s for `Input`, `Output` and each object inside
//! them, `ErrorCode` (a `Literal` of the declared codes) and `Ctx` (the runtime package's,
//! whose `fail` takes only those; for an agent with an adapter of its own, a `Protocol`), for
//! the agent to import.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde_json::Value;

use super::schema::{Interface, Object, Ty, header};

/// The file, beside `holon.yaml`.
pub const FILE: &str = "holon_types.py";

/// Python's keywords: no field of a class-syntax `TypedDict` may be one.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The text of `holon_types.py`; `runtime`, for an agent on the `holon-kit` package.
pub fn render(interface: &Interface, runtime: bool) -> String {
    let mut writer = Writer::default();
    let input = writer.top(
        "Input",
        &interface.input,
        "The call's arguments: `interface.input`.",
    );
    let output = writer.top(
        "Output",
        &interface.output,
        "A successful answer: `interface.output`.",
    );
    let codes: Vec<String> = (interface.codes.iter())
        .map(|c| Value::String(c.clone()).to_string())
        .collect();
    let error_code = match codes.is_empty() {
        true => {
            writer.typing.insert("Never");
            "Never".to_string()
        }
        false => {
            writer.typing.insert("Literal");
            format!("Literal[{}]", codes.join(", "))
        }
    };
    if !runtime {
        writer.typing.insert("Protocol");
    }
    let imports: Vec<&str> = writer.typing.iter().copied().collect();
    // Top-level blocks, two blank lines apart, each object's `TypedDict` before its first use.
    let mut imported = format!("from typing import {}", imports.join(", "));
    if runtime {
        imported.push_str("\n\nfrom holon_kit import Ctx as RuntimeCtx");
    }
    let mut blocks = vec![
        format!("\"\"\"{}\"\"\"", header("uv run holon-test", runtime)),
        imported,
    ];
    blocks.extend(writer.blocks.iter().map(|b| b.trim().to_string()));
    blocks.push(input.trim().to_string());
    blocks.push(output.trim().to_string());
    blocks.push(format!(
        "ErrorCode = {error_code}
\"\"\"The codes `interface.errors` declares: the only codes `ctx.fail` takes.\"\"\""
    ));
    if runtime {
        blocks.push(
            "Ctx = RuntimeCtx[ErrorCode]
\"\"\"What the agent function gets beside its input: `ctx.fail` takes only the declared codes,
`await ctx.download(handle)` gives a `holon://files/` handle's bytes.\"\"\""
                .to_string(),
        );
        let mut out = blocks.join("\n\n\n");
        out.push('\n');
        return out;
    }
    blocks.push(
        "class Ctx(Protocol):
    \"\"\"What the agent function gets beside its input.\"\"\"

    def fail(self, code: ErrorCode, message: str) -> Exception:
        \"\"\"A declared failure, to raise: `raise ctx.fail(code, message)`.\"\"\"
        ..."
        .to_string(),
    );
    let mut out = blocks.join("\n\n\n");
    out.push('\n');
    out
}

#[derive(Default)]
struct Writer {
    /// What the file imports from `typing`.
    typing: BTreeSet<&'static str>,
    /// The `TypedDict`s of the objects inside `Input` and `Output`, each before its first use.
    blocks: Vec<String>,
    /// The names given, so no two objects share one.
    names: BTreeSet<String>,
}

impl Writer {
    /// `Input` or `Output`: a `TypedDict` when it is an object, an alias otherwise.
    fn top(&mut self, name: &str, ty: &Ty, doc: &str) -> String {
        self.names.insert(name.to_string());
        match ty {
            Ty::Object(object) => self.typed_dict(name, object, Some(doc)),
            other => {
                let ty = self.ty(other);
                format!("{name} = {ty}\n\"\"\"{doc}\"\"\"")
            }
        }
    }

    fn typed_dict(&mut self, name: &str, object: &Object, doc: Option<&str>) -> String {
        self.typing.insert("TypedDict");
        let fields: Vec<(String, String, Option<&String>)> = (object.fields.iter())
            .map(|f| {
                let ty = self.ty(&f.ty);
                let ty = match f.required {
                    true => ty,
                    false => {
                        self.typing.insert("NotRequired");
                        format!("NotRequired[{ty}]")
                    }
                };
                (f.name.clone(), ty, f.doc.as_ref())
            })
            .collect();
        let doc = doc.map(str::to_string).or_else(|| object.doc.clone());
        let class_syntax = fields.iter().all(|(n, _, _)| identifier(n));
        let mut out = String::new();
        if class_syntax {
            let _ = writeln!(out, "\nclass {name}(TypedDict):");
            if let Some(doc) = &doc {
                let _ = writeln!(out, "    {}\n", docstring(doc));
            }
            for (field, ty, doc) in &fields {
                let _ = writeln!(out, "    {field}: {ty}");
                if let Some(doc) = doc {
                    let _ = writeln!(out, "    {}", docstring(doc));
                }
            }
            if fields.is_empty() && doc.is_none() {
                out.push_str("    pass\n");
            }
        } else {
            // A key that is a keyword or no identifier (`from`, `x-y`): the functional syntax.
            let _ = writeln!(out, "\n{name} = TypedDict(");
            let _ = writeln!(out, "    {},", Value::String(name.to_string()));
            out.push_str("    {\n");
            for (field, ty, _) in &fields {
                let _ = writeln!(out, "        {}: {ty},", Value::String(field.clone()));
            }
            out.push_str("    },\n)\n");
            if let Some(doc) = &doc {
                let _ = writeln!(out, "{}", docstring(doc));
            }
        }
        out
    }

    fn ty(&mut self, ty: &Ty) -> String {
        match ty {
            Ty::Any => {
                self.typing.insert("Any");
                "Any".into()
            }
            Ty::Never => {
                self.typing.insert("Never");
                "Never".into()
            }
            Ty::Null => "None".into(),
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Number => "float".into(),
            Ty::Str => "str".into(),
            Ty::Literal(value) => self.literal(value),
            Ty::Array(item) => format!("list[{}]", self.ty(item)),
            Ty::Map(value) => format!("dict[str, {}]", self.ty(value)),
            Ty::Object(object) => {
                let name = self.fresh(&object.name);
                let block = self.typed_dict(&name, object, None);
                self.blocks.push(block);
                name
            }
            Ty::Union(types) => {
                // The literals together, `Literal["a", 1]`, then the rest.
                let mut literals = Vec::new();
                let mut parts = Vec::new();
                for t in types {
                    let part = self.ty(t);
                    match part
                        .strip_prefix("Literal[")
                        .and_then(|p| p.strip_suffix(']'))
                    {
                        Some(inner) => literals.push(inner.to_string()),
                        None => parts.push(part),
                    }
                }
                if !literals.is_empty() {
                    parts.insert(0, format!("Literal[{}]", literals.join(", ")));
                }
                parts.join(" | ")
            }
        }
    }

    /// A literal type where Python has one (a string, an integer, a boolean, `None`); a float,
    /// an array or an object is typed by its kind.
    fn literal(&mut self, value: &Value) -> String {
        let literal = match value {
            Value::Null => return "None".into(),
            Value::Bool(true) => "True".to_string(),
            Value::Bool(false) => "False".to_string(),
            Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
            Value::Number(_) => return "float".into(),
            Value::String(_) => value.to_string(),
            Value::Array(_) => return self.ty(&Ty::Array(Box::new(Ty::Any))),
            Value::Object(_) => return self.ty(&Ty::Map(Box::new(Ty::Any))),
        };
        self.typing.insert("Literal");
        format!("Literal[{literal}]")
    }

    /// `name`, or `name2`, `name3`, ... when it is taken.
    fn fresh(&mut self, name: &str) -> String {
        let base = if name.is_empty() { "Object" } else { name };
        let mut candidate = base.to_string();
        let mut n = 2;
        while self.names.contains(&candidate) {
            candidate = format!("{base}{n}");
            n += 1;
        }
        self.names.insert(candidate.clone());
        candidate
    }
}

/// A field name a class-syntax `TypedDict` can declare: an ASCII identifier, not a keyword.
fn identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
}

/// A description as a one-line docstring that no text can close early.
fn docstring(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let escaped = line.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"\"\"{escaped}\"\"\"")
}

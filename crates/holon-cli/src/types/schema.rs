//! A JSON Schema of `interface` read as a type: what the value may be, in terms every target
//! language can say (objects with their fields, arrays, maps, unions, literals). Each type
//! admits at least every value the schema admits, so code written against it is never wrong
//! about a value the gateway lets through; what no language can say (a `pattern`, a bound) is
//! dropped, the type kept as wide as the keyword it narrows.

use serde_json::{Map, Value};

/// What the files are made of: the two schemas read as types, and the declared codes.
pub struct Interface {
    /// `interface.input`.
    pub input: Ty,
    /// `interface.output`.
    pub output: Ty,
    /// The codes `interface.errors` declares, in its order.
    pub codes: Vec<String>,
}

/// What each file says of itself first, naming the command that writes it as the language's
/// template runs the kit (`npx holon-test`, `uv run holon-test`).
pub fn header(kit: &str, runtime: bool) -> String {
    // (The words of before, for an agent with an adapter of its own: its file stays up to date.)
    let whose = if runtime {
        "for the agent function"
    } else {
        "for the agent function and its adapter"
    };
    format!(
        "Generated from holon.yaml by `{kit} types`: the types of its `interface`,
{whose}. Do not edit: run it again when
holon.yaml changes (a test run says when this file is out of date)."
    )
}

/// What a value may be.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// Anything (`unknown`, `Any`): a schema that says nothing, or that no type says soundly.
    Any,
    /// Nothing (the schema `false`).
    Never,
    /// The JSON value `null`, and no other.
    Null,
    /// A boolean.
    Bool,
    /// A whole number.
    Int,
    /// Any number.
    Number,
    /// A string.
    Str,
    /// This one value (`const`, an `enum` member).
    Literal(Value),
    /// An array of these.
    Array(Box<Ty>),
    /// An object of any keys, each value this.
    Map(Box<Ty>),
    /// An object of these fields.
    Object(Object),
    /// Any of these.
    Union(Vec<Ty>),
}

/// An object's fields, and whether other keys may come too.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// A name for it, from where it is (`Input`, `OutputTopWordsItem`), for a language that
    /// names its object types.
    pub name: String,
    /// Its `description`.
    pub doc: Option<String>,
    /// The fields, in the schema's order.
    pub fields: Vec<Field>,
    /// Whether keys other than the fields are admitted (`additionalProperties` is not `false`).
    pub open: bool,
}

/// One field of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Its key, as the JSON writes it.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Whether `required` names it.
    pub required: bool,
    /// Its `description`.
    pub doc: Option<String>,
}

/// How deep a schema is read before the rest is `Any` (a `$ref` that leads back to itself
/// included).
const DEPTH: usize = 32;

/// The type of `schema` (a whole document, whose local `$ref`s it follows), named `name`.
pub fn read(schema: &Value, name: &str) -> Ty {
    Reader {
        root: schema,
        following: std::cell::RefCell::new(Vec::new()),
    }
    .ty(schema, name, 0)
}

struct Reader<'a> {
    root: &'a Value,
    /// The `$ref`s being followed: one met again leads back to itself, and is `Any` there.
    following: std::cell::RefCell<Vec<String>>,
}

impl Reader<'_> {
    fn ty(&self, schema: &Value, name: &str, depth: usize) -> Ty {
        if depth > DEPTH {
            return Ty::Any;
        }
        let map = match schema {
            Value::Bool(true) => return Ty::Any,
            Value::Bool(false) => return Ty::Never,
            Value::Object(map) => map,
            _ => return Ty::Any,
        };
        if let Some(Value::String(reference)) = map.get("$ref") {
            let target = reference
                .strip_prefix('#')
                .and_then(|p| self.root.pointer(p));
            let again = self.following.borrow().contains(reference);
            return match target {
                Some(target) if !again => {
                    self.following.borrow_mut().push(reference.clone());
                    let ty = self.ty(target, name, depth + 1);
                    self.following.borrow_mut().pop();
                    ty
                }
                _ => Ty::Any,
            };
        }
        if let Some(value) = map.get("const") {
            return Ty::Literal(value.clone());
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return union(values.iter().cloned().map(Ty::Literal).collect());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                let branches = (branches.iter().enumerate())
                    .map(|(i, b)| self.ty(b, &format!("{name}{}", i + 1), depth + 1))
                    .collect();
                return union(branches);
            }
        }
        if let Some(Value::Array(parts)) = map.get("allOf") {
            return self.all_of(map, parts, name, depth);
        }
        match map.get("type") {
            Some(Value::String(t)) => self.of_type(t, map, name, depth),
            Some(Value::Array(types)) => union(
                (types.iter().filter_map(Value::as_str))
                    .map(|t| self.of_type(t, map, name, depth))
                    .collect(),
            ),
            _ if map.contains_key("properties") => self.of_type("object", map, name, depth),
            _ if map.contains_key("items") => self.of_type("array", map, name, depth),
            _ => Ty::Any,
        }
    }

    fn of_type(&self, t: &str, map: &Map<String, Value>, name: &str, depth: usize) -> Ty {
        match t {
            "null" => Ty::Null,
            "boolean" => Ty::Bool,
            "integer" => Ty::Int,
            "number" => Ty::Number,
            "string" => Ty::Str,
            "array" => {
                let item = format!("{name}Item");
                let mut items: Vec<Ty> = match map.get("prefixItems") {
                    Some(Value::Array(prefix)) => (prefix.iter())
                        .map(|p| self.ty(p, &item, depth + 1))
                        .collect(),
                    _ => Vec::new(),
                };
                // Past its prefix (or with none), an array without `items` may hold anything.
                match map.get("items") {
                    Some(schema) => items.push(self.ty(schema, &item, depth + 1)),
                    None => items.push(Ty::Any),
                }
                Ty::Array(Box::new(union(items)))
            }
            "object" => self.object(map, name, depth),
            _ => Ty::Any,
        }
    }

    fn object(&self, map: &Map<String, Value>, name: &str, depth: usize) -> Ty {
        let required: Vec<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let properties = match map.get("properties") {
            Some(Value::Object(p)) => Some(p),
            _ => None,
        };
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
        let Some(properties) = properties.filter(|p| !p.is_empty()) else {
            if closed {
                return Ty::Object(Object {
                    name: name.to_string(),
                    doc: description(map),
                    fields: Vec::new(),
                    open: false,
                });
            }
            let values = match map.get("additionalProperties") {
                Some(schema) => self.ty(schema, &format!("{name}Value"), depth + 1),
                None => Ty::Any,
            };
            return Ty::Map(Box::new(values));
        };
        let fields = (properties.iter())
            .map(|(key, schema)| Field {
                name: key.clone(),
                ty: self.ty(schema, &format!("{name}{}", camel(key)), depth + 1),
                required: required.contains(&key.as_str()),
                doc: schema.as_object().and_then(description),
            })
            .collect();
        Ty::Object(Object {
            name: name.to_string(),
            doc: description(map),
            fields,
            open: !closed,
        })
    }

    /// `allOf` of objects, their fields together (a field in several parts takes the first
    /// part's type, and is required when any part requires it); of anything else, the first
    /// part that says a type, or `Any`.
    fn all_of(&self, map: &Map<String, Value>, parts: &[Value], name: &str, depth: usize) -> Ty {
        let mut read: Vec<Ty> = (parts.iter())
            .map(|p| self.ty(p, name, depth + 1))
            .collect();
        if map.contains_key("type") || map.contains_key("properties") {
            let mut own = map.clone();
            own.remove("allOf");
            read.insert(0, self.ty(&Value::Object(own), name, depth + 1));
        }
        let objects: Vec<&Object> = (read.iter())
            .filter_map(|t| match t {
                Ty::Object(o) => Some(o),
                _ => None,
            })
            .collect();
        if !objects.is_empty() && objects.len() == read.iter().filter(|t| **t != Ty::Any).count() {
            let mut merged = Object {
                name: name.to_string(),
                doc: description(map),
                fields: Vec::new(),
                open: objects.iter().all(|o| o.open),
            };
            for object in objects {
                for field in &object.fields {
                    match merged.fields.iter_mut().find(|f| f.name == field.name) {
                        Some(known) => known.required |= field.required,
                        None => merged.fields.push(field.clone()),
                    }
                }
            }
            return Ty::Object(merged);
        }
        read.into_iter().find(|t| *t != Ty::Any).unwrap_or(Ty::Any)
    }
}

/// One type for several: itself when there is one, `Never` for none, a flat union without
/// repeats otherwise; `Any` among them makes the whole `Any`.
fn union(types: Vec<Ty>) -> Ty {
    let mut flat: Vec<Ty> = Vec::new();
    for t in types {
        match t {
            Ty::Any => return Ty::Any,
            Ty::Never => {}
            Ty::Union(inner) => {
                for t in inner {
                    if !flat.contains(&t) {
                        flat.push(t);
                    }
                }
            }
            t if !flat.contains(&t) => flat.push(t),
            _ => {}
        }
    }
    match flat.len() {
        0 => Ty::Never,
        1 => flat.pop().unwrap_or(Ty::Never),
        _ => Ty::Union(flat),
    }
}

fn description(map: &Map<String, Value>) -> Option<String> {
    map.get("description")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `top_words` as a part of a type's name: `TopWords`.
pub fn camel(key: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in key.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'F');
    }
    out
}

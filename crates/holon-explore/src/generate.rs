//! Random inputs: a proptest strategy built from `interface.input`, one keyword at a time.
//! What it cannot express exactly (`oneOf` overlaps, `uniqueItems` of few values, patterns with
//! anchors inside) it approximates, and the gateway's gate throws out what misses.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::{BoxedStrategy, Just, Union};
use regex_syntax::hir::{Hir, HirKind};
use serde_json::Value;

use crate::error::Unservable;
use crate::schema::{self, MAX_DEPTH, Schemas};

/// Past this depth objects carry only their required properties and arrays their fewest items,
/// so a recursive schema ends.
const SHALLOW: usize = 8;
/// Random strings and arrays stay short: lengths up to the limits are the edge cases' job.
const SHORT: u64 = 24;
const MEDIUM: u64 = 400;
const FEW_ITEMS: u64 = 6;

type Gen = BoxedStrategy<Value>;

/// The strategy for the input schema.
pub fn strategy(schemas: &Schemas) -> Result<Gen, Unservable> {
    node(schemas, schemas.root, 0, "")
}

fn node(s: &Schemas, raw: &Value, depth: usize, at: &str) -> Result<Gen, Unservable> {
    if depth > MAX_DEPTH {
        return Err(Unservable::TooDeep {
            at: at.to_string(),
            depth: MAX_DEPTH,
        });
    }
    match raw {
        Value::Bool(true) => return Ok(any_value()),
        Value::Bool(false) => return Err(Unservable::False { at: at.to_string() }),
        _ => {}
    }
    let n = s.resolve(raw)?;
    if let Some(c) = n.get("const") {
        return Ok(Just(c.clone()).boxed());
    }
    if let Some(values) = n.get("enum").and_then(Value::as_array) {
        if values.is_empty() {
            return Err(Unservable::EmptyEnum { at: at.to_string() });
        }
        return Ok(select(values.clone()).boxed());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = n.get(key).and_then(Value::as_array) {
            let mut outer = n.clone();
            if let Some(o) = outer.as_object_mut() {
                o.remove(key);
            }
            let options: Vec<Gen> = branches
                .iter()
                .filter_map(|b| node(s, &schema::merge(&outer, b), depth + 1, at).ok())
                .collect();
            if options.is_empty() {
                return Err(Unservable::NoBranch {
                    at: at.to_string(),
                    key: key.to_string(),
                });
            }
            return Ok(Union::new(options).boxed());
        }
    }
    let mut options = Vec::new();
    let mut first_error = None;
    for t in schema::types(&n) {
        match typed(s, &n, t, depth, at) {
            Ok(g) => options.push(g),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if options.is_empty() {
        return Err(first_error.unwrap_or_else(|| Unservable::NoType { at: at.to_string() }));
    }
    Ok(Union::new(options).boxed())
}

fn typed(s: &Schemas, n: &Value, t: &str, depth: usize, at: &str) -> Result<Gen, Unservable> {
    Ok(match t {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => integer(n, at)?,
        "number" => number(n, at)?,
        "string" => string(s, n, at)?,
        "array" => array(s, n, depth, at)?,
        "object" => object(s, n, depth, at)?,
        _ => {
            return Err(Unservable::UnknownType {
                at: at.to_string(),
                name: t.to_string(),
            });
        }
    })
}

fn integer(n: &Value, at: &str) -> Result<Gen, Unservable> {
    let (lo, hi) = schema::int_bounds(n);
    let (lo, hi) = (lo.unwrap_or(-1_000_000), hi.unwrap_or(1_000_000));
    let (lo, hi) = match (lo <= hi, schema::num(n, "multipleOf")) {
        (false, _) => return Err(Unservable::NoInteger { at: at.to_string() }),
        (true, Some(m)) if m >= 1.0 && m.fract() == 0.0 => {
            let m = m as i64;
            let (klo, khi) = (div_ceil(lo, m), hi.div_euclid(m));
            if klo > khi {
                return Err(Unservable::NoMultiple {
                    at: at.to_string(),
                    of: m.to_string(),
                });
            }
            return Ok((klo..=khi)
                .prop_filter_map("past i64", move |k| k.checked_mul(m).map(Value::from))
                .boxed());
        }
        (true, _) => (lo, hi),
    };
    Ok((lo..=hi).prop_map(Value::from).boxed())
}

/// `a / b` rounded up, for `b > 0`, without overflow at `i64::MIN`.
fn div_ceil(a: i64, b: i64) -> i64 {
    (-((-i128::from(a)).div_euclid(i128::from(b)))) as i64
}

fn number(n: &Value, at: &str) -> Result<Gen, Unservable> {
    let (lower, upper) = schema::number_bounds(n);
    let lo = lower.map_or(-1.0e6, |(x, _)| x);
    let hi = upper.map_or(1.0e6, |(x, _)| x);
    if lo > hi {
        return Err(Unservable::NoNumber { at: at.to_string() });
    }
    if let Some(m) = schema::num(n, "multipleOf").filter(|m| *m > 0.0) {
        let (klo, khi) = ((lo / m).ceil() as i64, (hi / m).floor() as i64);
        if klo > khi {
            return Err(Unservable::NoMultiple {
                at: at.to_string(),
                of: m.to_string(),
            });
        }
        return Ok((klo..=khi)
            .prop_filter_map("not finite", move |k| schema::number_value(k as f64 * m))
            .boxed());
    }
    if lo == hi {
        return Ok(Just(schema::number_value(lo).unwrap_or(Value::Null)).boxed());
    }
    let whole = integer(n, at).ok();
    let float = (lo..hi)
        .prop_filter_map("not finite", |x| {
            serde_json::Number::from_f64(x).map(Value::Number)
        })
        .boxed();
    Ok(match whole {
        Some(whole) => prop_oneof![whole, float].boxed(),
        None => float,
    })
}

fn string(s: &Schemas, n: &Value, at: &str) -> Result<Gen, Unservable> {
    if let Some(handles) = s.handles_for(n) {
        let values: Vec<Value> = handles.iter().cloned().map(Value::String).collect();
        return Ok(select(values).boxed());
    }
    let pattern = n.get("pattern").and_then(Value::as_str).or_else(|| {
        n.get("format")
            .and_then(Value::as_str)
            .and_then(schema::format_pattern)
    });
    if let Some(pattern) = pattern {
        return Ok(regex(pattern)
            .map_err(|why| Unservable::Pattern {
                at: at.to_string(),
                pattern: pattern.to_string(),
                why,
            })?
            .prop_map(Value::String)
            .boxed());
    }
    let min = schema::count(n, "minLength").unwrap_or(0);
    let max = schema::count(n, "maxLength").unwrap_or(u64::MAX);
    if min > max {
        return Err(Unservable::Lengths { at: at.to_string() });
    }
    let short = (min as usize)..=(max.min(min + SHORT) as usize);
    let medium = (min as usize)..=(max.min(min + MEDIUM) as usize);
    Ok(prop_oneof![
        4 => vec(character(), short),
        1 => vec(character(), medium),
    ]
    .prop_map(|chars| Value::String(chars.into_iter().collect()))
    .boxed())
}

/// Characters weighted toward the classes that break tokenizers: whitespace and control
/// characters, non-ASCII letters, astral-plane symbols, NUL.
fn character() -> BoxedStrategy<char> {
    prop_oneof![
        10 => proptest::char::range(' ', '~'),
        3 => select(vec![' ', ' ', '\n', '\r', '\t', '\0', '\u{b}', '\u{1b}', '\u{7f}', '\u{a0}', '\u{2028}']),
        2 => proptest::char::range('\u{c0}', '\u{24f}'),
        1 => proptest::char::range('\u{4e00}', '\u{4fff}'),
        1 => proptest::char::range('\u{1f300}', '\u{1f64f}'),
    ]
    .boxed()
}

/// Strings matching an RE2 pattern. proptest draws from `regex-syntax`'s HIR but not through
/// anchors or boundaries: those are dropped (a JSON Schema pattern matches anywhere, so `^a`
/// holds of "a"), and the gate judges what that loosens.
pub fn regex(pattern: &str) -> Result<BoxedStrategy<String>, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    proptest::string::string_regex_parsed(&without_looks(hir))
        .map(|s| s.boxed())
        .map_err(|e| e.to_string())
}

fn without_looks(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Repetition(mut r) => {
            r.sub = Box::new(without_looks(*r.sub));
            Hir::repetition(r)
        }
        HirKind::Capture(mut c) => {
            c.sub = Box::new(without_looks(*c.sub));
            Hir::capture(c)
        }
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(without_looks).collect()),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.into_iter().map(without_looks).collect())
        }
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => Hir::literal(l.0),
        HirKind::Class(c) => Hir::class(c),
    }
}

fn array(s: &Schemas, n: &Value, depth: usize, at: &str) -> Result<Gen, Unservable> {
    let prefix: Vec<Gen> = n
        .get("prefixItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, p)| node(s, p, depth + 1, &format!("{at}/{i}")))
        .collect::<Result<_, _>>()?;
    let min = schema::count(n, "minItems").unwrap_or(0);
    let max = schema::count(n, "maxItems").unwrap_or(10_000);
    let rest_min = min.saturating_sub(prefix.len() as u64);
    let room = max.saturating_sub(prefix.len() as u64);
    let rest_max = if depth >= SHALLOW {
        rest_min
    } else {
        room.min(rest_min.max(FEW_ITEMS))
    }
    .max(rest_min);
    let items = match n.get("items") {
        Some(Value::Bool(false)) => None,
        Some(items) => Some(node(s, items, depth + 1, &format!("{at}/items"))?),
        None if rest_min > 0 => Some(any_value()),
        None => None,
    };
    let unique = n.get("uniqueItems") == Some(&Value::Bool(true));
    let rest = match items {
        Some(items) => vec(items, rest_min as usize..=rest_max as usize).boxed(),
        None => Just(Vec::new()).boxed(),
    };
    Ok((prefix, rest)
        .prop_map(move |(mut head, tail)| {
            head.extend(tail);
            if unique {
                let mut seen = std::collections::HashSet::new();
                head.retain(|v| seen.insert(v.to_string()));
            }
            Value::Array(head)
        })
        .boxed())
}

fn object(s: &Schemas, n: &Value, depth: usize, at: &str) -> Result<Gen, Unservable> {
    let required = schema::required(n);
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    let declared = schema::properties(n);
    for (name, sub) in &declared {
        let is_required = required.contains(&name.as_str());
        if !is_required && depth >= SHALLOW {
            continue;
        }
        let value = node(s, sub, depth + 1, &format!("{at}/{name}"));
        let name = (*name).clone();
        match (value, is_required) {
            (Ok(v), true) => fields.push(v.prop_map(move |v| Some((name.clone(), v))).boxed()),
            (Ok(v), false) => fields.push(
                proptest::option::of(v)
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed(),
            ),
            (Err(e), true) => return Err(e),
            // An optional property no value fits is left out.
            (Err(_), false) => {}
        }
    }
    for name in &required {
        if !declared.iter().any(|(d, _)| d.as_str() == *name) {
            let name = name.to_string();
            fields.push(
                any_value()
                    .prop_map(move |v| Some((name.clone(), v)))
                    .boxed(),
            );
        }
    }
    if let Some(extra) = n.get("additionalProperties").filter(|a| a.is_object())
        && depth < SHALLOW
    {
        let extra = node(s, extra, depth + 1, &format!("{at}/additionalProperties"))?;
        let names = "[a-z][a-z_]{0,7}";
        let name = regex(names).map_err(|why| Unservable::Pattern {
            at: format!("{at}/additionalProperties"),
            pattern: names.to_string(),
            why,
        })?;
        fields.push(proptest::option::of((name, extra)).boxed());
    }
    Ok(fields
        .prop_map(|pairs| schema::object(pairs.into_iter().flatten()))
        .boxed())
}

/// Any small JSON value, for a schema that constrains nothing.
fn any_value() -> Gen {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        vec(character(), 0..12).prop_map(|c| Value::String(c.into_iter().collect())),
    ]
    .boxed()
}

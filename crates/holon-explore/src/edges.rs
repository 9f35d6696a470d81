//! The edge cases, in a fixed order, before any random one: a minimal input, then that input
//! with one value moved to an edge (each bound at its extremes, every `enum` value, each optional
//! property absent and present, strings from the hard classes, sizes up to the limits).

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::Value;

use crate::generate;
use crate::schema::{self, MAX_DEPTH, Schemas};
use holon_core::json::size as json_size;

/// One edge case: what it is, and the input.
#[derive(Debug, Clone)]
pub struct Edge {
    /// What makes it an edge, e.g. "`/top` at `maximum` (50)".
    pub label: String,
    /// The input with that one thing moved to its edge.
    pub input: Value,
}

/// Strings from the classes that break tokenizers, each with its name.
const HARD_STRINGS: &[(&str, &str)] = &[
    ("whitespace only", " \t  "),
    ("a line break", "\n"),
    ("two lines", "first line\nsecond line"),
    ("a Windows line break", "one\r\ntwo"),
    ("a NUL character", "a\u{0}b"),
    ("control characters", "\u{1b}[m\u{7}\u{8}\u{7f}"),
    ("non-ASCII letters", "naïve café in Zürich, Ærø"),
    ("non-Latin script", "日本語のテキスト"),
    ("right-to-left text", "مرحبا بالعالم"),
    ("astral-plane characters", "🦀 𝄞 😀"),
    ("a combining mark", "e\u{301}"),
    ("a zero-width space", "a\u{200b}b"),
    ("a byte order mark", "\u{feff}text"),
];

/// Text used to fill strings to their length limits: words, so a text agent has work to do.
const FILLER: &str = "the quick brown fox jumps over the lazy dog. ";

/// Characters in the strings of the first input.
const TYPICAL: u64 = 9;
/// Largest count of items or characters an edge asks for beyond what the limits say.
const NO_LIMIT: u64 = 100_000;
/// Most edges one node contributes.
const PER_NODE: usize = 64;

/// Every edge case of the input schema, deduplicated, in a fixed order. The gate has not yet
/// judged them.
pub fn edges(s: &Schemas) -> Vec<Edge> {
    let mut out = Vec::new();
    if let Some(base) = minimal(s, s.root, 0) {
        out.push(Edge {
            label: "the input with only its required properties".into(),
            input: base,
        });
    }
    out.extend(
        node(s, s.root, 0, "", s.max_bytes)
            .into_iter()
            .map(|(label, input)| Edge { label, input }),
    );
    let mut seen = std::collections::HashSet::new();
    out.retain(|e| seen.insert(e.input.to_string()));
    out
}

/// The value a node's edges start from, by a fixed rule: required properties only, fewest
/// items, a few words for a string, the number nearest zero.
pub fn minimal(s: &Schemas, raw: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    match raw {
        Value::Bool(true) => return Some(Value::Null),
        Value::Bool(false) => return None,
        _ => {}
    }
    let n = s.resolve(raw).ok()?;
    if let Some(c) = n.get("const") {
        return Some(c.clone());
    }
    if let Some(values) = n.get("enum").and_then(Value::as_array) {
        return values.first().cloned();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = n.get(key).and_then(Value::as_array) {
            let mut outer = n.clone();
            outer.as_object_mut()?.remove(key);
            return branches
                .iter()
                .find_map(|b| minimal(s, &schema::merge(&outer, b), depth + 1));
        }
    }
    schema::types(&n)
        .into_iter()
        .find_map(|t| minimal_typed(s, &n, t, depth))
}

fn minimal_typed(s: &Schemas, n: &Value, t: &str, depth: usize) -> Option<Value> {
    match t {
        "null" => Some(Value::Null),
        "boolean" => Some(Value::Bool(false)),
        "integer" => Some(minimal_integer(n)),
        "number" => minimal_number(n),
        "string" => {
            if let Some(handles) = s.handles_for(n) {
                return handles.first().cloned().map(Value::String);
            }
            if let Some(p) = pattern(n) {
                return samples(p, 8)
                    .into_iter()
                    .min_by_key(String::len)
                    .map(Value::String);
            }
            // A few words rather than the empty string, so the edges of the other properties
            // reach past an agent's check for empty text; shrinking finds the smallest.
            let min = schema::count(n, "minLength").unwrap_or(0);
            let max = schema::count(n, "maxLength").unwrap_or(u64::MAX);
            Some(Value::String(fill(min.max(TYPICAL).min(max))))
        }
        "array" => {
            let mut items = Vec::new();
            for p in n
                .get("prefixItems")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                items.push(minimal(s, p, depth + 1)?);
            }
            let min = schema::count(n, "minItems").unwrap_or(0) as usize;
            if items.len() < min {
                let item = match n.get("items") {
                    Some(i) => minimal(s, i, depth + 1)?,
                    None => Value::Null,
                };
                items.resize(min, item);
            }
            items.truncate(min.max(prefix_len(n)));
            Some(Value::Array(items))
        }
        "object" => {
            let mut pairs = Vec::new();
            let declared = schema::properties(n);
            for name in schema::required(n) {
                let value = match declared.iter().find(|(d, _)| d.as_str() == name) {
                    Some((_, sub)) => minimal(s, sub, depth + 1)?,
                    None => Value::Null,
                };
                pairs.push((name.to_string(), value));
            }
            Some(schema::object(pairs))
        }
        _ => None,
    }
}

/// The integer closest to 0 within the bounds, a multiple of `multipleOf`.
fn minimal_integer(n: &Value) -> Value {
    let (lo, hi) = schema::int_bounds(n);
    let mut x = 0i64.clamp(lo.unwrap_or(i64::MIN), hi.unwrap_or(i64::MAX));
    if let Some(m) = schema::num(n, "multipleOf").filter(|m| *m >= 1.0) {
        let m = m as i64;
        if x.rem_euclid(m) != 0 {
            x = x.checked_add(m - x.rem_euclid(m)).unwrap_or(x);
        }
    }
    Value::from(x)
}

/// The number closest to 0 within the bounds (just inside an exclusive one), a multiple of
/// `multipleOf`.
fn minimal_number(n: &Value) -> Option<Value> {
    let (lower, upper) = schema::number_bounds(n);
    let mut x = 0.0f64;
    if let Some((lo, exclusive)) = lower
        && (x < lo || (exclusive && x <= lo))
    {
        x = if exclusive { inside(lo, 1.0) } else { lo };
    }
    if let Some((hi, exclusive)) = upper
        && (x > hi || (exclusive && x >= hi))
    {
        x = if exclusive { inside(hi, -1.0) } else { hi };
    }
    if let Some(m) = schema::num(n, "multipleOf").filter(|m| *m > 0.0) {
        x = (x / m).ceil() * m;
    }
    schema::number_value(x)
}

fn prefix_len(n: &Value) -> usize {
    n.get("prefixItems")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

fn pattern(n: &Value) -> Option<&str> {
    n.get("pattern").and_then(Value::as_str).or_else(|| {
        n.get("format")
            .and_then(Value::as_str)
            .and_then(schema::format_pattern)
    })
}

/// A few strings matching `pattern`, the same ones on every run.
fn samples(pattern: &str, count: usize) -> Vec<String> {
    let Ok(strategy) = generate::regex(pattern) else {
        return Vec::new();
    };
    let mut runner = TestRunner::deterministic();
    (0..count)
        .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|t| t.current()))
        .collect()
}

/// `FILLER` cut or repeated to exactly `chars` characters.
fn fill(chars: u64) -> String {
    FILLER.chars().cycle().take(chars as usize).collect()
}

/// Just inside an exclusive bound: a step toward the inside that a float can still tell apart.
fn inside(bound: f64, direction: f64) -> f64 {
    bound + direction * (bound.abs() * 1e-9).max(1e-9)
}

type Found = Vec<(String, Value)>;

/// The edges of one node. `room` is how many bytes of compact JSON its value may take before
/// the input passes `max_input_bytes`.
fn node(s: &Schemas, raw: &Value, depth: usize, at: &str, room: u64) -> Found {
    if depth > MAX_DEPTH || !raw.is_object() {
        return Vec::new();
    }
    let Ok(n) = s.resolve(raw) else {
        return Vec::new();
    };
    let name = |what: &str| {
        if at.is_empty() {
            format!("the input {what}")
        } else {
            format!("`{at}` {what}")
        }
    };
    let mut out: Found = Vec::new();
    if let Some(c) = n.get("const") {
        out.push((name("at its `const`"), c.clone()));
        return out;
    }
    if let Some(values) = n.get("enum").and_then(Value::as_array) {
        for v in values {
            out.push((
                name(&format!("= {}", holon_core::message::short(v))),
                v.clone(),
            ));
        }
        out.truncate(PER_NODE);
        return out;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = n.get(key).and_then(Value::as_array) {
            let mut outer = n.clone();
            if let Some(o) = outer.as_object_mut() {
                o.remove(key);
            }
            for (i, b) in branches.iter().enumerate() {
                let branch = schema::merge(&outer, b);
                if let Some(v) = minimal(s, &branch, depth + 1) {
                    out.push((name(&format!("in `{key}[{i}]`")), v));
                }
                out.extend(node(s, &branch, depth + 1, at, room));
            }
            out.truncate(PER_NODE * 2);
            return out;
        }
    }
    for t in schema::types(&n) {
        if let Some(v) = minimal_typed(s, &n, t, depth)
            && schema::types(&n).len() > 1
        {
            out.push((name(&format!("as {t}")), v));
        }
        match t {
            "boolean" => {
                out.push((name("= true"), Value::Bool(true)));
                out.push((name("= false"), Value::Bool(false)));
            }
            "null" => out.push((name("= null"), Value::Null)),
            "integer" => out.extend(integers(&n).into_iter().map(|(w, v)| (name(&w), v))),
            "number" => out.extend(numbers(&n).into_iter().map(|(w, v)| (name(&w), v))),
            "string" => out.extend(strings(s, &n, room).into_iter().map(|(w, v)| (name(&w), v))),
            "array" => out.extend(arrays(s, &n, depth, at, room)),
            "object" => out.extend(objects(s, &n, depth, at, room)),
            _ => {}
        }
    }
    out
}

fn integers(n: &Value) -> Vec<(String, Value)> {
    let (lo, hi) = schema::int_bounds(n);
    let mut out = Vec::new();
    for (bound, name) in [(lo, "Minimum"), (hi, "Maximum")] {
        if let Some(x) = bound {
            let exclusive = format!("exclusive{name}");
            let what = if n.get(&exclusive).is_some() {
                format!("just inside `{exclusive}` ({x})")
            } else {
                format!("at `{}` ({x})", name.to_lowercase())
            };
            out.push((what, x));
        }
    }
    for x in [0, 1, -1] {
        out.push((format!("= {x}"), x));
    }
    if lo.is_none() {
        out.push(("far below zero".into(), -9_007_199_254_740_991));
    }
    if hi.is_none() {
        out.push(("far above zero".into(), 9_007_199_254_740_991));
    }
    if let Some(m) = schema::num(n, "multipleOf").filter(|m| *m >= 1.0 && m.fract() == 0.0) {
        let m = m as i64;
        let lo = lo.unwrap_or(m.saturating_mul(-1000));
        let hi = hi.unwrap_or(m.saturating_mul(1000));
        if let Some(x) = lo.checked_add((m - lo.rem_euclid(m)) % m) {
            out.push((format!("the lowest multiple of {m}"), x));
        }
        if let Some(x) = hi.checked_sub(hi.rem_euclid(m)) {
            out.push((format!("the highest multiple of {m}"), x));
        }
    }
    out.into_iter().map(|(w, x)| (w, Value::from(x))).collect()
}

fn numbers(n: &Value) -> Vec<(String, Value)> {
    let (lower, upper) = schema::number_bounds(n);
    let mut out: Vec<(String, f64)> = Vec::new();
    match lower {
        Some((lo, true)) => out.push((
            format!("just inside `exclusiveMinimum` ({lo})"),
            inside(lo, 1.0),
        )),
        Some((lo, false)) => out.push((format!("at `minimum` ({lo})"), lo)),
        None => out.push(("far below zero".into(), -1.0e300)),
    }
    match upper {
        Some((hi, true)) => out.push((
            format!("just inside `exclusiveMaximum` ({hi})"),
            inside(hi, -1.0),
        )),
        Some((hi, false)) => out.push((format!("at `maximum` ({hi})"), hi)),
        None => out.push(("far above zero".into(), 1.0e300)),
    }
    for x in [0.0, 0.5, -0.5, 1.0, 1e-7] {
        out.push((format!("= {x}"), x));
    }
    if let Some(m) = schema::num(n, "multipleOf").filter(|m| *m > 0.0) {
        let lo = lower.map_or(-1000.0 * m, |(x, _)| x);
        let hi = upper.map_or(1000.0 * m, |(x, _)| x);
        out.push((format!("the lowest multiple of {m}"), (lo / m).ceil() * m));
        out.push((format!("the highest multiple of {m}"), (hi / m).floor() * m));
    }
    out.into_iter()
        .filter_map(|(w, x)| schema::number_value(x).map(|v| (w, v)))
        .collect()
}

fn strings(s: &Schemas, n: &Value, room: u64) -> Vec<(String, Value)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(handles) = s.handles_for(n) {
        return handles
            .iter()
            .map(|h| (format!("= the file `{h}`"), Value::String(h.clone())))
            .collect();
    }
    if let Some(p) = pattern(n) {
        for sample in samples(p, 4) {
            out.push((format!("matching `{p}`"), sample));
        }
    }
    let min = schema::count(n, "minLength").unwrap_or(0);
    let max = schema::count(n, "maxLength");
    let fit = |text: &str| -> String {
        let mut t: String = text.chars().collect();
        let have = t.chars().count() as u64;
        if have < min {
            t.push_str(&fill(min - have));
        }
        match max {
            Some(max) if t.chars().count() as u64 > max => t.chars().take(max as usize).collect(),
            _ => t,
        }
    };
    if min == 0 {
        out.push(("empty".into(), String::new()));
    } else {
        out.push((format!("at `minLength` ({min})"), fill(min)));
    }
    for (what, text) in HARD_STRINGS {
        out.push(((*what).to_string(), fit(text)));
    }
    // Sizes up to the limits: `maxLength` characters, as many as `max_input_bytes` leaves room
    // for, in one-, two- and four-byte characters.
    let room = room.saturating_sub(2);
    let longest = max.unwrap_or(NO_LIMIT);
    for (bytes, c, what) in [
        (1, None, ""),
        (2, Some('é'), " of two-byte characters"),
        (4, Some('🦀'), " of astral-plane characters"),
    ] {
        let chars = longest.min(room / bytes);
        if chars <= min || chars == 0 {
            continue;
        }
        let text = match c {
            None => fill(chars),
            Some(c) => std::iter::repeat_n(c, chars as usize).collect(),
        };
        let why = if Some(chars) == max {
            format!("at `maxLength` ({chars} characters{what})")
        } else {
            format!("as long as `max_input_bytes` allows ({chars} characters{what})")
        };
        out.push((why, text));
    }
    out.into_iter()
        .map(|(w, t)| (w, Value::String(t)))
        .collect()
}

fn arrays(s: &Schemas, n: &Value, depth: usize, at: &str, room: u64) -> Found {
    let mut out = Vec::new();
    let Some(Value::Array(base)) = minimal_typed(s, n, "array", depth) else {
        return out;
    };
    let name = |what: String| format!("`{}` {what}", if at.is_empty() { "/" } else { at });
    let min = schema::count(n, "minItems").unwrap_or(0);
    out.push((
        name(format!("with the fewest items ({min})")),
        Value::Array(base.clone()),
    ));
    let item_schema = n.get("items").filter(|i| i.is_object());
    if let Some(items) = item_schema {
        if let Some(item) = minimal(s, items, depth + 1) {
            let per = json_size(&item) + 1;
            let max = schema::count(n, "maxItems").unwrap_or(NO_LIMIT).min(10_000);
            let count = max.min(room / per.max(1));
            if count > base.len() as u64 {
                let mut full = base.clone();
                full.resize(count as usize, item.clone());
                let what = if Some(count) == schema::count(n, "maxItems") {
                    format!("at `maxItems` ({count})")
                } else {
                    format!("with as many items as the limits allow ({count})")
                };
                out.push((name(what), Value::Array(full)));
            }
        }
        let i = prefix_len(n);
        for (label, v) in node(s, items, depth + 1, &format!("{at}/{i}"), room) {
            let mut one = base.clone();
            match one.get_mut(i) {
                Some(slot) => *slot = v,
                None => one.push(v),
            }
            out.push((label, Value::Array(one)));
        }
    }
    let prefix = n
        .get("prefixItems")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, p) in prefix.iter().enumerate() {
        for (label, v) in node(s, p, depth + 1, &format!("{at}/{i}"), room) {
            let mut one = base.clone();
            if let Some(slot) = one.get_mut(i) {
                *slot = v;
                out.push((label, Value::Array(one)));
            }
        }
    }
    out.truncate(PER_NODE * 2);
    out
}

fn objects(s: &Schemas, n: &Value, depth: usize, at: &str, room: u64) -> Found {
    let mut out = Vec::new();
    let Some(Value::Object(base)) = minimal_typed(s, n, "object", depth) else {
        return out;
    };
    let required = schema::required(n);
    let declared = schema::properties(n);
    let optional: Vec<(&String, Value)> = declared
        .iter()
        .filter(|(name, _)| !required.contains(&name.as_str()))
        .filter_map(|(name, sub)| minimal(s, sub, depth + 1).map(|v| (*name, v)))
        .collect();
    let here = if at.is_empty() { "the input" } else { at };
    if !optional.is_empty() {
        let mut all = base.clone();
        for (name, v) in &optional {
            all.insert((*name).clone(), v.clone());
        }
        out.push((
            format!("{here} with every optional property"),
            Value::Object(all.clone()),
        ));
        for (name, _) in &optional {
            let mut but = all.clone();
            but.remove(name.as_str());
            out.push((
                format!("{here} with every optional property but `{name}`"),
                Value::Object(but),
            ));
        }
    }
    let used = json_size(&Value::Object(base.clone()));
    for (name, sub) in &declared {
        let own = base.get(name.as_str()).map_or(0, json_size);
        let room_here = room.saturating_sub(used - own + name.len() as u64 + 4);
        let mut found = node(s, sub, depth + 1, &format!("{at}/{name}"), room_here);
        found.truncate(PER_NODE);
        for (label, v) in found {
            let mut one = base.clone();
            one.insert((*name).clone(), v);
            out.push((label, Value::Object(one)));
        }
    }
    out
}

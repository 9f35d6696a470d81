//! The recordings' format: what a recording holds (its scope, each exchange's request and
//! answer, a body as JSON, text, server-sent events or base64) and how it is written, keys in a
//! fixed order, so re-recording an agent whose upstream answers the same is an empty diff. A
//! stream is written one event a line, after what its text fields say put together
//! (`assembled`): a reviewer reads the answer whole, and a change of wording is a few lines.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::stream;

/// The folder beside the manifest that holds the recordings.
pub const FOLDER: &str = "recordings";

/// What a recording is for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The calls of one example, by its name.
    Example(String),
    /// Explore's cases.
    Explore,
    /// Requests a server made outside any call (at its start).
    Startup,
}

impl Scope {
    /// How messages name it.
    pub fn describe(&self) -> String {
        match self {
            Scope::Example(name) => format!("example `{name}`"),
            Scope::Explore => "explore".into(),
            Scope::Startup => "the server's start".into(),
        }
    }
}

/// One file: what it is for, and its exchanges in the order they were made.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// What the exchanges were made for.
    pub scope: Scope,
    /// Explore's seed when its cases were recorded: a replay draws the same cases with it.
    pub seed: Option<u64>,
    /// Request and answer, each.
    pub exchanges: Vec<Exchange>,
}

/// One request to an upstream and its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The name of the upstream in `holon-test.toml`.
    pub upstream: String,
    /// What the agent sent (secrets scrubbed, credentials dropped).
    pub request: Request,
    /// What the upstream answered.
    pub response: Response,
}

/// A request, as matched: method, path, query and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// `GET`, `POST`...
    pub method: String,
    /// The path below the upstream's base URL (`/chat/completions`).
    pub path: String,
    /// The query's pairs, as sent (not decoded), in order.
    pub query: Vec<(String, String)>,
    /// The `content-type` header, when there was one.
    pub content_type: Option<String>,
    /// The request's body.
    pub body: Body,
}

/// An answer: status, content type and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The `content-type` header, when there was one.
    pub content_type: Option<String>,
    /// The answer's body.
    pub body: Body,
}

/// A body, in the form that reads best in review.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// No bytes.
    Empty,
    /// A JSON document (the content type said JSON).
    Json(Value),
    /// Text that is not JSON.
    Text(String),
    /// Bytes that are not text.
    Binary(Vec<u8>),
    /// A `text/event-stream`, event by event.
    Sse(Vec<Event>),
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its `event:` field.
    pub event: Option<String>,
    /// Its `id:` field.
    pub id: Option<String>,
    /// Its `data:` lines, joined by line breaks: JSON when they hold a JSON value.
    pub data: Value,
}

impl Body {
    /// The body of a message with this content type and these bytes.
    pub fn read(content_type: Option<&str>, bytes: &[u8]) -> Body {
        if bytes.is_empty() {
            return Body::Empty;
        }
        let media = content_type
            .and_then(|c| c.split(';').next())
            .map(|c| c.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let text = std::str::from_utf8(bytes).ok();
        if media == "text/event-stream"
            && let Some(text) = text
        {
            return Body::Sse(parse_sse(text));
        }
        let json_media = media == "application/json" || media.ends_with("+json");
        if json_media && let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            return Body::Json(value);
        }
        match text {
            Some(text) => Body::Text(text.to_string()),
            None => Body::Binary(bytes.to_vec()),
        }
    }

    /// The bytes to send for it.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Body::Empty => Vec::new(),
            Body::Json(value) => serde_json::to_vec(value).unwrap_or_default(),
            Body::Text(text) => text.clone().into_bytes(),
            Body::Binary(bytes) => bytes.clone(),
            Body::Sse(events) => write_sse(events).into_bytes(),
        }
    }

    /// The body's first lines, for a message.
    pub fn excerpt(&self, lines: usize) -> Vec<String> {
        let text = match self {
            Body::Empty => return Vec::new(),
            Body::Json(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
            Body::Text(t) => t.clone(),
            Body::Binary(b) => format!("({} bytes of binary data)", b.len()),
            Body::Sse(events) => write_sse(events),
        };
        let mut out: Vec<String> = text
            .lines()
            .take(lines)
            .map(|l| {
                if l.chars().count() > 100 {
                    format!("{}...", l.chars().take(100).collect::<String>())
                } else {
                    l.to_string()
                }
            })
            .collect();
        if text.lines().count() > lines {
            out.push("...".into());
        }
        out
    }
}

/// The events of an SSE body (`event:`, `id:` and `data:` fields; comments and `retry:` are
/// not kept).
fn parse_sse(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    let normalized = text.replace("\r\n", "\n");
    for block in normalized.split("\n\n") {
        let (mut event, mut id, mut data) = (None, None, Vec::new());
        for line in block.lines() {
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => event = Some(value.to_string()),
                "id" => id = Some(value.to_string()),
                "data" => data.push(value.to_string()),
                _ => {}
            }
        }
        if event.is_none() && id.is_none() && data.is_empty() {
            continue;
        }
        let joined = data.join("\n");
        let data = match serde_json::from_str::<Value>(&joined) {
            Ok(v @ (Value::Object(_) | Value::Array(_))) => v,
            _ => Value::String(joined),
        };
        events.push(Event { event, id, data });
    }
    events
}

/// An SSE body from its events, as a server writes it.
fn write_sse(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        if let Some(event) = &e.event {
            out.push_str(&format!("event: {event}\n"));
        }
        if let Some(id) = &e.id {
            out.push_str(&format!("id: {id}\n"));
        }
        let data = match &e.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        for line in data.split('\n') {
            out.push_str(&format!("data: {line}\n"));
        }
        out.push('\n');
    }
    out
}

impl Recording {
    /// The file's text: JSON laid out as `serde_json` pretty-prints it (keys in a fixed order,
    /// two spaces a level, a final line break), but each event of a stream on one line.
    pub fn to_text(&self) -> String {
        let mut top = Map::new();
        match &self.scope {
            Scope::Example(name) => {
                top.insert("example".into(), Value::String(name.clone()));
            }
            Scope::Explore => {
                top.insert("explore".into(), Value::Bool(true));
                if let Some(seed) = self.seed {
                    top.insert("seed".into(), json!(seed));
                }
            }
            Scope::Startup => {
                top.insert("startup".into(), Value::Bool(true));
            }
        }
        let exchanges: Vec<Value> = self.exchanges.iter().map(exchange_json).collect();
        top.insert("exchanges".into(), Value::Array(exchanges));
        let mut text = String::new();
        write(&mut text, &Value::Object(top), 0, Layout::Pretty);
        text.push('\n');
        text
    }
}

/// How a value is laid out.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// One member or item a line, indented.
    Pretty,
    /// Pretty, but each item of this array on one line: the events of a stream.
    ItemsInline,
    /// On one line: `{"a": 1, "b": [2, 3]}`.
    Inline,
}

/// The depth at which an exchange's `request` and `response` members are written: the top
/// object, `exchanges`, an exchange, then its request or response.
const BODY_DEPTH: usize = 3;

/// `value` at `depth` (0 for the top), laid out as `layout` says.
fn write(out: &mut String, value: &Value, depth: usize, layout: Layout) {
    let indent = |out: &mut String, depth: usize| {
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            if layout == Layout::Inline {
                out.push('{');
                for (i, (key, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&scalar(&Value::String(key.clone())));
                    out.push_str(": ");
                    write(out, v, depth + 1, Layout::Inline);
                }
                out.push('}');
                return;
            }
            out.push_str("{\n");
            for (i, (key, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, depth + 1);
                out.push_str(&scalar(&Value::String(key.clone())));
                out.push_str(": ");
                let inner = if depth == BODY_DEPTH && key == "sse" {
                    Layout::ItemsInline
                } else {
                    Layout::Pretty
                };
                write(out, v, depth + 1, inner);
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            if layout == Layout::Inline {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(out, v, depth + 1, Layout::Inline);
                }
                out.push(']');
                return;
            }
            let inner = if layout == Layout::ItemsInline {
                Layout::Inline
            } else {
                Layout::Pretty
            };
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, depth + 1);
                write(out, v, depth + 1, inner);
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
        other => out.push_str(&scalar(other)),
    }
}

/// A scalar as JSON (a string escaped as `serde_json` escapes it).
fn scalar(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn exchange_json(x: &Exchange) -> Value {
    let mut request = Map::new();
    request.insert("method".into(), json!(x.request.method));
    request.insert("path".into(), json!(x.request.path));
    if !x.request.query.is_empty() {
        let pairs: Vec<Value> = (x.request.query.iter())
            .map(|(k, v)| json!([k, v]))
            .collect();
        request.insert("query".into(), Value::Array(pairs));
    }
    body_json(&mut request, &x.request.content_type, &x.request.body);
    let mut response = Map::new();
    response.insert("status".into(), json!(x.response.status));
    body_json(&mut response, &x.response.content_type, &x.response.body);
    json!({"upstream": x.upstream, "request": request, "response": response})
}

fn body_json(into: &mut Map<String, Value>, content_type: &Option<String>, body: &Body) {
    if let Some(c) = content_type {
        into.insert("content_type".into(), json!(c));
    }
    match body {
        Body::Empty => {}
        Body::Json(v) => {
            into.insert("json".into(), v.clone());
        }
        Body::Text(t) => {
            into.insert("text".into(), json!(t));
        }
        Body::Binary(b) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(b);
            into.insert("base64".into(), json!(encoded));
        }
        Body::Sse(events) => {
            let assembled = stream::assembled(events.iter().map(|e| &e.data));
            if !assembled.is_empty() {
                into.insert("assembled".into(), Value::Object(assembled));
            }
            let list: Vec<Value> = events
                .iter()
                .map(|e| {
                    let mut m = Map::new();
                    if let Some(event) = &e.event {
                        m.insert("event".into(), json!(event));
                    }
                    if let Some(id) = &e.id {
                        m.insert("id".into(), json!(id));
                    }
                    m.insert("data".into(), e.data.clone());
                    Value::Object(m)
                })
                .collect();
            into.insert("sse".into(), Value::Array(list));
        }
    }
}

/// A file name for an example: its name in lowercase letters, digits and dashes.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(64).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "example".into()
    } else {
        out
    }
}

//! The recordings of an agent's upstreams, as files beside the manifest (`recordings/`), one
//! per example and one for explore: a form made for review in a pull request. JSON bodies are
//! structured data, not escaped strings; an SSE answer is written event by event; a binary body
//! is base64; keys come in a fixed order, so re-recording an agent whose upstream answers the
//! same is an empty diff. Reading a file that does not parse, or was edited into an impossible
//! state, is refused with its problems located (file, line, column).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use holon_core::check::{self, Problem, Report};
use holon_core::manifest::yaml::Loc;

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
    /// The file's text: pretty JSON, keys in a fixed order, a final line break.
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
        let mut text = serde_json::to_string_pretty(&Value::Object(top)).unwrap_or_default();
        text.push('\n');
        text
    }
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

/// A recording file read back, with where it came from.
#[derive(Debug, Clone)]
pub struct Read {
    /// The file.
    pub path: PathBuf,
    /// What it holds.
    pub recording: Recording,
}

/// Whether `dir` holds any recording file.
pub fn any_recorded(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
    })
}

/// Every recording in `dir` (none when the folder does not exist), or the reports of the files
/// that are refused. `upstreams` are the names `holon-test.toml` declares.
pub fn read_all(dir: &Path, upstreams: &[String]) -> Result<Vec<Read>, Vec<Report>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut read = Vec::new();
    let mut refused = Vec::new();
    for path in paths {
        let text = match check::read_manifest(&path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                refused.push(check::unreadable(&path, e));
                continue;
            }
        };
        match parse(&text, upstreams) {
            Ok(recording) => read.push(Read { path, recording }),
            Err(problems) => refused.push(check::file_report(&path, &text, problems)),
        }
    }
    let mut seen: Vec<(&Scope, &Path)> = Vec::new();
    for r in &read {
        if let Some((_, first)) = seen.iter().find(|(s, _)| **s == r.recording.scope) {
            let text = std::fs::read_to_string(&r.path).unwrap_or_default();
            refused.push(check::file_report(
                &r.path,
                &text,
                vec![
                    Problem::new(
                        "recording-duplicate",
                        "",
                        Loc { line: 1, column: 1 },
                        format!(
                            "`{}` records {} too, as `{}` does",
                            r.path.display(),
                            r.recording.scope.describe(),
                            first.display()
                        ),
                    )
                    .hint("keep one of the two files"),
                ],
            ));
        } else {
            seen.push((&r.recording.scope, &r.path));
        }
    }
    if refused.is_empty() {
        Ok(read)
    } else {
        Err(refused)
    }
}

/// One recording's text, checked field by field.
pub fn parse(text: &str, upstreams: &[String]) -> Result<Recording, Vec<Problem>> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        let loc = Loc {
            line: e.line() as u64,
            column: e.column() as u64,
        };
        vec![Problem::new(
            "recording-syntax",
            "",
            loc,
            format!(
                "the recording is not JSON: {}",
                holon_core::message::sentence(&e.to_string())
            ),
        )]
    })?;
    let mut p = Parse { found: Vec::new() };
    let recording = p.recording(&root, upstreams);
    if p.found.is_empty()
        && let Some(r) = recording
    {
        return Ok(r);
    }
    Err(p
        .found
        .into_iter()
        .map(|(check, at, message, hint)| {
            let problem = Problem::new(check, &at, locate(text, &at), message);
            match hint {
                Some(h) => problem.hint(h),
                None => problem,
            }
        })
        .collect())
}

/// The problems found, by pointer; located in the text afterwards.
struct Parse {
    found: Vec<(&'static str, String, String, Option<&'static str>)>,
}

impl Parse {
    fn problem(&mut self, at: &str, message: impl Into<String>) {
        self.found
            .push(("recording-invalid", at.to_string(), message.into(), None));
    }

    /// The entries of an object, unknown keys refused.
    fn map<'n>(
        &mut self,
        node: &'n Value,
        at: &str,
        known: &[&str],
    ) -> Option<&'n Map<String, Value>> {
        let Value::Object(entries) = node else {
            self.problem(at, format!("`{}` must be an object", shown(at)));
            return None;
        };
        for key in entries.keys() {
            if !known.contains(&key.as_str()) {
                let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                self.problem(
                    &holon_core::pointer::child(at, key),
                    format!("unknown key `{key}` (known: {})", known.join(", ")),
                );
            }
        }
        Some(entries)
    }

    fn string(&mut self, node: Option<&Value>, at: &str) -> Option<String> {
        match node {
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.problem(at, format!("`{}` must be a string", shown(at)));
                None
            }
            None => {
                self.problem(parent(at), format!("`{}` is missing", shown(at)));
                None
            }
        }
    }

    fn optional_string(&mut self, node: Option<&Value>, at: &str) -> Option<String> {
        match node {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.problem(at, format!("`{}` must be a string", shown(at)));
                None
            }
        }
    }

    fn recording(&mut self, root: &Value, upstreams: &[String]) -> Option<Recording> {
        let top = self.map(
            root,
            "",
            &["example", "explore", "startup", "seed", "exchanges"],
        )?;
        let scope = match (top.get("example"), top.get("explore"), top.get("startup")) {
            (Some(_), None, None) => Scope::Example(self.string(top.get("example"), "/example")?),
            (None, Some(Value::Bool(true)), None) => Scope::Explore,
            (None, None, Some(Value::Bool(true))) => Scope::Startup,
            _ => {
                self.problem(
                    "",
                    "a recording says what it is for: `\"example\": NAME`, `\"explore\": true` or `\"startup\": true`, exactly one",
                );
                return None;
            }
        };
        let seed = match (top.get("seed"), &scope) {
            (None, _) => None,
            (Some(Value::Number(n)), Scope::Explore) if n.as_u64().is_some() => n.as_u64(),
            (Some(_), Scope::Explore) => {
                self.problem("/seed", "`seed` must be a whole number from 0 to 2^64-1");
                None
            }
            (Some(_), _) => {
                self.problem("/seed", "only explore's recording has a `seed`");
                None
            }
        };
        let Some(Value::Array(items)) = top.get("exchanges") else {
            self.problem("/exchanges", "`exchanges` must be an array");
            return None;
        };
        let mut exchanges = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(x) = self.exchange(item, &format!("/exchanges/{i}"), upstreams) {
                exchanges.push(x);
            }
        }
        Some(Recording {
            scope,
            seed,
            exchanges,
        })
    }

    fn exchange(&mut self, node: &Value, at: &str, upstreams: &[String]) -> Option<Exchange> {
        let map = self.map(node, at, &["upstream", "request", "response"])?;
        let upstream = self.string(map.get("upstream"), &format!("{at}/upstream"))?;
        if !upstreams.contains(&upstream) {
            self.found.push((
                "recording-upstream-unknown",
                format!("{at}/upstream"),
                format!("upstream `{upstream}` is not declared in `holon-test.toml`"),
                Some("record again with `cargo holon-test --upstream record`, or declare it"),
            ));
        }
        let request = self.request(map.get("request"), &format!("{at}/request"))?;
        let response = self.response(map.get("response"), &format!("{at}/response"))?;
        Some(Exchange {
            upstream,
            request,
            response,
        })
    }

    fn request(&mut self, node: Option<&Value>, at: &str) -> Option<Request> {
        let Some(node) = node else {
            self.problem(parent(at), format!("`{}` is missing", shown(at)));
            return None;
        };
        let known = [
            "method",
            "path",
            "query",
            "content_type",
            "json",
            "text",
            "base64",
            "sse",
        ];
        let map = self.map(node, at, &known)?;
        let method = self.string(map.get("method"), &format!("{at}/method"))?;
        let path = self.string(map.get("path"), &format!("{at}/path"))?;
        if !path.starts_with('/') {
            self.problem(
                &format!("{at}/path"),
                format!("the path `{path}` does not start with `/`"),
            );
        }
        let mut query = Vec::new();
        match map.get("query") {
            None => {}
            Some(Value::Array(pairs)) => {
                for (i, pair) in pairs.iter().enumerate() {
                    match pair.as_array().map(Vec::as_slice) {
                        Some([Value::String(k), Value::String(v)]) => {
                            query.push((k.clone(), v.clone()))
                        }
                        _ => self.problem(
                            &format!("{at}/query/{i}"),
                            "a query pair is `[name, value]`, two strings",
                        ),
                    }
                }
            }
            Some(_) => self.problem(
                &format!("{at}/query"),
                "`query` must be an array of `[name, value]` pairs",
            ),
        }
        let content_type =
            self.optional_string(map.get("content_type"), &format!("{at}/content_type"));
        let body = self.body(map, at)?;
        Some(Request {
            method,
            path,
            query,
            content_type,
            body,
        })
    }

    fn response(&mut self, node: Option<&Value>, at: &str) -> Option<Response> {
        let Some(node) = node else {
            self.problem(parent(at), format!("`{}` is missing", shown(at)));
            return None;
        };
        let known = ["status", "content_type", "json", "text", "base64", "sse"];
        let map = self.map(node, at, &known)?;
        let status = match map.get("status") {
            Some(Value::Number(n)) => match n.as_u64().filter(|s| (100..=599).contains(s)) {
                Some(s) => s as u16,
                None => {
                    self.problem(
                        &format!("{at}/status"),
                        format!("`{n}` is not an HTTP status (100 to 599)"),
                    );
                    return None;
                }
            },
            Some(_) => {
                self.problem(&format!("{at}/status"), "`status` must be a number");
                return None;
            }
            None => {
                self.problem(at, "`status` is missing");
                return None;
            }
        };
        let content_type =
            self.optional_string(map.get("content_type"), &format!("{at}/content_type"));
        let body = self.body(map, at)?;
        Some(Response {
            status,
            content_type,
            body,
        })
    }

    /// At most one of `json`, `text`, `base64` and `sse`.
    fn body(&mut self, map: &Map<String, Value>, at: &str) -> Option<Body> {
        let present: BTreeSet<&str> = ["json", "text", "base64", "sse"]
            .into_iter()
            .filter(|k| map.contains_key(*k))
            .collect();
        if present.len() > 1 {
            let list: Vec<String> = present.iter().map(|k| format!("`{k}`")).collect();
            self.problem(
                at,
                format!(
                    "a body is one of `json`, `text`, `base64` or `sse`, not {}",
                    list.join(" and ")
                ),
            );
            return None;
        }
        if let Some(v) = map.get("json") {
            return Some(Body::Json(v.clone()));
        }
        if let Some(v) = map.get("text") {
            return self.string(Some(v), &format!("{at}/text")).map(Body::Text);
        }
        if let Some(v) = map.get("base64") {
            let encoded = self.string(Some(v), &format!("{at}/base64"))?;
            return match base64::engine::general_purpose::STANDARD.decode(encoded.as_bytes()) {
                Ok(bytes) => Some(Body::Binary(bytes)),
                Err(e) => {
                    self.problem(
                        &format!("{at}/base64"),
                        format!("`base64` does not decode: {e}"),
                    );
                    None
                }
            };
        }
        if let Some(v) = map.get("sse") {
            let Value::Array(items) = v else {
                self.problem(&format!("{at}/sse"), "`sse` must be an array of events");
                return None;
            };
            let mut events = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let here = format!("{at}/sse/{i}");
                let Some(event) = self.map(item, &here, &["event", "id", "data"]) else {
                    continue;
                };
                let name = self.optional_string(event.get("event"), &format!("{here}/event"));
                let id = self.optional_string(event.get("id"), &format!("{here}/id"));
                let Some(data) = event.get("data") else {
                    self.problem(&here, "an event has `data`");
                    continue;
                };
                events.push(Event {
                    event: name,
                    id,
                    data: data.clone(),
                });
            }
            return Some(Body::Sse(events));
        }
        Some(Body::Empty)
    }
}

/// The pointer of the node that holds `at`.
fn parent(at: &str) -> &str {
    at.rsplit_once('/').map_or("", |(p, _)| p)
}

/// Where the value at `pointer` starts in a JSON text (the whole text for the empty pointer).
/// A scan of the text, tracking the path to each value: JSON's grammar is small enough that no
/// parser of positions is needed.
fn locate(text: &str, pointer: &str) -> Loc {
    let want: Vec<String> = holon_core::pointer::tokens(pointer)
        .map(|t| t.into_owned())
        .collect();
    let bytes = text.as_bytes();
    // The containers open at this point: an object (with the key last read) or an array (with
    // the index of the item being read).
    enum Open {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut i = 0;
    let mut expecting_key = false;
    let at = |i: usize| {
        let before = text.get(..i).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        Loc {
            line: before.matches('\n').count() as u64 + 1,
            column: before.get(line_start..).unwrap_or("").chars().count() as u64 + 1,
        }
    };
    let path_is_wanted = |stack: &[Open]| {
        stack.len() == want.len()
            && stack.iter().zip(&want).all(|(o, w)| match o {
                Open::Object(Some(k)) => k == w,
                Open::Object(None) => false,
                Open::Array(n) => n.to_string() == *w,
            })
    };
    if want.is_empty() {
        return Loc { line: 1, column: 1 };
    }
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                let start = i;
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    match c {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                let raw = text.get(start..=i).unwrap_or("\"\"");
                if expecting_key {
                    let key: String = serde_json::from_str(raw).unwrap_or_default();
                    if let Some(Open::Object(k)) = stack.last_mut() {
                        *k = Some(key);
                    }
                    expecting_key = false;
                } else if path_is_wanted(&stack) {
                    return at(start);
                }
                i += 1;
            }
            b'{' | b'[' => {
                if path_is_wanted(&stack) {
                    return at(i);
                }
                stack.push(if b == b'{' {
                    Open::Object(None)
                } else {
                    Open::Array(0)
                });
                expecting_key = b == b'{';
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Open::Array(n)) => *n += 1,
                    Some(Open::Object(_)) => expecting_key = true,
                    None => {}
                }
                i += 1;
            }
            b' ' | b'\n' | b'\r' | b'\t' | b':' => i += 1,
            _ => {
                if path_is_wanted(&stack) {
                    return at(i);
                }
                while bytes.get(i).is_some_and(|c| !b",}] \n\r\t".contains(c)) {
                    i += 1;
                }
            }
        }
    }
    Loc { line: 1, column: 1 }
}

/// A pointer as messages name its last step.
fn shown(at: &str) -> &str {
    at.rsplit('/').next().unwrap_or(at)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Recording {
        Recording {
            scope: Scope::Example("a short article".into()),
            seed: None,
            exchanges: vec![Exchange {
                upstream: "model".into(),
                request: Request {
                    method: "POST".into(),
                    path: "/chat/completions".into(),
                    query: vec![("api-version".into(), "1".into())],
                    content_type: Some("application/json".into()),
                    body: Body::Json(
                        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
                    ),
                },
                response: Response {
                    status: 200,
                    content_type: Some("text/event-stream".into()),
                    body: Body::read(
                        Some("text/event-stream"),
                        b"data: {\"a\":1}\n\nevent: done\ndata: [DONE]\n\n",
                    ),
                },
            }],
        }
    }

    #[test]
    fn a_recording_reads_back_as_written() {
        let recording = sample();
        let text = recording.to_text();
        assert!(text.contains("\"json\": {"), "{text}");
        assert!(text.contains("\"sse\": ["), "{text}");
        let back = parse(&text, &["model".into()]).expect("it reads back");
        assert_eq!(back, recording);
        assert_eq!(back.to_text(), text, "written twice, the same bytes");
    }

    #[test]
    fn sse_and_binary_bodies_replay_their_bytes() {
        let sse = b"data: {\"a\":1}\n\nevent: done\ndata: [DONE]\n\n";
        assert_eq!(Body::read(Some("text/event-stream"), sse).bytes(), sse);
        let binary = [0u8, 159, 146, 150];
        let body = Body::read(Some("application/octet-stream"), &binary);
        assert_eq!(body, Body::Binary(binary.to_vec()));
        assert_eq!(body.bytes(), binary);
    }

    #[test]
    fn an_impossible_recording_is_refused_where_it_is_wrong() {
        let text = sample()
            .to_text()
            .replace("\"status\": 200", "\"status\": 700");
        let problems = parse(&text, &["model".into()]).expect_err("refused");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/exchanges/0/response/status");
        assert!(problems[0].loc.line > 1, "{problems:?}");
        let unknown = parse(&sample().to_text(), &["other".into()]).expect_err("refused");
        assert_eq!(unknown[0].check, "recording-upstream-unknown");
        let broken = parse("{\"example\": ", &["model".into()]).expect_err("refused");
        assert_eq!(broken[0].check, "recording-syntax");
        let both = sample()
            .to_text()
            .replace("\"status\": 200,", "\"status\": 200, \"text\": \"x\",");
        let problems = parse(&both, &["model".into()]).expect_err("refused");
        assert!(
            problems[0].message.contains("not `sse` and `text`"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_problem_is_located_at_its_value() {
        let text = "{\n  \"a\": [1, {\"b\": \"x\"}],\n  \"c\": true\n}";
        assert_eq!(
            locate(text, "/a/1/b"),
            Loc {
                line: 2,
                column: 18
            }
        );
        assert_eq!(locate(text, "/c"), Loc { line: 3, column: 8 });
        assert_eq!(locate(text, "/a/0"), Loc { line: 2, column: 9 });
    }

    #[test]
    fn control_characters_read_back() {
        let mut recording = sample();
        recording.exchanges[0].request.body =
            Body::Json(json!({"t": "\u{7f}\u{85}\u{2028}\u{1b}[m"}));
        let text = recording.to_text();
        assert_eq!(
            parse(&text, &["model".into()]).expect("it reads back"),
            recording
        );
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("a short article"), "a-short-article");
        assert_eq!(slug("Ünïcode & «quotes»!"), "n-code-quotes");
        assert_eq!(slug("***"), "example");
        assert_eq!(slug(&"x".repeat(100)).len(), 64);
    }
}

//! Reading recordings back: every file of the folder, each checked field by field, a file that
//! does not parse or was edited into an impossible state refused with its problems located
//! (file, line, column), and two files that record the same scope refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value};

use super::format::{Body, Event, Exchange, Recording, Request, Response, Scope};
use super::stream;
use holon_core::check::{self, Problem, Report};
use holon_core::ids::{self, Id};
use holon_core::manifest::yaml::Loc;

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

/// The recordings of a folder: the files that read, and the reports of those refused.
#[derive(Debug, Default)]
pub struct Folder {
    /// The files that read, in the order of their names.
    pub read: Vec<Read>,
    /// The files refused, each with its located problems (a second file of one scope too).
    pub refused: Vec<Report>,
}

/// Every recording in `dir` (none when the folder does not exist), or the reports of the files
/// that are refused. `upstreams` are the names `holon-test.toml` declares.
pub fn read_all(dir: &Path, upstreams: &[String]) -> Result<Vec<Read>, Vec<Report>> {
    let folder = read_folder(dir, upstreams);
    if folder.refused.is_empty() {
        Ok(folder.read)
    } else {
        Err(folder.refused)
    }
}

/// Every recording in `dir` (none when the folder does not exist): those that read, and the
/// reports of those refused, for a run that records over them (`--force`).
pub fn read_folder(dir: &Path, upstreams: &[String]) -> Folder {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Folder::default();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut read: Vec<Read> = Vec::new();
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
            Ok(recording) => {
                if let Some(first) = read.iter().find(|r| r.recording.scope == recording.scope) {
                    refused.push(check::file_report(
                        &path,
                        &text,
                        vec![
                            Problem::new(
                                ids::RECORDING_DUPLICATE,
                                "",
                                Loc { line: 1, column: 1 },
                                format!(
                                    "`{}` records {} too, as `{}` does",
                                    path.display(),
                                    recording.scope.describe(),
                                    first.path.display()
                                ),
                            )
                            .hint("keep one of the two files"),
                        ],
                    ));
                } else {
                    read.push(Read { path, recording });
                }
            }
            Err(problems) => refused.push(check::file_report(&path, &text, problems)),
        }
    }
    Folder { read, refused }
}

/// One recording's text, checked field by field.
pub fn parse(text: &str, upstreams: &[String]) -> Result<Recording, Vec<Problem>> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        let loc = Loc {
            line: e.line() as u64,
            column: e.column() as u64,
        };
        vec![Problem::new(
            ids::RECORDING_SYNTAX,
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
    found: Vec<(Id, String, String, Option<&'static str>)>,
}

impl Parse {
    fn problem(&mut self, at: &str, message: impl Into<String>) {
        self.found
            .push((ids::RECORDING_INVALID, at.to_string(), message.into(), None));
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
                ids::RECORDING_UPSTREAM_UNKNOWN,
                format!("{at}/upstream"),
                format!("upstream `{upstream}` is not declared in `holon-test.toml`"),
                Some("record again (`--upstream record`), or declare it"),
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
            "assembled",
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
        let known = [
            "status",
            "content_type",
            "json",
            "text",
            "base64",
            "assembled",
            "sse",
        ];
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
            if let Some(written) = map.get("assembled") {
                let put_together = stream::assembled(events.iter().map(|e| &e.data));
                if *written != Value::Object(put_together) {
                    self.problem(
                        &format!("{at}/assembled"),
                        "`assembled` is not what the events' text fields say put together: the events are what is replayed, so edit them (a record run writes `assembled` again)",
                    );
                    return None;
                }
            }
            return Some(Body::Sse(events));
        }
        if map.contains_key("assembled") {
            self.problem(
                &format!("{at}/assembled"),
                "`assembled` goes with `sse`: it is what a stream's events say put together",
            );
            return None;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::slug;
    use serde_json::json;

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
    fn a_stream_is_written_one_event_a_line_after_its_text_and_the_rest_as_serde_does() {
        let mut recording = sample();
        let stream = "data: {\"id\":\"c-1\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"id\":\"c-1\",\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: [DONE]\n\n";
        recording.exchanges[0].response.body =
            Body::read(Some("text/event-stream"), stream.as_bytes());
        let text = recording.to_text();
        for line in [
            "        \"assembled\": {\n          \"/choices/0/delta/content\": \"Hello\"\n        },\n",
            "          {\"data\": {\"id\": \"c-1\", \"choices\": [{\"delta\": {\"content\": \"Hel\"}}]}},\n",
            "          {\"data\": \"[DONE]\"}\n",
        ] {
            assert!(text.contains(line), "{line} in:\n{text}");
        }
        let back = parse(&text, &["model".into()]).expect("it reads back");
        assert_eq!(back, recording);
        assert_eq!(back.exchanges[0].response.body.bytes(), stream.as_bytes());
        // `assembled` is what the events say: an edit of it alone is refused where it is.
        let edited = text.replace("\"Hello\"", "\"Help\"");
        let problems = parse(&edited, &["model".into()]).expect_err("refused");
        assert_eq!(problems[0].pointer, "/exchanges/0/response/assembled");
        // Without a stream, the text is what `serde_json` pretty-prints: files written before
        // streams had a layout of their own read and write back as they were.
        let mut plain = sample();
        plain.exchanges[0].response.body = Body::Json(json!({"a": [1, {"b": []}], "c": {}}));
        plain.exchanges[0].response.content_type = Some("application/json".into());
        let written = plain.to_text();
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<Value>(&written).unwrap())
                .unwrap();
        assert_eq!(written, format!("{pretty}\n"));
        // An older file, each event pretty-printed and no `assembled`, reads as the same.
        let mut old = serde_json::from_str::<Value>(&text).unwrap();
        old["exchanges"][0]["response"]
            .as_object_mut()
            .unwrap()
            .remove("assembled");
        let old = serde_json::to_string_pretty(&old).unwrap();
        assert_eq!(
            parse(&old, &["model".into()]).expect("an older file reads"),
            recording
        );
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
        assert_eq!(unknown[0].check.name(), "recording-upstream-unknown");
        let broken = parse("{\"example\": ", &["model".into()]).expect_err("refused");
        assert_eq!(broken[0].check.name(), "recording-syntax");
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

//! Secrets out of what is recorded: every declared secret's value replaced by its marker
//! (`<secret:NAME>`) in a request (path, query, content type, body) and an answer (content
//! type, body): in any string, key or number of a JSON body, in a text or binary body, and in
//! a stream across its events, where a service's deltas may cut a value in two. Linear in the
//! bytes scrubbed, for each secret.

use serde_json::Value;

use crate::recording::{self, Body, Event, Request, Response};
use holon_config::secrets::Secrets;

/// `request` with every secret replaced, in its path, query, content type and body.
pub fn request(secrets: &Secrets, request: &mut Request) {
    if secrets.is_empty() {
        return;
    }
    scrub_string(secrets, &mut request.path);
    for (k, v) in &mut request.query {
        scrub_string(secrets, k);
        scrub_string(secrets, v);
    }
    if let Some(c) = &mut request.content_type {
        scrub_string(secrets, c);
    }
    body(secrets, &mut request.body);
}

/// `response` with every secret replaced, in its content type and body.
pub fn response(secrets: &Secrets, response: &mut Response) {
    if secrets.is_empty() {
        return;
    }
    if let Some(c) = &mut response.content_type {
        scrub_string(secrets, c);
    }
    body(secrets, &mut response.body);
}

/// A body with every secret replaced.
pub fn body(secrets: &Secrets, body: &mut Body) {
    if secrets.is_empty() {
        return;
    }
    match body {
        Body::Json(v) => json(secrets, v),
        Body::Text(t) => scrub_string(secrets, t),
        Body::Binary(bytes) => {
            for (value, marker) in secrets.values() {
                if let Some(scrubbed) = replace_bytes(bytes, value.as_bytes(), marker.as_bytes()) {
                    *bytes = scrubbed;
                }
            }
        }
        Body::Sse(events) => stream(secrets, events),
        Body::Empty => {}
    }
}

/// `text` with each secret's value replaced by its marker: the one scrub of a recording, for
/// its strings, its keys and its numbers' digits alike.
fn scrub_string(secrets: &Secrets, text: &mut String) {
    if let std::borrow::Cow::Owned(scrubbed) = secrets.scrub(text) {
        *text = scrubbed;
    }
}

/// Every string, key and number of a JSON value (a number whose digits hold a secret becomes
/// the scrubbed string).
fn json(secrets: &Secrets, value: &mut Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => scrub_string(secrets, s),
            Value::Number(n) => {
                let mut digits = n.to_string();
                if secrets.name_in(&digits).is_some() {
                    scrub_string(secrets, &mut digits);
                    *v = Value::String(digits);
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => {
                if map.keys().any(|k| secrets.name_in(k).is_some()) {
                    let entries = std::mem::take(map);
                    for (mut key, inner) in entries {
                        scrub_string(secrets, &mut key);
                        map.insert(key, inner);
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
}

/// A stream's events: each one whole first, then the strings of each pointer put together
/// across the events (`recording::pieces`), so that a value cut in two by the service is
/// found. The marker goes where the value starts; the rest of the value is cut from the events
/// that held it.
fn stream(secrets: &Secrets, events: &mut [Event]) {
    for e in events.iter_mut() {
        json(secrets, &mut e.data);
        for field in [&mut e.event, &mut e.id].into_iter().flatten() {
            scrub_string(secrets, field);
        }
    }
    // The pointers whose pieces, put together, hold a secret.
    let cut: Vec<(String, Vec<usize>, Vec<String>)> =
        recording::pieces(events.iter().map(|e| &e.data))
            .into_iter()
            .filter(|(_, parts)| parts.len() > 1)
            .filter_map(|(at, parts)| {
                let whole: String = parts.iter().map(|(_, s)| *s).collect();
                secrets.name_in(&whole)?;
                let owners = parts.iter().map(|(i, _)| *i).collect();
                let texts = parts.iter().map(|(_, s)| s.to_string()).collect();
                Some((at, owners, texts))
            })
            .collect();
    for (at, owners, mut texts) in cut {
        for (value, marker) in secrets.values() {
            texts = cut_across(&texts, value, marker);
        }
        for (owner, text) in owners.into_iter().zip(texts) {
            if let Some(Value::String(s)) =
                events.get_mut(owner).and_then(|e| e.data.pointer_mut(&at))
            {
                *s = text;
            }
        }
    }
}

/// `pieces` with every `value` found in them put together replaced by `marker`: the marker in
/// the piece where the value starts, the value's characters cut from every piece that held
/// them. The pieces keep their number (an emptied piece is empty).
fn cut_across(pieces: &[String], value: &str, marker: &str) -> Vec<String> {
    let whole: String = pieces.concat();
    let found: Vec<(usize, usize)> = whole
        .match_indices(value)
        .map(|(at, v)| (at, at + v.len()))
        .collect();
    if found.is_empty() {
        return pieces.to_vec();
    }
    let mut out = Vec::with_capacity(pieces.len());
    let (mut start, mut next) = (0, 0);
    for piece in pieces {
        let end = start + piece.len();
        let mut text = String::new();
        let mut pos = start;
        while pos < end {
            match found.get(next) {
                Some(&(from, to)) if from < end => {
                    if from > pos {
                        text.push_str(whole.get(pos..from).unwrap_or(""));
                        pos = from;
                    }
                    if pos == from {
                        text.push_str(marker);
                    }
                    pos = to.min(end);
                    if to <= end {
                        next += 1;
                    }
                }
                _ => {
                    text.push_str(whole.get(pos..end).unwrap_or(""));
                    pos = end;
                }
            }
        }
        out.push(text);
        start = end;
    }
    out
}

/// `bytes` with every `value` replaced by `marker`, or `None` when it holds none.
fn replace_bytes(bytes: &[u8], value: &[u8], marker: &[u8]) -> Option<Vec<u8>> {
    let first = value.first()?;
    let mut out = Vec::new();
    let (mut i, mut last, mut any) = (0, 0, false);
    while i + value.len() <= bytes.len() {
        if bytes.get(i) == Some(first) && bytes.get(i..i + value.len()) == Some(value) {
            out.extend_from_slice(bytes.get(last..i).unwrap_or_default());
            out.extend_from_slice(marker);
            i += value.len();
            last = i;
            any = true;
        } else {
            i += 1;
        }
    }
    if !any {
        return None;
    }
    out.extend_from_slice(bytes.get(last..).unwrap_or_default());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "sk-test-1234567890";

    fn secrets() -> Secrets {
        Secrets::given([("KEY", KEY)])
    }

    #[test]
    fn secrets_are_scrubbed_from_every_part_of_a_request() {
        let mut r = Request {
            method: "POST".into(),
            path: format!("/v1/{KEY}/chat"),
            query: vec![("key".into(), KEY.into())],
            content_type: Some("application/json".into()),
            body: Body::Json(
                serde_json::from_str(&format!(
                    r#"{{"auth": "Bearer {KEY}", "{KEY}": ["{KEY}"], "n": 12345678901}}"#
                ))
                .unwrap(),
            ),
        };
        request(
            &Secrets::given([("KEY", KEY), ("NUMBER", "2345678")]),
            &mut r,
        );
        let text = format!("{r:?}");
        assert!(!text.contains(KEY) && !text.contains("2345678"), "{text}");
        assert!(
            text.contains("<secret:KEY>") && text.contains("1<secret:NUMBER>901"),
            "{text}"
        );
    }

    #[test]
    fn a_secret_cut_across_a_stream_is_found_in_any_cut() {
        let answer = format!("the key is {KEY}, see?");
        for size in 1..=answer.len() {
            let mut events: Vec<Event> = (answer.as_bytes().chunks(size))
                .map(|c| Event {
                    event: None,
                    id: None,
                    data: json!({"id": "c-1", "choices": [{"delta": {"content": String::from_utf8_lossy(c)}}]}),
                })
                .collect();
            events.push(Event {
                event: None,
                id: None,
                data: json!("[DONE]"),
            });
            let mut body = Body::Sse(events);
            super::body(&secrets(), &mut body);
            let Body::Sse(events) = &body else {
                unreachable!()
            };
            let text: String = (events.iter())
                .filter_map(|e| e.data.pointer("/choices/0/delta/content")?.as_str())
                .collect();
            assert_eq!(text, "the key is <secret:KEY>, see?", "pieces of {size}");
            assert_eq!(
                events.len(),
                answer.len().div_ceil(size) + 1,
                "pieces of {size}"
            );
            let bytes = String::from_utf8(body.bytes()).unwrap();
            assert!(!bytes.contains(KEY), "pieces of {size}: {bytes}");
        }
    }

    #[test]
    fn pieces_keep_their_number_and_their_other_text() {
        let pieces: Vec<String> = ["ab", "cXY", "Zd", "XYZ"].map(String::from).to_vec();
        assert_eq!(
            cut_across(&pieces, "XYZ", "<s>"),
            ["ab", "c<s>", "d", "<s>"]
        );
        assert_eq!(cut_across(&pieces, "none", "<s>"), pieces);
        assert_eq!(
            replace_bytes(b"\x00key-1\xff", b"key-1", b"<s>"),
            Some(b"\x00<s>\xff".to_vec())
        );
    }
}

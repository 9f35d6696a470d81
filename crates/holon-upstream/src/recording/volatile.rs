//! What two recordings of one answer may differ in: the fields a service makes new for every
//! answer (an `id`, a `created` timestamp, a `system_fingerprint`). A record run that gets an
//! answer equivalent to the recorded one keeps the recorded one, gives it to the agent, and
//! writes no file for it: re-recording an unchanged agent against a service that says the same
//! leaves the recordings byte for byte, and what the record run saw is what replay plays.

use serde_json::Value;

use super::format::{Body, Response};
use holon_core::json::equal;

/// The fields a service makes new for every answer, in the common APIs (OpenAI's chat and
/// responses, Anthropic's, Gemini's), wherever they are in a JSON answer or a stream's event.
pub const VOLATILE: [&str; 8] = [
    "id",
    "created",
    "created_at",
    "system_fingerprint",
    "request_id",
    "response_id",
    "responseId",
    "item_id",
];

/// Whether `now` says what `recorded` says, but for the volatile fields (and a stream's event
/// ids): the same status, content type and body otherwise, numbers compared by value. Linear
/// in the two answers' sizes.
pub fn equivalent(recorded: &Response, now: &Response) -> bool {
    recorded.status == now.status
        && recorded.content_type == now.content_type
        && match (&recorded.body, &now.body) {
            (Body::Json(a), Body::Json(b)) => same_but_volatile(a, b),
            (Body::Sse(a), Body::Sse(b)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        x.event == y.event
                            && x.id.is_some() == y.id.is_some()
                            && same_but_volatile(&x.data, &y.data)
                    })
            }
            (a, b) => a == b,
        }
}

/// Whether two JSON values are equal but for the values of `VOLATILE` fields (each present in
/// both).
fn same_but_volatile(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Object(p), Value::Object(q)) => {
                if p.len() != q.len() {
                    return false;
                }
                for (key, x) in p {
                    let Some(y) = q.get(key) else {
                        return false;
                    };
                    if !VOLATILE.contains(&key.as_str()) {
                        stack.push((x, y));
                    }
                }
            }
            (Value::Array(p), Value::Array(q)) => {
                if p.len() != q.len() {
                    return false;
                }
                stack.extend(p.iter().zip(q));
            }
            (a, b) => {
                if !equal(a, b) {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::Event;
    use serde_json::json;

    fn chunk(id: &str, created: u64, content: &str) -> Event {
        Event {
            event: None,
            id: None,
            data: json!({"id": id, "created": created, "system_fingerprint": format!("fp_{created}"), "choices": [{"index": 0, "delta": {"content": content}}]}),
        }
    }

    fn stream(id: &str, created: u64, words: &[&str]) -> Response {
        Response {
            status: 200,
            content_type: Some("text/event-stream".into()),
            body: Body::Sse(words.iter().map(|w| chunk(id, created, w)).collect()),
        }
    }

    #[test]
    fn ids_and_timestamps_are_not_what_an_answer_says() {
        let recorded = stream("chatcmpl-1", 1_700_000_000, &["Hel", "lo"]);
        assert!(equivalent(
            &recorded,
            &stream("chatcmpl-2", 1_700_000_077, &["Hel", "lo"])
        ));
        // Another wording, another cut, another status: another answer.
        assert!(!equivalent(
            &recorded,
            &stream("chatcmpl-1", 1_700_000_000, &["Hel", "lo!"])
        ));
        assert!(!equivalent(
            &recorded,
            &stream("chatcmpl-1", 1_700_000_000, &["He", "llo"])
        ));
        let mut refused = recorded.clone();
        refused.status = 401;
        assert!(!equivalent(&recorded, &refused));
        // In a JSON answer, at any depth; a field missing on one side is a difference.
        let json = |v: Value| Response {
            status: 200,
            content_type: Some("application/json".into()),
            body: Body::Json(v),
        };
        assert!(equivalent(
            &json(json!({"id": "a", "n": 1, "items": [{"id": 1, "x": "y"}]})),
            &json(json!({"id": "b", "n": 1.0, "items": [{"id": 2, "x": "y"}]}))
        ));
        assert!(!equivalent(
            &json(json!({"id": "a", "n": 1})),
            &json(json!({"n": 1}))
        ));
    }
}

//! A stream's text: the string fields of a server-sent event stream put together across its
//! events, by JSON pointer. A streamed model answer comes as deltas (`/choices/0/delta/content`
//! of each event), cut wherever the service likes: put together, they are the answer a reviewer
//! reads beside the events, and the text in which a secret cut across two events is found.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The names of the fields whose pieces make a streamed text, in the common APIs: OpenAI's chat
/// (`content`, `refusal`, `arguments` of a tool call, `reasoning_content`) and responses
/// (`delta`), Anthropic's (`text`, `partial_json`, `thinking`), Gemini's (`text`).
const TEXT_FIELDS: [&str; 9] = [
    "content",
    "text",
    "arguments",
    "partial_json",
    "delta",
    "thinking",
    "refusal",
    "reasoning",
    "reasoning_content",
];

/// Every string of the events' data, by pointer, in event order (each with its event's place,
/// from 0). Keys are not pieces: a key is whole in its event.
pub fn pieces<'a>(
    datas: impl Iterator<Item = &'a Value>,
) -> BTreeMap<String, Vec<(usize, &'a str)>> {
    let mut out: BTreeMap<String, Vec<(usize, &'a str)>> = BTreeMap::new();
    for (index, data) in datas.enumerate() {
        let mut stack = vec![(String::new(), data)];
        while let Some((at, value)) = stack.pop() {
            match value {
                Value::String(s) => out.entry(at).or_default().push((index, s.as_str())),
                Value::Array(items) => {
                    stack.extend((items.iter().enumerate()).map(|(i, v)| (format!("{at}/{i}"), v)))
                }
                Value::Object(map) => stack.extend(
                    map.iter()
                        .map(|(k, v)| (holon_core::pointer::child(&at, k), v)),
                ),
                _ => {}
            }
        }
    }
    out
}

/// What the events' text fields say put together, by pointer: each pointer to a text field
/// (`TEXT_FIELDS`) that more than one event has. Empty for a stream that is not a streamed text.
pub fn assembled<'a>(datas: impl Iterator<Item = &'a Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (at, parts) in pieces(datas) {
        let field = at.rsplit('/').next().unwrap_or("");
        if parts.len() < 2 || !TEXT_FIELDS.contains(&field) {
            continue;
        }
        let text: String = parts.iter().map(|(_, s)| *s).collect();
        out.insert(at, Value::String(text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_streamed_answer_is_put_together_by_its_text_fields() {
        let events = [
            json!({"id": "c-1", "choices": [{"delta": {"role": "assistant", "content": ""}}]}),
            json!({"id": "c-1", "choices": [{"delta": {"content": "Hel"}}]}),
            json!({"id": "c-1", "choices": [{"delta": {"content": "lo, wor"}}]}),
            json!({"id": "c-1", "choices": [{"delta": {"content": "ld"}, "finish_reason": "stop"}]}),
            json!("[DONE]"),
        ];
        let text = assembled(events.iter());
        assert_eq!(
            Value::Object(text),
            json!({"/choices/0/delta/content": "Hello, world"})
        );
        let all = pieces(events.iter());
        assert_eq!(all["/id"].len(), 4);
        assert_eq!(all[""], [(4, "[DONE]")]);
        // One event alone is no stream of text.
        assert!(assembled(events.iter().take(1)).is_empty());
    }
}

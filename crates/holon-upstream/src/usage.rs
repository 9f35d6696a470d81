//! The tokens an upstream answer says it used, read from the answer itself: OpenAI's chat
//! completions (`usage.prompt_tokens`, `usage.completion_tokens`) and responses
//! (`usage.input_tokens`, `usage.output_tokens`), Anthropic's messages (`usage.input_tokens`
//! and its cache counts, `usage.output_tokens`), whole or streamed. A stream carries usage only
//! where the service was asked for it (OpenAI's chat completions: `stream_options:
//! {"include_usage": true}`); without it, or where a count is not a whole number, the tokens
//! are unknown, never guessed.

use serde_json::Value;

use crate::recording::{Body, Response};

/// The tokens of one upstream answer; `None` where the answer does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Input (prompt) tokens, cache reads and writes included.
    pub input: Option<u64>,
    /// Output (completion) tokens.
    pub output: Option<u64>,
}

impl Tokens {
    /// Whether the answer said both counts.
    pub fn known(&self) -> bool {
        self.input.is_some() && self.output.is_some()
    }
}

/// What `response` says it used. A body that is not JSON or SSE, or carries no usage, says
/// nothing.
pub fn tokens(response: &Response) -> Tokens {
    match &response.body {
        Body::Json(value) => value.get("usage").map(of_usage).unwrap_or_default(),
        Body::Sse(events) => {
            let mut found = Tokens::default();
            for event in events {
                for usage in usages(&event.data) {
                    let seen = of_usage(usage);
                    // The later count wins: Anthropic's `message_delta` says the output so far,
                    // and its `message_start` the input; OpenAI's last chunk says both.
                    found.input = seen.input.or(found.input);
                    found.output = seen.output.or(found.output);
                }
            }
            found
        }
        Body::Empty | Body::Text(_) | Body::Binary(_) => Tokens::default(),
    }
}

/// The usage objects one event of a stream carries: OpenAI's chat chunk (`usage`), its
/// responses API's `response.completed` (`response.usage`), Anthropic's `message_start`
/// (`message.usage`) and `message_delta` (`usage`).
fn usages(data: &Value) -> Vec<&Value> {
    [
        data.get("usage"),
        data.get("response").and_then(|r| r.get("usage")),
        data.get("message").and_then(|m| m.get("usage")),
    ]
    .into_iter()
    .flatten()
    .filter(|u| u.is_object())
    .collect()
}

/// The counts of one usage object, in either vendor's words.
fn of_usage(usage: &Value) -> Tokens {
    let count = |key: &str| usage.get(key).and_then(whole);
    let output = count("completion_tokens").or_else(|| count("output_tokens"));
    let input = match count("prompt_tokens") {
        Some(n) => Some(n),
        None => count("input_tokens").map(|n| {
            // Anthropic counts cached tokens apart from `input_tokens`; they are input too.
            let cached = ["cache_creation_input_tokens", "cache_read_input_tokens"]
                .into_iter()
                .filter_map(count)
                .sum::<u64>();
            n.saturating_add(cached)
        }),
    };
    Tokens { input, output }
}

/// A count: a whole number of at least 0 (`12`, `12.0`); anything else is unknown.
fn whole(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        let f = value.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64).then_some(f as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::Event;
    use serde_json::json;

    fn json_answer(body: Value) -> Response {
        Response {
            status: 200,
            content_type: Some("application/json".into()),
            body: Body::Json(body),
        }
    }

    fn stream(events: Vec<Value>) -> Response {
        Response {
            status: 200,
            content_type: Some("text/event-stream".into()),
            body: Body::Sse(
                events
                    .into_iter()
                    .map(|data| Event {
                        event: None,
                        id: None,
                        data,
                    })
                    .collect(),
            ),
        }
    }

    #[test]
    fn each_vendor_says_its_usage_in_its_own_words() {
        let chat = json_answer(
            json!({"choices": [], "usage": {"prompt_tokens": 57, "completion_tokens": 21, "total_tokens": 78}}),
        );
        assert_eq!(
            tokens(&chat),
            Tokens {
                input: Some(57),
                output: Some(21)
            }
        );
        let responses =
            json_answer(json!({"output": [], "usage": {"input_tokens": 40, "output_tokens": 9}}));
        assert_eq!(
            tokens(&responses),
            Tokens {
                input: Some(40),
                output: Some(9)
            }
        );
        let anthropic = json_answer(
            json!({"content": [], "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5, "output_tokens": 3}}),
        );
        assert_eq!(
            tokens(&anthropic),
            Tokens {
                input: Some(105),
                output: Some(3)
            }
        );
    }

    #[test]
    fn a_stream_says_its_usage_only_where_it_carries_it() {
        let chunk =
            |content: &str| json!({"choices": [{"delta": {"content": content}}], "usage": null});
        let without = stream(vec![chunk("{\"a\""), chunk(":1}"), json!("[DONE]")]);
        assert_eq!(tokens(&without), Tokens::default());
        assert!(!tokens(&without).known());
        let with = stream(vec![
            chunk("{\"a\""),
            json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 4}}),
            json!("[DONE]"),
        ]);
        assert_eq!(
            tokens(&with),
            Tokens {
                input: Some(12),
                output: Some(4)
            }
        );
        let anthropic = stream(vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 25, "output_tokens": 1}}}),
            json!({"type": "content_block_delta", "delta": {"text": "hi"}}),
            json!({"type": "message_delta", "usage": {"output_tokens": 15}}),
        ]);
        assert_eq!(
            tokens(&anthropic),
            Tokens {
                input: Some(25),
                output: Some(15)
            }
        );
        let responses = stream(vec![
            json!({"type": "response.output_text.delta", "delta": "hi"}),
            json!({"type": "response.completed", "response": {"usage": {"input_tokens": 8, "output_tokens": 2}}}),
        ]);
        assert_eq!(
            tokens(&responses),
            Tokens {
                input: Some(8),
                output: Some(2)
            }
        );
    }

    #[test]
    fn a_count_that_is_not_a_whole_number_is_unknown_and_nothing_panics() {
        for bad in [
            json!("57"),
            json!(-3),
            json!(2.5),
            json!(null),
            json!({"n": 1}),
            json!(1e300),
        ] {
            let answer =
                json_answer(json!({"usage": {"prompt_tokens": bad, "completion_tokens": 4}}));
            assert_eq!(tokens(&answer).input, None, "{bad}");
            assert_eq!(tokens(&answer).output, Some(4), "{bad}");
        }
        assert_eq!(
            tokens(&json_answer(
                json!({"usage": {"prompt_tokens": 7.0, "completion_tokens": 0}})
            )),
            Tokens {
                input: Some(7),
                output: Some(0)
            }
        );
        for odd in [
            json!({"usage": "many"}),
            json!([1, 2]),
            json!({"usage": [1]}),
        ] {
            assert_eq!(
                tokens(&json_answer(odd.clone())),
                Tokens::default(),
                "{odd}"
            );
        }
        let text = Response {
            status: 200,
            content_type: Some("text/html".into()),
            body: Body::Text("<html>".into()),
        };
        assert_eq!(tokens(&text), Tokens::default());
    }
}

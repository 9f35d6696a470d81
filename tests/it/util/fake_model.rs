//! A fake model on loopback, for the tests and benchmarks of model-backed agents: an
//! OpenAI-style `POST /chat/completions` that needs `Authorization: Bearer KEY` (401 otherwise),
//! answers after a delay, varies its wording from call to call as a model does (its `id`,
//! `created` and `system_fingerprint` vary always, as a real service's do), and streams its
//! answer as server-sent events when asked (`"stream": true`), in pieces of a given size. It
//! reports its usage as OpenAI does (on a stream only when asked, `stream_options.include_usage`),
//! can answer a known mix (valid, a priority out of range, prose, too slow) by the ticket or in
//! turn, and keeps a log of what it answered each request and the usage it reported. It can
//! misbehave by repeating the key in its answer. It runs on a runtime of its own and stops when
//! dropped.
#![allow(
    dead_code,
    reason = "each benchmark that includes this file uses a different part of it"
)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// How the fake model behaves.
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// The key a request must carry.
    pub key: String,
    /// How long each answer takes.
    pub delay: Duration,
    /// Whether the wording varies from call to call, as a model's does (the benchmarks want
    /// the same answer for the same question).
    pub vary: bool,
    /// Whether every call is refused with HTTP 429 (`Retry-After: 1`), as a model over its
    /// rate limit does.
    pub rate_limited: bool,
    /// How many bytes of the answer's text each streamed event carries (0: three events).
    pub piece: usize,
    /// Whether the summary repeats the key the request carried, as a model echoing its prompt
    /// or a misbehaving proxy would.
    pub echo_key: bool,
    /// What it answers each request.
    pub mix: Mix,
}

impl Behaviour {
    /// A model that takes `key` and answers every request at once, in the same words, with a
    /// priority and a summary in three streamed events.
    pub fn keyed(key: &str) -> Behaviour {
        Behaviour {
            key: key.into(),
            delay: Duration::ZERO,
            vary: false,
            rate_limited: false,
            piece: 0,
            echo_key: false,
            mix: Mix::Plain,
        }
    }
}

/// What the model answers each request.
#[derive(Debug, Clone, Default)]
pub enum Mix {
    /// A priority and a summary of the ticket, every time.
    #[default]
    Plain,
    /// By the ticket: the kind of the first word the ticket holds, else valid.
    ByTicket(Vec<(String, Kind)>),
    /// In turn, whatever the ticket: the n-th request gets `kinds[n % len]`.
    Cycle(Vec<Kind>),
}

/// One way of answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A priority and a summary, as JSON.
    Valid,
    /// JSON whose priority is none of `low`, `medium`, `high`.
    OutOfRange,
    /// Prose, not JSON.
    Prose,
    /// A valid answer, after this long.
    Slow(Duration),
    /// A valid answer whose usage counts are not numbers.
    OddUsage,
}

/// One request the model took, as its log keeps it.
#[derive(Debug, Clone)]
pub struct Logged {
    /// The ticket (the last user message).
    pub ticket: String,
    /// How it answered (or is answering).
    pub kind: Kind,
    /// The usage it reported (`prompt_tokens`, `completion_tokens`); `None` for a stream not
    /// asked for it.
    pub usage: Option<(u64, u64)>,
}

/// A running fake model.
pub struct FakeModel {
    /// Its base URL (`http://127.0.0.1:PORT`), what an agent's `OPENAI_BASE_URL` would be.
    pub url: String,
    requests: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<Logged>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// The openers a summary starts with, one picked per answer: the wording varies.
const OPENERS: [&str; 5] = [
    "The customer reports",
    "A user writes about",
    "Ticket about",
    "Someone says",
    "Reported:",
];

impl FakeModel {
    /// Starts a fake model on a free loopback port.
    pub fn start(behaviour: Behaviour) -> FakeModel {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the fake model");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let requests = Arc::new(AtomicUsize::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (count, behaviour, kept) = (requests.clone(), Arc::new(behaviour), log.clone());
        let turn = Arc::new(AtomicU64::new(0));
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (count, behaviour, turn) = (count.clone(), behaviour.clone(), turn.clone());
                let kept = kept.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let (count, behaviour, turn) =
                            (count.clone(), behaviour.clone(), turn.clone());
                        let kept = kept.clone();
                        async move {
                            count.fetch_add(1, Ordering::SeqCst);
                            Ok::<_, Infallible>(answer(req, &behaviour, &turn, &kept).await)
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeModel {
            url,
            requests,
            log,
            runtime: Some(runtime),
        }
    }

    /// Requests it has answered (or refused) so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Every chat request it took, in the order it took them, with how it answered.
    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Stops it: its port refuses connections from now on.
    pub fn stop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Tokens as a model might count them: a quarter of the characters, rounded up.
fn tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

async fn answer(
    req: Request<Incoming>,
    behaviour: &Behaviour,
    turn: &AtomicU64,
    log: &Mutex<Vec<Logged>>,
) -> Response<Full<Bytes>> {
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == format!("Bearer {}", behaviour.key));
    let path = req.uri().path().to_string();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if !authorized {
        return json_response(
            StatusCode::UNAUTHORIZED,
            &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        );
    }
    if behaviour.rate_limited {
        let mut limited = json_response(
            StatusCode::TOO_MANY_REQUESTS,
            &json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}),
        );
        limited
            .headers_mut()
            .insert("retry-after", "1".parse().expect("a header"));
        return limited;
    }
    if path != "/chat/completions" {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": {"message": format!("no route {path}")}}),
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": {"message": "the body is not JSON"}}),
        );
    };
    let ticket = request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let n = turn.fetch_add(1, Ordering::SeqCst) as usize;
    let kind = match &behaviour.mix {
        Mix::Plain => Kind::Valid,
        Mix::ByTicket(rules) => (rules.iter())
            .find(|(word, _)| ticket.contains(word.as_str()))
            .map_or(Kind::Valid, |(_, kind)| *kind),
        Mix::Cycle(kinds) => kinds
            .get(n % kinds.len().max(1))
            .copied()
            .unwrap_or(Kind::Valid),
    };
    let streamed = request["stream"] == true;
    let with_usage = !streamed || request["stream_options"]["include_usage"] == true;
    let prompt: String = (request["messages"].as_array().into_iter().flatten())
        .filter_map(|m| m["content"].as_str())
        .collect();
    let opener = if behaviour.vary {
        OPENERS[(n * 7 + ticket.len()) % OPENERS.len()]
    } else {
        OPENERS[0]
    };
    let lower = ticket.to_lowercase();
    let priority = if ["down", "urgent", "cannot", "outage"]
        .iter()
        .any(|w| lower.contains(w))
    {
        "high"
    } else if ticket.trim_end().ends_with('?') {
        "low"
    } else {
        "medium"
    };
    let gist: Vec<&str> = ticket.split_whitespace().take(8).collect();
    let mut summary = format!("{opener} {}", gist.join(" "));
    if behaviour.echo_key {
        summary = format!("{summary} (key {})", behaviour.key);
    }
    let content = match kind {
        Kind::Valid | Kind::Slow(_) | Kind::OddUsage => {
            json!({"priority": priority, "summary": summary}).to_string()
        }
        Kind::OutOfRange => json!({"priority": "urgent", "summary": summary}).to_string(),
        Kind::Prose => format!("This looks like a {priority} priority ticket: {summary}."),
    };
    // What a real service makes new for every answer.
    let created = 1_700_000_000 + n as u64;
    let fingerprint = format!("fp_{n:04}");
    let usage = (tokens(&prompt), tokens(&content));
    if let Ok(mut log) = log.lock() {
        log.push(Logged {
            ticket: ticket.clone(),
            kind,
            usage: (with_usage && kind != Kind::OddUsage).then_some(usage),
        });
    }
    if !behaviour.delay.is_zero() {
        tokio::time::sleep(behaviour.delay).await;
    }
    if let Kind::Slow(wait) = kind {
        tokio::time::sleep(wait).await;
    }
    let usage_json = match kind {
        Kind::OddUsage => json!({"prompt_tokens": "many", "completion_tokens": [usage.1]}),
        _ => {
            json!({"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1})
        }
    };
    let model = request["model"].as_str().unwrap_or("fake-model");
    if streamed {
        let size = match behaviour.piece {
            0 => content.len().div_ceil(3).max(1),
            n => n,
        };
        let pieces: Vec<String> = content
            .as_bytes()
            .chunks(size)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        let mut events = String::new();
        // Asked for usage, every chunk says `"usage": null` and one more chunk, with no
        // choice, carries it, as OpenAI streams it.
        let chunk = |choices: Value, usage: Value| {
            let mut c = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": created, "model": model, "system_fingerprint": fingerprint, "choices": choices});
            if with_usage {
                c["usage"] = usage;
            }
            format!("data: {c}\n\n")
        };
        for piece in pieces {
            events.push_str(&chunk(
                json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]),
                Value::Null,
            ));
        }
        events.push_str(&chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            Value::Null,
        ));
        if with_usage {
            events.push_str(&chunk(json!([]), usage_json));
        }
        events.push_str("data: [DONE]\n\n");
        let mut response = Response::new(Full::new(Bytes::from(events)));
        response.headers_mut().insert(
            "content-type",
            "text/event-stream".parse().expect("a header"),
        );
        return response;
    }
    json_response(
        StatusCode::OK,
        &json!({
            "id": format!("chatcmpl-{n}"),
            "object": "chat.completion",
            "created": created,
            "model": model,
            "system_fingerprint": fingerprint,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": usage_json
        }),
    )
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        "application/json".parse().expect("a header"),
    );
    response
}

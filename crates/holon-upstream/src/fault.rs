//! Upstream faults: what a real service does on a bad day, played in place of one recorded
//! answer, so that the path from a 429 or a garbled answer to a declared code is tested.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame};
use hyper::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Response as HttpResponse, StatusCode};

use crate::error::SettingError;
use crate::recording::{Body, Request, Response};

/// A body that can fail part way, as a cut connection does.
pub type FaultyBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

/// `HOLON_FAULT`: one exchange and one fault, `<exchange>:<fault>` (`1:429`), to replay a
/// single fault trial's case.
pub const ONE_VAR: &str = "HOLON_FAULT";

/// One exchange and one fault, as `HOLON_FAULT` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Only {
    /// The exchange, from 1, in the example's recording.
    pub exchange: usize,
    /// What the upstream does to that exchange.
    pub fault: Fault,
}

/// `<exchange>:<fault>`: `1:429`, `2:reset`.
pub fn parse_only(text: &str) -> Result<Only, SettingError> {
    let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
    let refuse = |problem: String| SettingError::Fault {
        usage: format!(
            "is `<exchange>:<fault>`, an exchange from 1 and one of {}, as a fault trial's report prints it",
            names.join(", ")
        ),
        problem,
    };
    let (exchange, fault) = text
        .trim()
        .split_once(':')
        .ok_or_else(|| refuse(format!(", not `{text}`")))?;
    let exchange = match exchange.parse::<usize>() {
        Ok(n) if n >= 1 => n,
        _ => return Err(refuse(format!("; `{exchange}` is not an exchange"))),
    };
    let fault = Fault::parse(fault).ok_or_else(|| refuse(format!("; `{fault}` is not a fault")))?;
    Ok(Only { exchange, fault })
}

/// One way an upstream fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 with `Retry-After: 1`: a rate limit.
    TooMany,
    /// HTTP 500.
    ServerError,
    /// HTTP 503.
    Unavailable,
    /// The connection closed before any byte of the answer.
    Reset,
    /// The body cut off halfway (an SSE answer, after its first event).
    Cut,
    /// HTTP 200 with an HTML error page, as proxies send, where JSON was expected.
    NotJson,
    /// No answer within the agent's `timeout_s`: held open, then dropped.
    Slow,
}

impl Fault {
    /// Every fault, in the order the trials play them.
    pub const ALL: [Fault; 7] = [
        Fault::TooMany,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::Reset,
        Fault::Cut,
        Fault::NotJson,
        Fault::Slow,
    ];

    /// Its short name, as `HOLON_FAULT` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Fault::TooMany => "429",
            Fault::ServerError => "500",
            Fault::Unavailable => "503",
            Fault::Reset => "reset",
            Fault::Cut => "cut",
            Fault::NotJson => "html",
            Fault::Slow => "slow",
        }
    }

    /// What it is, for a report.
    pub fn describe(self) -> &'static str {
        match self {
            Fault::TooMany => "HTTP 429 Too Many Requests (`Retry-After: 1`)",
            Fault::ServerError => "HTTP 500 Internal Server Error",
            Fault::Unavailable => "HTTP 503 Service Unavailable",
            Fault::Reset => "the connection closed before any byte of the answer",
            Fault::Cut => "the answer cut off halfway (a stream, after its first event)",
            Fault::NotJson => "HTTP 200 with a body that is not JSON (an HTML error page)",
            Fault::Slow => "no answer within `runtime.limits.timeout_s`",
        }
    }

    /// A fault by its short name.
    pub fn parse(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A fault planted on one request of a call: the `occurrence`-th time (from 0) the call makes
/// `request`, the upstream fails with `fault`.
#[derive(Debug, Clone)]
pub struct Plant {
    /// The upstream the request goes to.
    pub upstream: String,
    /// The request to fail.
    pub request: Request,
    /// Which time the call makes it.
    pub occurrence: usize,
    /// How it fails.
    pub fault: Fault,
}

/// A call made with a fault planted: what it answered, whether the fault was played (the call
/// made the request it was planted on), and the requests of the call no recording answered.
#[derive(Debug, Clone)]
pub struct Faulted {
    /// What the call came back with.
    pub answer: holon_core::gateway::Answer,
    /// Whether the planted request was made.
    pub played: bool,
    /// Requests no recording answered (the proxy answered them 404).
    pub misses: Vec<String>,
}

/// What the proxy answers for a fault: a response whose body may fail, or `None` when the
/// connection must close before any byte. `ended` resolves when the call's verdict is in (a
/// slow answer is dropped then); `limit` bounds the wait regardless.
pub async fn play(
    fault: Fault,
    recorded: &Response,
    ended: Arc<tokio::sync::Notify>,
    limit: Duration,
) -> Option<HttpResponse<FaultyBody>> {
    match fault {
        Fault::TooMany | Fault::ServerError | Fault::Unavailable => {
            let (status, message) = match fault {
                Fault::TooMany => (
                    StatusCode::TOO_MANY_REQUESTS,
                    "Rate limit reached: try again in 1s",
                ),
                Fault::ServerError => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The server had an error while processing your request",
                ),
                _ => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The server is overloaded, try again later",
                ),
            };
            let body = serde_json::json!({"error": {"message": message, "type": "server_error", "code": null}});
            let mut out = HttpResponse::new(full(Bytes::from(body.to_string())));
            *out.status_mut() = status;
            out.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            if fault == Fault::TooMany {
                out.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            }
            Some(out)
        }
        Fault::Reset => None,
        Fault::NotJson => {
            let page = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>";
            let mut out = HttpResponse::new(full(Bytes::from(page)));
            out.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
            Some(out)
        }
        Fault::Cut => {
            let bytes = match &recorded.body {
                // A stream is cut after its first event.
                Body::Sse(events) => Body::Sse(events.iter().take(1).cloned().collect()).bytes(),
                other => {
                    let all = other.bytes();
                    all.iter().take(all.len() / 2).copied().collect()
                }
            };
            let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = vec![
                Ok(Frame::data(Bytes::from(bytes))),
                Err(std::io::Error::other("the answer was cut off on purpose")),
            ];
            let body = StreamBody::new(Frames(frames.into_iter())).boxed();
            let mut out = HttpResponse::new(body);
            *out.status_mut() = StatusCode::from_u16(recorded.status).unwrap_or(StatusCode::OK);
            if let Some(c) = recorded
                .content_type
                .as_deref()
                .and_then(|c| HeaderValue::from_str(c).ok())
            {
                out.headers_mut().insert(CONTENT_TYPE, c);
            }
            Some(out)
        }
        Fault::Slow => {
            // Held open until the call has its verdict (or the bound), then dropped unanswered.
            let _ = tokio::time::timeout(limit, ended.notified()).await;
            None
        }
    }
}

/// A body of these bytes, whole.
pub(super) fn full(bytes: Bytes) -> FaultyBody {
    Full::new(bytes)
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// The given frames, one after another, as a stream.
struct Frames(std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>);

impl futures_core::Stream for Frames {
    type Item = Result<Frame<Bytes>, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::task::Poll::Ready(self.0.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_fault_is_named_by_its_exchange_and_its_name() {
        assert_eq!(
            parse_only("2:reset"),
            Ok(Only {
                exchange: 2,
                fault: Fault::Reset
            })
        );
        assert!(
            parse_only("0:429")
                .unwrap_err()
                .to_string()
                .contains("`0` is not an exchange")
        );
        assert!(
            parse_only("1:418")
                .unwrap_err()
                .to_string()
                .contains("`418` is not a fault")
        );
        assert!(
            parse_only("429")
                .unwrap_err()
                .to_string()
                .contains("not `429`")
        );
    }
}

//! The `/mcp` endpoint in front of rmcp: the request body read under a size limit and a time
//! limit, the JSON-RPC message checked before rmcp sees it (parse errors `-32700`, invalid
//! requests `-32600`, invalid `tools/call` params `-32602`), and every error answered with a
//! JSON body, rmcp's plain-text ones included.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use serde_json::{Value, json};

use super::connections::Running;

/// The body type every answer has.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// JSON-RPC's codes for a body that is not JSON, a message that is not a request, and a
/// request whose params are wrong.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// The endpoint for one server: rmcp's service, the body limit and the body timeout.
pub(crate) struct Endpoint<S: rmcp::ServerHandler + Send + 'static> {
    pub(crate) mcp: StreamableHttpService<S, NeverSessionManager>,
    pub(crate) body_limit: usize,
    pub(crate) body_timeout: Duration,
}

impl<S: rmcp::ServerHandler + Send + 'static> Endpoint<S> {
    /// Answers one request; `calls` marks the connection busy while rmcp runs the call.
    pub(crate) async fn answer(
        self: Arc<Self>,
        request: Request<Incoming>,
        calls: Arc<AtomicUsize>,
    ) -> Response<Body> {
        if request.uri().path() != "/mcp" {
            return error(
                StatusCode::NOT_FOUND,
                Value::Null,
                INVALID_REQUEST,
                "not found: the MCP endpoint is /mcp",
            );
        }
        if request.method() != Method::POST {
            // rmcp answers the method (405, with `Allow`) and the Origin check.
            return with_json_body(self.mcp.handle(request).await).await;
        }
        let (parts, body) = request.into_parts();
        let read = tokio::time::timeout(
            self.body_timeout,
            Limited::new(body, self.body_limit).collect(),
        )
        .await;
        let bytes = match read {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
                return error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Value::Null,
                    INVALID_REQUEST,
                    &format!(
                        "the request body is over {} bytes, the most this server reads",
                        self.body_limit
                    ),
                );
            }
            Ok(Err(e)) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    PARSE_ERROR,
                    &format!(
                        "the request body could not be read whole ({e}): it ended before its \
                         `Content-Length`, or its chunked encoding is broken"
                    ),
                );
            }
            Err(_) => {
                let mut response = error(
                    StatusCode::REQUEST_TIMEOUT,
                    Value::Null,
                    INVALID_REQUEST,
                    &format!(
                        "the request body did not arrive within {:?}",
                        self.body_timeout
                    ),
                );
                response
                    .headers_mut()
                    .insert(CONNECTION, hyper::header::HeaderValue::from_static("close"));
                return response;
            }
        };
        if let Some(refusal) = refusal(&bytes) {
            return refusal;
        }
        let _running = Running::start(&calls);
        let response = self
            .mcp
            .handle(Request::from_parts(parts, Full::new(bytes)))
            .await;
        with_json_body(response).await
    }
}

/// The answer to a message that is not a JSON-RPC request rmcp should see, or `None`.
fn refusal(body: &[u8]) -> Option<Response<Body>> {
    let bad =
        |code: i64, message: &str| Some(error(StatusCode::BAD_REQUEST, Value::Null, code, message));
    let message: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return bad(
                PARSE_ERROR,
                &format!("parse error: the body is not JSON ({e})"),
            );
        }
    };
    let object = match &message {
        Value::Object(o) => o,
        Value::Array(_) => {
            return bad(
                INVALID_REQUEST,
                "a batch (a JSON array) is not accepted: send one JSON-RPC message per request",
            );
        }
        _ => return bad(INVALID_REQUEST, "a JSON-RPC message is a JSON object"),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return bad(INVALID_REQUEST, "`jsonrpc` must be \"2.0\"");
    }
    let id = object.get("id");
    if let Some(id) = id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return bad(
            INVALID_REQUEST,
            "`id` must be a string or an integer (never null)",
        );
    }
    let Some(method) = object.get("method") else {
        // A response to the server (a `result` or an `error` for an `id`).
        return if id.is_some() && (object.contains_key("result") ^ object.contains_key("error")) {
            None
        } else {
            bad(
                INVALID_REQUEST,
                "a JSON-RPC message needs a `method` (a request or a notification), or an `id` \
                 with a `result` or an `error` (a response)",
            )
        };
    };
    let Some(method) = method.as_str() else {
        return bad(INVALID_REQUEST, "`method` must be a string");
    };
    let Some(id) = id else {
        // A notification: it has no answer to carry an error.
        return None;
    };
    let invalid = |message: &str| Some(error(StatusCode::OK, id.clone(), INVALID_PARAMS, message));
    let params = object.get("params");
    if let Some(params) = params
        && !params.is_object()
    {
        return invalid("`params` must be an object");
    }
    if method == "tools/call" {
        let Some(params) = params else {
            return invalid("`tools/call` needs `params` with the tool's `name` and `arguments`");
        };
        if !params.get("name").is_some_and(Value::is_string) {
            return invalid("`params.name` must be the tool's name, a string");
        }
        if let Some(arguments) = params.get("arguments")
            && !arguments.is_object()
        {
            return invalid("`params.arguments` must be an object");
        }
    }
    None
}

/// A JSON-RPC error answer with `status`.
pub(crate) fn error(status: StatusCode, id: Value, code: i64, message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// rmcp's answer, with a plain-text error body (415, 406, 403, 405, 500...) turned into a
/// JSON-RPC error that carries its text.
async fn with_json_body(response: Response<Body>) -> Response<Body> {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match body.collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(never) => match never {},
    };
    let code = if status.is_server_error() {
        INTERNAL_ERROR
    } else {
        INVALID_REQUEST
    };
    let mut rebuilt = error(status, Value::Null, code, text.trim());
    parts.headers.remove(CONTENT_TYPE);
    parts.headers.remove(hyper::header::CONTENT_LENGTH);
    for (name, value) in &parts.headers {
        rebuilt.headers_mut().insert(name.clone(), value.clone());
    }
    rebuilt
}

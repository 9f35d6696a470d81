//! The loopback proxy that stands where each upstream would: one listener per upstream and
//! pass, so a request tells which pass made it, and its content which call in flight on that
//! pass it is (`attribute`). It replays the recordings, or forwards to the real service
//! (recording what it answered, or not), counts what it saw, and notes on each call what its
//! requests were answered and the tokens each answer says it used.

use std::sync::Arc;

use http_body_util::{BodyExt, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request as HttpRequest, Response as HttpResponse, StatusCode};
use hyper_util::rt::TokioIo;

use crate::attribute;
use crate::call::{Call, ProxyState, Slot};
use crate::fault::{self, Fault, FaultyBody};
use crate::index::request_print;
use crate::ledger::{Charge, Purpose};
use crate::matching;
use crate::mode::Mode;
use crate::recording::{self, Body, Exchange, Request, Response, Scope};
use crate::scrub;
use crate::usage;
use holon_core::gateway::Pass;

/// How much longer than a call a request to the real service may take: an agent that gave up
/// on it does not stop it being answered and paid for.
const LATE: std::time::Duration = std::time::Duration::from_secs(60);

/// The largest request or answer body the proxy takes.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Headers that belong to one connection, never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// Serves the proxy of `upstream` for `pass` on `listener` until the runtime stops.
pub(crate) async fn serve(
    state: Arc<ProxyState>,
    pass: Pass,
    upstream: String,
    listener: std::net::TcpListener,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (state, upstream) = (state.clone(), upstream.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let (state, upstream) = (state.clone(), upstream.clone());
                async move {
                    // No response at all: the connection closes before any byte, as a reset.
                    handle(&state, pass, &upstream, req)
                        .await
                        .ok_or_else(|| std::io::Error::other("the connection was reset on purpose"))
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(
    state: &Arc<ProxyState>,
    pass: Pass,
    upstream: &str,
    req: HttpRequest<Incoming>,
) -> Option<HttpResponse<FaultyBody>> {
    let (parts, body) = req.into_parts();
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return Some(error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the request body could not be read: {e}"),
            ));
        }
    };
    let content_type = (parts.headers.get(CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (path, query) = split(parts.uri.path_and_query().map_or("/", |p| p.as_str()));
    let mut request = Request {
        method: parts.method.as_str().to_string(),
        path,
        query,
        content_type,
        body: Body::read(
            parts
                .headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
            &bytes,
        ),
    };
    let raw = request.clone();
    scrub::request(&state.secrets, &mut request);
    if let Ok(mut counts) = state.requests.lock() {
        *counts.entry(upstream.to_string()).or_default() += 1;
    }
    let claimed = attribute::claim(state, pass, upstream, &request);
    let (call, charge, occurrence) = match claimed {
        Some(c) => (Some(c.call), c.charge, c.occurrence),
        None => (None, None, 0),
    };
    // The request's entry in the ledger (on its call's list, when it has one).
    let charge = charge
        .unwrap_or_else(|| Arc::new(Charge::new(upstream, request_print(upstream, &request))));
    let purpose = match call.as_deref() {
        None => Purpose::Outside,
        Some(c) if c.plant.is_some() => Purpose::Faults,
        Some(c) => match c.scope {
            Scope::Example(_) => Purpose::Examples(pass),
            Scope::Explore => Purpose::Explore,
            Scope::Startup => Purpose::Outside,
        },
    };
    // What the request was answered: the status and the tokens it used.
    let answered = |response: Option<&Response>| {
        charge.answered(
            response.map(|r| r.status),
            response.map(usage::tokens).unwrap_or_default(),
        );
    };
    if state.mode != Mode::Record {
        state
            .ledger
            .enter(upstream, purpose, state.mode == Mode::Live, charge.clone());
    }
    let scope = call.as_ref().map_or(Scope::Startup, |c| c.scope.clone());
    if let Some(call) = &call
        && let Some(plant) = &call.plant
        && plant.upstream == upstream
        && plant.occurrence == occurrence
        && matching::same(&plant.request, &request)
    {
        call.played();
        let recorded = find(state, upstream, &scope, &request, occurrence)
            .map(|x| x.response.clone())
            .unwrap_or(Response {
                status: 200,
                content_type: None,
                body: Body::Empty,
            });
        if plant.fault == Fault::Slow {
            call.hold();
        }
        return fault::play(plant.fault, &recorded, call.ended.clone(), state.limit).await;
    }
    let answer = match state.mode {
        Mode::Replay => {
            let exchange = find(state, upstream, &scope, &request, occurrence);
            answered(exchange.map(|x| &x.response));
            match exchange {
                Some(exchange) => respond(&exchange.response, None),
                None => missed(state, upstream, &scope, &request, call.as_deref()),
            }
        }
        Mode::Record => {
            let outgoing = Outgoing::of(&parts, bytes.clone());
            let (answer, real) =
                record(state, upstream, &scope, request, occurrence, &outgoing).await;
            answered(answer.as_ref().ok());
            state.ledger.enter(upstream, purpose, real, charge.clone());
            match answer {
                Ok(response) => {
                    let why = if transient(response.status) {
                        Some("a transient failure is never recorded")
                    } else if refused(response.status) {
                        Some(
                            "a refusal of the credentials is never recorded (is the key the agent sends one the service accepts?)",
                        )
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        let message = format!(
                            "upstream `{upstream}` answered HTTP {} while recording ({} {}): {why}, so {}",
                            response.status,
                            raw.method,
                            raw.path,
                            kept(state, &scope)
                        );
                        blame(state, call.as_deref(), message);
                    }
                    respond(&response, None)
                }
                Err(why) => {
                    let message = format!(
                        "upstream `{upstream}` could not be reached while recording ({} {}): {why}; {}",
                        raw.method,
                        raw.path,
                        kept(state, &scope)
                    );
                    blame(state, call.as_deref(), message.clone());
                    error(StatusCode::BAD_GATEWAY, &message)
                }
            }
        }
        Mode::Live => match live(state, upstream, Outgoing::of(&parts, bytes), &charge).await {
            Ok((response, headers)) => {
                if transient(response.status)
                    && let Some(call) = &call
                {
                    call.upstream_failed(format!(
                        "upstream `{upstream}` answered HTTP {} ({} {})",
                        response.status, raw.method, raw.path
                    ));
                }
                respond(&response, Some(headers))
            }
            Err(why) => {
                let message = format!(
                    "upstream `{upstream}` could not be reached ({} {}): {why}",
                    raw.method, raw.path
                );
                if let Some(call) = &call {
                    call.upstream_failed(message.clone());
                }
                error(StatusCode::BAD_GATEWAY, &message)
            }
        },
    };
    Some(answer)
}

/// A status a service answers on a bad day (a rate limit, an outage): never the contract.
pub(crate) fn transient(status: u16) -> bool {
    status == 429 || status >= 500
}

/// A status a service answers to credentials it does not take (a key unset, wrong or
/// revoked): never recorded over an answer.
pub(crate) fn refused(status: u16) -> bool {
    status == 401 || status == 403
}

/// What a record run keeps for `scope` when one of its calls could not be recorded: its
/// recording as it is, or nothing when it has none.
fn kept(state: &ProxyState, scope: &Scope) -> String {
    match (state.recorded.iter()).find(|r| r.recording.scope == *scope) {
        Some(read) => {
            let shown = read.path.strip_prefix(&state.base).unwrap_or(&read.path);
            format!("`{}` is kept as it is", shown.display())
        }
        None => format!("nothing is recorded for {}", scope.describe()),
    }
}

/// A path and its query pairs, as sent.
fn split(path_and_query: &str) -> (String, Vec<(String, String)>) {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let pairs = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect();
    (path.to_string(), pairs)
}

/// The recorded exchange that answers `request`: the `occurrence`-th of its scope's, else the
/// same request recorded anywhere (a retry, or a request explore and an example share).
fn find<'a>(
    state: &'a ProxyState,
    upstream: &str,
    scope: &Scope,
    request: &Request,
    occurrence: usize,
) -> Option<&'a Exchange> {
    let mut mine = state
        .recorded
        .iter()
        .filter(|r| r.recording.scope == *scope)
        .flat_map(|r| r.recording.exchanges.iter())
        .filter(|x| x.upstream == upstream && matching::same(&x.request, request));
    mine.nth(occurrence).or_else(|| {
        (state.recorded.iter())
            .flat_map(|r| r.recording.exchanges.iter())
            .find(|x| x.upstream == upstream && matching::same(&x.request, request))
    })
}

/// The answer to a request no recording holds (replay): a 404 the agent sees, and the report
/// charged to its call (or to the run, outside any call).
fn missed(
    state: &ProxyState,
    upstream: &str,
    scope: &Scope,
    request: &Request,
    call: Option<&Call>,
) -> HttpResponse<FaultyBody> {
    let report = no_recording(state, upstream, scope, request);
    match call {
        Some(call) => call.miss(report.clone()),
        None => {
            if let Ok(mut outside) = state.outside.lock() {
                outside.push(report.clone());
            }
        }
    }
    error(StatusCode::NOT_FOUND, &format!("holon-test: {report}"))
}

/// The report of a request no recording answers: what it was, the closest recorded one and
/// where it differs.
fn no_recording(state: &ProxyState, upstream: &str, scope: &Scope, request: &Request) -> String {
    let mut out = format!(
        "upstream `{upstream}` has no recording for a request of {}:\n  {} {}",
        scope.describe(),
        request.method,
        request.path
    );
    if !request.query.is_empty() {
        let q: Vec<String> = request
            .query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        out.push_str(&format!("?{}", q.join("&")));
    }
    for line in request.body.excerpt(8) {
        out.push_str(&format!("\n    {line}"));
    }
    let recorded = (state.recorded.iter()).flat_map(|r| {
        (r.recording.exchanges.iter().enumerate()).map(move |(i, x)| (&r.recording.scope, i, x))
    });
    match matching::closest(request, upstream, scope, recorded) {
        Some(c) => {
            let file = (state.recorded.iter())
                .find(|r| r.recording.scope == *c.scope)
                .map(|r| {
                    let shown = r.path.strip_prefix(&state.base).unwrap_or(&r.path);
                    shown.display().to_string()
                })
                .unwrap_or_default();
            out.push_str(&format!(
                "\n  the closest recorded request (`{file}`, exchange {}) differs {}",
                c.index + 1,
                c.difference
            ));
        }
        None => out.push_str(&format!(
            "\n  nothing is recorded for upstream `{upstream}`"
        )),
    }
    out
}

/// The answer a record run gives: the one this run already got for the same request of the
/// same example (its `occurrence`-th in the call), or the real service's, asked now.
async fn record(
    state: &ProxyState,
    upstream: &str,
    scope: &Scope,
    request: Request,
    occurrence: usize,
    outgoing: &Outgoing,
) -> (Result<Response, String>, bool) {
    let slot = {
        let Ok(mut fresh) = state.fresh.lock() else {
            return (Err("the recorder failed".into()), false);
        };
        let slots = fresh.entry(scope.clone()).or_default();
        let found = slots.iter().find(|s| {
            s.upstream == upstream
                && s.occurrence == occurrence
                && matching::same(&s.request, &request)
        });
        match found {
            Some(slot) => slot.clone(),
            None => {
                let slot = Arc::new(Slot {
                    upstream: upstream.to_string(),
                    request,
                    occurrence,
                    answer: tokio::sync::OnceCell::new(),
                });
                slots.push(slot.clone());
                slot
            }
        }
    };
    // Whether this request is the one that went to the real service: the others of the slot
    // are answered what it was.
    let real = std::sync::atomic::AtomicBool::new(false);
    let answer = slot
        .answer
        .get_or_init(|| async {
            real.store(true, std::sync::atomic::Ordering::SeqCst);
            let (mut answer, _) = forward(state, upstream, outgoing).await?;
            scrub::response(&state.secrets, &mut answer);
            // The recorded answer, when this one says the same but for its volatile fields:
            // the agent sees what replay will play, and the file is left as it is.
            let recorded = (state.recorded.iter())
                .filter(|r| r.recording.scope == *scope)
                .flat_map(|r| r.recording.exchanges.iter())
                .filter(|x| x.upstream == upstream && matching::same(&x.request, &slot.request))
                .nth(occurrence)
                .filter(|x| recording::equivalent(&x.response, &answer));
            Ok(match recorded {
                Some(x) => x.response.clone(),
                None => answer,
            })
        })
        .await
        .clone();
    (answer, real.into_inner())
}

/// A request to pass on to the real service, owned, so that it can be sent on after the agent
/// gave up on it.
struct Outgoing {
    method: String,
    path: String,
    headers: hyper::HeaderMap,
    bytes: Bytes,
}

impl Outgoing {
    fn of(parts: &hyper::http::request::Parts, bytes: Bytes) -> Outgoing {
        Outgoing {
            method: parts.method.as_str().to_string(),
            path: parts
                .uri
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .to_string(),
            headers: parts.headers.clone(),
            bytes,
        }
    }
}

/// A live request, sent on a task of its own: when the agent gives up on it (its client's
/// timeout), it is answered all the same, and paid for, so its answer is still counted on its
/// charge (late); the run waits for it before it counts its spend.
async fn live(
    state: &Arc<ProxyState>,
    upstream: &str,
    outgoing: Outgoing,
    charge: &Arc<Charge>,
) -> Result<(Response, hyper::HeaderMap), String> {
    let open = state.ledger.open();
    let (state, upstream, charge) = (state.clone(), upstream.to_string(), charge.clone());
    let sent = tokio::spawn(async move {
        let _open = open;
        let forwarded = forward(&state, &upstream, &outgoing).await;
        match &forwarded {
            Ok((response, _)) => charge.answered(Some(response.status), usage::tokens(response)),
            Err(_) => charge.answered(None, usage::Tokens::default()),
        }
        forwarded
    });
    sent.await
        .map_err(|e| format!("the request's task failed: {e}"))?
}

/// The request sent to the real service; its answer, and the headers to pass on in live mode.
async fn forward(
    state: &ProxyState,
    upstream: &str,
    request: &Outgoing,
) -> Result<(Response, hyper::HeaderMap), String> {
    let base = state
        .real
        .get(upstream)
        .ok_or_else(|| format!("no real URL is known for upstream `{upstream}`"))?;
    let url = format!("{}{}", base.trim_end_matches('/'), request.path);
    let method = reqwest::Method::from_bytes(request.method.as_bytes())
        .map_err(|e| format!("method `{}`: {e}", request.method))?;
    // A request an agent gave up on is still answered, and paid for: it is given a minute
    // more than a call has, for its answer to be counted (the run waits for it only so long).
    let mut outgoing = (state.client.request(method, &url)).timeout(state.limit + LATE);
    for (name, value) in &request.headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            outgoing = outgoing.header(name.as_str(), value.as_bytes());
        }
    }
    let mut answer = outgoing
        .body(request.bytes.to_vec())
        .send()
        .await
        .map_err(|e| error_chain(&e))?;
    let status = answer.status().as_u16();
    let headers = answer.headers().clone();
    let content_type = (headers.get(reqwest::header::CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(|e| error_chain(&e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("the answer is larger than {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    let mut passed = hyper::HeaderMap::new();
    for (name, value) in &headers {
        let name_text = name.as_str();
        if HOP_BY_HOP.contains(&name_text) || name_text == "content-type" {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            hyper::header::HeaderName::from_bytes(name_text.as_bytes()),
            HeaderValue::from_bytes(value.as_bytes()),
        ) {
            passed.append(n, v);
        }
    }
    Ok((
        Response {
            status,
            body: Body::read(content_type.as_deref(), &body),
            content_type,
        },
        passed,
    ))
}

/// An error and every cause under it, in one line.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(&format!(": {more}"));
        }
        source = s.source();
    }
    text
}

/// A failure of the upstream itself, charged to the call in flight (or to the run).
fn blame(state: &ProxyState, call: Option<&Call>, message: String) {
    match call {
        Some(call) => call.fail(message),
        None => {
            if let Ok(mut outside) = state.outside.lock() {
                outside.push(message);
            }
        }
    }
}

fn respond(response: &Response, headers: Option<hyper::HeaderMap>) -> HttpResponse<FaultyBody> {
    let mut out = HttpResponse::new(fault::full(Bytes::from(response.body.bytes())));
    *out.status_mut() = StatusCode::from_u16(response.status).unwrap_or(StatusCode::BAD_GATEWAY);
    if let Some(headers) = headers {
        out.headers_mut().extend(headers);
    }
    if let Some(c) = response
        .content_type
        .as_deref()
        .and_then(|c| HeaderValue::from_str(c).ok())
    {
        out.headers_mut().insert(CONTENT_TYPE, c);
    }
    out
}

/// An answer of the proxy itself, as JSON an SDK can read as an error.
fn error(status: StatusCode, message: &str) -> HttpResponse<FaultyBody> {
    let body = serde_json::json!({"error": {"message": message, "type": "holon_test", "code": "holon_test"}});
    let mut out = HttpResponse::new(fault::full(Bytes::from(body.to_string())));
    *out.status_mut() = status;
    out.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    out
}

/// What `Exchange`s a record run made, scrubbed, in order, for the scopes it made them for.
pub(crate) fn recorded(state: &ProxyState) -> Vec<(Scope, Vec<Exchange>)> {
    let Ok(fresh) = state.fresh.lock() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (scope, slots) in fresh.iter() {
        let mut exchanges = Vec::new();
        for slot in slots {
            // Scrubbed as it came (`record`).
            if let Some(Ok(response)) = slot.answer.get() {
                let response = response.clone();
                exchanges.push(Exchange {
                    upstream: slot.upstream.clone(),
                    request: slot.request.clone(),
                    response,
                });
            }
        }
        out.push((scope.clone(), exchanges));
    }
    out
}

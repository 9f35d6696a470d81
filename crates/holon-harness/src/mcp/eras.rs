//! Which MCP eras a server speaks, found as the specification's dual-era clients find it over
//! HTTP (`basic/versioning` of 2026-07-28): a 2026-07-28 request first, `server/discover` with
//! the `_meta` envelope and the `MCP-Protocol-Version` and `Mcp-Method` headers (an
//! `UnsupportedProtocolVersion` error's `supported` list read and a listed version retried, by
//! rmcp), and `initialize` on the signals the spec names, an HTTP 4xx or a JSON-RPC error that
//! is not a 2026-07-28 one: one fallback at most. A server that answered 2026-07-28 is asked
//! `initialize` once more when the run tests every era, carrying the envelope and the header so
//! that a 2026-07-28-only server reads a well-formed request it can refuse, to learn whether it
//! serves 2025-11-25 too. Every failure is one line naming the era and what was wrong.

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorCode, ErrorData, Implementation, ProtocolVersion,
    RequestMetaObject,
};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};

use super::words::{chain, excerpt, reason_of};
use crate::era::{Era, Protocol};
use crate::error::{EraFailure, ServerError};

/// The MCP client of one era.
pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

/// The longest one opening may take before it counts as no answer: a server still starting
/// is asked again (within the startup limit), one that answered already is not.
pub(crate) const OPENING: Duration = Duration::from_secs(5);

/// A client connected in one era, on the runtime that drives it (its tasks were spawned there,
/// so the thread that sends its calls drives that runtime and no other).
pub(crate) struct Spoken {
    /// The runtime the client's tasks run on.
    pub(crate) runtime: tokio::runtime::Runtime,
    /// The MCP client, opened in the era: every request it sends is of that era (in
    /// 2026-07-28, with the `_meta` envelope and the headers).
    pub(crate) client: Client,
    /// Whether its opening carried the 2026-07-28 envelope (an `initialize` to a server that
    /// speaks 2026-07-28 too): a client opened again opens the same way.
    pub(crate) enveloped: bool,
}

/// What a server did with a request that opens an era.
pub(crate) enum Opened {
    /// It answered in the era.
    Speaks(Box<Spoken>),
    /// Nothing answered (yet): no connection, or no answer in time. Why, as a predicate of
    /// "the server".
    Silent(String),
    /// It turned the era down the way the spec names: an HTTP 4xx, or a JSON-RPC error.
    Refused(Failure),
    /// It answered, but not as the era's rules say: a body that is not JSON-RPC, an HTTP 5xx,
    /// a broken envelope, a 2026-07-28 error for a request that keeps the rules.
    Broken(Failure),
    /// It wants credentials, or could not be spoken to at all (TLS): no other era can help.
    /// Why, as a predicate of "the server".
    Denied(String),
}

/// How a server answered the request that opens an era, when it did not speak it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    era: Era,
    /// What it answered, after "answered `server/discover` (2026-07-28) ": `with HTTP 404 ...`.
    how: String,
    /// The answer is not MCP at all (a page, a body that is not JSON-RPC).
    not_mcp: bool,
    /// The answer lists the versions the server supports.
    listed: bool,
}

impl Failure {
    fn new(era: Era, how: impl Into<String>) -> Failure {
        Failure {
            era,
            how: how.into(),
            not_mcp: false,
            listed: false,
        }
    }

    fn listing(era: Era, how: impl Into<String>) -> Failure {
        Failure {
            listed: true,
            ..Failure::new(era, how)
        }
    }

    fn not_mcp(era: Era, how: impl Into<String>) -> Failure {
        Failure {
            not_mcp: true,
            ..Failure::new(era, how)
        }
    }

    /// The failure as a predicate of "the server", beside an era it speaks.
    pub(crate) fn said(&self) -> String {
        format!("answered {} {}", opening(self.era), self.how)
    }

    /// The failure as a predicate of "the server", when it is all the server said: an answer
    /// that is not MCP says so.
    fn alone(&self) -> String {
        if self.not_mcp {
            format!("is not an MCP endpoint: it {}", self.said())
        } else {
            self.said()
        }
    }
}

/// `server/discover` (2026-07-28), `initialize` (2025-11-25): the request and its era.
pub(crate) fn opening(era: Era) -> String {
    format!("`{}` ({})", era.opening(), era.version())
}

/// Where a server is, and how to make the HTTP client that reaches it (its headers, its TLS
/// roots). Each opening gets a client of its own: a client's connections are driven by the
/// runtime that opened them, and each era's client lives on a runtime of its own.
pub(crate) struct Target<'a> {
    /// The MCP endpoint.
    pub(crate) url: &'a str,
    /// Makes the client every request of one opening goes through.
    pub(crate) http: &'a (dyn Fn() -> Result<reqwest::Client, ServerError> + Sync),
}

/// Opens a conversation in `era` with the server at `target`, within `limit`: `server/discover`
/// carrying the envelope and the headers, or `initialize` (carrying the envelope and the
/// header too when `enveloped`: the server answered 2026-07-28 already).
pub(crate) fn open(era: Era, target: &Target<'_>, enveloped: bool, limit: Duration) -> Opened {
    let runtime = match crate::flight::current_thread() {
        Ok(runtime) => runtime,
        Err(e) => return Opened::Denied(format!("could not be spoken to: no runtime: {e}")),
    };
    match runtime.block_on(connect(era, target, enveloped, limit)) {
        Ok(client) => speaks(era, runtime, client, enveloped),
        Err(opened) => opened,
    }
}

/// [`open`] on the runtime that awaits it, for a server started again during the run: the
/// client, or why it could not be had, as a predicate of "the server".
pub(crate) async fn reopen(
    era: Era,
    target: &Target<'_>,
    enveloped: bool,
    limit: Duration,
) -> Result<Client, EraFailure> {
    connect(era, target, enveloped, limit)
        .await
        .map_err(|opened| {
            EraFailure(match opened {
                Opened::Speaks(_) => String::new(),
                Opened::Silent(why) | Opened::Denied(why) => why,
                Opened::Refused(why) | Opened::Broken(why) => why.said(),
            })
        })
}

/// The opening itself, on the runtime that awaits it (the client's tasks are spawned there).
async fn connect(
    era: Era,
    target: &Target<'_>,
    enveloped: bool,
    limit: Duration,
) -> Result<Client, Opened> {
    let http =
        (target.http)().map_err(|e| Opened::Denied(format!("could not be spoken to: {e}")))?;
    // The harness bounds the calls in flight itself (`--concurrency`, where a fault call whose
    // answer the proxy holds back gives its place to the next); rmcp's own bound (16 POSTs
    // awaiting a JSON answer) would hold the rest back while their `timeout_s` runs.
    let mut config = StreamableHttpClientTransportConfig::with_uri(target.url.to_string())
        .max_concurrent_requests(usize::MAX);
    if enveloped && let Ok(version) = reqwest::header::HeaderValue::from_str(era.version()) {
        config.custom_headers.insert(
            reqwest::header::HeaderName::from_static("mcp-protocol-version"),
            version,
        );
    }
    let info = client_info(era, enveloped);
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let served = match era {
        Era::Modern => info.serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
        Era::Legacy => info.serve_with_lifecycle(transport, ClientLifecycleMode::Initialize),
    };
    match tokio::time::timeout(limit, served).await {
        Err(_) => Err(Opened::Silent(format!(
            "took the connection but gave no answer to {}{}",
            opening(era),
            match era {
                Era::Modern => format!(
                    "; a server that speaks only {legacy} and ignores `{}` is tested with `--protocol {legacy}`",
                    era.opening(),
                    legacy = Era::Legacy.version()
                ),
                Era::Legacy => String::new(),
            }
        ))),
        Ok(Err(error)) => Err(refusal(era, &error)),
        Ok(Ok(client)) => Ok(client),
    }
}

/// Who the harness says it is, and in 2026-07-28 (or an `initialize` sent beside it) the
/// envelope every request carries.
fn client_info(era: Era, enveloped: bool) -> ClientConfig {
    let implementation = Implementation::new("holon-test", env!("CARGO_PKG_VERSION"));
    let capabilities = ClientCapabilities::default();
    let mut info = ClientConfig::new(capabilities.clone(), implementation.clone())
        .with_protocol_version(match era {
            Era::Modern => ProtocolVersion::V_2026_07_28,
            Era::Legacy => ProtocolVersion::V_2025_11_25,
        });
    if enveloped && era == Era::Legacy {
        info.meta = Some(RequestMetaObject::with_client_context(
            ProtocolVersion::V_2025_11_25,
            implementation,
            capabilities,
        ));
    }
    info
}

/// A client that opened: it speaks the era, unless `initialize` named a version that has no
/// `initialize`.
fn speaks(era: Era, runtime: tokio::runtime::Runtime, client: Client, enveloped: bool) -> Opened {
    let negotiated = client.peer_info().map(|info| info.protocol_version.clone());
    match negotiated {
        Some(version) if Era::of_version(version.as_str()) != era => Opened::Broken(Failure::new(
            era,
            format!(
                "naming protocol version {version}, which is not of the {} era",
                era.version()
            ),
        )),
        _ => Opened::Speaks(Box::new(Spoken {
            runtime,
            client,
            enveloped,
        })),
    }
}

/// What a failed opening says of the server (see [`Opened`]).
fn refusal(era: Era, error: &ClientInitializeError) -> Opened {
    use ClientInitializeError as E;
    match error {
        E::JsonRpcError(data) => rpc_error(era, data),
        E::NoCompatibleProtocolVersion {
            server_supported, ..
        } => Opened::Refused(Failure::listing(
            era,
            format!(
                "listing only {}",
                versions(server_supported.iter().map(|v| v.as_str().to_string()))
            ),
        )),
        E::ExpectedInitResult(Some(result)) => {
            let value = serde_json::to_value(result).unwrap_or_default();
            Opened::Broken(Failure::new(era, not_a_result(era, &value)))
        }
        E::ExpectedInitResult(None) | E::ExpectedInitResponse(_) => Opened::Broken(Failure::new(
            era,
            format!(
                "with something other than the result of `{}`",
                era.opening()
            ),
        )),
        E::ConflictInitResponseId(..) | E::UncorrelatedErrorResponse { .. } => {
            Opened::Broken(Failure::new(
                era,
                "with the answer to another request (its `id` is not the request's)",
            ))
        }
        E::ConnectionClosed(_) => Opened::Silent(format!(
            "closed the connection before it answered {}",
            opening(era)
        )),
        E::TransportError { error, .. } => transport(era, error),
        other => Opened::Broken(Failure::new(
            era,
            format!("with an error: {}", chain(other)),
        )),
    }
}

/// A JSON-RPC error in answer to an opening. To `server/discover`, a 2026-07-28 error that a
/// request keeping the rules should never get is the server breaking them; any other error is
/// the spec's sign of a server of the other era.
fn rpc_error(era: Era, data: &ErrorData) -> Opened {
    let code = data.code.0;
    if era == Era::Modern && data.code == ErrorCode::HEADER_MISMATCH {
        return Opened::Broken(Failure::new(
            era,
            format!(
                "with HeaderMismatch ({code}: {}), though the request's `MCP-Protocol-Version` and `Mcp-Method` headers match its body",
                data.message
            ),
        ));
    }
    if era == Era::Modern && data.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
        return Opened::Broken(Failure::new(
            era,
            format!(
                "with MissingRequiredClientCapability ({code}: {}): a server that needs no client capability for `server/discover`",
                data.message
            ),
        ));
    }
    // rmcp words an HTTP 4xx to `server/discover` that carried no JSON-RPC error this way.
    if let Some(rest) = data
        .message
        .strip_prefix("server/discover rejected with HTTP ")
        && let Some(status) = rest.get(..3).and_then(|s| s.parse::<u16>().ok())
    {
        let body = rest.get(3..).unwrap_or_default();
        let body = body.split_once(": ").map_or("", |(_, b)| b);
        return Opened::Refused(status_failure(era, status, body));
    }
    let listed = data
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(|s| s.as_array())
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .filter(|list| !list.is_empty());
    let name = if data.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        format!("UnsupportedProtocolVersion ({code})")
    } else {
        format!("the JSON-RPC error {code}")
    };
    Opened::Refused(match listed {
        Some(list) => Failure::listing(era, format!("with {name}: it supports {}", versions(list))),
        None => Failure::new(era, format!("with {name}: {}", excerpt(&data.message))),
    })
}

/// `2026-07-28`, `2026-07-28 and 2025-11-25`.
fn versions(list: impl IntoIterator<Item = String>) -> String {
    let list: Vec<String> = list.into_iter().collect();
    match list.split_last() {
        None => "nothing".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// What the harness speaks, after a server turned both eras down.
fn speaks_too() -> String {
    format!(
        "; the harness speaks {} and {}",
        Era::Modern.version(),
        Era::Legacy.version()
    )
}

/// Why a result is not the opening's: for `server/discover`, the first field of a discover
/// result it lacks (`resultType` first: the envelope every 2026-07-28 result carries).
fn not_a_result(era: Era, value: &serde_json::Value) -> String {
    let fields: &[&str] = match era {
        Era::Modern => &[
            "resultType",
            "supportedVersions",
            "capabilities",
            "ttlMs",
            "cacheScope",
        ],
        Era::Legacy => &["protocolVersion", "capabilities", "serverInfo"],
    };
    let kind = match era {
        Era::Modern => "a `server/discover`",
        Era::Legacy => "an `initialize`",
    };
    match fields.iter().find(|f| value.get(**f).is_none()) {
        Some(field) if era == Era::Modern && *field == "resultType" => {
            "with a result that has no `resultType`, which every 2026-07-28 result carries"
                .to_string()
        }
        Some(field) => format!("with a result that is not {kind} result: it has no `{field}`"),
        None => format!(
            "with a result that is not {kind} result: {}",
            holon_core::message::short(value)
        ),
    }
}

/// A transport's failure: nothing there yet, a status, or an answer that is not JSON-RPC.
fn transport(era: Era, error: &(dyn std::error::Error + 'static)) -> Opened {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(http) = current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return match http {
                StreamableHttpError::HttpStatus(e) => status(era, e.status, ""),
                StreamableHttpError::AuthRequired(_) => status(era, 401, ""),
                StreamableHttpError::InsufficientScope(_) => status(era, 403, ""),
                StreamableHttpError::UnexpectedServerResponse(text) => {
                    match text
                        .strip_prefix("HTTP ")
                        .and_then(|t| Some((t.get(..3)?.parse::<u16>().ok()?, t.get(3..)?)))
                    {
                        Some((code, rest)) => {
                            status(era, code, rest.split_once(": ").map_or("", |(_, b)| b))
                        }
                        None => Opened::Broken(Failure::not_mcp(
                            era,
                            "with a body that is not JSON-RPC",
                        )),
                    }
                }
                StreamableHttpError::UnexpectedContentType(kind) => {
                    Opened::Broken(Failure::not_mcp(
                        era,
                        format!(
                            "with {} rather than JSON or an event stream",
                            match kind {
                                Some(kind) =>
                                    format!("`{}`", kind.split(';').next().unwrap_or(kind).trim()),
                                None => "no content type".to_string(),
                            }
                        ),
                    ))
                }
                StreamableHttpError::Deserialize(_) => {
                    Opened::Broken(Failure::not_mcp(era, "with a body that is not JSON-RPC"))
                }
                StreamableHttpError::Client(e) => unreachable_or(era, e),
                other => Opened::Silent(format!(
                    "gave no answer to {}: {}",
                    opening(era),
                    chain(other)
                )),
            };
        }
        if let Some(e) = current.downcast_ref::<reqwest::Error>() {
            return unreachable_or(era, e);
        }
        source = current.source();
    }
    Opened::Silent(format!(
        "gave no answer to {}: {}",
        opening(era),
        chain(error)
    ))
}

/// An HTTP error status in answer to an opening: credentials wanted (said at once, no other
/// era can help), a 4xx (the spec's sign of a server of the other era), or a 5xx (a failure).
fn status(era: Era, code: u16, body: &str) -> Opened {
    match code {
        401 | 403 => Opened::Denied(format!(
            "answered {} with HTTP {code} {}: it wants credentials (pass them with `--header`, e.g. `--header 'Authorization: Bearer ${{TOKEN}}'`)",
            opening(era),
            reason_of(code)
        )),
        400..=499 => Opened::Refused(status_failure(era, code, body)),
        _ => Opened::Broken(status_failure(era, code, body)),
    }
}

/// `with HTTP 404 Not Found: ...`, and what a 404 most likely means.
fn status_failure(era: Era, code: u16, body: &str) -> Failure {
    let mut how = format!("with HTTP {code} {}", reason_of(code));
    let line = excerpt(body);
    if code == 404 {
        how.push_str(
            ": is not an MCP endpoint (is the path right? the kit's runtime serves `/mcp`)",
        );
    } else if !line.is_empty() {
        how.push_str(&format!(": {line}"));
    }
    Failure::new(era, how)
}

/// A client error: nothing to connect to (asked again), or a TLS or protocol failure (said).
fn unreachable_or(era: Era, error: &reqwest::Error) -> Opened {
    // The innermost cause says it (`Connection refused`, `invalid peer certificate`); the
    // layers above it repeat the URL and the library's stages.
    let mut why = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        why = s.to_string();
        source = s.source();
    }
    if error.is_connect() && !why.to_lowercase().contains("certificate") {
        Opened::Silent(format!("could not be reached: {why}"))
    } else if error.is_timeout() || error.is_body() || error.is_request() {
        Opened::Silent(format!("gave no answer to {}: {why}", opening(era)))
    } else {
        Opened::Denied(format!("could not be spoken to: {why}"))
    }
}

/// The eras a server is tested in, newest first (the first is the one explore and the fault
/// trials call): each with its client, or why its answers in that era are wrong (every trial
/// of the era fails with it). `said` is the run's line about them.
pub(crate) struct Found {
    /// The eras, newest first.
    pub(crate) eras: Vec<(Era, Result<Box<Spoken>, EraFailure>)>,
    /// What the run says of the server's eras.
    pub(crate) said: String,
}

/// Which eras to test, once the server answered `first` to the run's first opening (the
/// newest era for `auto`): a fallback to `initialize` on a refusal, or, for `auto`, one more
/// `initialize` to learn whether a server that speaks 2026-07-28 speaks 2025-11-25 too; `open`
/// makes an opening (`enveloped`: beside a 2026-07-28 answer). `Err` when no era can be
/// tested, in one line, a predicate of "the server".
pub(crate) fn settle(
    protocol: Protocol,
    first: Opened,
    open: impl Fn(Era, bool) -> Opened,
) -> Result<Found, EraFailure> {
    let both = "each example's MCP trial ran in both (`mcp::` in 2026-07-28, `mcp::2025-11-25::` in 2025-11-25); explore and the fault trials in 2026-07-28 only";
    match (protocol, first) {
        (_, Opened::Silent(why) | Opened::Denied(why)) => Err(EraFailure(why)),
        (Protocol::Only(era), Opened::Speaks(spoken)) => Ok(Found {
            eras: vec![(era, Ok(spoken))],
            said: format!(
                "tested in {} only, as `--protocol {}` asks",
                era.version(),
                era.version()
            ),
        }),
        (Protocol::Auto, Opened::Speaks(modern)) => match open(Era::Legacy, true) {
            Opened::Speaks(legacy) => Ok(Found {
                eras: vec![(Era::Modern, Ok(modern)), (Era::Legacy, Ok(legacy))],
                said: format!("the server speaks 2026-07-28 and 2025-11-25: {both}"),
            }),
            Opened::Refused(why) => Ok(Found {
                eras: vec![(Era::Modern, Ok(modern))],
                said: format!(
                    "the server speaks 2026-07-28 only, and was tested in it (it {})",
                    why.said()
                ),
            }),
            Opened::Broken(why) => {
                let why = why.said();
                Ok(Found {
                    eras: vec![
                        (Era::Modern, Ok(modern)),
                        (Era::Legacy, Err(EraFailure(why.clone()))),
                    ],
                    said: format!(
                        "the server speaks 2026-07-28, and answers 2025-11-25 wrongly (it {why}): {both}"
                    ),
                })
            }
            Opened::Silent(why) | Opened::Denied(why) => Ok(Found {
                eras: vec![
                    (Era::Modern, Ok(modern)),
                    (Era::Legacy, Err(EraFailure(why.clone()))),
                ],
                said: format!(
                    "the server speaks 2026-07-28, and answers 2025-11-25 wrongly (it {why}): {both}"
                ),
            }),
        },
        (Protocol::Auto, Opened::Refused(modern)) => match open(Era::Legacy, false) {
            Opened::Speaks(legacy) => Ok(Found {
                eras: vec![(Era::Legacy, Ok(legacy))],
                said: format!(
                    "the server speaks 2025-11-25 only, and was tested in it (it {})",
                    modern.said()
                ),
            }),
            Opened::Refused(legacy) | Opened::Broken(legacy) => {
                Err(EraFailure(neither(&modern, &legacy)))
            }
            Opened::Silent(why) | Opened::Denied(why) => {
                Err(EraFailure(format!("{}; it {why}", modern.alone())))
            }
        },
        // Not the spec's sign of a server of the other era: the 2026-07-28 trials fail with
        // it. The one `initialize` that follows says whether the 2025-11-25 ones can run.
        (Protocol::Auto, Opened::Broken(modern)) => match open(Era::Legacy, false) {
            Opened::Speaks(legacy) => {
                let why = modern.said();
                Ok(Found {
                    eras: vec![
                        (Era::Modern, Err(EraFailure(why.clone()))),
                        (Era::Legacy, Ok(legacy)),
                    ],
                    said: format!(
                        "the server speaks 2025-11-25, and answers 2026-07-28 wrongly (it {why}): {both}"
                    ),
                })
            }
            Opened::Refused(legacy) | Opened::Broken(legacy) => {
                Err(EraFailure(neither(&modern, &legacy)))
            }
            Opened::Silent(_) | Opened::Denied(_) => Err(EraFailure(modern.alone())),
        },
        (Protocol::Only(_), Opened::Broken(why)) => Err(EraFailure(why.alone())),
        (Protocol::Only(era), Opened::Refused(why)) => match open(era.other(), false) {
            Opened::Speaks(_) => Err(EraFailure(format!(
                "speaks only {other}, which `--protocol {pinned}` leaves out (it {}): test it with `--protocol {other}`, or `--protocol auto` for every era it speaks",
                why.said(),
                other = era.other().version(),
                pinned = era.version(),
            ))),
            Opened::Refused(second) | Opened::Broken(second) => {
                Err(EraFailure(neither(&why, &second)))
            }
            Opened::Silent(_) | Opened::Denied(_) => Err(EraFailure(why.alone())),
        },
    }
}

/// Both eras turned down, in one line: said once when both answers were the same.
fn neither(first: &Failure, second: &Failure) -> String {
    let said = if first.how == second.how && first.not_mcp == second.not_mcp {
        let said = format!(
            "answered {} and {} {}",
            opening(first.era),
            opening(second.era),
            first.how
        );
        if first.not_mcp {
            format!("is not an MCP endpoint: it {said}")
        } else {
            said
        }
    } else {
        format!("{}; it {}", first.alone(), second.alone())
    };
    if first.listed || second.listed {
        format!("{said}{}", speaks_too())
    } else {
        said
    }
}

/// A server already running: its answer to the run's first opening, asked again while nothing
/// answers (polled with backoff: a server still starting gives no other sign), within `limit`.
pub(crate) fn first_answer(era: Era, target: &Target<'_>, limit: Duration) -> Opened {
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(20);
    loop {
        let left = limit.saturating_sub(started.elapsed());
        match open(era, target, false, left.max(Duration::from_millis(1))) {
            Opened::Silent(_) if started.elapsed() + pause < limit => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(500));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(era: Era, how: &str) -> Opened {
        Opened::Refused(Failure::new(era, how))
    }

    /// What `settle` said, for an outcome with no era to test.
    fn said(protocol: Protocol, first: Opened, then: impl Fn(Era, bool) -> Opened) -> String {
        match settle(protocol, first, then) {
            Err(EraFailure(why)) => why,
            Ok(found) => panic!("settled on {} eras: {}", found.eras.len(), found.said),
        }
    }

    #[test]
    fn two_refusals_are_one_line_and_the_same_one_is_said_once() {
        let page = "with HTTP 404 Not Found: is not an MCP endpoint";
        let both = said(
            Protocol::Auto,
            refused(Era::Modern, page),
            |era, enveloped| {
                assert_eq!((era, enveloped), (Era::Legacy, false), "one plain fallback");
                refused(Era::Legacy, page)
            },
        );
        assert_eq!(
            both,
            "answered `server/discover` (2026-07-28) and `initialize` (2025-11-25) with HTTP 404 Not Found: is not an MCP endpoint"
        );
        let listed = said(
            Protocol::Auto,
            Opened::Refused(Failure::listing(Era::Modern, "listing only 2027-01-01")),
            |_, _| {
                refused(
                    Era::Legacy,
                    "with the JSON-RPC error -32601: Method not found",
                )
            },
        );
        assert!(!listed.contains('\n'), "{listed}");
        assert!(
            listed.ends_with("; the harness speaks 2026-07-28 and 2025-11-25"),
            "{listed}"
        );
    }

    #[test]
    fn an_answer_that_is_not_mcp_says_so_when_it_is_all_there_is() {
        let text = Failure::not_mcp(Era::Modern, "with `text/plain` rather than JSON");
        assert_eq!(
            text.said(),
            "answered `server/discover` (2026-07-28) with `text/plain` rather than JSON"
        );
        let alone = said(Protocol::Only(Era::Modern), Opened::Broken(text), |_, _| {
            panic!("a broken answer is no sign of another era")
        });
        assert_eq!(
            alone,
            "is not an MCP endpoint: it answered `server/discover` (2026-07-28) with `text/plain` rather than JSON"
        );
    }

    #[test]
    fn no_answer_and_credentials_wanted_end_it_without_another_era() {
        for first in [
            Opened::Silent("could not be reached: Connection refused".into()),
            Opened::Denied("answered `server/discover` (2026-07-28) with HTTP 401".into()),
        ] {
            let why = said(Protocol::Auto, first, |_, _| {
                panic!("no other era is asked")
            });
            assert!(!why.is_empty());
        }
    }

    #[test]
    fn a_result_that_is_not_the_opening_s_names_what_it_lacks() {
        let value = serde_json::json!({"supportedVersions": ["2026-07-28"], "capabilities": {}});
        assert_eq!(
            not_a_result(Era::Modern, &value),
            "with a result that has no `resultType`, which every 2026-07-28 result carries"
        );
        let value = serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}});
        assert_eq!(
            not_a_result(Era::Legacy, &value),
            "with a result that is not an `initialize` result: it has no `serverInfo`"
        );
        assert_eq!(versions(["a".to_string()]), "a");
        assert_eq!(versions(["a", "b", "c"].map(String::from)), "a, b and c");
    }
}

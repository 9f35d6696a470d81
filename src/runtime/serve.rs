//! `serve`: one agent function as an MCP server over Streamable HTTP, with exactly one tool.

use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::connections::Connections;
use super::endpoint::Endpoint;
use super::limits::ServerLimits;
use super::{Agent, Answer, Ctx, Runner};
use crate::check;
use crate::manifest::Manifest;

/// A manifest compiled into the binary; build it with [`crate::manifest!`].
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedManifest {
    /// The path it was read from at build time (messages only).
    pub path: &'static str,
    /// Its text.
    pub text: &'static str,
}

/// Embeds the package's `holon.yaml` in the binary:
/// `holon_kit::serve(holon_kit::manifest!(), ...)`. `manifest!("other.yaml")` takes another
/// file, relative to the package root.
#[macro_export]
macro_rules! manifest {
    () => {
        $crate::manifest!("holon.yaml")
    };
    ($file:literal) => {
        $crate::runtime::EmbeddedManifest {
            path: concat!(env!("CARGO_MANIFEST_DIR"), "/", $file),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $file)),
        }
    };
}

/// Why the server could not start or stopped with an error.
#[derive(thiserror::Error)]
pub enum ServeError {
    /// The manifest fails the publish checks; the rendered diagnostics follow.
    #[error("the manifest was refused:\n{0}")]
    Refused(String),
    /// `PORT` or `HOST` is not usable.
    #[error("{0}")]
    Config(String),
    /// Binding or serving failed.
    #[error("cannot serve on {addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
}

// `fn main() -> Result<(), ServeError>` prints the Debug form: make it the readable one.
impl fmt::Debug for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Where the server listens, which manifest it uses and its limits, from the environment:
/// `HOST` (default `127.0.0.1`), `PORT` (default `8080`; `0` picks a free one),
/// `HOLON_MANIFEST` (a path that replaces the embedded manifest) and the `HOLON_*` variables of
/// [`ServerLimits`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address to bind.
    pub addr: SocketAddr,
    /// A manifest file to use instead of the embedded one.
    pub manifest_path: Option<std::path::PathBuf>,
    /// Timeouts, the connection cap, allowed origins, the shutdown grace.
    pub limits: ServerLimits,
}

impl ServeOptions {
    /// Reads `HOST`, `PORT`, `HOLON_MANIFEST` and the limits' variables.
    pub fn from_env() -> Result<ServeOptions, ServeError> {
        let host = std::env::var("HOST").unwrap_or_else(|_| "127.0.0.1".into());
        let port = match std::env::var("PORT") {
            Ok(p) => p.trim().parse::<u16>().map_err(|_| {
                ServeError::Config(format!("`PORT` must be a port number, not `{p}`"))
            })?,
            Err(_) => 8080,
        };
        let ip: std::net::IpAddr = host.parse().map_err(|_| {
            ServeError::Config(format!("`HOST` must be an IP address, not `{host}`"))
        })?;
        Ok(ServeOptions {
            addr: SocketAddr::new(ip, port),
            manifest_path: std::env::var_os("HOLON_MANIFEST").map(Into::into),
            limits: ServerLimits::from_env()?,
        })
    }
}

/// Serves `agent` as an MCP server until SIGTERM or Ctrl-C, on its own tokio runtime. On the
/// signal it stops accepting, closes idle and half-sent connections at once, lets calls in
/// flight finish and answer (for `timeout_s` plus [`ServerLimits::shutdown_grace`] at most),
/// then returns `Ok`.
///
/// ```no_run
/// # async fn run(input: serde_json::Value, _ctx: holon_kit::Ctx) -> Result<serde_json::Value, holon_kit::Failure> { Ok(input) }
/// fn main() -> Result<(), holon_kit::ServeError> {
///     holon_kit::serve(holon_kit::manifest!("examples/word-stats/holon.yaml"), holon_kit::agent(run))
/// }
/// ```
pub fn serve(manifest: EmbeddedManifest, agent: Arc<dyn Agent>) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Runtime::new().map_err(|source| ServeError::Io {
        addr: "a tokio runtime".into(),
        source,
    })?;
    let served = runtime.block_on(serve_async(manifest, agent, ServeOptions::from_env()?));
    // A function still blocking a worker thread past the drain must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

/// [`serve`] inside a tokio runtime you already have, with explicit options.
pub async fn serve_async(
    manifest: EmbeddedManifest,
    agent: Arc<dyn Agent>,
    options: ServeOptions,
) -> Result<(), ServeError> {
    let manifest = load(manifest, options.manifest_path.as_deref())?;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        stop.cancel();
    });
    let server = Server::bind(manifest, agent, options.addr, shutdown)
        .await?
        .with_limits(options.limits);
    eprintln!(
        "{} {}: listening on http://{}/mcp (tool `{}`)",
        server.runner.manifest().name,
        server.runner.manifest().version,
        server.addr,
        server.runner.manifest().runtime.tool
    );
    server.run().await;
    Ok(())
}

fn load(
    embedded: EmbeddedManifest,
    replacement: Option<&std::path::Path>,
) -> Result<Manifest, ServeError> {
    // Both are checked as text: a deployed server has no `files/` folder for example handles.
    let report = match replacement {
        Some(path) => {
            let bytes = check::read_manifest(path).map_err(|message| {
                ServeError::Config(format!("cannot use `HOLON_MANIFEST`: {message}"))
            })?;
            let text = String::from_utf8(bytes).map_err(|_| {
                ServeError::Config(format!(
                    "cannot use `HOLON_MANIFEST`: `{}` is not UTF-8 text",
                    path.display()
                ))
            })?;
            check::check_str(&text, path)
        }
        None => check::check_str(embedded.text, std::path::Path::new(embedded.path)),
    };
    report
        .into_manifest()
        .map_err(|r| ServeError::Refused(check::render_human(&r, false)))
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A bound server, not yet serving. Tests and the harness use it to serve in-process.
pub struct Server {
    runner: Runner,
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    shutdown: CancellationToken,
    limits: ServerLimits,
}

impl Server {
    /// Binds `addr` for a checked manifest; `shutdown` stops it.
    pub async fn bind(
        manifest: Manifest,
        agent: Arc<dyn Agent>,
        addr: SocketAddr,
        shutdown: CancellationToken,
    ) -> Result<Server, ServeError> {
        let runner = Runner::new(Arc::new(manifest), agent).map_err(ServeError::Config)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Io {
                addr: addr.to_string(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Io {
            addr: addr.to_string(),
            source,
        })?;
        Ok(Server {
            runner,
            listener,
            addr,
            shutdown,
            limits: ServerLimits::default(),
        })
    }

    /// The same server with other limits (the defaults otherwise).
    pub fn with_limits(mut self, limits: ServerLimits) -> Server {
        self.limits = limits;
        self
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the shutdown token is cancelled. Then it stops accepting, closes every
    /// connection with no call running (idle, or still sending its request), lets the calls in
    /// flight finish and answer, and returns; it waits `timeout_s` plus the shutdown grace at
    /// most, so it always returns.
    pub async fn run(self) {
        let limits = self.limits;
        let drain_within = self.runner.manifest().runtime.limits.timeout() + limits.shutdown_grace;
        // rmcp's own token is cancelled only after the drain: cancelling it with the signal
        // would fail the calls in flight with HTTP 500.
        let rmcp_stop = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(max_request_body_bytes(self.runner.manifest()))
            .with_cancellation_token(rmcp_stop.clone())
            .with_allowed_origins(allowed_origins(&limits.allowed_origins))
            .enforce_origin_validation();
        if !self.addr.ip().is_loopback() {
            // Off loopback the server is deployed behind the gateway, which sets its own Host.
            config = config.disable_allowed_hosts();
        }
        let handler = Handler::new(self.runner.clone());
        let endpoint = Arc::new(Endpoint {
            mcp: StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::new(NeverSessionManager::default()),
                config,
            ),
            body_limit: max_request_body_bytes(self.runner.manifest()),
            body_timeout: limits.body_timeout,
        });
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let connections = Connections::new(limits.max_connections);
        let tracker = TaskTracker::new();
        // Cancelled once the listener is closed, so no connection is closed while new ones are
        // still accepted.
        let drain = CancellationToken::new();
        loop {
            let stream = tokio::select! {
                _ = self.shutdown.cancelled() => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    // A failed accept (e.g. out of file descriptors) must not end the server,
                    // nor spin: give the other connections a moment to close.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                },
            };
            let connection = tokio::select! {
                _ = self.shutdown.cancelled() => break,
                admitted = connections.admit() => admitted,
            };
            let _ = stream.set_nodelay(true);
            let endpoint = Arc::clone(&endpoint);
            let drain = drain.clone();
            let http = http.clone();
            tracker.spawn(async move {
                let calls = connection.calls();
                let service = service_fn(move |request: hyper::Request<Incoming>| {
                    let answer = Arc::clone(&endpoint).answer(request, Arc::clone(&calls));
                    async move { Ok::<_, Infallible>(answer.await) }
                });
                let served = http.serve_connection(TokioIo::new(stream), service);
                tokio::pin!(served);
                tokio::select! {
                    _ = served.as_mut() => {}
                    // Closed to make room for a new connection: it had no call running.
                    _ = connection.evicted().cancelled() => {}
                    _ = drain.cancelled() => {
                        if connection.busy() {
                            served.as_mut().graceful_shutdown();
                            let _ = served.await;
                        }
                    }
                }
                drop(connection);
            });
        }
        drop(self.listener);
        drain.cancel();
        tracker.close();
        let _ = tokio::time::timeout(drain_within, tracker.wait()).await;
        rmcp_stop.cancel();
    }
}

/// The origins a browser may call from: loopback ones on any port, and the configured ones.
fn allowed_origins(configured: &[String]) -> Vec<String> {
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
        .collect();
    origins.extend(configured.iter().cloned());
    origins
}

/// The largest request body the server reads; a larger one is refused with HTTP 413 before it
/// is parsed. The JSON-RPC envelope and string escapes add to the arguments, so it is twice
/// `runtime.limits.max_input_bytes` plus 64 KiB, and never below rmcp's own 4 MiB.
pub fn max_request_body_bytes(manifest: &Manifest) -> usize {
    usize::try_from(manifest.runtime.limits.max_input_bytes)
        .unwrap_or(usize::MAX)
        .saturating_mul(2)
        .saturating_add(64 * 1024)
        .max(4 * 1024 * 1024)
}

#[derive(Clone)]
struct Handler {
    runner: Runner,
    tool: Arc<Tool>,
}

impl Handler {
    fn new(runner: Runner) -> Handler {
        let tool = Arc::new(tool(runner.manifest()));
        Handler { runner, tool }
    }
}

/// The one tool: `runtime.tool`, described by `description`, `interface.input` as its input
/// schema, and an output schema honest for every result the server sends.
pub fn tool(manifest: &Manifest) -> Tool {
    let input = as_object(&manifest.interface.input);
    Tool::new(
        manifest.runtime.tool.clone(),
        manifest.description.clone(),
        Arc::new(input),
    )
    .with_raw_output_schema(Arc::new(as_object(&output_schema(manifest))))
}

fn as_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(o) => o.clone(),
        // A checked manifest's schemas are objects; `true` would mean "anything".
        _ => JsonObject::new(),
    }
}

/// `{type: object, anyOf: [interface.output, the error envelope]}`: strict MCP clients (the
/// official TypeScript SDK) validate `structuredContent` against `outputSchema` even when
/// `isError` is true, so the schema must admit the failures the server sends too.
pub fn output_schema(manifest: &Manifest) -> Value {
    let mut codes: Vec<Value> = manifest
        .interface
        .errors
        .iter()
        .map(|e| Value::String(e.code.clone()))
        .collect();
    for reserved in ["agent_crashed", "invalid_input", "timeout"] {
        codes.push(Value::String(reserved.into()));
    }
    let mut output = manifest.interface.output.clone();
    if let Value::Object(o) = &mut output {
        // A nested schema may not carry `$schema`; an `$id` keeps its `#/...` references local.
        o.remove("$schema");
        if !o.contains_key("$id") && output_has_local_refs(&manifest.interface.output) {
            o.insert(
                "$id".into(),
                Value::String(format!(
                    "urn:holon:{}:{}:output",
                    manifest.name, manifest.version
                )),
            );
        }
    }
    json!({
        "type": "object",
        "anyOf": [
            output,
            {
                "type": "object",
                "additionalProperties": false,
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": { "enum": codes },
                            "message": { "type": "string" }
                        }
                    }
                }
            }
        ]
    })
}

fn output_has_local_refs(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if o.get("$ref")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.starts_with('#'))
                {
                    return true;
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    false
}

/// The tool result for an answer: success as `structuredContent` plus the same JSON as text;
/// a failure as `isError: true` with `structuredContent.error.{code, message}`.
pub fn result(answer: Answer) -> CallToolResult {
    match answer {
        Answer::Output(value) => CallToolResult::structured(value),
        Answer::Error { code, message } => CallToolResult::structured_error(
            json!({ "error": { "code": code, "message": message } }),
        ),
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let m = self.runner.manifest();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(m.name.clone(), m.version.clone()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.tool).clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != self.tool.name {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`: this server has one tool, `{}`",
                    request.name, self.tool.name
                ),
                None,
            ));
        }
        let input = Value::Object(request.arguments.unwrap_or_default());
        // rmcp moves the request's `_meta` into the context.
        let ctx = Ctx::from_meta(context.meta.get(super::files::META_KEY));
        Ok(result(self.runner.run(input, ctx).await).into())
    }
}

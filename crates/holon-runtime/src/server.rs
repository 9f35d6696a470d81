//! A bound server and its accept loop: the connection cap, the header and body timeouts, the
//! Origin check, and the drain on shutdown.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::config::ServerLimits;
use super::connections::{Connection, Connections};
use super::endpoint::Endpoint;
use super::tool::Handler;
use super::{Agent, Runner, ServeError};
use holon_core::manifest::Manifest;

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
        let runner = Runner::new(Arc::new(manifest), agent);
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
    pub(crate) fn with_limits(mut self, limits: ServerLimits) -> Server {
        self.limits = limits;
        self
    }

    /// The manifest it serves.
    pub(crate) fn manifest(&self) -> &Manifest {
        self.runner.manifest()
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
            tracker.spawn(serve_connection(
                stream,
                connection,
                Arc::clone(&endpoint),
                http.clone(),
                drain.clone(),
            ));
        }
        drop(self.listener);
        drain.cancel();
        tracker.close();
        let _ = tokio::time::timeout(drain_within, tracker.wait()).await;
        rmcp_stop.cancel();
    }
}

/// One connection, until the client closes it, it is evicted to make room (it had no call
/// running), or the drain: then a call still running finishes and answers, anything else is
/// closed at once.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    connection: Connection,
    endpoint: Arc<Endpoint<Handler>>,
    http: http1::Builder,
    drain: CancellationToken,
) {
    let calls = connection.calls();
    let service = service_fn(move |request: hyper::Request<Incoming>| {
        let answer = Arc::clone(&endpoint).answer(request, Arc::clone(&calls));
        async move { Ok::<_, Infallible>(answer.await) }
    });
    let served = http.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(served);
    tokio::select! {
        _ = served.as_mut() => {}
        _ = connection.evicted().cancelled() => {}
        _ = drain.cancelled() => {
            if connection.busy() {
                served.as_mut().graceful_shutdown();
                let _ = served.await;
            }
        }
    }
    drop(connection);
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

//! What the environment configures: where the server listens, the manifest that replaces the
//! embedded one, and the server's limits and timeouts (how long a client may take to send a
//! request, how many connections are open at once, which browser origins may call, and how
//! long a shutdown waits).

use std::net::SocketAddr;
use std::time::Duration;

use super::ServeError;

/// Where the server listens, which manifest it uses and its limits, from the environment:
/// `HOST` (default `127.0.0.1`), `PORT` (default `8080`; `0` picks a free one),
/// `HOLON_MANIFEST` (a path that replaces the embedded manifest), `HOLON_BLESS` and the
/// `HOLON_*` variables of [`ServerLimits`].
#[derive(Debug, Clone)]
pub(crate) struct ServeOptions {
    /// The address to bind.
    pub(crate) addr: SocketAddr,
    /// A manifest file to use instead of the embedded one.
    pub(crate) manifest_path: Option<std::path::PathBuf>,
    /// `HOLON_BLESS=1`: the server of a test run that blesses, which takes a manifest whose
    /// only errors are example outputs `interface.output` no longer admits (the run is writing
    /// the agent's answers over them).
    pub(crate) blessing: bool,
    /// Timeouts, the connection cap, allowed origins, the shutdown grace.
    pub(crate) limits: ServerLimits,
}

impl ServeOptions {
    /// Reads `HOST`, `PORT`, `HOLON_MANIFEST` and the limits' variables.
    pub(crate) fn from_env() -> Result<ServeOptions, ServeError> {
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
            blessing: std::env::var("HOLON_BLESS").is_ok_and(|v| v.trim() == "1"),
            limits: ServerLimits::from_env()?,
        })
    }
}

/// What a served agent allows its clients, and how long a shutdown waits. [`Default`] holds the
/// values the guide's table lists (`docs/src/reference/runtime.md`); [`ServerLimits::from_env`] reads the `HOLON_*` variables
/// over them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub(crate) struct ServerLimits {
    /// Time to send a request's head, from the moment the connection opens or the previous
    /// answer is written: so it also closes a kept-alive connection left idle
    /// (`HOLON_HEADER_TIMEOUT_S`, default 5 s).
    pub(crate) header_timeout: Duration,
    /// Time to send a request's body once its head arrived (`HOLON_BODY_TIMEOUT_S`, default
    /// 10 s); past it the answer is HTTP 408 and the connection is closed.
    pub(crate) body_timeout: Duration,
    /// Connections open at once (`HOLON_MAX_CONNECTIONS`, default 512). At the cap, the oldest
    /// connection with no call running is closed to make room; when every one has a call
    /// running, new connections wait in the listen queue.
    pub(crate) max_connections: usize,
    /// Browser origins allowed beside loopback ones (`HOLON_ALLOWED_ORIGINS`, comma-separated,
    /// e.g. `https://app.example.com`, `https://app.example.com:*`). A request with no
    /// `Origin` header (any non-browser client) always passes.
    pub(crate) allowed_origins: Vec<String>,
    /// How long a shutdown waits past `runtime.limits.timeout_s` for calls in flight
    /// (`HOLON_SHUTDOWN_GRACE_S`, default 5 s).
    pub(crate) shutdown_grace: Duration,
}

impl Default for ServerLimits {
    fn default() -> ServerLimits {
        ServerLimits {
            header_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(10),
            max_connections: 512,
            allowed_origins: Vec::new(),
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

impl ServerLimits {
    /// The defaults, each replaced by its `HOLON_*` variable when set; a variable that is not
    /// a valid value is an error that names it.
    pub(crate) fn from_env() -> Result<ServerLimits, ServeError> {
        let mut limits = ServerLimits::default();
        if let Some(d) = seconds("HOLON_HEADER_TIMEOUT_S")? {
            limits.header_timeout = d;
        }
        if let Some(d) = seconds("HOLON_BODY_TIMEOUT_S")? {
            limits.body_timeout = d;
        }
        if let Some(d) = seconds("HOLON_SHUTDOWN_GRACE_S")? {
            limits.shutdown_grace = d;
        }
        if let Some(text) = var("HOLON_MAX_CONNECTIONS")? {
            limits.max_connections = text
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    ServeError::Config(format!(
                        "`HOLON_MAX_CONNECTIONS` must be a whole number above 0, not `{text}`"
                    ))
                })?;
        }
        if let Some(text) = var("HOLON_ALLOWED_ORIGINS")? {
            limits.allowed_origins = text
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(str::to_string)
                .collect();
        }
        Ok(limits)
    }
}

fn var(name: &str) -> Result<Option<String>, ServeError> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(ServeError::Config(format!("`{name}` is not UTF-8 text")))
        }
    }
}

/// A duration in seconds, fractions allowed (`0.5`), above 0 and at most a day.
fn seconds(name: &str) -> Result<Option<Duration>, ServeError> {
    let Some(text) = var(name)? else {
        return Ok(None);
    };
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 86_400.0)
        .map(|s| Some(Duration::from_secs_f64(s)))
        .ok_or_else(|| {
            ServeError::Config(format!(
                "`{name}` must be a number of seconds above 0 and at most 86400, not `{text}`"
            ))
        })
}

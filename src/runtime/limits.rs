//! The server's limits and timeouts: how long a client may take to send a request, how many
//! connections are open at once, which browser origins may call, and how long a shutdown waits.

use std::time::Duration;

use super::ServeError;

/// What a served agent allows its clients, and how long a shutdown waits. [`Default`] holds the
/// values the README's table lists; [`ServerLimits::from_env`] reads the `HOLON_*` variables
/// over them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerLimits {
    /// Time to send a request's head, from the moment the connection opens or the previous
    /// answer is written: so it also closes a kept-alive connection left idle
    /// (`HOLON_HEADER_TIMEOUT_S`, default 5 s).
    pub header_timeout: Duration,
    /// Time to send a request's body once its head arrived (`HOLON_BODY_TIMEOUT_S`, default
    /// 10 s); past it the answer is HTTP 408 and the connection is closed.
    pub body_timeout: Duration,
    /// Connections open at once (`HOLON_MAX_CONNECTIONS`, default 512). At the cap, the oldest
    /// connection with no call running is closed to make room; when every one has a call
    /// running, new connections wait in the listen queue.
    pub max_connections: usize,
    /// Browser origins allowed beside loopback ones (`HOLON_ALLOWED_ORIGINS`, comma-separated,
    /// e.g. `https://app.example.com`, `https://app.example.com:*`). A request with no
    /// `Origin` header (any non-browser client) always passes.
    pub allowed_origins: Vec<String>,
    /// How long a shutdown waits past `runtime.limits.timeout_s` for calls in flight
    /// (`HOLON_SHUTDOWN_GRACE_S`, default 5 s).
    pub shutdown_grace: Duration,
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
    pub fn from_env() -> Result<ServerLimits, ServeError> {
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

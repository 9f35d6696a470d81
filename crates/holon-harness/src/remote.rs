//! A server already running (`--url`, `HOLON_SERVER_URL`): its address, the headers sent with
//! every request (`--header`, `${VAR}` taken from the environment, a value never printed), the
//! TLS roots (the platform's, and `--ca-cert`), and the comparison of the manifest it announces
//! with the one under test; and the MCP pass's HTTP client, for it and for a server the pass
//! starts. (How it is reached, in each era, is `mcp::eras`.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{AddressError, RemoteError, ServerError};
use crate::provenance;
use holon_core::manifest::Manifest;
use holon_core::manifest::identity::Identity;

/// One `--header 'NAME: VALUE'`: its value is never printed (`Debug` shows `NAME: ***`).
#[derive(Clone)]
pub struct Header {
    name: String,
    value: String,
}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl Header {
    /// `NAME: ***`, the only way a header is ever shown.
    pub fn shown(&self) -> String {
        format!("{}: ***", self.name)
    }

    /// The header with every `${VAR}` in its value replaced by that variable's value, as
    /// `lookup` finds it; an unset (or non-UTF-8) variable is an error naming it, before any
    /// call is made.
    pub fn expand(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<Header, AddressError> {
        let mut value = String::new();
        let mut rest = self.value.as_str();
        while let Some(start) = rest.find("${") {
            let (before, after) = rest.split_at(start);
            value.push_str(before);
            let after = after.get(2..).unwrap_or_default();
            let Some(end) = after.find('}') else {
                return Err(AddressError::Unclosed {
                    shown: self.shown(),
                });
            };
            let (name, tail) = after.split_at(end);
            let Some(found) = lookup(name) else {
                return Err(AddressError::Unset {
                    shown: self.shown(),
                    name: name.to_string(),
                });
            };
            value.push_str(&found);
            rest = tail.get(1..).unwrap_or_default();
        }
        value.push_str(rest);
        if value.contains(['\r', '\n']) {
            return Err(AddressError::ExpandedLineBreak {
                shown: self.shown(),
            });
        }
        Ok(Header {
            name: self.name.clone(),
            value,
        })
    }
}

/// `--header 'NAME: VALUE'` as the command line gives it: a name that is an HTTP token, a
/// colon, and a value with no line break (its `${VAR}`s are read later, see
/// [`Header::expand`]). The error never repeats the value.
pub fn parse_header(text: &str) -> Result<Header, AddressError> {
    let Some((name, value)) = text.split_once(':') else {
        return Err(AddressError::NoColon);
    };
    let name = name.trim();
    if name.is_empty() || reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(AddressError::HeaderName(name.chars().take(64).collect()));
    }
    if value.contains(['\r', '\n']) {
        return Err(AddressError::LineBreak(name.to_string()));
    }
    Ok(Header {
        name: name.to_string(),
        value: value.trim().to_string(),
    })
}

/// `--url URL` or `HOLON_SERVER_URL`: an absolute `http` or `https` URL.
pub fn parse_url(text: &str) -> Result<String, AddressError> {
    let url = reqwest::Url::parse(text.trim()).map_err(|e| AddressError::NotAUrl {
        shown: redact(text.trim()),
        why: e.to_string(),
    })?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url.to_string()),
        _ => Err(AddressError::NotHttp {
            shown: redact(text.trim()),
        }),
    }
}

/// A URL as it is shown: any user name and password in it replaced by `***`.
fn redact(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("***");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// A server already running: where, and how to reach it.
#[derive(Debug)]
pub struct Remote {
    url: String,
    headers: Vec<Header>,
    /// The certificates `--ca-cert` names, read once.
    roots: Vec<reqwest::Certificate>,
}

impl Remote {
    /// The server at `url` (checked by [`parse_url`]), reached with `headers` (already
    /// expanded) and trusting `ca_cert`'s certificates beside the platform's: read here, so a
    /// file that holds none is refused before any call.
    pub fn new(
        url: &str,
        headers: Vec<Header>,
        ca_cert: Option<PathBuf>,
    ) -> Result<Remote, RemoteError> {
        let url = parse_url(url)?;
        Ok(Remote {
            url,
            headers,
            roots: roots(ca_cert.as_deref())?,
        })
    }

    /// The address as every message shows it (no credentials).
    pub fn shown(&self) -> String {
        redact(&self.url)
    }

    /// The address itself, credentials included: only the HTTP client reads it.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The HTTP client: the headers on every request (marked sensitive), the platform's roots
    /// and `--ca-cert`'s, no proxy, no redirect.
    pub(crate) fn client(&self) -> Result<reqwest::Client, RemoteError> {
        let mut headers = reqwest::header::HeaderMap::new();
        for header in &self.headers {
            let name = reqwest::header::HeaderName::from_bytes(header.name.as_bytes())
                .map_err(|_| RemoteError::HeaderName(header.name.clone()))?;
            let mut value = reqwest::header::HeaderValue::from_str(&header.value)
                .map_err(|_| RemoteError::HeaderValue(header.shown()))?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        let builder = http_client(IDLE_REUSE).default_headers(headers);
        with_roots(builder, &self.roots)
    }
}

/// How long the MCP pass's HTTP client keeps an idle connection for its next request. A server
/// closes an idle keep-alive connection when it likes: the kit's runtime after its header
/// timeout (5 s), Node's and uvicorn's servers after 5 s, gunicorn's after 2 s. The harness's
/// client runs only while a trial waits on it, so it hears of such a close only when it next
/// writes on that connection, and the call it writes fails as `runtime_unavailable` though the
/// server is up: a trial's process under nextest, on a busy machine, could spend seconds
/// comparing the manifest between its `initialize` and its call. A connection idle longer
/// than this is replaced instead, at the cost of one connect.
pub(crate) const IDLE_REUSE: Duration = Duration::from_secs(1);

/// The MCP pass's HTTP client, for a server it started and for one already running:
/// `TCP_NODELAY`, no proxy, no redirect, and no connection reused once idle past `idle`
/// ([`IDLE_REUSE`]; tests take less).
pub(crate) fn http_client(idle: Duration) -> reqwest::ClientBuilder {
    // reqwest has no provider of its own: one is installed before any client is built.
    crate::tls::install_provider();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(idle)
}

/// The PEM certificates in `ca_cert`, trusted beside the platform's roots, or why there are
/// none.
fn roots(ca_cert: Option<&Path>) -> Result<Vec<reqwest::Certificate>, RemoteError> {
    let Some(path) = ca_cert else {
        return Ok(Vec::new());
    };
    let pem = std::fs::read(path).map_err(|e| RemoteError::CaCertUnreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    let certificates =
        reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| RemoteError::CaCertNotPem {
            path: path.to_path_buf(),
            why: e.to_string(),
        })?;
    if certificates.is_empty() {
        return Err(RemoteError::CaCertEmpty {
            path: path.to_path_buf(),
        });
    }
    Ok(certificates)
}

/// The client, checking a server's certificate against the platform's roots and `roots`.
fn with_roots(
    builder: reqwest::ClientBuilder,
    roots: &[reqwest::Certificate],
) -> Result<reqwest::Client, RemoteError> {
    crate::tls::install_provider();
    let builder = if roots.is_empty() {
        builder
    } else {
        builder.tls_certs_merge(roots.iter().cloned())
    };
    builder
        .build()
        .map_err(|e| RemoteError::Client(e.to_string()))
}

/// The note for a server that announces no manifest in its answers to `openings` (the requests
/// that opened its eras, as shown): it was not built with the kit, and is tested all the same.
pub fn unannounced(remote: &Remote, openings: &[String]) -> String {
    format!(
        "note: the server at `{}` announces no `holon/manifest` in its answer to {} (it was not built with holon-kit): which manifest it serves could not be compared",
        remote.shown(),
        openings.join(" nor in its answer to ")
    )
}

/// Whether the server runs the manifest under test, from what its answer to the request that
/// opened an era announced: `Ok(true)` when it does, `Ok(false)` when it announces none (see
/// [`unannounced`]), `Err` when it was built from another manifest.
pub fn compare(
    remote: &Remote,
    local: &Manifest,
    announced: Option<&rmcp::model::MetaObject>,
) -> Result<bool, ServerError> {
    let Some(theirs) = announced.and_then(|meta| Identity::from_meta(meta)) else {
        return Ok(false);
    };
    let Some(ours) = local.identity() else {
        return Ok(true);
    };
    if theirs.sha256 == ours.sha256 {
        return Ok(true);
    }
    // Only a server built from another manifest needs the document, for where they differ.
    let document = Identity::of_text(&local.text).map_or(serde_json::Value::Null, |(_, d)| d);
    let built = match &theirs.commit {
        Some(commit) => format!(", built from commit {commit}"),
        None => String::new(),
    };
    let mut message = format!(
        "the server at `{}` serves another manifest: it announces {}{built}; the manifest under test, `{}`, is {}",
        remote.shown(),
        theirs.describe(),
        local.path.display(),
        ours.describe()
    );
    match provenance::deployed_document(&local.path, &theirs.sha256, theirs.commit.as_deref()) {
        Some((deployed, found)) => {
            let pointer =
                holon_core::json::first_difference(&deployed, &document).map(|(at, _, _)| at);
            if let Some(pointer) = pointer {
                let at = |doc: &serde_json::Value| match doc.pointer(&pointer) {
                    Some(value) => holon_core::message::short(value),
                    None => "nothing".to_string(),
                };
                message.push_str(&format!(
                    "\n  first difference: `{pointer}`: the server's says {}, this one {} (the served manifest is {found})",
                    at(&deployed),
                    at(&document)
                ));
            }
        }
        None => message.push_str(
            "\n  (the served manifest's text is not in this repository's history, so where they differ cannot be said)",
        ),
    }
    Err(ServerError::AnotherManifest(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::{Arc, Mutex, mpsc};

    /// A keep-alive HTTP server on loopback that answers `ok` to every request, says on which
    /// connection (numbered as accepted) it answered, and closes them all when told to.
    struct Server {
        url: String,
        streams: Arc<Mutex<Vec<TcpStream>>>,
        answered: mpsc::Receiver<usize>,
    }

    impl Server {
        fn start() -> Server {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let streams = Arc::new(Mutex::new(Vec::new()));
            let (told, answered) = mpsc::channel();
            let kept = Arc::clone(&streams);
            std::thread::spawn(move || {
                for (n, stream) in listener.incoming().enumerate() {
                    let Ok(stream) = stream else { return };
                    kept.lock().unwrap().push(stream.try_clone().unwrap());
                    let told = told.clone();
                    std::thread::spawn(move || answer(n, stream, &told));
                }
            });
            Server {
                url,
                streams,
                answered,
            }
        }

        fn close_all(&self) {
            for stream in self.streams.lock().unwrap().iter() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }

        /// The connection the last request was answered on.
        fn answered_on(&self) -> usize {
            self.answered.recv_timeout(Duration::from_secs(10)).unwrap()
        }
    }

    /// Every request on connection `n` (a `GET`: no body) answered `ok`, until it closes.
    fn answer(n: usize, stream: TcpStream, told: &mpsc::Sender<usize>) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        let mut line = String::new();
        loop {
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line == "\r\n" {
                    break;
                }
            }
            let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
            if writer.write_all(ok).is_err() || told.send(n).is_err() {
                return;
            }
        }
    }

    #[test]
    fn a_connection_is_reused_while_in_use_and_replaced_once_idle_past_the_limit() {
        let runtime = crate::flight::current_thread().unwrap();
        let get = |client: &reqwest::Client, url: &str| {
            runtime.block_on(async { client.get(url).send().await?.text().await })
        };

        // In use: the second request goes on the first one's connection.
        let server = Server::start();
        let client = http_client(Duration::from_secs(60)).build().unwrap();
        for _ in 0..2 {
            assert_eq!(get(&client, &server.url).unwrap(), "ok");
            assert_eq!(server.answered_on(), 0);
        }

        // The server closes the idle connection while the client is not running, so the client
        // does not hear of it; once the client has been idle past its limit (the idle time is
        // what is tested here, not a wait for something to happen), its next request goes on
        // a new connection instead of into the closed one.
        let server = Server::start();
        let client = http_client(Duration::from_millis(50)).build().unwrap();
        assert_eq!(get(&client, &server.url).unwrap(), "ok");
        assert_eq!(server.answered_on(), 0);
        server.close_all();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(get(&client, &server.url).unwrap(), "ok");
        assert_eq!(server.answered_on(), 1);
    }
}

//! The MCP pass's stand-in for the gateway's file store: a loopback server that serves
//! `files/NAME` beside the manifest through signed, expiring links, and the `_meta` entry that
//! hands those links to the agent.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};

use crate::error::FileError;
use holon_runtime::files::{HANDLE_PREFIX, handle_name, handles_in, sha256_hex};

/// How long a link lives, as the gateway's do.
const LINK_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// A running file server.
pub struct FileServer {
    port: u16,
    secret: String,
    dir: PathBuf,
}

impl FileServer {
    /// Serves `dir` (the `files/` folder) on a free loopback port, inside the current runtime.
    pub async fn start(dir: PathBuf) -> std::io::Result<FileServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let secret = sha256_hex(format!("{nanos}:{}:{port}", std::process::id()).as_bytes());
        let (served_dir, key) = (dir.clone(), secret.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (dir, key) = (served_dir.clone(), key.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let response = serve(&dir, &key, &request);
                        async move { Ok::<_, Infallible>(response) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(FileServer { port, secret, dir })
    }

    /// The `_meta` of a call whose arguments are `input`: `{"holon/files": {handle: link}}`,
    /// or nothing when the input holds no handle.
    pub fn meta_for(&self, input: &Value) -> Result<Option<Map<String, Value>>, FileError> {
        let handles = handles_in(input);
        if handles.is_empty() {
            return Ok(None);
        }
        let expires_at = (SystemTime::now() + LINK_LIFETIME)
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut links = Map::new();
        for handle in handles {
            let name = handle_name(&handle).map_err(|why| FileError::NotAHandle {
                handle: handle.clone(),
                why,
            })?;
            let bytes = std::fs::read(self.dir.join(name)).map_err(|e| FileError::Unreadable {
                handle: handle.clone(),
                name: name.to_string(),
                why: e.to_string(),
            })?;
            let url = format!(
                "http://127.0.0.1:{}/f/{}?expires={expires_at}&sig={}",
                self.port,
                encode(name),
                sign(&self.secret, name, expires_at)
            );
            links.insert(handle.clone(), json!({"url": url, "size": bytes.len(), "sha256": sha256_hex(&bytes), "expires_at": expires_at}));
        }
        let mut meta = Map::new();
        meta.insert(
            holon_runtime::files::META_KEY.to_string(),
            Value::Object(links),
        );
        Ok(Some(meta))
    }
}

fn sign(secret: &str, name: &str, expires_at: u64) -> String {
    sha256_hex(format!("{secret}\n{name}\n{expires_at}").as_bytes())
}

fn serve(
    dir: &Path,
    secret: &str,
    request: &Request<Incoming>,
) -> Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let reply = |status: StatusCode, body: Vec<u8>| {
        let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
        *response.status_mut() = status;
        response
    };
    let Some(name) = request.uri().path().strip_prefix("/f/").and_then(decode) else {
        return reply(StatusCode::NOT_FOUND, b"not found".to_vec());
    };
    let query: Vec<(&str, &str)> = request
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let param = |k: &str| query.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let (Some(expires), Some(sig)) = (
        param("expires").and_then(|e| e.parse::<u64>().ok()),
        param("sig"),
    ) else {
        return reply(StatusCode::FORBIDDEN, b"unsigned link".to_vec());
    };
    if sign(secret, &name, expires) != sig {
        return reply(StatusCode::FORBIDDEN, b"bad signature".to_vec());
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if now >= expires {
        return reply(StatusCode::FORBIDDEN, b"link expired".to_vec());
    }
    // A signed name is still checked: nothing outside `files/` is served.
    let handle = format!("{HANDLE_PREFIX}{name}");
    match handle_name(&handle)
        .ok()
        .map(|n| dir.join(n))
        .and_then(|p| std::fs::read(p).ok())
    {
        Some(bytes) => reply(StatusCode::OK, bytes),
        None => reply(StatusCode::NOT_FOUND, b"no such file".to_vec()),
    }
}

fn encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_survive_the_url() {
        for name in ["a.csv", "sub dir/é 1.csv", "100%.txt"] {
            assert_eq!(super::decode(&super::encode(name)).as_deref(), Some(name));
        }
    }
}

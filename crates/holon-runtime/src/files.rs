//! `holon://files/` handles: the signed links a call carries, and `ctx.download`.
//!
//! The caller uploads a document; with each `tools/call` the gateway passes, in the request's
//! `_meta` under `holon/files`, an object mapping each handle in the arguments to
//! `{url, size, sha256, expires_at}` (`expires_at` in seconds since the Unix epoch).
//! `ctx.download(handle)` fetches only that URL, stops reading past `size`, and returns the
//! bytes only when both the size and the SHA-256 match.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

pub use holon_core::gateway::handles::{HANDLE_PREFIX, handle_name, handles_in};
/// The key in a request's `_meta` that carries the links.
pub const META_KEY: &str = "holon/files";

/// One signed link, as the gateway sends it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLink {
    /// Where to fetch the bytes (http or https).
    pub url: String,
    /// Exact size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
    /// When the link stops working, in seconds since the Unix epoch.
    pub expires_at: u64,
}

/// Why `ctx.download` returned no bytes. Each cause is its own variant, so an agent can map it
/// to a declared code such as `file_unreadable`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownloadError {
    /// The string is not a `holon://files/NAME` handle.
    #[error("`{0}` is not a file handle (`holon://files/NAME`)")]
    NotAHandle(String),
    /// The call carried no link for this handle.
    #[error("the call carries no link for `{0}`")]
    NoLink(String),
    /// The link expired before the download.
    #[error("the link for `{handle}` expired at {expires_at}")]
    Expired {
        /// The `holon://files/NAME` handle the download was for.
        handle: String,
        /// When it expired (Unix seconds).
        expires_at: u64,
    },
    /// The bytes are not the announced size (more bytes stop the read at `size + 1`).
    #[error("`{handle}` should be {expected} bytes, got {got}")]
    WrongSize {
        /// The `holon://files/NAME` handle the download was for.
        handle: String,
        /// The size the link announced.
        expected: u64,
        /// The bytes read (at most one past `expected`).
        got: u64,
    },
    /// The bytes do not hash to the announced SHA-256.
    #[error("`{handle}` does not match its SHA-256")]
    WrongHash {
        /// The `holon://files/NAME` handle the download was for.
        handle: String,
    },
    /// The file server answered with an error status.
    #[error("fetching `{handle}` failed with HTTP {status}")]
    Http {
        /// The `holon://files/NAME` handle the download was for.
        handle: String,
        /// The HTTP status.
        status: u16,
    },
    /// The link could not be fetched at all (connection, unsupported scheme, ...).
    #[error("cannot fetch `{handle}`: {message}")]
    Unreachable {
        /// The `holon://files/NAME` handle the download was for.
        handle: String,
        /// Why.
        message: String,
    },
    /// In tests: `files/NAME` is missing or its name leaves the `files/` folder.
    #[error("no test file for `{handle}`: {message}")]
    NoTestFile {
        /// The `holon://files/NAME` handle the download was for.
        handle: String,
        /// Why.
        message: String,
    },
}

/// Where a call's files come from.
#[derive(Debug, Clone, Default)]
pub(crate) enum Files {
    /// The call carried no links.
    #[default]
    None,
    /// The links of a real call.
    Links(HashMap<String, FileLink>),
    /// Tests: `holon://files/NAME` is `DIR/NAME`.
    Dir(PathBuf),
}

/// The links in a request's `_meta` (`None` when there are none). A malformed `holon/files`
/// entry gives no links, so every download reports `NoLink` rather than guessing.
pub(crate) fn links_from_meta(meta: Option<&Value>) -> HashMap<String, FileLink> {
    let Some(Value::Object(entries)) = meta else {
        return HashMap::new();
    };
    entries
        .iter()
        .filter_map(|(handle, link)| {
            Some((handle.clone(), serde_json::from_value(link.clone()).ok()?))
        })
        .collect()
}

pub(crate) async fn download(files: &Files, handle: &str) -> Result<Vec<u8>, DownloadError> {
    if !handle.starts_with(HANDLE_PREFIX) {
        return Err(DownloadError::NotAHandle(handle.to_string()));
    }
    match files {
        Files::None => Err(DownloadError::NoLink(handle.to_string())),
        Files::Dir(dir) => read_test_file(dir, handle),
        Files::Links(links) => {
            let link = links
                .get(handle)
                .ok_or_else(|| DownloadError::NoLink(handle.to_string()))?;
            fetch(handle, link).await
        }
    }
}

fn read_test_file(dir: &Path, handle: &str) -> Result<Vec<u8>, DownloadError> {
    let fail = |message: String| DownloadError::NoTestFile {
        handle: handle.to_string(),
        message,
    };
    let name = handle_name(handle).map_err(fail)?;
    let root = dir
        .canonicalize()
        .map_err(|e| fail(format!("no `{}` folder: {e}", dir.display())))?;
    let path = root
        .join(name)
        .canonicalize()
        .map_err(|e| fail(format!("`files/{name}`: {e}")))?;
    // A symlink inside `files/` may not lead out of it either.
    if !path.starts_with(&root) {
        return Err(fail("the file leaves the `files/` folder".into()));
    }
    std::fs::read(&path).map_err(|e| fail(format!("`files/{name}`: {e}")))
}

async fn fetch(handle: &str, link: &FileLink) -> Result<Vec<u8>, DownloadError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if now >= link.expires_at {
        return Err(DownloadError::Expired {
            handle: handle.to_string(),
            expires_at: link.expires_at,
        });
    }
    let unreachable = |message: String| DownloadError::Unreachable {
        handle: handle.to_string(),
        message,
    };
    let url = reqwest::Url::parse(&link.url).map_err(|e| unreachable(format!("bad link: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(unreachable(format!(
            "`{}` links are not fetched",
            url.scheme()
        )));
    }
    // The process's TLS provider, unless the agent installed one of its own (reqwest builds
    // with no provider of its own under `tls`).
    #[cfg(feature = "tls")]
    install_tls_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| unreachable(error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(DownloadError::Http {
            handle: handle.to_string(),
            status: status.as_u16(),
        });
    }
    // Never hold more than one byte past the announced size.
    let limit = link.size.saturating_add(1);
    let mut bytes = Vec::with_capacity(link.size.min(64 * 1024 * 1024) as usize);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unreachable(error_chain(&e)))?
    {
        let room = limit.saturating_sub(bytes.len() as u64);
        let room = usize::try_from(room).unwrap_or(usize::MAX);
        bytes.extend(chunk.iter().take(room));
        if bytes.len() as u64 >= limit {
            break;
        }
    }
    if bytes.len() as u64 != link.size {
        return Err(DownloadError::WrongSize {
            handle: handle.to_string(),
            expected: link.size,
            got: bytes.len() as u64,
        });
    }
    if !sha256_hex(&bytes).eq_ignore_ascii_case(&link.sha256) {
        return Err(DownloadError::WrongHash {
            handle: handle.to_string(),
        });
    }
    Ok(bytes)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// SHA-256 as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Installs ring as the process's TLS provider, unless one is installed already: under `tls`,
/// reqwest has rustls with no provider of its own. The harness installs the same one.
#[cfg(feature = "tls")]
#[doc(hidden)]
pub fn install_tls_provider() {
    // rustls deprecates ring's provider (0.23.48) for its lack of post-quantum key exchange;
    // aws-lc-rs, which has it, compiles C for minutes of every agent's first build.
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_come_only_from_a_well_formed_meta_entry() {
        let meta = serde_json::json!({"holon://files/a": {"url": "http://127.0.0.1:1/a", "size": 3, "sha256": "ab", "expires_at": 9}, "holon://files/b": {"url": 5}});
        let links = links_from_meta(Some(&meta));
        assert_eq!(links.len(), 1);
        assert_eq!(links["holon://files/a"].size, 3);
        assert!(links_from_meta(Some(&serde_json::json!([1]))).is_empty());
    }
}

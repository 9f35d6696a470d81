//! `Ctx`: what an agent function gets besides its input.

use std::path::PathBuf;
use std::sync::Arc;

use super::Failure;
use super::files::{self, DownloadError, FileLink, Files};

/// The context of one call.
///
/// ```
/// # use holon_runtime::{Ctx, Failure};
/// async fn run(input: serde_json::Value, ctx: Ctx) -> Result<serde_json::Value, Failure> {
///     if input["text"].as_str().unwrap_or("").trim().is_empty() {
///         return Err(ctx.fail("empty_text", "the text is empty"));
///     }
///     Ok(input)
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    files: Arc<Files>,
}

impl Ctx {
    /// A context with no files, e.g. for calling an agent function from a unit test.
    pub fn new() -> Ctx {
        Ctx::default()
    }

    /// A test context: `holon://files/NAME` is read from `DIR/NAME`, never from outside `DIR`.
    pub fn with_files_dir(dir: impl Into<PathBuf>) -> Ctx {
        Ctx {
            files: Arc::new(Files::Dir(dir.into())),
        }
    }

    /// A context holding the signed links of a call (the `holon/files` entry of its `_meta`).
    pub(crate) fn with_links(links: std::collections::HashMap<String, FileLink>) -> Ctx {
        Ctx {
            files: Arc::new(Files::Links(links)),
        }
    }

    /// A context from a request's `_meta` entry `holon/files`, as the server receives it.
    pub(crate) fn from_meta(meta: Option<&serde_json::Value>) -> Ctx {
        Ctx::with_links(files::links_from_meta(meta))
    }

    /// A declared failure: `code` must be declared in `interface.errors`. It reaches the caller
    /// as `isError: true` with `structuredContent.error.code`, free for the caller and counted
    /// apart from the success rate. A code that is not declared is reported as `agent_crashed`.
    pub fn fail(&self, code: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure::declared(code, message)
    }

    /// The bytes behind a `holon://files/NAME` handle. Only the link the call carried for that
    /// handle is fetched; reading stops one byte past the announced size, and the bytes are
    /// returned only when the size and the SHA-256 match. Map the error to a declared code.
    ///
    /// ```
    /// # use holon_runtime::{Ctx, Failure};
    /// async fn run(input: serde_json::Value, ctx: Ctx) -> Result<serde_json::Value, Failure> {
    ///     let handle = input["file"].as_str().unwrap_or_default();
    ///     let bytes = ctx.download(handle).await.map_err(|e| ctx.fail("file_unreadable", e.to_string()))?;
    ///     Ok(serde_json::json!({ "bytes": bytes.len() }))
    /// }
    /// ```
    pub async fn download(&self, handle: &str) -> Result<Vec<u8>, DownloadError> {
        files::download(&self.files, handle).await
    }
}

//! Internals the crate's own integration tests and benchmarks drive directly. Not API: hidden
//! from the documentation, outside the public-API snapshot, and free to change in any release.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

pub use crate::manifest::{Expect, Manifest};
pub use crate::runtime::Server;
use crate::runtime::{Agent, Ctx, Runner};

/// A manifest that passed the checks, or the rendered report that refused it.
pub fn checked(path: &Path) -> Result<Manifest, String> {
    crate::check::check_file(path)
        .into_manifest()
        .map_err(|report| crate::check::render_human(&report, false))
}

/// Checks manifest text as the runtime checks its embedded manifest (no `files/` looked up).
pub fn check_str(text: &str, path: &Path) -> crate::check::Report {
    crate::check::check_str(text, path)
}

/// The `outputSchema` the server advertises for the manifest's tool.
pub fn output_schema(manifest: &Manifest) -> Value {
    crate::runtime::output_schema(manifest)
}

/// The largest request body the server reads for this manifest.
pub fn max_request_body_bytes(manifest: &Manifest) -> usize {
    crate::runtime::max_request_body_bytes(manifest)
}

/// One call as the function pass makes it: the output, or the failure's code and message.
pub async fn call_function(
    manifest: Manifest,
    agent: Arc<dyn Agent>,
    input: Value,
) -> Result<Value, (String, String)> {
    Runner::new(Arc::new(manifest), agent)
        .run(input, Ctx::new())
        .await
        .map_err(|ended| (ended.status.code().to_string(), ended.message))
}

/// A context as the server builds it from a call's `_meta["holon/files"]`.
pub fn ctx_from_meta(files: &Value) -> Ctx {
    Ctx::from_meta(Some(files))
}

/// SHA-256 of bytes, lowercase hex, as file links carry it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::runtime::files::sha256_hex(bytes)
}

/// Runs a harness with explicit libtest arguments and returns its exit code.
pub fn run_harness(harness: crate::harness::Harness, args: &libtest_mimic::Arguments) -> u8 {
    harness.run_code(args)
}

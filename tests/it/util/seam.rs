//! The internals the tests and benchmarks drive directly, from the workspace's crates: an
//! in-process server, the checked manifest, one function-pass call, a harness run with explicit
//! arguments. Not holon-kit's API (`tests/it/api.rs` holds that).
#![allow(
    dead_code,
    reason = "each benchmark that includes this file uses a different part of it"
)]

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

pub use holon_core::manifest::{Expect, Manifest};
pub use holon_runtime::Server;
pub use holon_runtime::files::sha256_hex;
pub use holon_runtime::seam::ctx_from_meta;
pub use holon_runtime::{max_request_body_bytes, output_schema};

/// A manifest that passed the checks, or the rendered report that refused it.
pub fn checked(path: &Path) -> Result<Manifest, String> {
    holon_core::check::into_manifest(holon_core::check::check_file(path))
        .map_err(|report| holon_core::check::render_human(&report, false))
}

/// Checks manifest text as the runtime checks its embedded manifest (no `files/` looked up).
pub fn check_str(text: &str, path: &Path) -> holon_core::check::Report {
    holon_core::check::check_str(text, path)
}

/// One call as the function pass makes it: the output, or the failure's code and message.
pub async fn call_function(
    manifest: Manifest,
    agent: Arc<dyn holon_runtime::Agent>,
    input: Value,
) -> Result<Value, (String, String)> {
    holon_runtime::Runner::new(Arc::new(manifest), agent)
        .run(input, holon_runtime::Ctx::new())
        .await
        .map_err(|ended| (ended.status.code().to_string(), ended.message))
}

/// Runs a harness with explicit libtest arguments and returns its exit code.
pub fn run_harness(harness: holon_kit::harness::Harness, args: &libtest_mimic::Arguments) -> u8 {
    holon_harness::command::run_with_arguments(harness, args)
}

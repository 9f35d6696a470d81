//! Internals the workspace's own integration tests and benchmarks drive directly. Not API:
//! hidden from the documentation and free to change in any release.

use serde_json::Value;

use crate::Ctx;

/// A context as the server builds it from a call's `_meta["holon/files"]`.
pub fn ctx_from_meta(files: &Value) -> Ctx {
    Ctx::from_meta(Some(files))
}

//! `Ctx`: what an agent function gets besides its input.

use super::Failure;

/// The context of one call.
///
/// ```
/// # use holon_kit::{Ctx, Failure};
/// async fn run(input: serde_json::Value, ctx: Ctx) -> Result<serde_json::Value, Failure> {
///     if input["text"].as_str().unwrap_or("").trim().is_empty() {
///         return Err(ctx.fail("empty_text", "the text is empty"));
///     }
///     Ok(input)
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    _private: (),
}

impl Ctx {
    /// A context for calling an agent function directly, e.g. from a unit test.
    pub fn new() -> Ctx {
        Ctx::default()
    }

    /// A declared failure: `code` must be declared in `interface.errors`. It reaches the caller
    /// as `isError: true` with `structuredContent.error.code`, free for the caller and counted
    /// apart from the success rate. A code that is not declared is reported as `agent_crashed`.
    pub fn fail(&self, code: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure::declared(code, message)
    }
}

//! The gateway of one manifest: its two compiled schemas, its input limit and its declared
//! failures; what it refuses before anything runs, and how it judges an output.

use super::{bounds, schema};
use jsonschema::Validator;
use serde_json::Value;

/// Why the gateway refuses a call before anything runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// A payload bound was broken.
    #[error("the input {0} (at `{ptr}`)", ptr = .0.pointer())]
    Bound(bounds::BoundError),
    /// The input is larger than `runtime.limits.max_input_bytes`.
    #[error("the input is {size} bytes, over `runtime.limits.max_input_bytes` ({limit})")]
    TooLarge {
        /// Its size as compact JSON.
        size: u64,
        /// The manifest's limit.
        limit: u64,
    },
    /// The input does not validate against `interface.input`.
    #[error("the input does not match `interface.input`: {}", list(.0))]
    Schema(Vec<schema::Violation>),
}

fn list(v: &[schema::Violation]) -> String {
    v.iter()
        .map(|v| format!("`{}`: {}", v.at(), v.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One declared failure: a code of `interface.errors` with what the manifest says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorDecl {
    /// The code, `^[a-z][a-z0-9_]*$`, none of the reserved seven.
    pub code: String,
    /// What it means, for the human deciding whether to call.
    pub description: String,
    /// Whether trying again could help (a transient upstream failure is; an empty file is not).
    pub retryable: bool,
    /// Whether it is billed under `charge_on: attempt`.
    pub billed: bool,
}

/// The gateway for one manifest: its schemas as `check` compiled them, once per run, its input
/// limit and its declared failures. A checked manifest carries it.
pub struct Gateway {
    input: Validator,
    output: Validator,
    max_input_bytes: u64,
    errors: Vec<ErrorDecl>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("max_input_bytes", &self.max_input_bytes)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// The gateway of schemas `check` compiled, the manifest's input limit and its declared
    /// failures.
    pub fn new(
        input: Validator,
        output: Validator,
        max_input_bytes: u64,
        errors: Vec<ErrorDecl>,
    ) -> Gateway {
        Gateway {
            input,
            output,
            max_input_bytes,
            errors,
        }
    }

    /// The declared failure with this code.
    pub fn declared(&self, code: &str) -> Option<&ErrorDecl> {
        self.errors.iter().find(|e| e.code == code)
    }

    /// Admits a call or says why not: bounds first, then the size, then `interface.input`.
    pub fn admit(&self, input: &Value) -> Result<(), Rejection> {
        bounds::check(input).map_err(Rejection::Bound)?;
        let size = crate::json::size(input);
        if size > self.max_input_bytes {
            return Err(Rejection::TooLarge {
                size,
                limit: self.max_input_bytes,
            });
        }
        let found = schema::violations(&self.input, input);
        if found.is_empty() {
            Ok(())
        } else {
            Err(Rejection::Schema(found))
        }
    }

    /// The violations of `interface.output` by an output, bounds first; empty means billed.
    pub fn judge_output(&self, output: &Value) -> Vec<schema::Violation> {
        if let Err(e) = bounds::check(output) {
            return vec![schema::Violation {
                pointer: e.pointer().to_string(),
                message: format!("the output {e}"),
            }];
        }
        schema::violations(&self.output, output)
    }
}

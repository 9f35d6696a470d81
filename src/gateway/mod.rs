//! The gateway's rules: payload bounds, the two schemas, and the status a call ends in.

pub(crate) mod bounds;
pub(crate) mod handles;
pub(crate) mod integers;
pub(crate) mod schema;
mod status;

pub(crate) use status::{Ended, Status};

use jsonschema::Validator;
use serde_json::Value;

/// Why the gateway refuses a call before anything runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Rejection {
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

/// The gateway for one manifest: its schemas as `check` compiled them, once per run. A
/// checked [`Manifest`](crate::manifest::Manifest) carries it.
pub(crate) struct Gateway {
    input: Validator,
    output: Validator,
    max_input_bytes: u64,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("max_input_bytes", &self.max_input_bytes)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// The gateway of schemas `check` compiled and the manifest's input limit.
    pub(crate) fn new(input: Validator, output: Validator, max_input_bytes: u64) -> Gateway {
        Gateway {
            input,
            output,
            max_input_bytes,
        }
    }

    /// Admits a call or says why not: bounds first, then the size, then `interface.input`.
    pub(crate) fn admit(&self, input: &Value) -> Result<(), Rejection> {
        bounds::check(input).map_err(Rejection::Bound)?;
        let size = json_size(input);
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
    pub(crate) fn judge_output(&self, output: &Value) -> Vec<schema::Violation> {
        if let Err(e) = bounds::check(output) {
            return vec![schema::Violation {
                pointer: e.pointer().to_string(),
                message: format!("the output {e}"),
            }];
        }
        schema::violations(&self.output, output)
    }
}

/// Size of a value as compact JSON, without building the text.
pub(crate) fn json_size(value: &Value) -> u64 {
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter(0);
    // Writing into a counter cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

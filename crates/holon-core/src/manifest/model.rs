//! The checked manifest: what the runtime and the harness take.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

pub use crate::gateway::ErrorDecl;
use crate::gateway::Gateway;

/// A `holon.yaml` that passed every publish check. Only [`crate::check`] builds one (the type
/// is `#[non_exhaustive]`), so the runtime and the harness can never run on a manifest the
/// registry would refuse.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Manifest {
    /// The file it was read from (for embedded manifests, the path it was built from).
    pub path: PathBuf,
    /// `name`: `^[a-z][a-z0-9-]{1,63}$`.
    pub name: String,
    /// `version`: semver.
    pub version: String,
    /// `description`: what the agent does, shown to callers and used as the tool description.
    pub description: String,
    /// `capability`: the class callers pick by.
    pub capability: String,
    /// `interface`: the two schemas and the declared failures.
    pub interface: Interface,
    /// `runtime`: the tool name and the limits.
    pub runtime: Runtime,
    /// `pricing`: the price of a billed call and what is billed.
    pub pricing: Pricing,
    /// `source`, when given.
    pub source: Option<Source>,
    /// `examples`, in file order.
    pub examples: Vec<Example>,
    /// The gateway's rules for it, compiled by the checks.
    pub gateway: Arc<Gateway>,
    /// The text the checks read.
    pub text: Arc<str>,
    /// [`Manifest::identity`], computed from the tree the checks read, so the text is not
    /// parsed again for it.
    pub(crate) identity: Option<super::identity::Identity>,
}

/// `interface`: the gate, the billing rule and the declared failures.
#[derive(Debug, Clone)]
pub struct Interface {
    /// `interface.input`: JSON Schema 2020-12, the gate.
    pub input: Value,
    /// `interface.output`: JSON Schema 2020-12, the billing rule.
    pub output: Value,
    /// `interface.errors`: the declared failures.
    pub errors: Vec<ErrorDecl>,
}

/// `runtime`: the one tool the server exposes and the limits of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Runtime {
    /// The one MCP tool the server exposes.
    pub tool: String,
    /// The limits the gateway enforces.
    pub limits: Limits,
}

/// `runtime.limits`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Seconds a run may take before it is cancelled as `timeout`.
    pub timeout_s: f64,
    /// Largest input, in bytes of compact JSON.
    pub max_input_bytes: u64,
}

impl Limits {
    /// `timeout_s` as a duration.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout_s)
    }
}

/// `pricing`: the price, its currency, and whether attempts are billed.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    /// Price of one billed call.
    pub price: f64,
    /// ISO 4217 code.
    pub currency: String,
    /// What is billed.
    pub charge_on: ChargeOn,
}

/// `pricing.charge_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeOn {
    /// Only a successful, schema-valid output is billed.
    Success,
    /// Declared failures marked `billed: true` are billed too.
    Attempt,
}

/// `source`: where the code of the deployed agent lives, and which commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Where the code lives.
    pub repository: String,
    /// The commit deployed.
    pub commit: String,
}

/// One example: an input and what the agent must answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// Unique name; trials are named after it.
    pub name: String,
    /// The call's arguments.
    pub input: Value,
    /// What the agent must answer.
    pub expect: Expect,
}

/// What an example expects.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// Exactly this output.
    Output(Value),
    /// A failure with this declared code.
    Error(String),
}

impl Expect {
    /// The example's key that says it: `output` or `error`.
    pub fn key(&self) -> &'static str {
        match self {
            Expect::Output(_) => "output",
            Expect::Error(_) => "error",
        }
    }

    /// The key's value.
    pub fn value(&self) -> Value {
        match self {
            Expect::Output(v) => v.clone(),
            Expect::Error(c) => Value::String(c.clone()),
        }
    }
}

impl Manifest {
    /// The gateway's rules for this manifest: its schemas, compiled once by the checks.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// The declared failure with this code.
    pub fn error(&self, code: &str) -> Option<&ErrorDecl> {
        self.gateway.declared(code)
    }

    /// Which manifest this is: its name, version, `source.commit` and the hash of its
    /// canonical form, as a served agent announces it (the hash of [`Manifest::text`]).
    pub fn identity(&self) -> Option<super::identity::Identity> {
        self.identity.clone()
    }

    /// The folder the manifest is in (where `files/` lives).
    pub fn dir(&self) -> PathBuf {
        folder_of(&self.path)
    }
}

/// The folder a manifest at `path` is in: its parent, or `.` for a bare file name.
pub fn folder_of(path: &std::path::Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

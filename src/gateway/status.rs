//! The one status every call ends in, as the gateway's receipt says it.

use std::fmt;

/// How the gateway would settle a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The output validated against `interface.output`: billed.
    Success,
    /// The agent failed with this code, declared in `interface.errors`.
    Declared(String),
    /// The call broke a bound or `interface.input`; nothing ran (receipt `rejected_input`).
    InvalidInput,
    /// The output did not validate.
    InvalidOutput,
    /// The code panicked or failed with something that is not a declared failure.
    AgentCrashed,
    /// The server answered with an error that carried no usable code, or an undeclared one.
    AgentError,
    /// The run passed `runtime.limits.timeout_s`.
    Timeout,
    /// The server could not be reached.
    RuntimeUnavailable,
}

impl Status {
    /// The code as the gateway writes it (`success` for a success).
    pub fn code(&self) -> &str {
        match self {
            Status::Success => "success",
            Status::Declared(code) => code,
            Status::InvalidInput => "invalid_input",
            Status::InvalidOutput => "invalid_output",
            Status::AgentCrashed => "agent_crashed",
            Status::AgentError => "agent_error",
            Status::Timeout => "timeout",
            Status::RuntimeUnavailable => "runtime_unavailable",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Declared(code) => write!(f, "{code} (declared failure)"),
            Status::InvalidInput => f.write_str("invalid_input (receipt `rejected_input`)"),
            other => f.write_str(other.code()),
        }
    }
}

//! How a call ends, as the gateway's receipt says it: the one place a reserved code is spelled.

use std::fmt;

use super::Gateway;

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
    /// The gateway itself failed.
    GatewayError,
}

impl Status {
    /// The seven statuses whose codes the gateway keeps for itself: no manifest may declare
    /// them. In the order the registry lists them.
    pub const RESERVED: [Status; 7] = [
        Status::Timeout,
        Status::InvalidOutput,
        Status::AgentCrashed,
        Status::AgentError,
        Status::RuntimeUnavailable,
        Status::GatewayError,
        Status::InvalidInput,
    ];

    /// The reserved statuses an agent's own server answers with (the runtime sends them; the
    /// gateway sets the others).
    pub const FROM_AGENT: [Status; 3] =
        [Status::AgentCrashed, Status::InvalidInput, Status::Timeout];

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
            Status::GatewayError => "gateway_error",
        }
    }

    /// True for a code the gateway keeps for itself.
    pub fn is_reserved(code: &str) -> bool {
        Status::RESERVED.iter().any(|s| s.code() == code)
    }

    /// The status of a failure result that carried this code (`structuredContent.error.code`):
    /// a declared code, or one of the reserved codes an agent's server sends, is itself;
    /// no code, an undeclared one, or a reserved code only the gateway sets is `agent_error`.
    pub fn of_failure(gateway: &Gateway, code: Option<&str>) -> Status {
        match code {
            None => Status::AgentError,
            Some(c) if gateway.declared(c).is_some() => Status::Declared(c.to_string()),
            Some(c) => Status::FROM_AGENT
                .into_iter()
                .find(|s| s.code() == c)
                .unwrap_or(Status::AgentError),
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

/// A call that ended without an output: the status and what happened, as a failure result's
/// `structuredContent.error` carries them (`code` is the status's code).
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// How it ended.
    pub status: Status,
    /// What happened, without internals such as a backtrace.
    pub message: String,
}

impl Ended {
    /// A call that ended in `status` because of `message`.
    pub fn new(status: Status, message: impl Into<String>) -> Ended {
        Ended {
            status,
            message: message.into(),
        }
    }
}

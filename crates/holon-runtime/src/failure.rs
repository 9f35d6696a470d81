//! `Failure`: how an agent function says it could not produce an output.

use std::fmt;

/// Why a run produced no output.
///
/// Build a declared failure with [`crate::Ctx::fail`]; any other error converts into an
/// undeclared one with `?`, which the gateway counts as `agent_crashed`.
pub struct Failure {
    pub(crate) kind: FailureKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// `ctx.fail(code, message)`.
    Declared { code: String, message: String },
    /// Anything else: an error passed up with `?`, or a panic.
    Undeclared { message: String },
    /// The arguments did not deserialize into the function's input type.
    InputType { message: String },
}

impl Failure {
    /// A declared failure with `code`; prefer [`crate::Ctx::fail`] inside an agent function.
    pub(crate) fn declared(code: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Declared {
                code: code.into(),
                message: message.into(),
            },
        }
    }

    /// An undeclared failure: the gateway reports it as `agent_crashed`.
    pub(crate) fn undeclared(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Undeclared {
                message: message.into(),
            },
        }
    }

    /// The code, when the failure was declared with `ctx.fail`.
    pub fn code(&self) -> Option<&str> {
        match &self.kind {
            FailureKind::Declared { code, .. } => Some(code),
            _ => None,
        }
    }

    /// What the failure says happened, as the caller will read it.
    pub fn message(&self) -> &str {
        match &self.kind {
            FailureKind::Declared { message, .. }
            | FailureKind::Undeclared { message }
            | FailureKind::InputType { message } => message,
        }
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.kind, f)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            FailureKind::Declared { code, message } => write!(f, "{code}: {message}"),
            FailureKind::Undeclared { message } => write!(f, "undeclared failure: {message}"),
            FailureKind::InputType { message } => f.write_str(message),
        }
    }
}

/// Any error passed up with `?` is an undeclared failure.
impl<E: std::error::Error + Send + Sync + 'static> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure::undeclared(error.to_string())
    }
}

//! One problem found in a manifest: an id, a place and a message.

use serde::Serialize;

use crate::ids::Id;
pub use crate::ids::Severity;
use crate::manifest::yaml::Loc;
/// A pointer as a reader writes it (`examples[2].output.top_words[0]`), for messages.
pub(crate) use crate::pointer::dotted;

/// A located problem in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable kebab-case id of the check.
    pub check: &'static str,
    /// RFC 6901 pointer into the manifest document.
    pub pointer: String,
    /// Line in the file, from 1 (0 when the problem is the whole file).
    pub line: u64,
    /// Column in the file, from 1.
    pub column: u64,
    /// What is wrong: lowercase, no trailing period, names in backticks.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error at `pointer`, located at `loc`.
    pub(crate) fn error(
        check: Id,
        pointer: impl Into<String>,
        loc: Loc,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Error,
            check: check.name(),
            pointer: pointer.into(),
            line: loc.line,
            column: loc.column,
            message: message.into(),
            hint: None,
        }
    }

    /// The same diagnostic with a hint.
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

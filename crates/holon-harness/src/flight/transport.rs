//! What a scheduler sends a call through, whichever pass it is: the MCP client
//! (`mcp::calls`) and the agent function, in-process or in its function mode's process
//! (`function::run`), are the two [`Transport`]s.

use serde_json::Value;

use super::crowd::Crowded;
use holon_core::gateway::Answer;
use holon_upstream::fault::Faulted;

/// One call as it went: what came back, why the crowd may be the cause of a failure, and
/// whether it was the first call of the process that had it.
pub(crate) struct Sent {
    /// What came back.
    pub answer: Answer,
    /// Why the crowd may be the cause of a failure (no answer in time, no connection, the
    /// process ended).
    pub crowded: Option<Crowded>,
    /// Whether it was the first call of the server's process.
    pub first: bool,
}

/// How one call of an input goes out and comes back.
pub(crate) trait Transport: Send + Sync {
    /// One call of `input`, as it went.
    fn send(&self, input: &Value) -> impl Future<Output = Sent> + Send;
}

/// A fault trial's call that was never made, and `answer` why.
pub(crate) fn unplayed(answer: Answer) -> Faulted {
    Faulted {
        answer,
        played: false,
        misses: Vec::new(),
    }
}

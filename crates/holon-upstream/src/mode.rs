//! Where the upstreams' answers come from: the recordings, the real services recorded, or the
//! real services alone; and the variable and the words that choose it.

use crate::error::SettingError;

/// The variable that sets the mode (`--upstream`).
pub const MODE_VAR: &str = "HOLON_UPSTREAM";

/// What an unset secret holds in `replay`, so that SDK constructors that insist on a key start
/// without one.
pub const PLACEHOLDER: &str = "holon-test-replay-no-key";

/// Where the upstreams' answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The recordings; no network.
    Replay,
    /// The real services, whose answers are written down.
    Record,
    /// The real services; nothing is written, and examples are judged as a paying caller would
    /// see them.
    Live,
}

impl Mode {
    /// How the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Replay => "replay",
            Mode::Record => "record",
            Mode::Live => "live",
        }
    }
}

/// `--upstream MODE` or `HOLON_UPSTREAM`: `replay`, `record` or `live`.
pub fn parse_mode(text: &str) -> Result<Mode, SettingError> {
    match text.trim() {
        "replay" => Ok(Mode::Replay),
        "record" => Ok(Mode::Record),
        "live" => Ok(Mode::Live),
        other => Err(SettingError::Mode(other.to_string())),
    }
}

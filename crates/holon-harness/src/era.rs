//! The two MCP protocol eras the harness speaks, and the setting that pins one: 2026-07-28 (no
//! handshake: `server/discover`, every request carrying its `_meta` envelope and the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers) and 2025-11-25 (the
//! `initialize` handshake and its session). By default a server is tested in each era it speaks.

use crate::error::SettingError;

/// `--protocol`: `auto`, or the one era to test.
pub const PROTOCOL_VAR: &str = "HOLON_PROTOCOL";

/// An MCP protocol era, named by the revision the harness speaks in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: no handshake; every request declares its version, identity and capabilities.
    Modern,
    /// 2025-11-25: an `initialize` handshake opens a session.
    Legacy,
}

impl Era {
    /// Newest first: the order the eras are tried in and their trials are named in.
    pub const ALL: [Era; 2] = [Era::Modern, Era::Legacy];

    /// The revision, as `--protocol` takes it and the trial names of a second era show it.
    pub fn version(self) -> &'static str {
        match self {
            Era::Modern => "2026-07-28",
            Era::Legacy => "2025-11-25",
        }
    }

    /// The request that opens a conversation in this era.
    pub fn opening(self) -> &'static str {
        match self {
            Era::Modern => "server/discover",
            Era::Legacy => "initialize",
        }
    }

    /// The other era.
    pub fn other(self) -> Era {
        match self {
            Era::Modern => Era::Legacy,
            Era::Legacy => Era::Modern,
        }
    }

    /// The era of a revision a server names: `initialize` belongs to every revision before
    /// 2026-07-28 (revisions are dates, so they compare as text).
    pub fn of_version(version: &str) -> Era {
        if version < Era::Modern.version() {
            Era::Legacy
        } else {
            Era::Modern
        }
    }
}

/// Which eras a run tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Each era the server speaks (the default).
    #[default]
    Auto,
    /// This era only.
    Only(Era),
}

impl Protocol {
    /// What `--protocol` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Only(era) => era.version(),
        }
    }
}

/// `auto`, `2026-07-28` or `2025-11-25`, for `--protocol` and `HOLON_PROTOCOL`.
pub fn parse_protocol(text: &str) -> Result<Protocol, SettingError> {
    match text.trim() {
        "auto" => Ok(Protocol::Auto),
        other => (Era::ALL.into_iter())
            .find(|era| era.version() == other)
            .map(Protocol::Only)
            .ok_or_else(|| SettingError::Protocol(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_is_auto_or_one_of_the_two_revisions() {
        assert_eq!(parse_protocol("auto").ok(), Some(Protocol::Auto));
        assert_eq!(
            parse_protocol(" 2026-07-28 ").ok(),
            Some(Protocol::Only(Era::Modern))
        );
        assert_eq!(
            parse_protocol("2025-11-25").ok(),
            Some(Protocol::Only(Era::Legacy))
        );
        for bad in ["", "2025-06-18", "modern", "2026", "AUTO"] {
            let said = parse_protocol(bad).unwrap_err().to_string();
            assert!(
                said.contains("`auto`, `2026-07-28` or `2025-11-25`"),
                "{said}"
            );
        }
        for era in Era::ALL {
            assert_eq!(
                parse_protocol(Protocol::Only(era).name()).ok(),
                Some(Protocol::Only(era))
            );
        }
    }

    #[test]
    fn every_revision_before_2026_07_28_is_the_handshake_s() {
        assert_eq!(Era::of_version("2025-06-18"), Era::Legacy);
        assert_eq!(Era::of_version("2025-11-25"), Era::Legacy);
        assert_eq!(Era::of_version("2026-07-28"), Era::Modern);
        assert_eq!(Era::of_version("2027-01-01"), Era::Modern);
    }
}

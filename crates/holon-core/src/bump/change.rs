//! What a comparison finds: each difference, the document it is in, and the version it needs.

/// How much of a version a change needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bump {
    /// The same document.
    None,
    /// The published document changed, the interface did not.
    Patch,
    /// The interface changed, and no caller breaks.
    Minor,
    /// A caller breaks.
    Major,
}

impl Bump {
    /// As the JSON report and messages write it: `none`, `patch`, `minor`, `major`.
    pub fn name(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

/// Which document a change's pointer is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// The manifest checked: what it has now.
    Manifest,
    /// The published manifest: what it had and no longer has.
    Published,
}

/// One difference between the published manifest and this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The version it needs.
    pub bump: Bump,
    /// The document `pointer` is in: the published one for what was removed.
    pub side: Side,
    /// RFC 6901 pointer to the node it concerns.
    pub pointer: String,
    /// What changed and what it does to a caller: lowercase, names in backticks.
    pub message: String,
}

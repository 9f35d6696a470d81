//! Parse tree summaries: what each parsed node keeps for later decisions (RE2's
//! simplifications, repeat products, program size).

use std::sync::Arc;

/// The operator of a parsed node (only what later decisions look at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    NoMatch,
    EmptyMatch,
    Literal,
    /// A concatenation of literals only.
    LiteralString,
    /// A concatenation of empty-width assertions only (after simplifying).
    EmptyWidthString,
    Class,
    /// `(?s).`, which RE2 keeps apart from classes.
    AnyChar,
    AnyByte,
    EmptyWidth,
    Star,
    Plus,
    Quest,
    Repeat,
    Capture,
    Concat,
    Alternate,
}

/// Code point ranges shared between caches and callers.
pub(crate) type SharedRanges = Arc<[(u32, u32)]>;

/// What a node becomes once RE2 simplifies it, where that matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Simplified {
    Other,
    /// The empty string (`(?:)`, `x{0}`, `(?:){5}`...).
    EmptyMatch,
    /// One empty-width assertion (`^`, `\b`, `\z{1}`...).
    EmptyWidth,
    /// A concatenation of empty-width assertions kept apart from its
    /// neighbours (`(?:^$){1}`).
    EmptyWidths,
}

/// A finished node of RE2's parse tree, summarised bottom-up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) op: Op,
    /// Parse flags the node was built under (compared when squashing `*`).
    pub(crate) flags: u8,
    /// Upper bound of the instructions RE2 compiles for the node.
    pub(crate) cost: u64,
    /// Upper bound of the nodes RE2's compiler visits (after `Simplify`).
    pub(crate) visits: u64,
    /// Upper bound of the nodes in the parse tree.
    pub(crate) nodes: u64,
    /// Largest product of repeat counts along a path (`RepetitionWalker`).
    pub(crate) prod: u64,
    /// Whether the compiled fragment may match the empty string.
    pub(crate) nullable: bool,
    /// What `Simplify` turns the node into.
    pub(crate) simplified: Simplified,
    /// Whether an empty character class occurs inside (it compiles to
    /// nothing, which defeats the factoring bound in `alternate`).
    pub(crate) has_empty_class: bool,
    /// The code point of a `Literal`.
    pub(crate) rune: u32,
    /// The code points of a `Class` or `NoMatch`: an index into
    /// `Parser::sets`.
    pub(crate) set: usize,
    /// For an `Alternate`: its number of alternatives, and how many of them
    /// are `factorable` (RE2 flattens alternations of alternations).
    pub(crate) alts: u64,
    pub(crate) factorable_alts: u64,
}

impl Node {
    pub(crate) fn leaf(op: Op, flags: u8, cost: u64, nullable: bool) -> Node {
        Node {
            op,
            flags,
            cost,
            visits: 1,
            nodes: 1,
            prod: 1,
            nullable,
            simplified: match op {
                Op::EmptyMatch => Simplified::EmptyMatch,
                Op::EmptyWidth => Simplified::EmptyWidth,
                Op::EmptyWidthString => Simplified::EmptyWidths,
                _ => Simplified::Other,
            },
            has_empty_class: op == Op::NoMatch,
            rune: 0,
            set: 0,
            alts: 1,
            factorable_alts: 0,
        }
    }

    /// Whether alternation factoring could reduce this alternative to an
    /// empty match: a literal string or a single simple piece.
    pub(crate) fn factorable(&self) -> bool {
        matches!(
            self.op,
            Op::Literal
                | Op::LiteralString
                | Op::Class
                | Op::AnyChar
                | Op::NoMatch
                | Op::EmptyWidth
                | Op::AnyByte
                | Op::Repeat
        )
    }

    /// Sums the costs of `parts` into `self`.
    pub(crate) fn absorb(self, parts: &[Node]) -> Node {
        parts.iter().fold(self, |acc, n| Node {
            cost: acc.cost.saturating_add(n.cost),
            visits: acc.visits.saturating_add(n.visits),
            nodes: acc.nodes.saturating_add(n.nodes),
            prod: acc.prod.max(n.prod),
            has_empty_class: acc.has_empty_class || n.has_empty_class,
            ..acc
        })
    }
}

/// An open group: RE2's left-paren marker and what follows it.
pub(crate) struct Frame {
    /// Flags in force when the group opened, restored at its `)`.
    pub(crate) open_flags: u8,
    pub(crate) capture: bool,
    /// Finished alternatives (before each `|`).
    pub(crate) alts: Vec<Node>,
    /// The concatenation being built.
    pub(crate) items: Vec<Node>,
}

impl Frame {
    pub(crate) fn new(open_flags: u8, capture: bool) -> Frame {
        Frame {
            open_flags,
            capture,
            alts: Vec::new(),
            items: Vec::new(),
        }
    }
}

/// Adds a finished alternative; `(?s).` absorbs a neighbouring single
/// character or class (RE2 `DoVerticalBar`).
pub(crate) fn push_alternative(alts: &mut Vec<Node>, alt: Node) {
    let absorbable = |n: &Node| matches!(n.op, Op::Literal | Op::Class | Op::NoMatch | Op::AnyChar);
    if let Some(last) = alts.last_mut() {
        if last.op == Op::AnyChar && absorbable(&alt) {
            return;
        }
        if alt.op == Op::AnyChar && absorbable(last) {
            *last = alt;
            return;
        }
    }
    alts.push(alt);
}

/// Concatenation of `items` (RE2 `DoConcatenation`).
pub(crate) fn concat(items: Vec<Node>, flags: u8) -> Node {
    match items.as_slice() {
        [] => Node::leaf(Op::EmptyMatch, flags, 1, true),
        [only] => *only,
        _ => {
            // Concatenations inside concatenations are flattened.
            let op = if items
                .iter()
                .all(|n| matches!(n.op, Op::Literal | Op::LiteralString))
            {
                Op::LiteralString
            } else if items
                .iter()
                .all(|n| n.simplified == Simplified::EmptyWidth || n.op == Op::EmptyWidthString)
            {
                Op::EmptyWidthString
            } else {
                Op::Concat
            };
            let nullable = items.iter().all(|n| n.nullable);
            Node {
                nullable,
                ..Node::leaf(op, flags, 0, nullable)
            }
            .absorb(&items)
        }
    }
}

//! Explore's errors, one enum per kind of thing that goes wrong: a setting that does not parse,
//! a schema the generator cannot serve, and a trial that fails. Each says itself in the words a
//! user reads.

use std::path::PathBuf;
use std::sync::Arc;

use holon_core::gateway::Trouble;

/// A setting of explore that cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SettingError {
    /// A case count that is not a whole number from 0 to the most a trial may ask for.
    #[error(
        "the number of explore cases must be a whole number from 0 (0 turns explore off) to {max}"
    )]
    Cases {
        /// The most cases a trial may ask for.
        max: u32,
    },
    /// A seed that is not a whole number that fits 64 bits.
    #[error("the explore seed must be a whole number from 0 to 2^64-1 (decimal or 0x hexadecimal)")]
    Seed,
    /// The manifest, whose bytes give the default seed, could not be read.
    #[error("cannot read `{}` for the explore seed: {source}", path.display())]
    Unreadable {
        /// The manifest.
        path: PathBuf,
        /// Why it could not be read.
        source: Arc<std::io::Error>,
    },
}

/// A schema node the generator cannot draw a value from, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unservable {
    /// Required values nested deeper than the generator follows.
    #[error(
        "`{at}` nests required values past {depth} levels (a `$ref` cycle with nothing optional?)"
    )]
    TooDeep {
        /// Where, as a pointer into `interface.input`.
        at: String,
        /// How deep the generator goes.
        depth: usize,
    },
    /// The schema `false`.
    #[error("`{at}` is the schema `false`: no value fits")]
    False {
        /// Where.
        at: String,
    },
    /// `enum: []`.
    #[error("`{at}` has an empty `enum`: no value fits")]
    EmptyEnum {
        /// Where.
        at: String,
    },
    /// Every branch of an `anyOf` or `oneOf` fails.
    #[error("no branch of `{at}/{key}` can be satisfied")]
    NoBranch {
        /// Where.
        at: String,
        /// `anyOf` or `oneOf`.
        key: String,
    },
    /// No type the node allows can be drawn.
    #[error("`{at}` admits no JSON type")]
    NoType {
        /// Where.
        at: String,
    },
    /// A `type` that is not a JSON Schema type.
    #[error("`{at}` has an unknown type `{name}`")]
    UnknownType {
        /// Where.
        at: String,
        /// The type named.
        name: String,
    },
    /// Integer bounds (and `multipleOf`) that leave no integer.
    #[error("`{at}` admits no integer between its bounds")]
    NoInteger {
        /// Where.
        at: String,
    },
    /// Bounds that leave no multiple of `multipleOf`.
    #[error("`{at}` admits no multiple of {of} between its bounds")]
    NoMultiple {
        /// Where.
        at: String,
        /// The `multipleOf`, as written.
        of: String,
    },
    /// Number bounds that leave no number.
    #[error("`{at}` admits no number between its bounds")]
    NoNumber {
        /// Where.
        at: String,
    },
    /// A `pattern` the string strategy cannot draw from.
    #[error("`{at}`: cannot draw strings from `pattern: {pattern}`: {why}")]
    Pattern {
        /// Where.
        at: String,
        /// The `pattern` (or the `format`'s) the strings are drawn from.
        pattern: String,
        /// Why not.
        why: String,
    },
    /// `minLength` over `maxLength`.
    #[error("`{at}` has `minLength` over `maxLength`")]
    Lengths {
        /// Where.
        at: String,
    },
    /// A `$ref` that leaves the document.
    #[error("`$ref: {target}` is not a local reference")]
    NotLocal {
        /// The reference.
        target: String,
    },
    /// A `$ref` that points at nothing.
    #[error("`$ref: {target}` points at nothing")]
    Dangling {
        /// The reference.
        target: String,
    },
}

/// Why an explore trial failed, or could not run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExploreError {
    /// The generator found no input the gate admits: the plan is empty.
    #[error(
        "explore cannot generate an input that `interface.input` admits: {why}\n(simplify the schema, or turn explore off with `HOLON_EXPLORE_CASES=0`)"
    )]
    CannotGenerate {
        /// Why not: the schema the generator cannot serve, or the gate's last refusal.
        why: String,
    },
    /// A case's upstream failed on the harness's side (it could not be reached while
    /// recording): nothing can be said of the agent.
    #[error("{0}")]
    Upstream(Trouble),
    /// No case succeeded while the examples show successes, and some codes reached are
    /// transient: the agent's upstream is likely unreachable.
    #[error(
        "no case succeeded, while the examples show successes: the agent answers only failures ({reached}), and some are transient (`retryable: true`): is the upstream reachable? An agent whose model or API cannot be reached fails every call; declare the upstream in `holon-test.toml` and record it (`{command} --upstream record`), or give a live run its key and URL"
    )]
    OnlyFailures {
        /// The codes reached, with their counts.
        reached: String,
        /// The command that runs these tests, in the author's words.
        command: String,
    },
    /// A case a paying caller would not get a success or a declared code for: the report, with
    /// the shrunk input as a paste-ready example.
    #[error("{0}")]
    Found(String),
}

//! What keeps `--bless` from writing: the manifest could not be read, locked or replaced, the
//! rewritten text would not pass the checks, or a rewrite could not be made exactly. Each says
//! itself in the words the run prints after `bless: ... was not rewritten:`.

use std::path::PathBuf;

/// Why the manifest was not rewritten: nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum BlessError {
    /// The manifest could not be read (or resolved through its links).
    #[error("cannot read `{}`: {source}", path.display())]
    Unreadable {
        /// The manifest.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest's folder could not be locked against another blessing process.
    #[error("cannot lock `{}`: {source}", dir.display())]
    Lock {
        /// The folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest changed during the run into something that is not YAML.
    #[error("`{}` no longer reads as YAML: {message}", path.display())]
    NotYaml {
        /// The manifest.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The rewritten text would be refused by the publish checks.
    #[error(
        "the rewritten manifest would not pass the publish checks; nothing was written\n{report}"
    )]
    Refused {
        /// The checks' report, rendered.
        report: String,
    },
    /// The rewritten text could not be put in the manifest's place.
    #[error("cannot write `{}`: {source}; it is unchanged", path.display())]
    Unwritten {
        /// The manifest.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The rewrite itself could not be made exactly.
    #[error(transparent)]
    Rewrite(#[from] RewriteError),
    /// An example by the name to save under is there already.
    #[error("`{}` has an example named `{name}` already: nothing was written (name the new one otherwise)", path.display())]
    Taken {
        /// The manifest.
        path: PathBuf,
        /// The name asked for.
        name: String,
    },
}

/// Why an example could not be rewritten exactly: the rewrite refuses rather than change more
/// than the answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The text does not read as YAML.
    #[error("the manifest does not read as YAML ({line}:{column}: {message})")]
    NotYaml {
        /// Where the parser stopped: its line, from 1.
        line: u64,
        /// Where the parser stopped: its column, from 1.
        column: u64,
        /// The parser's message.
        message: String,
    },
    /// The YAML events could not be laid out as nodes with byte spans.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// No `examples` key.
    #[error("the manifest has no `examples`")]
    NoExamples,
    /// `examples` is not a sequence.
    #[error("`examples` is not a sequence")]
    NotASequence,
    /// The example to rewrite is not there.
    #[error("`{at}` is not in the manifest")]
    Missing {
        /// The example, as `examples[N]`.
        at: String,
    },
    /// The example says neither an output nor an error.
    #[error("`{at}` has neither `output` nor `error`")]
    NoAnswer {
        /// The example, as `examples[N]`.
        at: String,
    },
    /// The example is not a mapping.
    #[error("`examples[{index}]` is not a mapping")]
    NotAMapping {
        /// Its place in `examples`, from 0.
        index: usize,
    },
    /// Two edits would touch the same bytes.
    #[error("two rewrites overlap")]
    Overlap,
    /// The rewritten text would not read as YAML.
    #[error(
        "the rewritten file would not read as YAML ({line}:{column}: {message}); nothing was written"
    )]
    Unreadable {
        /// Where the parser stopped: its line, from 1.
        line: u64,
        /// Where the parser stopped: its column, from 1.
        column: u64,
        /// The parser's message.
        message: String,
    },
    /// The rewritten text would read back as another document than the one intended.
    #[error("the rewritten file would not read back as the intended document; nothing was written")]
    Differs,
    /// The value is a block scalar.
    #[error("`{at}` is a block scalar (`|` or `>`); write it on one line and bless again")]
    BlockScalar {
        /// Where, as `examples[N].output.field`.
        at: String,
    },
    /// The value defines an anchor other nodes use.
    #[error(
        "`{at}` defines an anchor (`&name`) that other nodes use (`*name`); rewriting it would change them too"
    )]
    SharedAnchor {
        /// Where.
        at: String,
    },
    /// No `:` between a key and its value.
    #[error("`{at}`: no `:` after the key")]
    NoColon {
        /// Where.
        at: String,
    },
    /// A block value indented no deeper than its key.
    #[error("`{at}` is indented no deeper than its key; indent it and bless again")]
    Shallow {
        /// Where.
        at: String,
    },
}

/// Why a YAML text could not be laid out as nodes with byte spans.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The parser stopped on an error.
    #[error("the YAML parser stopped: {0}")]
    Stopped(String),
    /// An event came without its byte offsets.
    #[error("the YAML parser gave no byte offsets")]
    NoOffsets,
    /// The events ended inside a node.
    #[error("the YAML events ended early")]
    EndedEarly,
    /// A collection with no end event.
    #[error("a {0} has no end")]
    Unclosed(&'static str),
    /// An event where a node was expected.
    #[error("an unexpected YAML event")]
    Unexpected,
}

//! What goes wrong with a run's upstreams, one enum per moment: a setting that does not parse,
//! upstreams that cannot start, and a record run's files that cannot be written. Each says
//! itself in the words a user reads.

use std::path::PathBuf;

/// What a record run refused over recordings that do not read says it can do instead.
pub const FORCE_HINT: &str = " (fix them, or record over them: `--force` with `--upstream record`)";

/// A setting of the upstreams that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// `--upstream` or `HOLON_UPSTREAM` is not a mode.
    #[error("the upstream mode is `replay`, `record` or `live`, not `{0}`")]
    Mode(String),
    /// `HOLON_FAULT` is not `<exchange>:<fault>`.
    #[error("{usage}{problem}")]
    Fault {
        /// What the value must be.
        usage: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// Why a run's upstreams could not start: the run stops before any call.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Recording files are refused, each with its located problems.
    #[error(
        "{}the recordings were not read, and nothing was written{}",
        reports.iter().map(|r| holon_core::check::render_human(r, false)).collect::<String>(),
        if *record { FORCE_HINT } else { "" }
    )]
    Recordings {
        /// One report per refused file.
        reports: Vec<holon_core::check::Report>,
        /// Whether the run records (then `--force` records over them).
        record: bool,
    },
    /// A secret's value does not do for the mode: unset for a record run, or too short to
    /// scrub; the report locates each in `holon-test.toml`, naming the variable, never its
    /// value.
    #[error(
        "{}no call was made, and nothing was written",
        holon_core::check::render_human(report, false)
    )]
    Secrets {
        /// The problems, located in `holon-test.toml`.
        report: holon_core::check::Report,
    },
    /// `--upstream record` cannot write in the recordings folder.
    #[error("`--upstream record` cannot write the recordings in `{}`: {source}", folder.display())]
    Unwritable {
        /// The recordings folder beside the manifest.
        folder: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A mode that calls the real service has no address for it.
    #[error(
        "upstream `{name}`: `{env}` is unset and `holon-test.toml` gives no `url`; `--upstream {mode}` calls the real service, so it needs one of them"
    )]
    NoUrl {
        /// The upstream.
        name: String,
        /// Its variable.
        env: String,
        /// The mode's name.
        mode: &'static str,
    },
    /// No loopback listener could be bound for an upstream.
    #[error("cannot listen on 127.0.0.1 for upstream `{name}`: {source}")]
    Listen {
        /// The upstream.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// The client that forwards to the real services could not be built.
    #[error("cannot build the client for the upstreams: {0}")]
    Client(String),
    /// The proxies' runtime could not be started.
    #[error("cannot start the upstreams' runtime: {0}")]
    Runtime(std::io::Error),
    /// The function pass's variables cannot be set: other threads run.
    #[error(
        "the function pass reads {names} from this process's environment, which the harness can set only while no other thread runs ({threads} are running): start `Harness::run` first thing in `main`"
    )]
    Threads {
        /// The variables, in backticks, comma-separated.
        names: String,
        /// How many threads run.
        threads: usize,
    },
}

/// Why a record run's files could not be written or removed after the run.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// A recording could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The recording of an example the manifest no longer has could not be removed.
    #[error("cannot remove `{}`: {source}", path.display())]
    Remove {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

//! The harness's errors, one enum per area, each failure a variant that says itself in the
//! words a user reads, and [`RunError::exit_code`], the one place a failure becomes the run's
//! exit code. The lowest module of the harness, so that every area can name every error, as
//! nextest's runner keeps its errors in one module.

use std::path::PathBuf;
use std::sync::Arc;

use holon_core::gateway::{Status, Trouble};

use crate::exit;
use crate::reporter::{Event, say};

/// A setting that cannot be used: a value of the command line, a variable, or the builder.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SettingError {
    /// `--concurrency` or `HOLON_CONCURRENCY` is not a number of calls from 1 to 1024.
    #[error(
        "the concurrency must be a whole number of calls, at least 1 (1 means one call at a time) and at most {max}, not `{text}`"
    )]
    Concurrency {
        /// What was given.
        text: String,
        /// The most calls in flight a run may ask for.
        max: usize,
    },
    /// A number of seconds that is not above 0.
    #[error("must be a number of seconds above 0, not `{0}`")]
    Seconds(String),
    /// `--protocol` or `HOLON_PROTOCOL` names no era the harness speaks.
    #[error("the protocol is `auto`, `2026-07-28` or `2025-11-25`, not `{0}`")]
    Protocol(String),
    /// A switch that is neither on nor off.
    #[error("is `on` or `off` (`1` or `0`), not `{0}`")]
    Switch(String),
    /// A setting `holon-test.toml` reads that this harness has no place for.
    #[error("`{0}` is read from `holon-test.toml` but sets nothing")]
    Unread(String),
    /// One of explore's settings.
    #[error(transparent)]
    Explore(#[from] holon_explore::SettingError),
    /// One of the upstreams' settings.
    #[error(transparent)]
    Upstream(#[from] holon_upstream::SettingError),
    /// `--url` or `HOLON_SERVER_URL`, or a `--header`.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// A variable whose value is not UTF-8.
    #[error("`{name}` is not UTF-8")]
    NotUnicode {
        /// The variable.
        name: String,
    },
    /// A variable whose value does not parse.
    #[error("`{name}={text}`: {why}")]
    Variable {
        /// The variable.
        name: String,
        /// Its value.
        text: String,
        /// Why it does not parse.
        why: Box<SettingError>,
    },
    /// A value of the `Harness` builder its setting's parser refuses
    /// (`Harness::explore_cases(N)` past the maximum).
    #[error("`Harness::{call}`: {why}")]
    Builder {
        /// The call, as the builder was given it (`explore_cases(100001)`).
        call: String,
        /// Why it is refused.
        why: Box<SettingError>,
    },
    /// A path that is empty.
    #[error("must be a path, not empty")]
    EmptyPath,
    /// `--repeat` or `HOLON_REPEAT` is not a number of calls from 1 to the maximum.
    #[error("the calls of each example are a whole number from 1 to {max}, not `{text}`")]
    Repeat {
        /// What was given.
        text: String,
        /// The most calls of an example a run may make.
        max: u32,
    },
    /// `--min-success-rate` is not a number from 0 to 1.
    #[error("the minimum success rate is a number from 0 to 1 (0.95 for 95%), not `{0}`")]
    Rate(String),
    /// `--max-calls` is not a number of calls of at least 1.
    #[error("the most calls a run makes is a whole number of at least 1, not `{0}`")]
    MaxCalls(String),
    /// `--repeat` above 1 with `--bless`, which writes one answer per example.
    #[error(
        "`--repeat {0}` (`HOLON_REPEAT`) calls each example {0} times, and `--bless` (`HOLON_BLESS`) writes one answer per example: bless with one call per example"
    )]
    RepeatBless(u32),
    /// `--repeat` above 1 with `--upstream record`, which answers every call of an example
    /// with the one answer it records.
    #[error(
        "`--repeat {0}` (`HOLON_REPEAT`) with `--upstream record` would replay the one answer a record run keeps for each request {0} times: measure the real upstream with `--upstream live`, or the agent's own determinism under replay"
    )]
    RepeatRecord(u32),
    /// `--partition` is not `count:K/N` or `hash:K/N`.
    #[error(transparent)]
    Partition(#[from] holon_config::partition::NotAPartition),
}

/// An address or a header of a server already running that cannot be used. A header's value
/// is never part of one.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AddressError {
    /// Not a URL at all.
    #[error("`{shown}` is not a URL: {why}")]
    NotAUrl {
        /// The text, credentials hidden.
        shown: String,
        /// The URL parser's reason.
        why: String,
    },
    /// A URL that is not `http` or `https` with a host.
    #[error("`{shown}` is not an `http` or `https` URL (say `https://host/mcp`)")]
    NotHttp {
        /// The URL, credentials hidden.
        shown: String,
    },
    /// A header with no colon.
    #[error(
        "a header is `NAME: VALUE`, with a colon after the name (`Authorization: Bearer ${{TOKEN}}`)"
    )]
    NoColon,
    /// A header name that is not an HTTP token.
    #[error("`{0}` is not a header name (letters, digits and `-`, before the colon)")]
    HeaderName(String),
    /// A header value with a line break.
    #[error("the value of the header `{0}` holds a line break")]
    LineBreak(String),
    /// `${` with no `}` in a header's value.
    #[error("`--header {shown}`: `${{` with no closing `}}` in the value")]
    Unclosed {
        /// The header as shown, `NAME: ***`.
        shown: String,
    },
    /// A `${VAR}` in a header's value that is not set.
    #[error(
        "`--header {shown}`: the variable `{name}` is not set (the value takes `${{{name}}}` from the environment)"
    )]
    Unset {
        /// The header as shown.
        shown: String,
        /// The variable.
        name: String,
    },
    /// A header's value that holds a line break once its variables are read.
    #[error("`--header {shown}`: the value, once its variables are read, holds a line break")]
    ExpandedLineBreak {
        /// The header as shown.
        shown: String,
    },
}

/// Why a server already running could not be spoken to.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// The address is not one.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// `--ca-cert` cannot be read.
    #[error("`--ca-cert {}`: cannot read it: {why}", path.display())]
    CaCertUnreadable {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// `--ca-cert` holds something other than PEM certificates.
    #[error("`--ca-cert {}`: not PEM certificates: {why}", path.display())]
    CaCertNotPem {
        /// The file.
        path: PathBuf,
        /// The PEM reader's reason.
        why: String,
    },
    /// `--ca-cert` holds no certificate.
    #[error(
        "`--ca-cert {}`: no PEM certificate in it (`-----BEGIN CERTIFICATE-----`)",
        path.display()
    )]
    CaCertEmpty {
        /// The file.
        path: PathBuf,
    },
    /// A header's name no longer parses as one.
    #[error("`{0}` is not a header name")]
    HeaderName(String),
    /// A header's value that is not a header value.
    #[error("`--header {0}`: the value is not a header value")]
    HeaderValue(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// Something answered, and not as an MCP server does.
    #[error("the server at `{shown}` {what}")]
    Answered {
        /// The address, credentials hidden.
        shown: String,
        /// What it did.
        what: String,
    },
    /// Nothing answered within the startup limit.
    #[error(
        "the server at `{shown}` could not be reached within {seconds} s: {why}\ngateway status: {}",
        Status::RuntimeUnavailable
    )]
    Unreachable {
        /// The address, credentials hidden.
        shown: String,
        /// The startup limit.
        seconds: f64,
        /// The last reason.
        why: String,
    },
}

/// Why a server could not be started: what went wrong, and the server's output.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartError {
    /// No port could be claimed.
    #[error("no free port on 127.0.0.1")]
    NoPort,
    /// The process could not be started.
    #[error("cannot start the server {spec}: {why}")]
    Spawn {
        /// The binary or command.
        spec: String,
        /// The system's reason.
        why: String,
    },
    /// It exited, or did not answer in time; with its output.
    #[error("{why}\n--- server output ({spec}) ---\n{output}")]
    NotReady {
        /// What happened.
        why: NotReady,
        /// The binary or command.
        spec: String,
        /// The last lines it printed.
        output: String,
    },
    /// The port was taken by another process each time.
    #[error("{0}")]
    PortTaken(NotReady),
    /// The port was taken three times before the server could say anything.
    #[error("the port was taken three times")]
    PortTakenThrice,
}

/// How a server that was started failed to become ready.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NotReady {
    /// It exited first.
    #[error("the server exited before it answered ({0})")]
    Exited(String),
    /// It exited first, and runs on a runtime older than the project asks for: which.
    #[error("the server exited before it answered ({status}): {said}")]
    OldRuntime {
        /// Its exit status.
        status: String,
        /// The runtime found and the one needed, in a sentence.
        said: String,
    },
    /// It did not answer within the startup limit.
    #[error("the server did not answer an MCP `{asked}` on port {port} within {seconds} s{seen}")]
    Silent {
        /// The port it was given in `PORT`.
        port: u16,
        /// The startup limit.
        seconds: f64,
        /// The request it was asked.
        asked: String,
        /// What the last try saw once the port took a connection, in parentheses; empty when
        /// it never did.
        seen: String,
    },
}

/// Why a call's file handle could not be given a signed link.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FileError {
    /// Not a `holon://files/NAME` handle the test folder can serve.
    #[error("`{handle}`: {why}")]
    NotAHandle {
        /// The handle, `holon://files/NAME`.
        handle: String,
        /// Why it cannot be served.
        why: String,
    },
    /// `files/NAME` cannot be read.
    #[error("`{handle}`: cannot read `files/{name}`: {why}")]
    Unreadable {
        /// The handle, `holon://files/NAME`.
        handle: String,
        /// The file's name in `files/`.
        name: String,
        /// The system's reason.
        why: String,
    },
}

/// Why a server cannot be tested in an era, or in any: one line, a predicate of "the server"
/// (`answered `server/discover` (2026-07-28) with HTTP 404 Not Found: ...`), naming the era and
/// what was wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct EraFailure(pub String);

/// Why the MCP pass has no server to call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServerError {
    /// The signed-link file server could not be started.
    #[error("cannot start the test file server: {0}")]
    FileServer(String),
    /// The server process did not start.
    #[error("the server did not start: {0}")]
    Start(StartError),
    /// It answered, but can be tested in no era the run tests, or its answers in this era
    /// are wrong: why, in one line (and the server's output).
    #[error("{0}")]
    Eras(String),
    /// It speaks fewer eras than this trial's: what the run says of its eras.
    #[error("{0}")]
    OneEra(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// A server already running could not be spoken to.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// A server already running serves another manifest: where they differ.
    #[error("{0}")]
    AnotherManifest(String),
}

/// Why a server that died or stopped answering could not be started again for the next call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReviveError {
    /// A server already running (`--url`): the run never starts it.
    #[error("a server already running is not started again by the run")]
    Running,
    /// The run is ending on a signal.
    #[error("the run is stopping")]
    Stopping,
    /// Its process could not be started again.
    #[error("the server could not be started again: {0}")]
    Start(ServerError),
    /// No thread could start it.
    #[error("the server could not be started again: no thread to start it on: {0}")]
    Thread(String),
    /// It started again, but would not open in this era: why, as a predicate of "the server".
    #[error("the server, started again, {0}")]
    Reopen(EraFailure),
    /// There is no server to start again.
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// What is wrong with a server's `tools/list`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolsError {
    /// The MCP pass has no server.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// It was not sent (the run ended first).
    #[error("`tools/list` was not sent")]
    NotSent,
    /// No answer within 30 s.
    #[error("`tools/list` got no answer within 30 s")]
    Silent,
    /// It failed: why, with the status the gateway would give.
    #[error("{why}\ngateway status: {}", Status::RuntimeUnavailable)]
    Failed {
        /// What went wrong.
        why: String,
    },
    /// A 2026-07-28 `tools/list` result without its `resultType`.
    #[error(
        "the server's `tools/list` result has no `resultType`, which every 2026-07-28 result carries\ngateway status: {}",
        Status::AgentError
    )]
    NoResultType,
    /// No tool listed.
    #[error("the server lists no tool; it must list exactly one, `{want}`")]
    None {
        /// `runtime.tool`.
        want: String,
    },
    /// More than one tool.
    #[error(
        "the server lists {count} tools ({names}); a Holon agent exposes exactly one, `{want}`"
    )]
    Many {
        /// How many.
        count: usize,
        /// Their names, in backticks.
        names: String,
        /// `runtime.tool`.
        want: String,
    },
    /// The one tool has another name.
    #[error(
        "the server's tool is named `{got}`, but `runtime.tool` in the manifest is `{want}`; the gateway calls `{want}`"
    )]
    Renamed {
        /// Its name.
        got: String,
        /// `runtime.tool`.
        want: String,
    },
    /// Its `inputSchema` differs from `interface.input`.
    #[error(
        "the tool's `inputSchema` differs from `interface.input`; callers build calls from it\n{diff}"
    )]
    InputSchema {
        /// The differences, by path.
        diff: String,
    },
    /// Its `outputSchema` does not compile.
    #[error("the tool's `outputSchema` does not compile: {0}")]
    OutputSchema(String),
    /// Its `outputSchema` refuses answers the examples promise.
    #[error(
        "the tool's `outputSchema` refuses answers the examples promise; strict MCP clients (the TypeScript SDK) will reject them, failures included:\n{problems}"
    )]
    OutputRefuses {
        /// One line per refusal.
        problems: String,
    },
}

/// Why a call has no answer to judge.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoAnswer {
    /// The MCP pass has no server.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// Its upstream requests went wrong on the harness's side.
    #[error(transparent)]
    Trouble(#[from] Trouble),
    /// Its trial was filtered out, so its call was not made.
    #[error("this example's call was not made: its trial was filtered out")]
    FilteredOut,
    /// The call was not made.
    #[error("this example's call was not made")]
    NotMade,
    /// The run ended before the call was made.
    #[error("the call was not made: the run ended first")]
    RunEnded,
    /// A thread of the pass panicked before the call was made.
    #[error("the call was not made: the harness's calls failed (see the panic above)")]
    Panicked,
    /// No thread could be started for the calls.
    #[error("cannot start a thread for the calls: {0}")]
    Thread(String),
    /// The call could not be run in-process.
    #[error("the harness could not run the call: {0}")]
    Harness(String),
    /// The call ended without an answer.
    #[error("this example's call gave no answer")]
    Unanswered,
    /// The manifest has no such example.
    #[error("the manifest has no example {0}")]
    NoExample(usize),
    /// The agent's function mode did not start, or was refused: why, in one line.
    #[error("{0}")]
    FunctionMode(String),
    /// `--max-calls` left no call for this example.
    #[error("this example's call was not made: `--max-calls` left no call for it")]
    NotPlanned,
}

/// Why one example's fault trial failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FaultsFailed {
    /// Faults that failed: each one's report.
    #[error(
        "{}\n\n{} of {played} fault{} failed: under a failing upstream, an agent answers a declared code (marked `retryable: true` when trying again may help) or, having retried, the example's output",
        reports.join("\n\n"),
        reports.len(),
        if *played == 1 { "" } else { "s" }
    )]
    Faults {
        /// One report per fault that failed.
        reports: Vec<String>,
        /// How many faults were played.
        played: usize,
    },
    /// The example's requests are no longer the recorded ones, so no fault can be planted on
    /// them: the trial waits for a recording, in one line (the example's own trial reports
    /// where the requests differ).
    #[error(
        "waits for a recording: the agent's requests for example `{example}` are not the recorded ones any more, so no fault can be planted (`{trial}` says where they differ)"
    )]
    Unrecorded {
        /// The example whose recording is stale, by its name.
        example: String,
        /// Its trial on the same pass, which reports the request in full.
        trial: String,
    },
    /// Under every fault that failed, the agent answered the same success, not the example's
    /// output: the agent answers so without a fault too (it retried, and the recording answered
    /// it), so the example, not the fault, is at odds with it, as its own trial says.
    #[error(
        "every fault that failed ended in one answer, a success that is not the example's output ({what}): no fault explains it, the example does; `{trial}` reports it in full"
    )]
    TheExample {
        /// How the answer differs from the example.
        what: String,
        /// The example's own trial on the same pass.
        trial: String,
    },
}

/// Why `--junit` could not be written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JunitError {
    /// The XML could not be made.
    #[error("cannot write the JUnit report: {0}")]
    Render(String),
    /// Its folder could not be created.
    #[error("cannot create `{}` for the JUnit report: {why}", dir.display())]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// Why, in lowercase.
        why: String,
    },
    /// The file could not be written.
    #[error("cannot write the JUnit report to `{}`: {why}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why, in lowercase.
        why: String,
    },
}

/// Why `--receipts` could not be written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReceiptsError {
    /// The file (or its folder) could not be created, before any call.
    #[error("`--receipts`: cannot create `{}`: {why}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// A receipt could not be written during the run; none was written after it.
    #[error("`--receipts`: cannot write to `{}`: {why}; the receipts after it were not written", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        why: String,
    },
}

/// Why the page could not be written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PageError {
    /// Its folder could not be made.
    #[error("`--report`: cannot create the folder `{}`: {why}", dir.display())]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// The file could not be written.
    #[error("`--report`: cannot write `{}`: {why}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        why: String,
    },
}

/// Why nextest's setup script could not give the run its server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SetupError {
    /// Not run as nextest's setup script.
    #[error("`{var}=1` is for nextest's setup script, which sets `NEXTEST_ENV`; it is not set")]
    NoEnvFile {
        /// The variable that asked for it.
        var: &'static str,
    },
    /// No nextest process above this one.
    #[error(
        "`{var}=1`: no `{nextest}` process above this one, so the server could not be tied to the run"
    )]
    NoNextest {
        /// The variable that asked for it.
        var: &'static str,
        /// nextest's process name.
        nextest: &'static str,
    },
    /// The test binary could not be found.
    #[error("cannot find the test binary: {0}")]
    Exe(String),
    /// The keeper could not be started.
    #[error("cannot start the server's keeper: {0}")]
    Keeper(String),
    /// The keeper ended before the server answered.
    #[error("the server's keeper ended before the server answered")]
    KeeperEnded,
    /// The keeper said why it could not start the server.
    #[error("{0}")]
    KeeperSaid(String),
    /// `$NEXTEST_ENV` could not be written.
    #[error("cannot write `$NEXTEST_ENV`: {0}")]
    EnvFile(String),
    /// The nextest process could not be watched.
    #[error("cannot watch nextest (pid {pid}): {why}")]
    Watch {
        /// The nextest process's id.
        pid: i32,
        /// The system's reason.
        why: String,
    },
    /// The keeper's runtime could not be started.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The server did not start.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// What stops a run before its trials, or fails it after them.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A setting cannot be used.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// `HOLON_SERVER_URL` is not an address.
    #[error("`{var}`: {why}")]
    ServerUrlVar {
        /// The variable.
        var: &'static str,
        /// What is wrong with its value.
        why: RemoteError,
    },
    /// A server already running cannot be reached as given.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The upstreams could not start.
    #[error(transparent)]
    Upstreams(#[from] holon_upstream::StartError),
    /// A record run's files could not be written.
    #[error(transparent)]
    Recordings(#[from] holon_upstream::FinishError),
    /// The function pass's runtime could not be started.
    #[error("cannot start the function pass's runtime: {0}")]
    Functions(Arc<std::io::Error>),
    /// `holon-test.toml` is refused (its report is printed as `check` prints it).
    #[error("{}", holon_core::check::render_human(.0, false))]
    Config(holon_core::check::Report),
    /// The JUnit report could not be written.
    #[error(transparent)]
    Junit(#[from] JunitError),
    /// The receipts could not be written.
    #[error(transparent)]
    Receipts(#[from] ReceiptsError),
    /// The `--report` page could not be written.
    #[error(transparent)]
    Page(#[from] PageError),
    /// nextest's setup script failed.
    #[error(transparent)]
    Setup(#[from] SetupError),
}

impl RunError {
    /// The run's exit code for this error: settings that cannot go together are a usage
    /// error (2); every other means the harness could not run or finish what it was asked (1).
    pub fn exit_code(&self) -> u8 {
        match self {
            // Settings that cannot go together, however each was set: a usage error, as a
            // conflict of flags is.
            RunError::Setting(SettingError::RepeatBless(_) | SettingError::RepeatRecord(_)) => {
                exit::USAGE
            }
            RunError::Setting(_)
            | RunError::ServerUrlVar { .. }
            | RunError::Remote(_)
            | RunError::Upstreams(_)
            | RunError::Recordings(_)
            | RunError::Functions(_)
            | RunError::Config(_)
            | RunError::Junit(_)
            | RunError::Receipts(_)
            | RunError::Page(_)
            | RunError::Setup(_) => exit::REFUSED,
        }
    }

    /// Says the error on standard error, as the run's last words of it, and gives its exit
    /// code: a refused `holon-test.toml` as `check` prints it (each hint naming `program`'s
    /// `explain`), anything else on one `error:` line.
    pub fn report(&self, color: bool, program: &str) -> u8 {
        let render = |report| Event::Text(holon_core::check::render::human(report, color, program));
        match self {
            RunError::Config(report) => say(render(report)),
            RunError::Upstreams(holon_upstream::StartError::Recordings { reports, record }) => {
                for report in reports {
                    say(render(report));
                }
                say(Event::Error(format!(
                    "the recordings were not read, and nothing was written{}",
                    if *record {
                        holon_upstream::FORCE_HINT
                    } else {
                        ""
                    }
                )));
            }
            RunError::Upstreams(holon_upstream::StartError::Secrets { report }) => {
                say(render(report));
                say(Event::Error(
                    "no call was made, and nothing was written".into(),
                ));
            }
            other => say(Event::Error(other.to_string())),
        }
        self.exit_code()
    }
}

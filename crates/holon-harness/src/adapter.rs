//! The agent function of a TypeScript or Python agent, for the function pass: its function mode
//! (`[server] function` in `holon-test.toml`: `node agent.ts --function` with the kit's runtime
//! package, `node holon.ts --function` with an adapter of its own), a process that runs
//! `run(input, ctx)` with no MCP in between.
//!
//! The process is started as a server is (`process`: its own group with a watcher, a free port
//! in `PORT`, its output kept, stopped on every way out), when the first call needs it, and
//! listens on `127.0.0.1:$PORT`. On a connection of its own, the protocol cannot be corrupted
//! by what the agent prints: its stdout and stderr are kept, and shown with a failure.
//!
//! # The function-mode protocol, version 1
//!
//! The kit's own, spoken by the runtime packages (`holon-kit` on npm and PyPI) at the kit's
//! version. The process is started with, besides `PORT` and `HOST`:
//! - `HOLON_FUNCTION_PROTOCOL`: the version the harness speaks ([`PROTOCOL`]);
//! - `HOLON_KIT_VERSION`: the harness's version;
//! - `HOLON_MANIFEST`: the manifest's path;
//! - `HOLON_FILES`: the `files/` folder beside it, where `ctx.download("holon://files/NAME")`
//!   reads `NAME` in this mode (never outside it, symlinks included).
//!
//! On each connection, JSON lines both ways. The process speaks first:
//! `{"holon": "function", "protocol": 1, "runtime": "holon-kit 0.2.0", "language": "Python
//! 3.11.9"}`. Then the harness sends, as many in flight as the pass sends:
//! - `{"id": 1, "input": {...}}`, a call, answered by `{"id": 1, "output": {...}}`, `{"id": 1,
//!   "fail": {"code": ..., "message": ...}}` (`ctx.fail`) or `{"id": 1, "crash": "TypeError:
//!   boom"}` (anything else thrown, in one line, no stack);
//! - `{"id": 1, "cancel": true}`: the harness gave up on the call (`timeout_s`): `ctx.signal` is
//!   aborted in TypeScript, the task cancelled in Python; no answer is expected;
//! - `{"id": 2, "ping": true}`, answered by `{"id": 2, "pong": true}` from the loop the calls
//!   run on: a process that answers no ping is blocked (a synchronous sleep in an async
//!   function), and is replaced.
//!
//! A process whose first line is an answer, not the greeting, is an adapter of its own, written
//! before the runtime packages: it is run as it is (no ping: a call given up on replaces it),
//! and the run says once how to move to the package. One that greets with another protocol is
//! refused in one line that names both versions; one of another kit version, said in one line.
//!
//! To the function pass this is an [`Agent`] like a Rust function: the runtime's `Runner`
//! gates each input, bounds it by `timeout_s` and settles the answer as the gateway would, and
//! the pass's flight, retries, upstream attribution, faults and measurement are the ones a Rust
//! agent gets. A process that exits mid-call fails the calls in flight as crashes, with its last
//! lines, and is started again for the calls after them; one that cannot start (a module that
//! does not import, a Node too old) is said once, in full, and every call fails in one line, as
//! the function mode's failure, not the agent's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::process::{Readiness, ServerProcess, ServerSpec};
use crate::reporter::{Event, say};
use holon_runtime::{Agent, AgentFuture, Ctx, Failure};
use settling::Settling;

mod settling;

/// The function-mode protocol this harness speaks (the module's docs say it).
pub(crate) const PROTOCOL: u64 = 1;

/// The kit's version, which the runtime packages are released at.
const KIT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How long a call tried again alone keeps the process to itself.
const ALONE: Duration = Duration::from_secs(1);

/// How long a process that runs its calls on a loop may take to answer a ping before it counts
/// as blocked (`timeout_s`, when shorter).
const PING: Duration = Duration::from_secs(2);

/// How an adapter's function mode answered one call.
enum Reply {
    Output(Value),
    Fail {
        code: String,
        message: String,
    },
    Crash(String),
    /// The process exited (or closed its connection) while the call was in flight.
    Exited(String),
    /// The answer to a ping.
    Pong,
}

/// Why a call got no answer from the process: said as the agent's crash.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Lost(String);

/// What a runtime package says of itself when a connection opens.
#[derive(Clone, Debug, PartialEq)]
struct Hello {
    protocol: u64,
    /// `holon-kit 0.2.0`.
    runtime: String,
    /// `Python 3.11.9`, `Node 22.18.0`.
    language: String,
}

/// The connection to a running process: where to send, and the calls waiting for an answer.
struct Connection {
    send: mpsc::UnboundedSender<String>,
    waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>,
    /// The process's greeting, once its first line came: `None` inside for an adapter of its
    /// own, which greets with nothing.
    hello: Arc<OnceLock<Option<Hello>>>,
    /// The process, kept for its output and stopped when the connection is dropped.
    process: Arc<ServerProcess>,
}

/// How a process that let a call run past `timeout_s` was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stuck {
    /// It answered no ping either: the call blocks it, and it was replaced.
    Blocked,
    /// It answered a ping: the call is slow, and the process goes on.
    Slow,
    /// An adapter of its own, which cannot be pinged: it was replaced, to be sure.
    Replaced,
}

/// The adapter's function mode as an [`Agent`]: a handle, shared by the run and its pass.
#[derive(Clone)]
pub(crate) struct Adapter(Arc<Inner>);

struct Inner {
    command: String,
    dir: PathBuf,
    /// What the process is started with beside `PORT` and `HOST` (the protocol's variables).
    env: Vec<(String, String)>,
    /// How long the process may take to listen (the run's startup timeout), set once the run's
    /// settings are known.
    startup: OnceLock<Duration>,
    /// The run's `timeout_s`, which bounds a ping.
    limit: OnceLock<Duration>,
    next: AtomicU64,
    state: tokio::sync::Mutex<State>,
    /// The processes started, for their output at the end of the run and their stop.
    started: Mutex<Vec<Arc<ServerProcess>>>,
    /// Held by a call tried again after the process exited under it, and passed through by
    /// each new call before it goes out: the calls in flight when it exited go again one at a
    /// time, no new call beside them, so that of them only the one that ends the process fails.
    /// A call tried again that has not ended within [`ALONE`] lets the next go beside it: one
    /// that never answers holds nobody up past that.
    alone: tokio::sync::RwLock<()>,
    /// What the run was told once: how to move to the runtime package, a version apart.
    said: Arc<Said>,
    /// Why the function mode is refused, when its protocol is not this harness's.
    refused: Arc<OnceLock<String>>,
    /// Why it could not start, in one line, once it could not: what every call says.
    down: OnceLock<String>,
    /// Claimed where a process let a call run past `timeout_s`, while it is asked whether it
    /// is blocked (and replaced when it is): a call waits for the answer before it goes out,
    /// so that it never goes to a process still blocked, or about to be replaced.
    settling: Arc<Settling>,
    /// How many processes were replaced as blocked (or not to be asked): a call that sees the
    /// count move while it ran had its process replaced under it.
    replaced: AtomicU64,
}

#[derive(Default)]
struct Said {
    moving: AtomicBool,
    version: AtomicBool,
}

enum State {
    Idle,
    Up(Arc<Connection>),
    /// It could not start: why, in one line (the whole of it was printed once).
    Broken(String),
}

impl Adapter {
    /// The function mode `command` starts, run with `sh -c` in the folder of `manifest`.
    pub(crate) fn new(command: String, manifest: &Path) -> Adapter {
        let dir = holon_core::manifest::folder_of(manifest);
        let absolute = |path: &Path| std::path::absolute(path).unwrap_or(path.to_path_buf());
        let env = vec![
            ("HOLON_FUNCTION_PROTOCOL".to_string(), PROTOCOL.to_string()),
            ("HOLON_KIT_VERSION".to_string(), KIT_VERSION.to_string()),
            (
                "HOLON_MANIFEST".to_string(),
                absolute(manifest).display().to_string(),
            ),
            (
                "HOLON_FILES".to_string(),
                absolute(&dir.join("files")).display().to_string(),
            ),
        ];
        Adapter(Arc::new(Inner {
            command,
            dir,
            env,
            startup: OnceLock::new(),
            limit: OnceLock::new(),
            next: AtomicU64::new(1),
            state: tokio::sync::Mutex::new(State::Idle),
            started: Mutex::new(Vec::new()),
            alone: tokio::sync::RwLock::new(()),
            said: Arc::default(),
            refused: Arc::new(OnceLock::new()),
            down: OnceLock::new(),
            settling: Settling::new(),
            replaced: AtomicU64::new(0),
        }))
    }

    /// The run's startup limit, for each start of the process, and its `timeout_s`.
    pub(crate) fn startup(&self, limit: Duration, timeout: Duration) {
        let _ = self.0.startup.set(limit);
        let _ = self.0.limit.set(timeout);
    }

    /// Starts the process now, on `runtime` (the one its calls run on), so that a call's time
    /// is the call's and not the process's start (`holon-test call --function`); a start that
    /// fails is said, and the call says it again.
    pub(crate) fn warm(&self, runtime: &tokio::runtime::Runtime) {
        let _ = runtime.block_on(self.0.connection());
    }

    /// Starts the process, when it is not running, before the first call: a call's
    /// `timeout_s` is not spent on the start.
    pub(crate) async fn ready(&self) {
        self.0.settling.settled().await;
        let _ = self.0.connection().await;
    }

    /// Why no call can be made, when the function mode did not start or was refused: the
    /// function mode's failure, not the agent's.
    pub(crate) fn unavailable(&self) -> Option<String> {
        self.0.refused.get().or(self.0.down.get()).cloned()
    }

    /// How many processes were replaced so far: what [`Adapter::stuck`] is given.
    pub(crate) fn replacements(&self) -> u64 {
        self.0.replaced.load(Ordering::SeqCst)
    }

    /// After a call that started when [`Adapter::replacements`] said `since` ran past
    /// `timeout_s`: whether its process still answers, replaced when it does not (or cannot be
    /// asked); blocked when it was replaced under the call already.
    pub(crate) async fn stuck(&self, since: u64) -> Stuck {
        self.0.stuck(since).await
    }

    /// Stops every process it started; the last one's output, framed for the end of a run.
    pub(crate) fn stop(&self) -> Option<String> {
        let started = std::mem::take(&mut *self.0.started.lock().ok()?);
        let last = (started.last()).map(|p| {
            format!(
                "--- function mode output (last lines) ---\n{}\n---",
                p.output.tail()
            )
        });
        for process in started {
            process.stop();
        }
        last
    }
}

impl Inner {
    /// The connection to a running process, started (again) when there is none.
    async fn connection(&self) -> Result<Arc<Connection>, Lost> {
        if let Some(why) = self.refused.get() {
            return Err(Lost(why.clone()));
        }
        let mut state = self.state.lock().await;
        if let State::Up(connection) = &*state
            && connection.process.exit_status().is_none()
            && !connection.send.is_closed()
        {
            return Ok(connection.clone());
        }
        if let State::Broken(why) = &*state {
            return Err(Lost(why.clone()));
        }
        match self.start().await {
            Ok(connection) => {
                *state = State::Up(connection.clone());
                Ok(connection)
            }
            Err(Lost(why)) => {
                // Said once, whole; each call after says it in one line.
                say(Event::Paragraph(format!("error: {why}\n")));
                let line = why.lines().next().unwrap_or("").to_string();
                let short = format!("{line} (its output is printed above)");
                *state = State::Broken(short.clone());
                let _ = self.down.set(short.clone());
                Err(Lost(short))
            }
        }
    }

    /// The process of `connection` stopped and forgotten, so that the next call starts
    /// another; the calls in flight on it end as [`Reply::Exited`], and are tried again alone.
    async fn replace(&self, connection: &Arc<Connection>) {
        let mut state = self.state.lock().await;
        if let State::Up(up) = &*state
            && Arc::ptr_eq(up, connection)
        {
            *state = State::Idle;
            self.replaced.fetch_add(1, Ordering::SeqCst);
        }
        drop(state);
        connection.process.hangs();
        let process = connection.process.clone();
        let _ = tokio::task::spawn_blocking(move || process.stop()).await;
        // Started again at once: the next call's `timeout_s` is not spent on the start.
        let _ = self.connection().await;
    }

    /// Whether `connection` is still the one calls go to: not replaced.
    async fn current(&self, connection: &Arc<Connection>) -> bool {
        matches!(&*self.state.lock().await, State::Up(up) if Arc::ptr_eq(up, connection))
    }

    /// Whether the process of `connection` answers a ping in time.
    async fn pings(&self, connection: &Connection) -> bool {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = connection.waiting.lock() {
            waiting.insert(id, tx);
        }
        let line = format!("{}\n", json!({"id": id, "ping": true}));
        if connection.send.send(line).is_err() {
            return false;
        }
        let limit = PING.min(self.limit.get().copied().unwrap_or(PING));
        let answered = matches!(tokio::time::timeout(limit, rx).await, Ok(Ok(Reply::Pong)));
        if let Ok(mut waiting) = connection.waiting.lock() {
            waiting.remove(&id);
        }
        answered
    }

    async fn stuck(&self, since: u64) -> Stuck {
        let _claim = self.settling.claim();
        let _turn = self.settling.turn().await;
        // Replaced under the call already: a cancelled call's ping found it blocked.
        if self.replaced.load(Ordering::SeqCst) != since {
            return Stuck::Blocked;
        }
        let connection = match &*self.state.lock().await {
            State::Up(connection) => connection.clone(),
            // Replaced already (a call given up on found it blocked), or never up.
            _ => return Stuck::Blocked,
        };
        match connection.hello.get() {
            Some(Some(_)) if self.pings(&connection).await => Stuck::Slow,
            Some(Some(_)) => {
                self.replace(&connection).await;
                Stuck::Blocked
            }
            _ => {
                self.replace(&connection).await;
                Stuck::Replaced
            }
        }
    }

    async fn start(&self) -> Result<Arc<Connection>, Lost> {
        let spec = ServerSpec::Command(self.command.clone());
        let dir = self.dir.clone();
        let env = self.env.clone();
        let limit = self
            .startup
            .get()
            .copied()
            .unwrap_or(Duration::from_secs(30));
        let started = tokio::task::spawn_blocking(move || {
            ServerProcess::start(&spec, &dir, &env, limit, "connection", |port| {
                match std::net::TcpStream::connect(("127.0.0.1", port)) {
                    Ok(_) => Readiness::Ready,
                    Err(e) => Readiness::NotYet(format!("refused a connection: {e}")),
                }
            })
        })
        .await
        .map_err(|e| Lost(e.to_string()))?;
        let process = Arc::new(started.map_err(|e| {
            Lost(format!(
                "the agent's function mode (`{}`) did not start: {e}",
                self.command
            ))
        })?);
        if let Ok(mut all) = self.started.lock() {
            all.push(process.clone());
        }
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", process.port))
            .await
            .map_err(|e| Lost(format!("the agent's function mode took no connection: {e}")))?;
        let _ = stream.set_nodelay(true);
        let (read, mut write) = stream.into_split();
        let (send, mut outgoing) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = outgoing.recv().await {
                if write.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        let waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>> = Arc::default();
        let hello: Arc<OnceLock<Option<Hello>>> = Arc::default();
        let (answers, watched, greeted) = (waiting.clone(), process.clone(), hello.clone());
        let (said, refused, command) = (
            self.said.clone(),
            self.refused.clone(),
            self.command.clone(),
        );
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            let mut why_closed = None;
            while let Ok(Some(line)) = lines.next_line().await {
                if greeted.get().is_none() {
                    let hello = greeting(&line);
                    let _ = greeted.set(hello.clone());
                    match hello {
                        Some(hello) => match refusal(&hello) {
                            Some(why) => {
                                let _ = refused.set(why.clone());
                                why_closed = Some(why);
                                break;
                            }
                            None => {
                                if hello_apart(&hello) && !said.version.swap(true, Ordering::SeqCst)
                                {
                                    say(Event::Line(version_note(&hello, &command)));
                                }
                                continue;
                            }
                        },
                        None => {
                            if !said.moving.swap(true, Ordering::SeqCst) {
                                say(Event::Line(moving_note(&command)));
                            }
                        }
                    }
                }
                let Some((id, reply)) = parse(&line) else {
                    continue;
                };
                let waiter = answers.lock().ok().and_then(|mut w| w.remove(&id));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(reply);
                }
            }
            let why = match why_closed {
                Some(why) => why,
                None => {
                    // The process closed the connection: it exited, or is about to.
                    let status = tokio::task::spawn_blocking(move || {
                        let status = watched.wait_exit(Duration::from_secs(2));
                        (status, watched.output.tail())
                    })
                    .await;
                    let (status, tail) = status.unwrap_or((None, String::new()));
                    let how = status.map_or("closed its connection".to_string(), |s| {
                        format!("exited ({s})")
                    });
                    format!(
                        "the agent's function mode {how} during the call; it is started again for the calls after this one. Its last lines:\n{tail}"
                    )
                }
            };
            let waiters: Vec<_> = answers
                .lock()
                .map(|mut w| w.drain().collect())
                .unwrap_or_default();
            for (_, waiter) in waiters {
                let _ = waiter.send(Reply::Exited(why.clone()));
            }
        });
        Ok(Arc::new(Connection {
            send,
            waiting,
            hello,
            process,
        }))
    }

    /// A call whose `timeout_s` runs out at `due` (none known before the run's settings).
    async fn call(
        self: Arc<Inner>,
        input: Value,
        ctx: Ctx,
        due: Option<Instant>,
    ) -> Result<Value, Failure> {
        drop(self.alone.read().await);
        let mut reply = self.attempt(input.clone(), None, due).await?.0;
        // In flight when the process exited: tried again alone, on a process started again, so
        // that only the call that ends it fails; again while the exit came after it had let the
        // next call go beside it.
        while let Reply::Exited(_) = reply {
            let alone = self.alone.write().await;
            let (again, held) = self.attempt(input.clone(), Some(alone), due).await?;
            reply = again;
            if held {
                break;
            }
        }
        match reply {
            Reply::Output(output) => Ok(output),
            Reply::Fail { code, message } => Err(ctx.fail(code, message)),
            Reply::Crash(why) | Reply::Exited(why) => Err(Failure::from(Lost(why))),
            Reply::Pong => Err(Failure::from(Lost(
                "the agent's function mode answered a call with a `pong`".into(),
            ))),
        }
    }

    /// One try of a call: the process's reply, or why there is none; `alone`, the process
    /// kept to this call until it ends or [`ALONE`] has passed, and whether it still was when
    /// the reply came.
    async fn attempt(
        self: &Arc<Self>,
        input: Value,
        alone: Option<tokio::sync::RwLockWriteGuard<'_, ()>>,
        due: Option<Instant>,
    ) -> Result<(Reply, bool), Failure> {
        let connection = self.connection().await.map_err(Failure::from)?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = connection.waiting.lock() {
            waiting.insert(id, tx);
        }
        // Dropped before its answer (the run passed `timeout_s`): the process is told to abort,
        // and replaced when it answers nothing else either. Known as sent until then.
        let mut guard = Cancel {
            id,
            connection: connection.clone(),
            inner: self.clone(),
            done: false,
            _sent: due.map(|due| self.settling.sent(id, due)),
        };
        let line = format!("{}\n", json!({"id": id, "input": input}));
        if connection.send.send(line).is_err() {
            guard.done = true;
            return Err(Failure::from(Lost(
                "the agent's function mode closed its connection".into(),
            )));
        }
        let mut rx = rx;
        let (reply, held) = match alone {
            None => (rx.await, false),
            Some(alone) => match tokio::time::timeout(ALONE, &mut rx).await {
                Ok(reply) => (reply, true),
                Err(_) => {
                    drop(alone);
                    (rx.await, false)
                }
            },
        };
        guard.done = true;
        let reply = reply
            .map_err(|_| Failure::from(Lost("the agent's function mode gave no answer".into())))?;
        Ok((reply, held))
    }
}

/// Tells the process to abort a call nobody waits for any more, and replaces a process that
/// is blocked (or cannot be asked whether it is).
struct Cancel {
    id: u64,
    connection: Arc<Connection>,
    inner: Arc<Inner>,
    done: bool,
    /// The call as sent, dropped after `drop` has claimed its question.
    _sent: Option<settling::Sent>,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Ok(mut waiting) = self.connection.waiting.lock() {
            waiting.remove(&self.id);
        }
        let line = format!("{}\n", json!({"id": self.id, "cancel": true}));
        let _ = self.connection.send.send(line);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (inner, connection) = (self.inner.clone(), self.connection.clone());
        // Claimed here, before the task runs: the call that goes out next waits for it.
        let claim = self.inner.settling.claim();
        handle.spawn(async move {
            let _claim = claim;
            let _turn = inner.settling.turn().await;
            // Its process was replaced already (an earlier question found it blocked).
            if !inner.current(&connection).await {
                return;
            }
            let greeted = matches!(connection.hello.get(), Some(Some(_)));
            if !greeted || !inner.pings(&connection).await {
                inner.replace(&connection).await;
            }
        });
    }
}

impl Agent for Adapter {
    fn call(&self, input: Value, ctx: Ctx) -> AgentFuture {
        // Taken as the runtime takes the call, before its `timeout_s` starts: when the runtime
        // lets the call go, `due` has passed.
        let due = self.0.limit.get().map(|limit| Instant::now() + *limit);
        Box::pin(self.0.clone().call(input, ctx, due))
    }
}

/// A runtime package's greeting, when `line` is one.
fn greeting(line: &str) -> Option<Hello> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("holon")?.as_str()? != "function" {
        return None;
    }
    let text = |key: &str| {
        (value.get(key).and_then(Value::as_str))
            .unwrap_or("")
            .to_string()
    };
    Some(Hello {
        protocol: value.get("protocol").and_then(Value::as_u64).unwrap_or(0),
        runtime: text("runtime"),
        language: text("language"),
    })
}

/// Why a greeting's protocol is refused, in one line, when it is not this harness's.
fn refusal(hello: &Hello) -> Option<String> {
    (hello.protocol != PROTOCOL).then(|| {
        format!(
            "the agent's function mode speaks protocol {} ({}), and this holon-test {KIT_VERSION} speaks protocol {PROTOCOL}: install the runtime package at {KIT_VERSION}, the version of holon-test",
            hello.protocol, hello.runtime
        )
    })
}

/// Whether the runtime package is of another version than the kit.
fn hello_apart(hello: &Hello) -> bool {
    hello.runtime.rsplit(' ').next() != Some(KIT_VERSION)
}

/// The package a function-mode command runs on: npm's or PyPI's.
fn registry(command: &str) -> (&'static str, &'static str) {
    if command.contains("node") || command.contains(".ts") || command.contains(".js") {
        ("npm", "package.json")
    } else {
        ("PyPI", "pyproject.toml")
    }
}

/// The note, said once, on a runtime package of another version than holon-test.
fn version_note(hello: &Hello, command: &str) -> String {
    let (_, file) = registry(command);
    format!(
        "note: the agent runs on {} and this holon-test is {KIT_VERSION}: pin `holon-kit` at {KIT_VERSION} in {file}, so that the two agree",
        hello.runtime
    )
}

/// The note, said once, on an adapter of the agent's own, written before the runtime packages.
fn moving_note(command: &str) -> String {
    let (registry, file) = registry(command);
    format!(
        "note: the function mode `{command}` is an adapter of this agent's own; the kit's runtime package, `holon-kit` on {registry} at {KIT_VERSION}, serves `run` and its function mode for you, with `ctx.download`: add it to {file}, make the agent's entry call `serve(run)`, and delete the adapter (the guide's \"Moving to the runtime package\" says how)"
    )
}

/// One answer line: its id and the reply; `None` for a line that is not one.
fn parse(line: &str) -> Option<(u64, Reply)> {
    let value: Value = serde_json::from_str(line).ok()?;
    let id = value.get("id")?.as_u64()?;
    if value.get("pong").is_some() {
        return Some((id, Reply::Pong));
    }
    if let Some(output) = value.get("output") {
        return Some((id, Reply::Output(output.clone())));
    }
    if let Some(fail) = value.get("fail") {
        let text = |key: &str| {
            (fail.get(key).and_then(Value::as_str))
                .unwrap_or_default()
                .to_string()
        };
        return Some((
            id,
            Reply::Fail {
                code: text("code"),
                message: text("message"),
            },
        ));
    }
    let crash = value
        .get("crash")
        .and_then(Value::as_str)
        .unwrap_or("an answer with no `output`, `fail` or `crash`");
    Some((id, Reply::Crash(format!("the agent threw {crash}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_greeting_is_told_from_an_answer() {
        let hello = greeting(
            r#"{"holon": "function", "protocol": 1, "runtime": "holon-kit 0.2.0", "language": "Python 3.11.9"}"#,
        );
        assert_eq!(
            hello,
            Some(Hello {
                protocol: 1,
                runtime: "holon-kit 0.2.0".into(),
                language: "Python 3.11.9".into(),
            })
        );
        assert_eq!(greeting(r#"{"id": 1, "output": {}}"#), None);
        assert_eq!(greeting("not json"), None);
    }

    #[test]
    fn another_protocol_is_refused_in_one_line_naming_both() {
        let hello = Hello {
            protocol: 2,
            runtime: "holon-kit 0.3.0".into(),
            language: String::new(),
        };
        let why = refusal(&hello).expect("refused");
        assert!(!why.contains('\n'), "{why}");
        assert!(why.contains("protocol 2 (holon-kit 0.3.0)"), "{why}");
        assert!(
            why.contains(&format!("speaks protocol {PROTOCOL}")),
            "{why}"
        );
        let same = Hello {
            protocol: PROTOCOL,
            ..hello
        };
        assert_eq!(refusal(&same), None);
        assert!(hello_apart(&same));
    }
}

//! The agent function of a TypeScript or Python agent, for the function pass: its adapter's
//! function mode (`[server] function` in `holon-test.toml`, `node holon.ts --function`), a
//! process of its own that runs `run(input, ctx)` with no MCP in between.
//!
//! The process is started as a server is (`process`: its own group with a watcher, a free port
//! in `PORT`, its output kept, stopped on every way out), when the first call needs it, and
//! listens on `127.0.0.1:$PORT`. The calls go over one connection as JSON lines, each with an
//! id, as many in flight as the pass sends: `{"id": 1, "input": {...}}`, answered by
//! `{"id": 1, "output": {...}}`, `{"id": 1, "fail": {"code": ..., "message": ...}}` (`ctx.fail`)
//! or `{"id": 1, "crash": "TypeError: boom"}` (anything else thrown); `{"id": 1, "cancel": true}`
//! aborts a call the pass gave up on (`timeout_s`: `ctx.signal` in TypeScript, the task
//! cancelled in Python). On a connection of its own, the protocol cannot be corrupted by what
//! the agent prints: its stdout and stderr are kept, and shown with a failure.
//!
//! To the function pass this is an [`Agent`] like a Rust function: the runtime's `Runner`
//! gates each input, bounds it by `timeout_s` and settles the answer as the gateway would, and
//! the pass's flight, retries, upstream attribution, faults and measurement are the ones a Rust
//! agent gets. A process that exits mid-call fails the calls in flight as crashes, with its last
//! lines, and is started again for the calls after them; one that cannot start (a module that
//! does not import) is said once, in full, and every call fails in one line.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::process::{Readiness, ServerProcess, ServerSpec};
use holon_runtime::{Agent, AgentFuture, Ctx, Failure};

/// How long a call tried again alone keeps the process to itself.
const ALONE: Duration = Duration::from_secs(1);

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
}

/// Why a call got no answer from the process: said as the agent's crash.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Lost(String);

/// The connection to a running process: where to send, and the calls waiting for an answer.
struct Connection {
    send: mpsc::UnboundedSender<String>,
    waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>,
    /// The process, kept for its output and stopped when the connection is dropped.
    process: Arc<ServerProcess>,
}

/// The adapter's function mode as an [`Agent`]: a handle, shared by the run and its pass.
#[derive(Clone)]
pub(crate) struct Adapter(Arc<Inner>);

struct Inner {
    command: String,
    dir: PathBuf,
    /// How long the process may take to listen (the run's startup timeout), set once the run's
    /// settings are known.
    startup: OnceLock<Duration>,
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
}

enum State {
    Idle,
    Up(Arc<Connection>),
    /// It could not start: why, in one line (the whole of it was printed once).
    Broken(String),
}

impl Adapter {
    /// The function mode `command` starts, run with `sh -c` in `dir` (the manifest's folder).
    pub(crate) fn new(command: String, dir: PathBuf) -> Adapter {
        Adapter(Arc::new(Inner {
            command,
            dir,
            startup: OnceLock::new(),
            next: AtomicU64::new(1),
            state: tokio::sync::Mutex::new(State::Idle),
            started: Mutex::new(Vec::new()),
            alone: tokio::sync::RwLock::new(()),
        }))
    }

    /// The run's startup limit, for each start of the process.
    pub(crate) fn startup(&self, limit: Duration) {
        let _ = self.0.startup.set(limit);
    }

    /// Starts the process now, on `runtime` (the one its calls run on), so that a call's time
    /// is the call's and not the process's start (`holon-test call --function`); a start that
    /// fails is said, and the call says it again.
    pub(crate) fn warm(&self, runtime: &tokio::runtime::Runtime) {
        let _ = runtime.block_on(self.0.connection());
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
                eprintln!("\nerror: {why}\n");
                let line = why.lines().next().unwrap_or("").to_string();
                let short = format!("{line} (its output is printed above)");
                *state = State::Broken(short.clone());
                Err(Lost(short))
            }
        }
    }

    async fn start(&self) -> Result<Arc<Connection>, Lost> {
        let spec = ServerSpec::Command(self.command.clone());
        let dir = self.dir.clone();
        let limit = self
            .startup
            .get()
            .copied()
            .unwrap_or(Duration::from_secs(30));
        let started = tokio::task::spawn_blocking(move || {
            ServerProcess::start(&spec, &dir, &[], limit, "connection", |port| {
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
        let (answers, watched) = (waiting.clone(), process.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Some((id, reply)) = parse(&line) else {
                    continue;
                };
                let waiter = answers.lock().ok().and_then(|mut w| w.remove(&id));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(reply);
                }
            }
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
            let waiters: Vec<_> = answers
                .lock()
                .map(|mut w| w.drain().collect())
                .unwrap_or_default();
            for (_, waiter) in waiters {
                let _ = waiter.send(Reply::Exited(format!(
                    "the agent's function mode {how} during the call; it is started again for the calls after this one. Its last lines:\n{tail}"
                )));
            }
        });
        Ok(Arc::new(Connection {
            send,
            waiting,
            process,
        }))
    }

    async fn call(self: Arc<Inner>, input: Value, ctx: Ctx) -> Result<Value, Failure> {
        drop(self.alone.read().await);
        let mut reply = self.attempt(input.clone(), None).await?.0;
        // In flight when the process exited: tried again alone, on a process started again, so
        // that only the call that ends it fails; again while the exit came after it had let the
        // next call go beside it.
        while let Reply::Exited(_) = reply {
            let alone = self.alone.write().await;
            let (again, held) = self.attempt(input.clone(), Some(alone)).await?;
            reply = again;
            if held {
                break;
            }
        }
        match reply {
            Reply::Output(output) => Ok(output),
            Reply::Fail { code, message } => Err(ctx.fail(code, message)),
            Reply::Crash(why) | Reply::Exited(why) => Err(Failure::from(Lost(why))),
        }
    }

    /// One try of a call: the process's reply, or why there is none; `alone`, the process
    /// kept to this call until it ends or [`ALONE`] has passed, and whether it still was when
    /// the reply came.
    async fn attempt(
        &self,
        input: Value,
        alone: Option<tokio::sync::RwLockWriteGuard<'_, ()>>,
    ) -> Result<(Reply, bool), Failure> {
        let connection = self.connection().await.map_err(Failure::from)?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = connection.waiting.lock() {
            waiting.insert(id, tx);
        }
        let line = format!("{}\n", json!({"id": id, "input": input}));
        if connection.send.send(line).is_err() {
            return Err(Failure::from(Lost(
                "the agent's function mode closed its connection".into(),
            )));
        }
        // Dropped before its answer (the run passed `timeout_s`): the process is told to abort.
        let mut guard = Cancel {
            id,
            connection: connection.clone(),
            done: false,
        };
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

/// Tells the process to abort a call nobody waits for any more.
struct Cancel {
    id: u64,
    connection: Arc<Connection>,
    done: bool,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        if !self.done {
            if let Ok(mut waiting) = self.connection.waiting.lock() {
                waiting.remove(&self.id);
            }
            let line = format!("{}\n", json!({"id": self.id, "cancel": true}));
            let _ = self.connection.send.send(line);
        }
    }
}

impl Agent for Adapter {
    fn call(&self, input: Value, ctx: Ctx) -> AgentFuture {
        Box::pin(self.0.clone().call(input, ctx))
    }
}

/// One answer line: its id and the reply; `None` for a line that is not one.
fn parse(line: &str) -> Option<(u64, Reply)> {
    let value: Value = serde_json::from_str(line).ok()?;
    let id = value.get("id")?.as_u64()?;
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

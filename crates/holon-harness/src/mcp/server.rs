//! The MCP pass's server: started on a free port (a binary or any command) or already running at
//! an address, opened by the first trial that asks for it in the eras the run tests (`eras`),
//! asked in each which manifest it serves when it was already running, started again when it
//! died or stopped answering (each era's client opened again on its own runtime when next
//! used), and stopped at the end of the run.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::eras::{self, Client, Found, OPENING, Opened, Spoken, Target};
use crate::era::{Era, Protocol};
use crate::error::{RemoteError, ReviveError, ServerError};
use crate::files::FileServer;
use crate::process::{Readiness, ServerProcess, ServerSpec};
use crate::remote::Remote;
use holon_core::manifest::Manifest;

/// Where the MCP pass finds its server.
#[derive(Debug, Clone)]
pub enum ServerAt {
    /// Start it: a binary or a command, on a free port.
    Start(ServerSpec),
    /// One already running at an address: nothing is started or stopped.
    Running(Arc<Remote>),
}

/// The server of one run's MCP pass, started (or reached) by the first trial that asks.
pub(crate) struct Server {
    manifest: Arc<Manifest>,
    at: ServerAt,
    startup: Duration,
    protocol: Protocol,
    /// The server's variables, beside `PORT` and `HOST`.
    env: Vec<(String, String)>,
    state: OnceLock<Result<Live, ServerError>>,
    /// Calls in flight together hold it to read, a call made alone to write: alone means no
    /// other call of the run on the server, in either era, while it runs.
    turns: tokio::sync::RwLock<()>,
}

/// A server that answered: the process the pass started, and the eras it is tested in.
pub(crate) struct Live {
    /// The process the pass started, the one running now when it was started again; none for a
    /// server already running.
    process: Mutex<Option<Arc<ServerProcess>>>,
    /// How many times the process was started again.
    generation: AtomicU64,
    /// The calls sent to the process running now.
    served: AtomicU64,
    /// Held while the server is started again: one start at a time.
    reviving: tokio::sync::Mutex<()>,
    /// The eras it is tested in, newest first: each one's connection, or why its answers in
    /// that era are wrong.
    eras: Vec<(Era, Result<Conn, ServerError>)>,
    /// What the run says of its eras.
    said: String,
}

impl Live {
    /// The process running now; none for a server already running.
    pub(crate) fn process(&self) -> Option<Arc<ServerProcess>> {
        self.process.lock().ok().and_then(|p| p.clone())
    }

    /// How many times the process was started again: a call made on one generation and failed
    /// finds the server started again for it when this moved on.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Counts a call sent to the process running now, and says how many it was sent before.
    pub(crate) fn serve(&self) -> u64 {
        self.served.fetch_add(1, Ordering::SeqCst)
    }
}

/// The server in one era: the client the run keeps, and what it needs beside it.
pub(crate) struct Conn {
    /// The runtime the client's tasks run on: the flight's thread drives it.
    pub(crate) runtime: tokio::runtime::Runtime,
    /// The client, opened again (on this runtime) after the server was started again.
    client: Mutex<Arc<Client>>,
    /// The generation of the server the client was opened on.
    opened: AtomicU64,
    /// Whether the client's opening carried the 2026-07-28 envelope.
    enveloped: bool,
    /// The signed-link file server of this era's calls, on its runtime.
    pub(crate) files: FileServer,
    /// Which era this connection speaks: what its calls' results are held to.
    pub(crate) era: Era,
    /// For a server already running: whether it announces the manifest under test (false when
    /// it announces none), an error when it serves another; true for a server the pass started.
    identity: Result<bool, ServerError>,
}

impl Conn {
    /// The client as opened last.
    pub(crate) fn client(&self) -> Arc<Client> {
        // A client is swapped whole: a panic while the lock was held left it as it was.
        self.client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Server {
    /// Nothing starts until a trial asks for the server.
    pub(crate) fn new(
        manifest: Arc<Manifest>,
        at: ServerAt,
        startup: Duration,
        protocol: Protocol,
        env: Vec<(String, String)>,
    ) -> Server {
        Server {
            manifest,
            at,
            startup,
            protocol,
            env,
            state: OnceLock::new(),
            turns: tokio::sync::RwLock::new(()),
        }
    }

    /// A turn for a call in flight with others: it waits while a call is made alone.
    pub(crate) async fn crowd(&self) -> tokio::sync::RwLockReadGuard<'_, ()> {
        self.turns.read().await
    }

    /// A turn for a call made alone: it waits for the calls in flight, in either era, and
    /// holds the others back until it ends.
    pub(crate) async fn alone(&self) -> tokio::sync::RwLockWriteGuard<'_, ()> {
        self.turns.write().await
    }

    /// Whether the server was already running (`--url`, `HOLON_SERVER_URL`): none started.
    pub(crate) fn running(&self) -> bool {
        matches!(self.at, ServerAt::Running(_))
    }

    /// The server, started or reached, and opened in its eras, on first use.
    pub(crate) fn live(&self) -> Result<&Live, ServerError> {
        self.state
            .get_or_init(|| self.start())
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The server in the `slot`-th era it is tested in (0: the newest).
    pub(crate) fn conn(&self, slot: usize) -> Result<&Conn, ServerError> {
        let live = self.live()?;
        match live.eras.get(slot) {
            Some((_, Ok(conn))) => Ok(conn),
            Some((_, Err(why))) => Err(why.clone()),
            None => Err(ServerError::OneEra(live.said.clone())),
        }
    }

    /// Why the `slot`-th era has nothing to test: the server speaks fewer eras. `None` while it
    /// has (or the server could not be reached: its trials say why).
    pub(crate) fn missing(&self, slot: usize) -> Option<String> {
        let live = self.live().ok()?;
        (live.eras.len() <= slot).then(|| live.said.clone())
    }

    /// How many eras the server is tested in (starting it when no trial did yet): none when it
    /// could not be reached.
    pub(crate) fn eras_tested(&self) -> usize {
        self.live().map_or(0, |live| live.eras.len())
    }

    /// What the run says of the server's eras, once it was opened.
    pub(crate) fn said(&self) -> Option<String> {
        let live = self.state.get()?.as_ref().ok()?;
        Some(live.said.clone())
    }

    fn start(&self) -> Result<Live, ServerError> {
        // Before the server exists: a Ctrl-C while it starts must stop it too, and a server
        // started by a shell (`npm start`) is not the shell, so its death signal alone is not
        // enough.
        crate::process::stop_all_on_signal();
        let first = match self.protocol {
            Protocol::Auto => Era::Modern,
            Protocol::Only(era) => era,
        };
        let (found, process) = match &self.at {
            ServerAt::Running(remote) => (self.reach(remote, first)?, None),
            ServerAt::Start(spec) => {
                let (found, process) = self.launch(spec, first)?;
                (found, Some(process))
            }
        };
        let dir = self.manifest.dir();
        let who = match &self.at {
            ServerAt::Running(remote) => format!("the server at `{}`", remote.shown()),
            ServerAt::Start(_) => "the server".to_string(),
        };
        let mut conns = Vec::new();
        for (era, spoken) in found.eras {
            let conn = spoken
                .map_err(|why| ServerError::Eras(format!("{who} {}", why.0)))
                .and_then(|spoken| self.conn_of(era, *spoken, &dir));
            conns.push((era, conn));
        }
        Ok(Live {
            process: Mutex::new(process),
            generation: AtomicU64::new(0),
            served: AtomicU64::new(0),
            reviving: tokio::sync::Mutex::new(()),
            eras: conns,
            said: found.said,
        })
    }

    /// The connection of one era, with its file server, and (already running) what it says
    /// of the manifest it serves.
    fn conn_of(
        &self,
        era: Era,
        spoken: Spoken,
        dir: &std::path::Path,
    ) -> Result<Conn, ServerError> {
        let files = spoken
            .runtime
            .block_on(FileServer::start(dir.join("files")))
            .map_err(|e| ServerError::FileServer(e.to_string()))?;
        let identity = match &self.at {
            ServerAt::Running(remote) => {
                let info = spoken.client.peer_info();
                crate::remote::compare(
                    remote,
                    &self.manifest,
                    info.as_ref().and_then(|info| info.meta.as_ref()),
                )
            }
            ServerAt::Start(_) => Ok(true),
        };
        Ok(Conn {
            runtime: spoken.runtime,
            client: Mutex::new(Arc::new(spoken.client)),
            opened: AtomicU64::new(0),
            enveloped: spoken.enveloped,
            files,
            era,
            identity,
        })
    }

    /// A server already running: asked until it answers the first opening (within the startup
    /// limit), then in the eras the run tests.
    fn reach(&self, remote: &Remote, first: Era) -> Result<Found, ServerError> {
        let http = || remote.client().map_err(ServerError::from);
        // Checked once here, so a client that cannot be built is said as itself.
        http()?;
        let target = Target {
            url: remote.url(),
            http: &http,
        };
        let answered = eras::first_answer(first, &target, self.startup);
        if let Opened::Silent(why) = answered {
            return Err(RemoteError::Unreachable {
                shown: remote.shown(),
                seconds: self.startup.as_secs_f64(),
                why,
            }
            .into());
        }
        eras::settle(self.protocol, answered, |era, enveloped| {
            eras::open(era, &target, enveloped, OPENING)
        })
        .map_err(|what| {
            RemoteError::Answered {
                shown: remote.shown(),
                what: what.0,
            }
            .into()
        })
    }

    /// A server the pass starts: on a free port, ready once it answers the first opening in
    /// any way (an answer that turns the era down is an answer: no wait for the startup limit),
    /// then opened in the eras the run tests. A server that can be tested in none is stopped.
    fn launch(
        &self,
        spec: &ServerSpec,
        first: Era,
    ) -> Result<(Found, Arc<ServerProcess>), ServerError> {
        http_client()?;
        let http = http_client;
        let (process, answered) = self.start_process(spec, first)?;
        let url = format!("http://127.0.0.1:{}/mcp", process.port);
        let target = Target {
            url: &url,
            http: &http,
        };
        let answered = match answered {
            Some(opened) => opened,
            None => eras::open(first, &target, false, OPENING),
        };
        let found = eras::settle(self.protocol, answered, |era, enveloped| {
            eras::open(era, &target, enveloped, OPENING)
        });
        match found {
            Ok(found) => Ok((found, process)),
            Err(what) => {
                process.stop();
                Err(ServerError::Eras(format!(
                    "the server {what}\n--- server output ({}) ---\n{}",
                    spec.describe(),
                    process.output.tail()
                )))
            }
        }
    }

    /// The server's process, started on a free port and ready once it answers the opening of
    /// `first` in any way; what it answered, when the try that saw it ready was on its port.
    fn start_process(
        &self,
        spec: &ServerSpec,
        first: Era,
    ) -> Result<(Arc<ServerProcess>, Option<Opened>), ServerError> {
        let http = http_client;
        let dir = self.manifest.dir();
        // The client that saw the server answer is the one the run keeps: a second client
        // would open a second connection, which a server may refuse.
        let answered = RefCell::new(None);
        // No try outlasts the startup limit.
        let deadline = std::time::Instant::now() + self.startup;
        let process = ServerProcess::start(
            spec,
            &dir,
            &self.env,
            self.startup,
            first.opening(),
            |port| {
                let url = format!("http://127.0.0.1:{port}/mcp");
                let target = Target {
                    url: &url,
                    http: &http,
                };
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let limit = OPENING.min(left).max(Duration::from_millis(100));
                match eras::open(first, &target, false, limit) {
                    Opened::Silent(why) => Readiness::NotYet(why),
                    opened => {
                        answered.replace(Some((port, opened)));
                        Readiness::Ready
                    }
                }
            },
        )
        .map_err(ServerError::Start)?;
        let process = Arc::new(process);
        let answered = match answered.into_inner() {
            Some((port, opened)) if port == process.port => Some(opened),
            _ => None,
        };
        Ok((process, answered))
    }

    /// Starts the server again, when it is still the one that was running at `seen` (another
    /// call may have started it again already): the old process stopped with what it started,
    /// a new one on a free port. On the runtime of the era in `slot`, whose client is then
    /// opened again there; the other era's is opened again when next used. `Err` with why,
    /// as a clause ("the server could not be started again: ..."), for a server already
    /// running, a run that is stopping, or a start that failed.
    pub(crate) async fn revive(&self, slot: usize, seen: u64) -> Result<(), ReviveError> {
        let live = self.live()?;
        let ServerAt::Start(spec) = &self.at else {
            return Err(ReviveError::Running);
        };
        let _one = live.reviving.lock().await;
        if crate::process::stopping() {
            return Err(ReviveError::Stopping);
        }
        if live.generation() == seen {
            let old = live.process();
            let first = live.eras.first().map_or(Era::Modern, |(era, _)| *era);
            let (tx, rx) = tokio::sync::oneshot::channel();
            let (me, spec) = (self.clone_for_restart(), spec.clone());
            // Started on a thread of its own: the start polls the server from runtimes of its
            // own, which cannot run inside this one.
            let spawned = std::thread::Builder::new()
                .name("holon-restart".into())
                .spawn(move || {
                    if let Some(old) = old {
                        old.hangs();
                        old.stop();
                    }
                    let _ = tx.send(me.start_process(&spec, first).map(|(p, _)| p));
                });
            spawned.map_err(|e| ReviveError::Thread(e.to_string()))?;
            let process = rx
                .await
                .map_err(|_| ReviveError::Thread("it ended before it said".into()))?
                .map_err(ReviveError::Start)?;
            if let Ok(mut current) = live.process.lock() {
                *current = Some(process);
            }
            live.served.store(0, Ordering::SeqCst);
            live.generation.fetch_add(1, Ordering::SeqCst);
        }
        self.client(slot).await.map(|_| ())
    }

    /// What starting the process again needs of this server, apart from its state.
    fn clone_for_restart(&self) -> Server {
        Server::new(
            self.manifest.clone(),
            self.at.clone(),
            self.startup,
            self.protocol,
            self.env.clone(),
        )
    }

    /// The client of the era in `slot`, opened again on this runtime when the server was
    /// started again since it was opened.
    pub(crate) async fn client(&self, slot: usize) -> Result<Arc<Client>, ReviveError> {
        let conn = self.conn(slot)?;
        let live = self.live()?;
        let generation = live.generation();
        if conn.opened.load(Ordering::SeqCst) == generation {
            return Ok(conn.client());
        }
        let port = (live.process().map(|p| p.port)).ok_or(ReviveError::Running)?;
        let url = format!("http://127.0.0.1:{port}/mcp");
        let http = http_client;
        let target = Target {
            url: &url,
            http: &http,
        };
        let client = eras::reopen(conn.era, &target, conn.enveloped, OPENING)
            .await
            .map_err(ReviveError::Reopen)?;
        let client = Arc::new(client);
        *conn
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = client.clone();
        conn.opened.store(generation, Ordering::SeqCst);
        Ok(client)
    }

    /// Reaches the server before the trials run: whether it serves the manifest under test
    /// is then said before any trial's result. `Err` with why when it serves another in an era
    /// (the `initialize` trial of that era fails with it too), the note when it announces none
    /// (one line for every era it announces none in).
    pub(crate) fn connect_first(&self) -> Result<Option<String>, ServerError> {
        let (Ok(live), ServerAt::Running(remote)) = (self.live(), &self.at) else {
            // The trials say why it could not be reached.
            return Ok(None);
        };
        let mut silent = Vec::new();
        for (era, conn) in &live.eras {
            if let Ok(conn) = conn
                && !conn.identity.clone()?
            {
                silent.push(eras::opening(*era));
            }
        }
        Ok((!silent.is_empty()).then(|| crate::remote::unannounced(remote, &silent)))
    }

    /// The `mcp::initialize` trial of a server already running, in the `slot`-th era: it
    /// serves the manifest under test, or announces none.
    pub(crate) fn initialize(&self, slot: usize) -> Result<(), ServerError> {
        self.conn(slot)?.identity.clone().map(|_| ())
    }

    /// Stops the server, if one was started (`hangs` when it answered none of the run's calls
    /// in time); its output's last lines, for the report of a failed run.
    pub(crate) fn stop(&self, hangs: bool) -> Option<String> {
        let live = self.state.get()?.as_ref().ok()?;
        let process = live.process()?;
        if hangs {
            process.hangs();
        }
        process.stop();
        Some(process.output.tail())
    }
}

/// How long a dropped connection is given for the server's exit to show.
const EXIT_SHOWS: Duration = Duration::from_millis(500);

/// The server's exit status, when it exits within a moment: the connection drops a moment
/// before the process can be reaped, and the message should name the cause rather than the
/// client's error. Waited for off the flight's runtime, which must not block.
pub(crate) async fn exited(live: &Live) -> Option<std::process::ExitStatus> {
    let process = live.process()?;
    tokio::task::spawn_blocking(move || process.wait_exit(EXIT_SHOWS))
        .await
        .ok()
        .flatten()
}

/// What a failure is when the server exited before it answered.
pub(crate) fn exited_message(status: std::process::ExitStatus, what: &str) -> String {
    format!("the server exited ({status}) before it answered; {what}")
}

/// rmcp's default client opens a connection for every request (it turns pooling off against a
/// delayed-ACK stall that `TCP_NODELAY` avoids), which on loopback costs more than the server's
/// own work: this one keeps the connection while it is in use (`remote::IDLE_REUSE`). It never
/// goes through a proxy (the server is on loopback, whatever `HTTP_PROXY` says) and follows no
/// redirect.
fn http_client() -> Result<reqwest::Client, ServerError> {
    crate::remote::http_client(crate::remote::IDLE_REUSE)
        .build()
        .map_err(|e| ServerError::Client(e.to_string()))
}

//! The MCP pass's server: started on a free port (a binary or any command) or already running at
//! an address, opened by the first trial that asks for it in the eras the run tests (`eras`),
//! asked in each which manifest it serves when it was already running, and stopped at the end
//! of the run.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::eras::{self, Client, Found, OPENING, Opened, Spoken, Target};
use crate::era::{Era, Protocol};
use crate::error::{RemoteError, ServerError};
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
}

/// A server that answered: the process the pass started, and the eras it is tested in.
pub(crate) struct Live {
    /// The process the pass started; none for a server already running.
    pub(crate) process: Option<Arc<ServerProcess>>,
    /// The eras it is tested in, newest first: each one's connection, or why its answers in
    /// that era are wrong.
    eras: Vec<(Era, Result<Conn, ServerError>)>,
    /// What the run says of its eras.
    said: String,
}

/// The server in one era: the client the run keeps, and what it needs beside it.
pub(crate) struct Conn {
    /// The runtime the client's tasks run on: the flight's thread drives it.
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) client: Client,
    /// The signed-link file server of this era's calls, on its runtime.
    pub(crate) files: FileServer,
    /// Which era this connection speaks: what its calls' results are held to.
    pub(crate) era: Era,
    /// For a server already running: whether it announces the manifest under test (false when
    /// it announces none), an error when it serves another; true for a server the pass started.
    identity: Result<bool, ServerError>,
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
        }
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
            process,
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
            client: spoken.client,
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
        let url = format!("http://127.0.0.1:{}/mcp", process.port);
        let target = Target {
            url: &url,
            http: &http,
        };
        let answered = match answered.into_inner() {
            Some((port, opened)) if port == process.port => opened,
            _ => eras::open(first, &target, false, OPENING),
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
        let process = live.process.as_ref()?;
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
    let process = live.process.clone()?;
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

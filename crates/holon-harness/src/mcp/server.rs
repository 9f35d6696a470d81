//! The MCP pass's server: started on a free port (a binary or any command) or already running at
//! an address, connected once by the first trial that asks for it, asked which manifest it
//! serves when it was already running, and stopped at the end of the run.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};

use super::words::init_error;
use crate::error::ServerError;
use crate::files::FileServer;
use crate::process::{ServerProcess, ServerSpec};
use crate::remote::Remote;
use holon_core::manifest::Manifest;

/// The MCP client of the pass.
pub(crate) type Client = RunningService<RoleClient, ()>;

/// Where the MCP pass finds its server.
#[derive(Debug, Clone)]
pub enum ServerAt {
    /// Start it: a binary or a command, on a free port.
    Start(ServerSpec),
    /// One already running at an address: nothing is started or stopped.
    Running(Arc<Remote>),
}

/// The server of one run's MCP pass, started (or connected) by the first trial that asks.
pub(crate) struct Server {
    manifest: Arc<Manifest>,
    at: ServerAt,
    startup: Duration,
    /// The server's variables, beside `PORT` and `HOST`.
    env: Vec<(String, String)>,
    state: OnceLock<Result<Live, ServerError>>,
}

/// A server that answered: the client the run keeps, and what it needs beside it.
pub(crate) struct Live {
    /// The runtime the client's tasks run on: the flight's thread drives it.
    pub(crate) runtime: tokio::runtime::Runtime,
    /// The process the pass started; none for a server already running.
    pub(crate) process: Option<Arc<ServerProcess>>,
    pub(crate) client: Client,
    pub(crate) files: FileServer,
    /// For a server already running: whether it serves the manifest under test (a note when
    /// it cannot tell, an error when it serves another).
    identity: Result<Option<String>, ServerError>,
}

impl Server {
    /// Nothing starts until a trial asks for the server.
    pub(crate) fn new(
        manifest: Arc<Manifest>,
        at: ServerAt,
        startup: Duration,
        env: Vec<(String, String)>,
    ) -> Server {
        Server {
            manifest,
            at,
            startup,
            env,
            state: OnceLock::new(),
        }
    }

    /// Whether the server was already running (`--url`, `HOLON_SERVER_URL`): none started.
    pub(crate) fn running(&self) -> bool {
        matches!(self.at, ServerAt::Running(_))
    }

    /// The server, started or connected on first use.
    pub(crate) fn live(&self) -> Result<&Live, ServerError> {
        self.state
            .get_or_init(|| self.start())
            .as_ref()
            .map_err(Clone::clone)
    }

    fn start(&self) -> Result<Live, ServerError> {
        // The trial's own thread drives the client (rmcp's tasks, reqwest, the socket), so a
        // call crosses no thread on this side: each crossing is a wake-up, the slowest part
        // of a call on a busy machine.
        let runtime =
            crate::flight::current_thread().map_err(|e| ServerError::Runtime(e.to_string()))?;
        // Before the server exists: a Ctrl-C while it starts must stop it too, and a server
        // started by a shell (`npm start`) is not the shell, so its death signal alone is not
        // enough.
        crate::process::stop_all_on_signal();
        let dir = self.manifest.dir();
        let file_server = |runtime: &tokio::runtime::Runtime| {
            runtime
                .block_on(FileServer::start(dir.join("files")))
                .map_err(|e| ServerError::FileServer(e.to_string()))
        };
        let spec = match &self.at {
            ServerAt::Start(spec) => spec,
            ServerAt::Running(remote) => {
                let client = remote.connect(&runtime, self.startup)?;
                let info = client.peer_info();
                let identity = crate::remote::compare(
                    remote,
                    &self.manifest,
                    info.as_ref().and_then(|info| info.meta.as_ref()),
                );
                let files = file_server(&runtime)?;
                return Ok(Live {
                    runtime,
                    process: None,
                    client,
                    files,
                    identity,
                });
            }
        };
        // The client that saw the server answer is the one the run keeps: a second client
        // would open a second connection, which a server may refuse.
        let first = std::cell::RefCell::new(None);
        let process = ServerProcess::start(spec, &dir, &self.env, self.startup, |port| {
            runtime.block_on(async {
                match tokio::time::timeout(Duration::from_secs(5), connect(port)).await {
                    Ok(Ok(client)) => {
                        first.replace(Some((port, client)));
                        true
                    }
                    _ => false,
                }
            })
        })
        .map_err(ServerError::Start)?;
        let process = Arc::new(process);
        let files = file_server(&runtime)?;
        let client = match first.into_inner() {
            Some((port, client)) if port == process.port => client,
            _ => runtime
                .block_on(async {
                    tokio::time::timeout(Duration::from_secs(10), connect(process.port)).await
                })
                .map_err(|_| ServerError::InitializeTimedOut)??,
        };
        Ok(Live {
            runtime,
            process: Some(process),
            client,
            files,
            identity: Ok(None),
        })
    }

    /// Connects before the trials run, for a server already running: whether it serves the
    /// manifest under test is then said before any trial's result. `Err` with why when it
    /// serves another (the `mcp::initialize` trial fails with it too), the note when it could
    /// not be compared.
    pub(crate) fn connect_first(&self) -> Result<Option<String>, ServerError> {
        match self.live() {
            Ok(live) => live.identity.clone(),
            // The trials say why it could not be reached.
            Err(_) => Ok(None),
        }
    }

    /// The `mcp::initialize` trial of a server already running: it serves the manifest under
    /// test, or announces none.
    pub(crate) fn initialize(&self) -> Result<(), ServerError> {
        self.live()?.identity.clone().map(|_| ())
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

async fn connect(port: u16) -> Result<Client, ServerError> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"));
    ().serve(StreamableHttpClientTransport::with_client(
        http_client()?,
        config,
    ))
    .await
    .map_err(|e| ServerError::InitializeFailed(init_error(&e)))
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

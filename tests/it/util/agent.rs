//! An example agent as a real process: its server binary built by cargo like any agent's, started
//! on a free port, ready once it answers an MCP `initialize`, and killed with its process group on
//! every path out. Shared by the tests and `benches/runtime.rs`, which includes this file and
//! `paths.rs` beside it.
#![allow(
    dead_code,
    reason = "the tests and the benchmark each use a different part of this file"
)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use super::paths::root;

/// How long a server may take to answer its first `initialize`.
const READY_WITHIN: Duration = Duration::from_secs(30);
/// How many free ports are tried when the one picked is taken before the server binds it.
const PORT_ATTEMPTS: usize = 5;

/// The word-stats server binary, built once per process with the profile and into the target
/// folder of the running test or benchmark, so it shares their compiled dependencies.
pub fn word_stats_binary() -> &'static Path {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BINARY.get_or_init(|| build_binary("word-stats")) {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

/// Installs ring as the process's TLS provider, as the harness does: reqwest is built without
/// one of its own (`rustls-no-provider`), and a client built before one is installed panics.
/// Every client a test builds (rmcp's included) comes after this.
pub fn tls_provider() {
    // Deprecated by rustls for its lack of post-quantum key exchange: what the kit ships.
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The ticket-triage example's server binary (`examples/ticket-triage`), built as
/// [`word_stats_binary`] is.
pub fn ticket_triage_binary() -> &'static Path {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BINARY.get_or_init(|| build_binary("ticket-triage")) {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

/// The broken agent's server binary (`tests/fixtures/agents/broken-agent`), built as
/// [`word_stats_binary`] is: slow and blocking runs on demand, by the value of `top`.
pub fn broken_agent_binary() -> &'static Path {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BINARY.get_or_init(|| build_binary("broken-agent")) {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

fn build_binary(package: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the test binary: {e}"))?;
    // `<target>/<profile>/deps/<test>`; `<target>` is the folder cargo marks with CACHEDIR.TAG.
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(OsStr::to_str)
        .ok_or_else(|| format!("`{}` is not inside a cargo target folder", exe.display()))?;
    let mut cargo = super::paths::cargo();
    cargo
        .current_dir(root())
        .args(["build", "--message-format=json-render-diagnostics"]);
    match profile {
        // The tests' build: every binary of the workspace with the features the workspace's
        // test build resolved (`cargo nextest run --workspace` built them), so nothing is
        // compiled again for one package's features.
        "debug" => {
            cargo.args(["--workspace", "--bins", "--tests"]);
        }
        "release" => {
            cargo.args(["--package", package, "--bin", package, "--release"]);
        }
        other => {
            cargo.args(["--package", package, "--bin", package, "--profile", other]);
        }
    }
    if let Some(target) = exe.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()) {
        cargo.arg("--target-dir").arg(target);
    }
    let out = cargo
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo to build {package}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo build -p {package}` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == package
                && m["target"]["kind"] == serde_json::json!(["bin"])
                && m["profile"]["test"] == false
        })
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("cargo built {package} but named no executable"))
}

/// A free port on loopback, as the harness picks one for a server it cannot ask to bind port 0.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port on 127.0.0.1")
}

/// Output collected from a pipe as it arrives, so the child never blocks on a full pipe.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<String>>);

impl Captured {
    fn collect(pipe: impl AsyncRead + Unpin + Send + 'static) -> (Captured, JoinHandle<()>) {
        let captured = Captured::default();
        let sink = captured.clone();
        let task = tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = sink.0.lock().unwrap_or_else(|p| p.into_inner());
                text.push_str(&line);
                text.push('\n');
            }
        });
        (captured, task)
    }

    /// Everything read so far.
    pub fn text(&self) -> String {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A server process in its own process group; dropping it kills the group.
pub struct AgentProcess {
    child: Child,
    /// The port it serves on.
    pub port: u16,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    stdout: Captured,
    stderr: Captured,
    readers: Vec<JoinHandle<()>>,
}

impl AgentProcess {
    /// Starts `binary` with `PORT` set to a free port (and `envs`) and waits until it answers
    /// an MCP `initialize`; a port taken by someone else in between is retried with another.
    pub async fn start(binary: &Path, envs: &[(&str, &OsStr)]) -> AgentProcess {
        tls_provider();
        let mut last = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            let mut server = AgentProcess::spawn(binary, port, envs);
            match server.wait_ready().await {
                Ok(()) => return server,
                Err(Startup::Exited(status)) => {
                    server.finish_output().await;
                    let stderr = server.stderr();
                    if !stderr.contains("Address already in use") {
                        panic!("the server exited before answering ({status}); stderr:\n{stderr}");
                    }
                    last = stderr;
                }
                Err(Startup::NotReady(why)) => panic!(
                    "the server did not answer `initialize` on {} within {READY_WITHIN:?} \
                     (last: {why}); stderr:\n{}",
                    server.url,
                    server.stderr()
                ),
            }
        }
        panic!("{PORT_ATTEMPTS} free ports were each taken before the server bound them:\n{last}")
    }

    fn spawn(binary: &Path, port: u16, envs: &[(&str, &OsStr)]) -> AgentProcess {
        let mut command = Command::new(binary);
        command
            .env("PORT", port.to_string())
            .env("HOST", "127.0.0.1")
            .env_remove("HOLON_MANIFEST")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", binary.display()));
        let (stdout, out_task) = Captured::collect(child.stdout.take().expect("piped stdout"));
        let (stderr, err_task) = Captured::collect(child.stderr.take().expect("piped stderr"));
        AgentProcess {
            child,
            port,
            url: format!("http://127.0.0.1:{port}/mcp"),
            stdout,
            stderr,
            readers: vec![out_task, err_task],
        }
    }

    /// Polls with MCP `initialize`, backing off from 5 ms to 200 ms between tries.
    async fn wait_ready(&mut self) -> Result<(), Startup> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(Startup::Exited(status));
            }
            let attempt = tokio::time::timeout(
                Duration::from_secs(5),
                ().serve(StreamableHttpClientTransport::from_uri(self.url.clone())),
            )
            .await;
            let why = match attempt {
                Ok(Ok(client)) => {
                    let _ = client.cancel().await;
                    // Someone else may hold the port while ours failed to bind it.
                    return match self.child.try_wait() {
                        Ok(Some(status)) => Err(Startup::Exited(status)),
                        _ => Ok(()),
                    };
                }
                Ok(Err(e)) => e.to_string(),
                Err(_) => "`initialize` had no answer in 5 s".to_string(),
            };
            if started.elapsed() > READY_WITHIN {
                return Err(Startup::NotReady(why));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// The process id (also its process group id).
    pub fn pid(&self) -> i32 {
        self.child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .expect("the server was already reaped")
    }

    /// Sends `signal` to the server's process group.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) has no memory effects; the group is ours and not yet reaped.
        let sent = unsafe { libc::kill(-self.pid(), signal) };
        assert_eq!(sent, 0, "kill: {}", std::io::Error::last_os_error());
    }

    /// Waits up to `limit` for the server to exit, then for its output to be read to the end.
    pub async fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let status = tokio::time::timeout(limit, self.child.wait()).await.ok()?;
        let status = status.expect("wait for the server");
        self.finish_output().await;
        Some(status)
    }

    async fn finish_output(&mut self) {
        for reader in self.readers.drain(..) {
            let _ = reader.await;
        }
    }

    /// What it printed on stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout.text()
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.text()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // Only while the child is not reaped is its pid, and so its group id, surely ours.
        if let (Ok(None), Some(pid)) = (self.child.try_wait(), self.child.id())
            && let Ok(pid) = i32::try_from(pid)
        {
            // SAFETY: as in `signal`.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
}

enum Startup {
    Exited(ExitStatus),
    NotReady(String),
}

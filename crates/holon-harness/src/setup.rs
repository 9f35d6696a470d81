//! One server for a whole nextest run: the test target run as nextest's setup script
//! (`HOLON_NEXTEST_SETUP=1`) starts the agent's server once, through a keeper, and hands its
//! address to every trial's process as `HOLON_SERVER_URL` (a `KEY=value` line in
//! `$NEXTEST_ENV`). nextest has no teardown hook, so the keeper is tied to the nextest process
//! itself: a copy of the test binary, detached from the setup script, that leads the server's
//! supervision (`process`: its own group, a watcher, on Linux the kernel's death signal) and
//! waits for nextest to exit, however it exits, then stops the server and exits. If the keeper
//! itself is killed, the server's watcher stops it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::era::Era;
use crate::error::{RunError, ServerError, SetupError};
use crate::exit;
use crate::mcp::{OPENING, Opened, Target, open_era};
use crate::process::{Readiness, ServerProcess, ServerSpec};
use crate::reporter::{Event, say};
use crate::settings::SERVER_URL_VAR;

/// Set (to `1`) by the scaffold's `.config/nextest.toml` for the setup script's run of the
/// test target.
pub const SETUP_VAR: &str = "HOLON_NEXTEST_SETUP";
/// Set by the setup script for the keeper it starts: the nextest process's id.
const KEEPER_VAR: &str = "HOLON_NEXTEST_KEEPER";
/// The command name of the process the server must not outlive.
const NEXTEST: &str = "cargo-nextest";
/// How the keeper tells the setup script where the server listens.
const READY: &str = "holon-server-url ";

/// Which part of the setup this process plays, when it plays one.
pub enum Role {
    /// The setup script: starts the keeper, writes the address into `$NEXTEST_ENV`.
    Script,
    /// The keeper of the server, until the nextest process with this id exits.
    Keeper(i32),
}

/// The role the environment gives this run of the test target, if any.
pub fn role() -> Option<Role> {
    if let Some(pid) = std::env::var(KEEPER_VAR).ok().and_then(|p| p.parse().ok()) {
        return Some(Role::Keeper(pid));
    }
    (std::env::var(SETUP_VAR).as_deref() == Ok("1")).then_some(Role::Script)
}

/// Plays `role` for the test target whose manifest is at `manifest` and whose server is `spec`,
/// ready once it answers the request that opens `era` (in whatever way: the trials find out
/// which eras it speaks); the exit code.
pub fn run(
    role: Role,
    manifest: &Path,
    spec: Option<&ServerSpec>,
    env: &[(String, String)],
    (startup, era): (Duration, Era),
) -> u8 {
    let Some(spec) = spec else {
        say(Event::Error(format!(
            "`{SETUP_VAR}=1`: this test target has no server to start (`Harness::server_binary`)"
        )));
        return exit::REFUSED;
    };
    let ran = match role {
        Role::Script => script(),
        Role::Keeper(nextest) => keep(manifest, spec, env, (startup, era), nextest),
    };
    match ran {
        Ok(()) => exit::OK,
        Err(e) => RunError::from(e).report(false, "cargo holon-test"),
    }
}

/// The setup script: the keeper started and ready, its address written for the trials.
fn script() -> Result<(), SetupError> {
    let env_file =
        std::env::var_os("NEXTEST_ENV").ok_or(SetupError::NoEnvFile { var: SETUP_VAR })?;
    let nextest = crate::supervise::ancestor_named(NEXTEST).ok_or(SetupError::NoNextest {
        var: SETUP_VAR,
        nextest: NEXTEST,
    })?;
    let exe = std::env::current_exe().map_err(|e| SetupError::Exe(e.to_string()))?;
    let mut command = Command::new(exe);
    command
        .env(KEEPER_VAR, nextest.to_string())
        .env_remove(SETUP_VAR)
        .env_remove("NEXTEST_ENV")
        // Nothing of nextest's pipes: it waits for those to close before it goes on.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut keeper = crate::supervise::spawn_detached(&mut command)
        .map_err(|e| SetupError::Keeper(e.to_string()))?;
    let mut line = String::new();
    if let Some(out) = keeper.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    let Some(url) = line.trim().strip_prefix(READY) else {
        let _ = keeper.wait();
        return Err(match line.trim() {
            "" => SetupError::KeeperEnded,
            said => SetupError::KeeperSaid(said.to_string()),
        });
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&env_file)
        .map_err(|e| SetupError::EnvFile(e.to_string()))?;
    writeln!(file, "{SERVER_URL_VAR}={url}").map_err(|e| SetupError::EnvFile(e.to_string()))?;
    say(Event::Line(format!(
        "holon: one server for this run at {url} (keeper pid {}), stopped when nextest (pid {nextest}) exits",
        keeper.id()
    )));
    Ok(())
}

/// The keeper: the server started and answering, its address said, then kept until the
/// nextest process exits.
fn keep(
    manifest: &Path,
    spec: &ServerSpec,
    env: &[(String, String)],
    (startup, era): (Duration, Era),
    nextest: i32,
) -> Result<(), SetupError> {
    // The setup script reads the keeper's lines on its standard output.
    let said = |line: &str| say(Event::Output(format!("{line}\n")));
    // Watched first: a run the keeper cannot outlast starts no server.
    let watch = crate::supervise::watch_exit(nextest).map_err(|e| {
        let why = SetupError::Watch {
            pid: nextest,
            why: e.to_string(),
        };
        said(&why.to_string());
        why
    })?;
    let http = || {
        crate::remote::http_client(crate::remote::IDLE_REUSE)
            .build()
            .map_err(|e| ServerError::Client(e.to_string()))
    };
    http()?;
    let dir = holon_core::manifest::folder_of(manifest);
    let started = ServerProcess::start(spec, &dir, env, startup, era.opening(), |port| {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let target = Target {
            url: &url,
            http: &http,
        };
        match open_era(era, &target, false, OPENING) {
            Opened::Silent(why) => Readiness::NotYet(why),
            _ => Readiness::Ready,
        }
    });
    let server = match started {
        Ok(server) => server,
        Err(e) => {
            said(&format!("the server did not start: {e}"));
            return Err(SetupError::Start(e));
        }
    };
    said(&format!("{READY}http://127.0.0.1:{}/mcp", server.port));
    let waited = watch.wait();
    server.stop();
    waited.map_err(|e| SetupError::Watch {
        pid: nextest,
        why: e.to_string(),
    })
}

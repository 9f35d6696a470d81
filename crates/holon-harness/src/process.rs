//! The server under test as a child process: its own process group with a watcher
//! (`supervise`), a free port, its output kept for the report, and stopped on every way out.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
#[cfg(target_os = "linux")]
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::supervise::{self, Group};
use crate::error::{NotReady, StartError};

/// How to start the server.
#[derive(Debug, Clone)]
pub enum ServerSpec {
    /// A binary, run with no arguments (e.g. `env!("CARGO_BIN_EXE_my-agent")`).
    Binary(PathBuf),
    /// A shell command line, run with `sh -c` (any language).
    Command(String),
}

impl ServerSpec {
    /// The binary or the command, in backticks.
    pub(crate) fn describe(&self) -> String {
        match self {
            ServerSpec::Binary(p) => format!("`{}`", p.display()),
            ServerSpec::Command(c) => format!("`{c}`"),
        }
    }
}

const KEPT_LINES: usize = 200;

/// How many of the server's last lines a report shows: enough for a stack trace, few enough
/// that a server that prints a line a call does not bury the report.
const SHOWN_LINES: usize = 20;

/// The last lines the server wrote, stdout and stderr interleaved as they arrived, and how many
/// it wrote in all.
#[derive(Clone, Default)]
pub struct Output(Arc<Mutex<Lines>>);

#[derive(Default)]
struct Lines {
    kept: VecDeque<String>,
    written: usize,
}

impl Output {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.kept.len() == KEPT_LINES {
                lines.kept.pop_front();
            }
            lines.kept.push_back(line);
            lines.written += 1;
        }
    }

    /// How many lines the server wrote so far: [`since`](Self::since) takes the lines written
    /// after it.
    pub fn mark(&self) -> usize {
        self.0.lock().map_or(0, |l| l.written)
    }

    /// The lines written after `mark` (at most the last [`SHOWN_LINES`], with the count of
    /// the others), or a note that there were none.
    pub fn since(&self, mark: usize) -> String {
        self.shown(|written| written.saturating_sub(mark))
    }

    /// The last lines (at most [`SHOWN_LINES`], with the count of the others), or a note that
    /// there were none.
    pub fn tail(&self) -> String {
        self.shown(|written| written)
    }

    /// The last of the `count(written)` most recent lines, as a report shows them.
    fn shown(&self, count: impl Fn(usize) -> usize) -> String {
        let Ok(lines) = self.0.lock() else {
            return "(the server's output was lost)".to_string();
        };
        let wanted = count(lines.written);
        if wanted == 0 {
            return "(the server wrote nothing)".to_string();
        }
        let shown = wanted.min(SHOWN_LINES).min(lines.kept.len());
        let start = lines.kept.len() - shown;
        let mut out = String::new();
        if wanted > shown {
            out.push_str(&format!(
                "({} earlier line{} not shown)\n",
                wanted - shown,
                if wanted - shown == 1 { "" } else { "s" }
            ));
        }
        let last: Vec<&str> = lines.kept.iter().skip(start).map(String::as_str).collect();
        out.push_str(&last.join("\n"));
        out
    }

    fn mentions_port_in_use(&self) -> bool {
        let text = self.0.lock().map_or_else(
            |_| String::new(),
            |l| l.kept.iter().cloned().collect::<Vec<_>>().join("\n"),
        );
        let text = text.to_lowercase();
        text.contains("address already in use")
            || text.contains("eaddrinuse")
            || text.contains("address in use")
    }
}

/// What a server that was started said to a try of the request it must answer.
pub enum Readiness {
    /// It answered (in whatever way): it is up.
    Ready,
    /// Nothing answered yet; what the try saw, as a predicate of "the server".
    NotYet(String),
}

/// A running server.
pub struct ServerProcess {
    child: Arc<Mutex<Child>>,
    group: Mutex<Group>,
    pgid: i32,
    /// What marks the server's processes in their environment (`strays`).
    #[cfg(target_os = "linux")]
    mark: String,
    /// The port it was given in `PORT`.
    pub port: u16,
    /// What it printed.
    pub output: Output,
    stopped: Mutex<bool>,
    /// It answered no call, alone or among others: its stop gives it no time to drain.
    hung: std::sync::atomic::AtomicBool,
    /// The port's claim ([`pick_port`]), held while the server lives.
    claim: Option<std::fs::File>,
}

impl ServerProcess {
    /// Starts the server in `dir` with `PORT` set to a free port and waits until `ready`
    /// says it answers (polled with backoff), within `limit`; `asked` is the MCP request
    /// `ready` sends, for the message of a server that never answers it. A port taken between
    /// picking and binding is retried with another one.
    pub fn start(
        spec: &ServerSpec,
        dir: &std::path::Path,
        env: &[(String, String)],
        limit: Duration,
        asked: &str,
        ready: impl Fn(u16) -> Readiness,
    ) -> Result<ServerProcess, StartError> {
        let mut last = None;
        for _ in 0..3 {
            let (port, claim) = pick_port().ok_or(StartError::NoPort)?;
            let mut server = spawn(spec, dir, env, port)?;
            server.claim = claim;
            match server.wait_ready(limit, asked, &ready) {
                Ok(()) => return Ok(server),
                Err(why) => {
                    let retry = server.output.mentions_port_in_use();
                    server.stop();
                    // A runtime too old for the project says so, with both versions.
                    let why = match (why, spec) {
                        (NotReady::Exited(status), ServerSpec::Command(command)) => {
                            match crate::toolchain::too_old(command, dir) {
                                Some(said) => NotReady::OldRuntime { status, said },
                                None => NotReady::Exited(status),
                            }
                        }
                        (why, _) => why,
                    };
                    if !retry {
                        return Err(StartError::NotReady {
                            why,
                            spec: spec.describe(),
                            output: server.output.tail(),
                        });
                    }
                    last = Some(why);
                }
            }
        }
        Err(last.map_or(StartError::PortTakenThrice, StartError::PortTaken))
    }

    fn wait_ready(
        &self,
        limit: Duration,
        asked: &str,
        ready: &impl Fn(u16) -> Readiness,
    ) -> Result<(), NotReady> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(5);
        // What the last try saw, once the port took a connection.
        let mut seen = None;
        loop {
            if let Some(status) = self.exit_status() {
                return Err(NotReady::Exited(status.to_string()));
            }
            if port_open(self.port) {
                match ready(self.port) {
                    Readiness::Ready => return Ok(()),
                    Readiness::NotYet(why) => seen = Some(why),
                }
            }
            if start.elapsed() > limit {
                return Err(NotReady::Silent {
                    port: self.port,
                    seconds: limit.as_secs_f64(),
                    asked: asked.to_string(),
                    seen: seen.map_or(String::new(), |why| format!(" (it {why})")),
                });
            }
            // Polling with backoff: the server gives no other signal that it is ready.
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// The exit status, when the server has exited.
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.child.lock().ok()?.try_wait().ok().flatten()
    }

    /// The exit status, waiting up to `limit` for the server to exit.
    pub fn wait_exit(&self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(status) = self.exit_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Says the server answers no call: [`stop`](Self::stop) then waits a moment, not two
    /// seconds, after SIGTERM (a server that drains its calls would wait for its hung ones).
    pub fn hangs(&self) {
        self.hung.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL after two seconds (a tenth of one
    /// for a server that [`hangs`](Self::hangs)). Idempotent.
    pub fn stop(&self) {
        let Ok(mut stopped) = self.stopped.lock() else {
            return;
        };
        if *stopped {
            return;
        }
        *stopped = true;
        // The group's watcher ignores this one; it ends with the SIGKILL below.
        supervise::terminate(self.pgid);
        let grace = if self.hung.load(std::sync::atomic::Ordering::SeqCst) {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(2)
        };
        let deadline = Instant::now() + grace;
        let mut pause = Duration::from_millis(1);
        loop {
            let exited = self
                .child
                .lock()
                .map(|mut c| c.try_wait().ok().flatten().is_some())
                .unwrap_or(true);
            if exited || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
        // Whatever is left of the group (a shell's children, the watcher) goes now.
        if let Ok(mut group) = self.group.lock() {
            group.end();
        }
        unregister(self.pgid);
        if let Ok(mut c) = self.child.lock() {
            let _ = c.kill();
            let _ = c.wait();
        }
        #[cfg(target_os = "linux")]
        for line in super::strays::sweep(self.pgid, &self.mark) {
            crate::reporter::say(crate::reporter::Event::Warning(line));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A server group this process started: its id and its first process.
type Live = (i32, Arc<Mutex<Child>>);

/// The process groups of the servers this process started and has not stopped yet, so that a
/// signal handler can stop them all, whatever state their start is in. The process's own state,
/// not a run's: a signal ends the process, whatever runs are in it.
fn live_groups() -> &'static Mutex<Vec<Live>> {
    static GROUPS: std::sync::OnceLock<Mutex<Vec<Live>>> = std::sync::OnceLock::new();
    GROUPS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Has [`stop_all`] stop `pgid`, a group this process started whose first process is `child`
/// (a server's, or a run's under `--watch`), until [`unregister`]ed.
pub(crate) fn register(pgid: i32, child: Arc<Mutex<Child>>) {
    if let Ok(mut groups) = live_groups().lock() {
        groups.push((pgid, child));
    }
}

/// The group `pgid` is stopped, or about to be, by its owner.
pub(crate) fn unregister(pgid: i32) {
    if let Ok(mut groups) = live_groups().lock() {
        groups.retain(|(g, _)| *g != pgid);
    }
}

/// What each run still in the process must say when a signal ends it (a measured run: the
/// report of what ran), registered while the run lasts. The process's own state, as the
/// server groups are: a signal ends the process, whatever runs are in it.
type LastWords = std::sync::Weak<dyn Fn() + Send + Sync>;

fn last_words() -> &'static Mutex<Vec<LastWords>> {
    static WORDS: std::sync::OnceLock<Mutex<Vec<LastWords>>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Has `words` said when a signal ends the process, before the servers are stopped (so that
/// the calls they were answering do not count as failures); a run that ended, its `words`
/// dropped, says nothing.
pub fn say_on_signal(words: LastWords) {
    if let Ok(mut all) = last_words().lock() {
        all.retain(|w| w.strong_count() > 0);
        all.push(words);
    }
}

static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`stop_all`] was called: the process is about to end with the exit code its caller
/// chose, which a run finishing meanwhile must not replace with its own.
pub fn stopping() -> bool {
    STOPPING.load(std::sync::atomic::Ordering::SeqCst)
}

/// How long [`stop_all`] gives the groups to exit after SIGTERM before SIGKILL.
const STOP_ALL_GRACE: Duration = Duration::from_millis(200);

/// Has every run in the process say its last words (see [`say_on_signal`]), then stops every
/// server group this process started and has not stopped yet: SIGTERM, up to a moment for each
/// group's server to exit cleanly (polled), then SIGKILL. For the way out on Ctrl-C or
/// SIGTERM, whose caller ends the process next.
pub fn stop_all() {
    STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
    let words: Vec<LastWords> = last_words().lock().map(|w| w.clone()).unwrap_or_default();
    for say in words.iter().filter_map(std::sync::Weak::upgrade) {
        say();
    }
    let groups = live_groups().lock().map(|g| g.clone()).unwrap_or_default();
    for (pgid, _) in &groups {
        supervise::terminate(*pgid);
    }
    // Each group keeps its watcher until the SIGKILL, so what is polled is each server's first
    // process.
    let exited = |child: &Arc<Mutex<Child>>| {
        child
            .lock()
            .map(|mut c| c.try_wait().ok().flatten().is_some())
            .unwrap_or(true)
    };
    let deadline = Instant::now() + STOP_ALL_GRACE;
    let mut pause = Duration::from_millis(1);
    while Instant::now() < deadline && !groups.iter().all(|(_, child)| exited(child)) {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    for (pgid, _) in &groups {
        supervise::kill(*pgid);
    }
}

/// Stops every server group on Ctrl-C or SIGTERM (see [`stop_all`]), then ends the process as
/// the signal would have. Once per process.
pub fn stop_all_on_signal() {
    supervise::on_terminating_signal(stop_all);
}

fn port_open(port: u16) -> bool {
    std::net::TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200))
        .is_ok()
}

fn spawn(
    spec: &ServerSpec,
    dir: &std::path::Path,
    env: &[(String, String)],
    port: u16,
) -> Result<ServerProcess, StartError> {
    let mut command = match spec {
        ServerSpec::Binary(path) => Command::new(path),
        ServerSpec::Command(line) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(line);
            c
        }
    };
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command
        .current_dir(dir)
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The kernel also kills the server the moment the harness dies, before its watcher's
    // SIGTERM (Linux: see `spawner`).
    supervise::die_with_parent(&mut command);
    #[cfg(target_os = "linux")]
    let mark = super::strays::next_mark();
    #[cfg(target_os = "linux")]
    let spawned = {
        super::strays::become_subreaper();
        command.env(super::strays::MARK, &mark);
        spawner().spawn(command)
    };
    #[cfg(not(target_os = "linux"))]
    let spawned = supervise::spawn(&mut command);
    let (mut child, group) = spawned.map_err(|e| StartError::Spawn {
        spec: spec.describe(),
        why: e.to_string(),
    })?;
    let output = Output::default();
    if let Some(out) = child.stdout.take() {
        keep(out, output.clone());
    }
    if let Some(err) = child.stderr.take() {
        keep(err, output.clone());
    }
    let pgid = group.id();
    let child = Arc::new(Mutex::new(child));
    register(pgid, child.clone());
    Ok(ServerProcess {
        child,
        group: Mutex::new(group),
        pgid,
        #[cfg(target_os = "linux")]
        mark,
        port,
        output,
        stopped: Mutex::new(false),
        hung: std::sync::atomic::AtomicBool::new(false),
        claim: None,
    })
}

/// The folder of the port claims, shared by every harness of this user on the machine.
fn claims_dir() -> PathBuf {
    std::env::temp_dir().join("holon-kit-ports")
}

/// A free port, and its claim when one could be taken. A port is free when nothing listens on
/// it, but a server takes a moment (a second, for a Python one) to bind the port it is given,
/// and meanwhile another harness (a test binary beside this one, a nextest trial) could pick
/// the same port: its server would bind it first, and this harness would test a server that
/// is not its own. So each picked port is claimed with a lock on a file named after it in
/// [`claims_dir`], held while the server lives (the system drops it if the process dies), and
/// a port another harness holds is not picked. Where no claim can be made (an unwritable
/// temporary folder), the port is used unclaimed, as before.
fn pick_port() -> Option<(u16, Option<std::fs::File>)> {
    let (dir, mut unclaimed) = (claims_dir(), None);
    for _ in 0..20 {
        let port = portpicker::pick_unused_port()?;
        match claim(&dir, port) {
            Claim::Held(file) => return Some((port, Some(file))),
            Claim::Taken => continue,
            Claim::Unavailable => {
                unclaimed.get_or_insert(port);
            }
        }
    }
    unclaimed.map(|port| (port, None))
}

enum Claim {
    /// This process holds the port's lock.
    Held(std::fs::File),
    /// Another holds it.
    Taken,
    /// No lock could be taken (the folder or the file cannot be written).
    Unavailable,
}

fn claim(dir: &std::path::Path, port: u16) -> Claim {
    if std::fs::create_dir_all(dir).is_err() {
        return Claim::Unavailable;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!("{port}.lock")));
    let Ok(file) = file else {
        return Claim::Unavailable;
    };
    match file.try_lock() {
        Ok(()) => Claim::Held(file),
        Err(std::fs::TryLockError::WouldBlock) => Claim::Taken,
        Err(std::fs::TryLockError::Error(_)) => Claim::Unavailable,
    }
}

/// The most of one line the output keeps: a server that prints a line of 200 KB (a payload, a
/// blob in base64) does not make each report it is shown in that long.
const LINE_BYTES: usize = 2048;

/// Keeps what `stream` writes in `output`, a line at a time, each cut at [`LINE_BYTES`] (the
/// rest counted), bytes that are not UTF-8 kept as replacement characters: read to its end
/// whatever it writes, so that the server never blocks on a full pipe.
fn keep(stream: impl Read + Send + 'static, output: Output) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let (mut line, mut dropped) = (Vec::new(), 0usize);
        loop {
            let buf = match reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            if buf.is_empty() {
                if !line.is_empty() || dropped > 0 {
                    output.push(kept_line(&line, dropped));
                }
                break;
            }
            let newline = buf.iter().position(|b| *b == b'\n');
            let chunk = buf.get(..newline.unwrap_or(buf.len())).unwrap_or(buf);
            let room = LINE_BYTES.saturating_sub(line.len());
            line.extend(chunk.iter().take(room));
            dropped += chunk.len().saturating_sub(room);
            let used = newline.map_or(buf.len(), |n| n + 1);
            reader.consume(used);
            if newline.is_some() {
                output.push(kept_line(&line, dropped));
                line.clear();
                dropped = 0;
            }
        }
    });
}

/// A line as the output keeps it: its start, and how much of it was not kept.
fn kept_line(line: &[u8], dropped: usize) -> String {
    let mut text = String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .to_string();
    if dropped > 0 {
        text.push_str(&format!(
            " ... ({dropped} more bytes of this line not kept)"
        ));
    }
    text
}

#[cfg(target_os = "linux")]
type Spawned = std::io::Result<(Child, Group)>;

/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, not the process.
/// Test threads come and go, so every server is forked by one thread that lives as long as
/// the process: when the harness dies, however it dies, the server dies with it.
#[cfg(target_os = "linux")]
struct Spawner {
    requests: Mutex<mpsc::Sender<(Command, mpsc::Sender<Spawned>)>>,
}

#[cfg(target_os = "linux")]
impl Spawner {
    fn spawn(&self, command: Command) -> Spawned {
        let (reply, answer) = mpsc::channel();
        self.requests
            .lock()
            .map_err(|_| std::io::Error::other("spawner lock poisoned"))?
            .send((command, reply))
            .map_err(|_| std::io::Error::other("spawner thread is gone"))?;
        answer
            .recv()
            .map_err(|_| std::io::Error::other("spawner thread is gone"))?
    }
}

#[cfg(target_os = "linux")]
fn spawner() -> &'static Spawner {
    static SPAWNER: std::sync::OnceLock<Spawner> = std::sync::OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Command, mpsc::Sender<Spawned>)>();
        std::thread::Builder::new()
            .name("holon-server-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(supervise::spawn(&mut command));
                }
                // The sender lives in a static, so this loop only ends with the process.
            })
            .ok();
        Spawner {
            requests: Mutex::new(tx),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_port_is_not_claimed_again_until_its_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let Claim::Held(first) = claim(dir.path(), 20001) else {
            panic!("the first claim of a port is held");
        };
        // Another harness (here, another open file in this process) finds the port taken.
        assert!(matches!(claim(dir.path(), 20001), Claim::Taken));
        assert!(matches!(claim(dir.path(), 20002), Claim::Held(_)));
        drop(first);
        assert!(matches!(claim(dir.path(), 20001), Claim::Held(_)));
    }

    #[test]
    fn a_folder_that_cannot_be_made_leaves_the_port_unclaimed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        // A file where the folder should be: no claim, and no error either.
        assert!(matches!(
            claim(&file.join("ports"), 20001),
            Claim::Unavailable
        ));
    }

    #[test]
    fn the_servers_of_one_process_get_ports_no_other_harness_picks() {
        let picked: Vec<(u16, Option<std::fs::File>)> =
            (0..50).map(|_| pick_port().unwrap()).collect();
        let mut ports: Vec<u16> = picked.iter().map(|(p, _)| *p).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), 50, "a port was picked twice while claimed");
        assert!(picked.iter().all(|(_, claim)| claim.is_some()));
    }
}

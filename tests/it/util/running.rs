//! The one watchdog: a process whose output is read as it comes, killed (failing the test) if it
//! runs past its deadline, and killed and reaped on every path out, a panic included.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// [`Command::output`] under the watchdog.
pub trait OutputWithin {
    /// Runs the command to the end as [`Command::output`] does (no stdin, both outputs
    /// captured), but fails the test, killing the process, if it runs past `limit`.
    fn output_within(&mut self, limit: Duration) -> Output;
}

impl OutputWithin for Command {
    fn output_within(&mut self, limit: Duration) -> Output {
        Running::spawn(captured(self)).output(limit)
    }
}

/// [`OutputWithin::output_within`] for async tests: the wait runs on a blocking thread, so the
/// test's runtime goes on serving whatever the process talks to.
pub async fn output_within_async(command: &mut Command, limit: Duration) -> Output {
    let running = Running::spawn(captured(command));
    tokio::task::spawn_blocking(move || running.output(limit))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// Polls `done` until it holds, backing off from 5 ms to 50 ms between tries; false if it still
/// does not hold at `deadline`. What the tests wait for (a process gone, a line printed) has no
/// event to wait on, and a fixed sleep would be either flaky or slow.
pub fn wait_until(deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
    let mut pause = Duration::from_millis(5);
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn captured(command: &mut Command) -> &mut Command {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
}

/// A process whose output is read as it comes.
pub struct Running {
    child: Child,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    done: [Arc<AtomicBool>; 2],
    started: Instant,
    command: String,
}

impl Running {
    /// Starts `command`; what it sends to a piped stdout or stderr is collected as it comes.
    pub fn spawn(command: &mut Command) -> Running {
        let description = format!("{command:?}");
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {description}: {e}"));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let done = [
            collect(child.stdout.take(), stdout.clone()),
            collect(child.stderr.take(), stderr.clone()),
        ];
        Running {
            child,
            stdout,
            stderr,
            done,
            started: Instant::now(),
            command: description,
        }
    }

    /// The process's stdin, when it was piped (once).
    pub fn stdin(&mut self) -> std::process::ChildStdin {
        self.child
            .stdin
            .take()
            .expect("stdin was piped, and is taken once")
    }

    /// Standard output so far, as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    /// Standard error so far, as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Polls `ready` until it holds; fails the test at `limit`.
    pub fn wait_for(&mut self, what: &str, limit: Duration, ready: impl Fn(&Running) -> bool) {
        let arrived = wait_until(Instant::now() + limit, || {
            if ready(self) {
                return true;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the CLI ended ({status}) before {what}\nstdout:\n{}\nstderr:\n{}",
                    self.stdout(),
                    self.stderr()
                );
            }
            false
        });
        assert!(
            arrived,
            "waited {limit:?} for {what}\nstdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        );
    }

    /// Sends `signal` to the process.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) touches no memory.
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }

    /// Waits for the end (killing it past `limit`, which fails the test), then for its output.
    pub fn finish(self, limit: Duration) -> Finished {
        let command = self.command.clone();
        let output = self.output(limit);
        Finished {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            command,
        }
    }

    /// [`Running::finish`], with the output as bytes.
    fn output(mut self, limit: Duration) -> Output {
        let mut waited = Ok(None);
        wait_until(self.started + limit, || {
            waited = self.child.try_wait();
            !matches!(waited, Ok(None))
        });
        let Ok(Some(status)) = waited else {
            panic!(
                "{} did not end within {limit:?} ({waited:?})\nstdout:\n{}\nstderr:\n{}",
                self.command,
                self.stdout(),
                self.stderr()
            )
        };
        // A process left behind could hold the pipes open: wait for them, but not forever.
        wait_until(Instant::now() + Duration::from_secs(5), || {
            self.done.iter().all(|d| d.load(Ordering::Acquire))
        });
        Output {
            status,
            stdout: std::mem::take(&mut *self.stdout.lock().unwrap()),
            stderr: std::mem::take(&mut *self.stderr.lock().unwrap()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect(
    stream: Option<impl Read + Send + 'static>,
    into: Arc<Mutex<Vec<u8>>>,
) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        if let Some(mut stream) = stream {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = stream.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        }
        flag.store(true, Ordering::Release);
    });
    done
}

/// A finished run, its output as text.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    command: String,
}

impl std::fmt::Display for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.status, self.stdout, self.stderr
        )
    }
}

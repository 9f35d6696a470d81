//! The lifeline of every process group the harness starts: a watcher process that stops the
//! group when the harness process ends, however it ends (SIGKILL, the OOM killer included).
//!
//! [`spawn`] forks a watcher before the command starts. The watcher leads a new process group
//! and the command joins it, so the group's id is the watcher's pid: a group id stays taken while
//! any member lives, so a signal to that group can only ever reach processes started in it, never
//! a group the harness did not start. The watcher holds the read end of a pipe whose write end
//! only the harness holds, and reads it until end of file, which comes when the harness
//! process is gone, by any cause. Then it sends SIGTERM to the group, gives the leader up to
//! [`GRACE`] to exit, and sends SIGKILL to the whole group, itself included: it never outlives
//! the group. The harness's own stop sends SIGTERM (which the watcher ignores), then SIGKILL to
//! the group, which ends the watcher with the rest.
//!
//! The watcher is forked, not executed: it runs in any binary that links the harness (an
//! agent's `tests/holon.rs`, `cargo-holon-test`) with no entry point of its own, and it does
//! nothing after the fork but system calls that are safe in the child of a threaded process
//! (no allocation, no lock). It costs one fork per server, nothing per call.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::Duration;

/// How long the watcher of a harness that died gives the group's leader to exit after SIGTERM.
pub(crate) const GRACE: Duration = Duration::from_secs(2);
/// How often the watcher looks whether the leader has exited.
const POLL: Duration = Duration::from_millis(10);
/// Descriptors the watcher closes one by one where there is no `close_range` (macOS, and Linux
/// before 5.9): up to the open-files limit, capped, since descriptors are handed out lowest first.
const CLOSE_UP_TO: libc::c_long = 65_536;

/// A process group with its watcher. Dropping it ends the group.
pub(crate) struct Group {
    /// The watcher's pid, which is the group's id.
    watcher: libc::pid_t,
    lifeline: Option<std::io::PipeWriter>,
    ended: bool,
}

/// Starts `command` in a new process group with a watcher, and returns the child (the group's
/// first member) and the group.
pub(crate) fn spawn(command: &mut Command) -> std::io::Result<(Child, Group)> {
    let mut group = Group::new()?;
    command.process_group(group.watcher);
    let child = command.spawn()?;
    group.leader(child.id());
    Ok((child, group))
}

impl Group {
    fn new() -> std::io::Result<Group> {
        // Both ends close on exec (on macOS set just after `pipe`, not atomically: a process
        // another thread executes at that moment would hold the write end too, and the
        // lifeline would end with that process rather than with the harness).
        let (reader, writer) = std::io::pipe()?;
        // SAFETY: sysconf reads a limit; read before the fork, where it need not be safe.
        let close_up_to = match unsafe { libc::sysconf(libc::_SC_OPEN_MAX) } {
            n if n > 0 => n.min(CLOSE_UP_TO) as libc::c_int,
            _ => 1024,
        };
        // SAFETY: the child runs only `watch`, which makes no allocation and takes no lock.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: in the freshly forked child, which never returns from it.
            unsafe { watch(reader.as_raw_fd(), close_up_to) }
        }
        drop(reader);
        // The child makes its group too; whichever runs first does it, so the command that
        // joins it next never finds it missing.
        // SAFETY: setpgid on our own child, which has not executed anything.
        unsafe {
            libc::setpgid(pid, pid);
        }
        Ok(Group {
            watcher: pid,
            lifeline: Some(writer),
            ended: false,
        })
    }

    /// The group's id (the watcher's pid).
    pub(crate) fn id(&self) -> i32 {
        self.watcher
    }

    /// Tells the watcher which process leads the work, so that it waits for that one after
    /// SIGTERM rather than the whole grace period.
    fn leader(&mut self, pid: u32) {
        if let Some(lifeline) = &mut self.lifeline {
            let _ = lifeline.write_all(&pid.to_ne_bytes());
        }
    }

    /// SIGKILL to the whole group, the watcher included, then reaps the watcher. Idempotent.
    pub(crate) fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        kill(self.watcher);
        // Only now may the watcher's pid, and with it the group id, be handed out again.
        loop {
            // SAFETY: waits for our own child; no memory is touched but the null status.
            let r = unsafe { libc::waitpid(self.watcher, std::ptr::null_mut(), 0) };
            if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break;
            }
        }
        self.lifeline = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.end();
    }
}

/// Sends a signal to a whole process group.
fn signal_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Asks a whole process group to stop (SIGTERM); its watcher ignores it.
pub(crate) fn terminate(pgid: i32) {
    signal_group(pgid, libc::SIGTERM);
}

/// Ends a whole process group at once (SIGKILL), its watcher included.
pub(crate) fn kill(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

/// On Linux, the kernel kills the command's first process (SIGKILL) the moment the thread that
/// forked it ends: see `process`'s spawner, which forks every server from one thread that lives
/// as long as the process. Other Unixes have no such call; the watcher alone gives the same
/// guarantee there, after its SIGTERM and grace.
pub(crate) fn die_with_parent(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Ctrl-C or SIGTERM: `stop` runs (it stops every server group), then the process ends as the
/// signal would have ended it (130, 143). On a thread of its own, once per process: a signal
/// belongs to the process, whatever runs are in it. Returns once the handlers are in place;
/// without them a signal keeps its default action.
pub(crate) fn on_terminating_signal(stop: fn()) {
    static WATCHING: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    WATCHING.get_or_init(|| {
        let (ready, registered) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("holon-signals".into())
            .spawn(move || {
                use tokio::signal::unix::{SignalKind, signal};
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                runtime.block_on(async move {
                    let (Ok(mut int), Ok(mut term)) = (
                        signal(SignalKind::interrupt()),
                        signal(SignalKind::terminate()),
                    ) else {
                        return;
                    };
                    let _ = ready.send(());
                    let code = tokio::select! {
                        _ = int.recv() => 130,
                        _ = term.recv() => 143,
                    };
                    stop();
                    std::process::exit(code);
                });
            });
        if spawned.is_ok() {
            let _ = registered.recv();
        }
    });
}

/// The watcher: lead a group, wait for the harness to go, stop the group. Only system calls
/// that POSIX lists as safe after `fork` in a threaded process.
unsafe fn watch(lifeline: libc::c_int, close_up_to: libc::c_int) -> ! {
    // SAFETY (the whole body): plain system calls on descriptors and pids this process owns;
    // the only memory touched is on this stack.
    unsafe {
        libc::setpgid(0, 0);
        let group = libc::getpid();
        // The harness's graceful stop (SIGTERM to the group) and a terminal's signals must not
        // end the watcher: it ends with the group's SIGKILL, or by sending it.
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Keep the lifeline as descriptor 3 and nothing else of the harness's: not the write
        // ends of other groups' lifelines (they would outlive the harness here), not its
        // sockets, not the pipes its own parent reads to end of file.
        if lifeline != 3 && libc::dup2(lifeline, 3) != 3 {
            // No lifeline: exit without a signal. The harness's own stop still ends the group,
            // and until it reaps this process the group id stays taken.
            libc::_exit(1);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for std in 0..3 {
                if null != std {
                    libc::dup2(null, std);
                }
            }
        }
        close_from(4, close_up_to);

        let mut leader = [0u8; 4];
        let mut got = 0usize;
        let mut scratch = [0u8; 64];
        loop {
            let n = if got < leader.len() {
                libc::read(3, leader.as_mut_ptr().add(got).cast(), leader.len() - got)
            } else {
                libc::read(3, scratch.as_mut_ptr().cast(), scratch.len())
            };
            if n > 0 {
                got = (got + n as usize).min(leader.len());
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
        // End of file: the harness process is gone.
        libc::kill(-group, libc::SIGTERM);
        if got == leader.len() {
            let leader = libc::pid_t::from_ne_bytes(leader);
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: POLL.as_nanos() as libc::c_long,
            };
            let mut waited = Duration::ZERO;
            // The leader's new parent reaps it once it exits; a pid handed out again since
            // only makes this wait the full grace period.
            while waited < GRACE && libc::kill(leader, 0) == 0 {
                libc::nanosleep(&pause, std::ptr::null_mut());
                waited += POLL;
            }
        }
        libc::kill(-group, libc::SIGKILL);
        libc::_exit(0)
    }
}

/// Closes every descriptor from `first` up.
#[cfg(target_os = "linux")]
unsafe fn close_from(first: libc::c_uint, up_to: libc::c_int) {
    // SAFETY: close_range(2) and close(2) touch no memory (close_range is Linux 5.9; before
    // it, ENOSYS and a loop).
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) != 0 {
            for fd in first as libc::c_int..up_to {
                libc::close(fd);
            }
        }
    }
}

/// Closes every descriptor from `first` up to `up_to`: macOS has no `close_range`.
#[cfg(not(target_os = "linux"))]
unsafe fn close_from(first: libc::c_uint, up_to: libc::c_int) {
    for fd in first as libc::c_int..up_to {
        // SAFETY: close(2) on a descriptor of this process.
        unsafe {
            libc::close(fd);
        }
    }
}

/// Starts `command` in a process group of its own, detached from the caller's: a terminal's
/// Ctrl-C and whatever stops the caller's group do not reach it. For the keeper of a nextest
/// run's server (`setup`), which outlives the setup script that starts it and ends with the
/// nextest process instead.
pub(crate) fn spawn_detached(command: &mut Command) -> std::io::Result<Child> {
    command.process_group(0).spawn()
}

/// The nearest ancestor of this process whose command name is `name` (`cargo-nextest`), up to
/// a few levels: the process a setup script's server must not outlive.
pub(crate) fn ancestor_named(name: &str) -> Option<i32> {
    // SAFETY: getppid(2) touches no memory.
    let mut pid = unsafe { libc::getppid() };
    for _ in 0..8 {
        if pid <= 1 {
            return None;
        }
        let (parent, command) = process_info(pid)?;
        if command == name {
            return Some(pid);
        }
        pid = parent;
    }
    None
}

/// A process's parent and command name, from `/proc/PID/stat`.
#[cfg(target_os = "linux")]
fn process_info(pid: i32) -> Option<(i32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `PID (COMMAND) STATE PPID ...`, where COMMAND may hold spaces and parentheses.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let command = stat.get(open + 1..close)?.to_string();
    let parent = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((parent, command))
}

/// A process's parent and command name, from `proc_pidinfo`.
#[cfg(target_os = "macos")]
fn process_info(pid: i32) -> Option<(i32, String)> {
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `info`.
    let written = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if written != size {
        return None;
    }
    let name: Vec<u8> = (info.pbi_comm.iter())
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    Some((
        info.pbi_ppid as i32,
        String::from_utf8_lossy(&name).into_owned(),
    ))
}

/// Elsewhere no process is looked up: the setup script says it cannot find nextest.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn process_info(_pid: i32) -> Option<(i32, String)> {
    None
}

/// A watch on another process's exit, opened before it is waited on, so that a process that
/// cannot be watched is known at once: a pidfd on Linux (5.3 and later), a kqueue on macOS.
pub(crate) struct ExitWatch {
    fd: libc::c_int,
}

impl Drop for ExitWatch {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this watch opened.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// Watches process `pid`'s exit, whatever will end it; an error when it cannot be watched
/// (gone already, or no such call).
pub(crate) fn watch_exit(pid: i32) -> std::io::Result<ExitWatch> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open(2) returns a new descriptor or -1; no memory is touched.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(ExitWatch { fd })
    }
    #[cfg(target_os = "macos")]
    {
        // SAFETY: kqueue(2) returns a new descriptor or -1.
        let fd = unsafe { libc::kqueue() };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let watch = ExitWatch { fd };
        // SAFETY: a zeroed kevent is a valid value of the plain C struct.
        let mut change: libc::kevent = unsafe { std::mem::zeroed() };
        change.ident = pid as libc::uintptr_t;
        change.filter = libc::EVFILT_PROC;
        change.flags = libc::EV_ADD | libc::EV_ONESHOT;
        change.fflags = libc::NOTE_EXIT;
        // SAFETY: kevent(2) registers one change from this stack and returns no event.
        let n = unsafe { libc::kevent(fd, &change, 1, std::ptr::null_mut(), 0, std::ptr::null()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(watch)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = pid;
        Err(std::io::Error::other(
            "no way to watch another process here",
        ))
    }
}

impl ExitWatch {
    /// Blocks until the watched process has exited, without polling.
    pub(crate) fn wait(&self) -> std::io::Result<()> {
        loop {
            #[cfg(target_os = "linux")]
            let n = {
                let mut watched = libc::pollfd {
                    fd: self.fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: poll(2) on one pollfd of this stack frame.
                unsafe { libc::poll(&mut watched, 1, -1) }
            };
            #[cfg(target_os = "macos")]
            let n = {
                // SAFETY: a zeroed kevent is a valid value of the plain C struct.
                let mut event: libc::kevent = unsafe { std::mem::zeroed() };
                // SAFETY: kevent(2) with no change and room for one event on this stack.
                unsafe {
                    libc::kevent(
                        self.fd,
                        std::ptr::null(),
                        0,
                        &mut event,
                        1,
                        std::ptr::null(),
                    )
                }
            };
            #[cfg(not(any(target_os = "linux", target_os = "macos")))]
            let n: libc::c_int = -1;
            if n > 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if n < 0 && e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

//! Linux only: what a server left outside its process group. A server that daemonizes (forks,
//! `setsid`, forks again) leaves the group, so the group's SIGKILL misses it. The harness is a
//! child subreaper (`PR_SET_CHILD_SUBREAPER`), so such orphans come back to it as children
//! instead of going to init; each server's environment carries a mark of its group, which its
//! descendants inherit. After the group is stopped, [`sweep`] kills and reaps every child of
//! the harness that carries the mark, reaps the group's own orphans, and names any process with
//! the mark that is not the harness's child (a subreaper between them took it) as a leak.
//! Other Unixes have neither the subreaper nor `/proc`: there a daemonizing server is not
//! tracked (the guide's "Install and platforms").

use std::fs;

/// The variable that marks a server's processes, set in its environment.
pub(crate) const MARK: &str = "HOLON_SERVER_GROUP";

/// A mark for the next server of this process, unique on the machine while it runs.
pub(crate) fn next_mark() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{n}", std::process::id())
}

/// Makes orphaned descendants of this process its children. Once per process; idempotent.
pub(crate) fn become_subreaper() {
    // SAFETY: prctl(2) with integer arguments touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// A process found in `/proc`.
struct Found {
    pid: i32,
    name: String,
    parent: i32,
    group: i32,
    zombie: bool,
}

/// After the group `pgid` got its SIGKILL and its first process was reaped: reaps the
/// group's orphans, stops what left the group, and describes each process it stopped or could
/// not stop, one line each.
pub(crate) fn sweep(pgid: i32, mark: &str) -> Vec<String> {
    let me = std::process::id() as i32;
    let needle = format!("{MARK}={mark}");
    let mut report = Vec::new();
    for found in processes() {
        let ours = found.parent == me;
        if ours && found.group == pgid {
            // A member of the group whose parent exited: killed with the group, reaped here.
            reap(found.pid);
            continue;
        }
        if found.zombie || !marked(found.pid, &needle) {
            continue;
        }
        if ours {
            // Our child until reaped, so this pid cannot name anything else.
            // SAFETY: kill(2) touches no memory.
            unsafe {
                libc::kill(found.pid, libc::SIGKILL);
            }
            reap(found.pid);
            report.push(format!(
                "the server left `{}` (pid {}) running outside its process group (it daemonized): stopped it",
                found.name, found.pid
            ));
        } else {
            report.push(format!(
                "the server left `{}` (pid {}) running outside its process group (it daemonized), out of the harness's reach: it is still running",
                found.name, found.pid
            ));
        }
    }
    report
}

fn reap(pid: i32) {
    loop {
        // SAFETY: waits for our own child; no memory but the null status.
        let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

fn marked(pid: i32, needle: &str) -> bool {
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
}

fn processes() -> Vec<Found> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (name) state ppid pgrp ...`; the name may hold spaces and parentheses.
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            let name = stat.get(open + 1..close)?.to_string();
            let mut rest = stat.get(close + 1..)?.split_whitespace();
            let state = rest.next()?;
            let parent = rest.next()?.parse().ok()?;
            let group = rest.next()?.parse().ok()?;
            Some(Found {
                pid,
                name,
                parent,
                group,
                zombie: state == "Z",
            })
        })
        .collect()
}

//! `source-commit-stale`: does the commit in `source` hold the code under test? A warning of
//! `cargo holon-test` and the test target, never of `check`, which runs no process.
//!
//! The manifest names the commit of the code that was deployed, so a manifest committed after
//! it can never name its own commit: the code is current when nothing in the agent's folder,
//! the manifest aside, differs between that commit and the work tree. Without git, outside a
//! work tree, or on any git failure, nothing is said; a git that does not finish in time (a
//! hook that waits, a prompt) is stopped, and the warning says so.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::supervise;
use holon_core::check::{Diagnostics, Report};
use holon_core::manifest::yaml;

const ID: &str = "source-commit-stale";

/// How long the check's git commands may take together: they read a local repository, which
/// takes milliseconds, so what takes longer waits on something (a hook, a prompt, a network
/// file system) that must not hold the run.
const GIT_LIMIT: Duration = Duration::from_secs(5);

/// The publish checks of the manifest at `path`, with `source-commit-stale` added when the
/// manifest is accepted: what `cargo holon-test` and the test target report before any trial.
pub fn checks(path: &Path) -> Report {
    let mut report = holon_core::check::check_file(path);
    if report.accepted() {
        check(&mut report);
    }
    report
}

/// Adds a `source-commit-stale` warning to an accepted `report` when its `source.commit` does
/// not hold the code in the manifest's folder.
pub(crate) fn check(report: &mut Report) {
    let Ok(root) = yaml::parse(&report.source) else {
        return;
    };
    let Some(commit) = root
        .get("source")
        .and_then(|s| s.get("commit"))
        .and_then(|c| match &c.kind {
            yaml::Kind::String(s) => Some(s.trim().to_string()),
            _ => None,
        })
    else {
        return;
    };
    let Some(message) = stale(&report.path, &commit) else {
        return;
    };
    let (message, hint) = message;
    let mut found = Diagnostics::new(&root);
    found.warning(ID, "/source/commit", message).hint(hint);
    report.diagnostics.extend(found.into_list());
}

/// What is wrong with `commit` for the code beside `manifest`, with a hint; `None` when it is
/// current or nothing can be known.
fn stale(manifest: &Path, commit: &str) -> Option<(String, String)> {
    let dir = &holon_core::manifest::folder_of(manifest);
    let name = manifest.file_name()?.to_str()?;
    let git = Git {
        dir,
        deadline: Instant::now() + GIT_LIMIT,
    };
    match compare(&git, name, commit) {
        Ok(found) => found,
        Err(Stopped(command)) => Some((
            format!(
                "`source.commit` was not compared with the code under test: `git {command}` did not finish within {} s and was stopped (a hook or a prompt that waits?)",
                GIT_LIMIT.as_secs()
            ),
            format!(
                "run `git {command}` in `{}` to see what it waits for",
                dir.display()
            ),
        )),
    }
}

/// A git command stopped at the deadline: its subcommand (`status`).
struct Stopped(String);

/// [`stale`]'s work, each git command under the one deadline.
fn compare(git: &Git, name: &str, commit: &str) -> Result<Option<(String, String)>, Stopped> {
    let Some(head) = git.output(&["rev-parse", "--verify", "--quiet", "HEAD"])? else {
        return Ok(None);
    };
    let short = |s: &str| s.chars().take(12).collect::<String>();
    // Everything in the agent's folder but the manifest itself.
    let code = [".".to_string(), format!(":(exclude){name}")];
    let hint = format!(
        "set `source.commit` to the commit you deploy; the commit under test is `{}`",
        short(&head)
    );
    let changed = git
        .output(&[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            &code[0],
            &code[1],
        ])?
        .is_some_and(|s| !s.trim().is_empty());
    let resolved = git.output(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{commit}^{{commit}}"),
    ])?;
    let Some(resolved) = resolved else {
        return Ok(Some((
            format!(
                "`source.commit` (`{}`) is not a commit of this repository (or the clone is shallow), so the code under test cannot be matched to it",
                short(commit)
            ),
            hint,
        )));
    };
    let differs = if resolved == head {
        false
    } else {
        let diff = [
            "diff", "--quiet", &resolved, "HEAD", "--", &code[0], &code[1],
        ];
        // `git diff --quiet` exits 1 when it finds a difference, 0 when none.
        match git.run(&diff)?.and_then(|ran| ran.code) {
            Some(0) => false,
            Some(1) => true,
            _ => return Ok(None),
        }
    };
    let dirty = " and the work tree has uncommitted changes";
    Ok(match (differs, changed) {
        (false, false) => None,
        (true, _) => Some((
            format!(
                "`source.commit` (`{}`) is not the code under test: the agent's files changed since then (HEAD is `{}`){}",
                short(commit),
                short(&head),
                if changed { dirty } else { "" }
            ),
            hint,
        )),
        (false, true) => Some((
            format!(
                "`source.commit` (`{}`) holds the committed code, but the work tree has uncommitted changes: the code under test is no commit",
                short(commit)
            ),
            "commit the changes, deploy that commit and name it in `source.commit`".to_string(),
        )),
    })
}

/// How a git command ended: its exit code (none when a signal ended it) and standard output.
struct Ran {
    code: Option<i32>,
    stdout: Vec<u8>,
}

/// git in one folder, each command under one deadline.
struct Git<'a> {
    dir: &'a Path,
    deadline: Instant,
}

impl Git<'_> {
    /// `git ARGS`: its standard output, trimmed, when it ran and succeeded; `None` when it
    /// could not run or failed.
    fn output(&self, args: &[&str]) -> Result<Option<String>, Stopped> {
        Ok(self.run(args)?.and_then(|ran| {
            (ran.code == Some(0)).then(|| String::from_utf8_lossy(&ran.stdout).trim().to_string())
        }))
    }

    /// `git -C DIR ARGS`, reading nothing and saying nothing on standard error, in a process
    /// group of its own: its exit code and standard output, `None` when it could not run, and
    /// [`Stopped`] past the deadline, when the group (git, and a hook or helper it started)
    /// is killed.
    fn run(&self, args: &[&str]) -> Result<Option<Ran>, Stopped> {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(self.dir)
            .args(args)
            // No prompt for credentials (a partial clone fetches what a diff lacks), and no
            // index lock taken by `status` that a `git commit` running beside it would meet.
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let Ok((mut child, group)) = supervise::spawn(&mut command) else {
            return Ok(None);
        };
        let Some(mut stdout) = child.stdout.take() else {
            return Ok(None);
        };
        // The output is read, and the exit waited for, on a thread of its own, so that the
        // wait here has a deadline; the group's end (below) ends that thread's wait too.
        let (done, ended) = std::sync::mpsc::channel();
        let reading = std::thread::Builder::new()
            .name("holon-git".into())
            .spawn(move || {
                let mut out = Vec::new();
                let read = stdout.read_to_end(&mut out);
                let status = child.wait();
                let _ = done.send(read.and(status).map(|s| Ran {
                    code: s.code(),
                    stdout: out,
                }));
            });
        if reading.is_err() {
            return Ok(None);
        }
        let waited = ended.recv_timeout(self.deadline.saturating_duration_since(Instant::now()));
        // Whatever is left of the group goes now: all of it when git ran past the deadline.
        drop(group);
        match waited {
            Ok(ran) => Ok(ran.ok()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Stopped(
                args.first().copied().unwrap_or_default().to_string(),
            )),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Ok(None),
        }
    }
}

/// How many of the manifest's past versions [`deployed_document`] reads at most.
const VERSIONS_READ: usize = 200;

/// The manifest a served agent announces by its hash, looked up in git: the manifest at the
/// commit the server names, at HEAD, then its past versions in the history (the newest
/// [`VERSIONS_READ`]); the first whose canonical hash is `sha256`, as the document it hashed,
/// with where it was found. `None` outside a work tree, without git, or when no version
/// matches.
pub(crate) fn deployed_document(
    manifest: &Path,
    sha256: &str,
    commit: Option<&str>,
) -> Option<(serde_json::Value, String)> {
    let dir = &holon_core::manifest::folder_of(manifest);
    let name = manifest.file_name()?.to_str()?;
    // Bounded as the check's commands are: past the limit, the text is not found.
    let git = Git {
        dir,
        deadline: Instant::now() + GIT_LIMIT,
    };
    let show = |args: &[&str]| {
        git.run(args)
            .ok()
            .flatten()
            .filter(|ran| ran.code == Some(0))
            .map(|ran| String::from_utf8_lossy(&ran.stdout).into_owned())
    };
    // The path from the repository's root, as `git show REV:PATH` wants it.
    let prefix = show(&["rev-parse", "--show-prefix"])?;
    let prefix = prefix.trim();
    let path = format!("{prefix}{name}");
    let mut revisions: Vec<String> = commit.map(str::to_string).into_iter().collect();
    revisions.push("HEAD".to_string());
    let limit = format!("--max-count={VERSIONS_READ}");
    if let Some(log) = show(&["log", &limit, "--format=%H", "--", name]) {
        revisions.extend(log.lines().map(str::to_string));
    }
    let mut seen = std::collections::HashSet::new();
    for revision in revisions {
        if !seen.insert(revision.clone()) {
            continue;
        }
        let Some(text) = show(&["show", &format!("{revision}:{path}")]) else {
            continue;
        };
        let found = holon_core::manifest::identity::Identity::of_text(&text)
            .filter(|(identity, _)| identity.sha256 == sha256);
        if let Some((_, document)) = found {
            let at = match revision.as_str() {
                "HEAD" => "HEAD".to_string(),
                r => r.chars().take(12).collect(),
            };
            return Some((document, format!("`{name}` at {at}")));
        }
    }
    None
}

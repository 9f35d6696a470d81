//! `source-commit-stale`: does the commit in `source` hold the code under test? A warning of
//! `cargo holon-test` and the test target, never of `check`'s own checks, which run no process.
//! Also the published manifest `check --against REV` compares with, read from git
//! ([`read_revision`]) by the same watched runner.
//!
//! The manifest names the commit of the code that was deployed, so a manifest committed after
//! it can never name its own commit: the code is current when nothing in the agent's folder,
//! the manifest aside, differs between that commit and the work tree. Without git, outside a
//! work tree, or on any git failure, nothing is said; a git that does not finish in time (a
//! hook that waits, a prompt) is stopped, and the warning says so.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::supervise;
use holon_core::check::{Diagnostics, Report};
use holon_core::ids;
use holon_core::manifest::yaml;

const ID: ids::Id = ids::SOURCE_COMMIT_STALE;

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
    let found = holon_core::check::with_tree(report, |root| {
        let commit = commit_of(root)?;
        let (message, hint) = stale(&report.path, &commit)?;
        let mut found = Diagnostics::new(root);
        found.warning(ID, "/source/commit", message).hint(hint);
        Some(found.into_list())
    });
    report
        .diagnostics
        .extend(found.flatten().into_iter().flatten());
}

/// `source.commit`, trimmed, when the manifest has one.
fn commit_of(root: &yaml::Node) -> Option<String> {
    root.get("source")
        .and_then(|s| s.get("commit"))
        .and_then(|c| match &c.kind {
            yaml::Kind::String(s) => Some(s.trim().to_string()),
            _ => None,
        })
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

/// The most of a git command's standard output read: one byte past the largest manifest.
const OUTPUT_LIMIT: u64 = holon_core::check::MAX_FILE_BYTES + 1;

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
                // No more than a manifest may be: past that, git meets a closed pipe and ends.
                let read = (&mut stdout).take(OUTPUT_LIMIT).read_to_end(&mut out);
                drop(stdout);
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

/// Why the published manifest at a git revision could not be read (`check --against REV`).
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    /// git could not be started.
    #[error("git could not be run to read `{object}`")]
    NoGit {
        /// What was to be read (`v1.2.0:./holon.yaml`).
        object: String,
    },
    /// The manifest's folder is in no git repository.
    #[error(
        "`{old}` is not a file, and the manifest's folder is not in a git repository to read it as a revision from"
    )]
    NotARepository {
        /// The revision (or path) given.
        old: String,
    },
    /// The revision is unknown, and the clone is shallow: it may be in the history not fetched.
    #[error(
        "git does not know the revision `{revision}`: the clone is shallow, and it is not among the commits fetched"
    )]
    Shallow {
        /// The revision as given (`v1.2.0`).
        revision: String,
    },
    /// Neither a file nor a revision.
    #[error("`{old}` is neither a file nor a revision git knows")]
    UnknownRevision {
        /// The revision (or path) given.
        old: String,
    },
    /// The revision is known, the manifest is not in it.
    #[error(
        "`{object}` is not a file in the repository: the revision is known, the path is not in it"
    )]
    NoSuchPath {
        /// What was to be read (`v1.2.0:./holon.yaml`).
        object: String,
    },
    /// The file at the revision is larger than a manifest may be.
    #[error(
        "`{object}` is larger than a manifest may be ({} bytes at most)",
        holon_core::check::MAX_FILE_BYTES
    )]
    TooLarge {
        /// What was read.
        object: String,
    },
    /// git did not finish in time and was stopped, with whatever it started.
    #[error("`git {command}` did not finish within {} s and was stopped (a hook or a prompt that waits?)", GIT_LIMIT.as_secs())]
    Stopped {
        /// The git subcommand (`cat-file`).
        command: String,
        /// The folder it ran in.
        dir: PathBuf,
    },
}

impl RevisionError {
    /// How to get past it, when there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            RevisionError::Shallow { revision } => Some(format!(
                "fetch it: `git fetch --depth=1 origin tag {revision}` for a tag, or `git fetch --unshallow` for the whole history (a CI checkout often holds one commit)"
            )),
            RevisionError::UnknownRevision { .. } => Some(
                "name the published holon.yaml, or a revision: a tag (`v1.2.0`), a commit, `HEAD~1`, `origin/main`, or `REV:path/holon.yaml`".to_string(),
            ),
            RevisionError::NoSuchPath { .. } => Some(
                "name the manifest's path at that revision: `REV:path/holon.yaml`, from the repository's root".to_string(),
            ),
            RevisionError::Stopped { command, dir } => Some(format!(
                "run `git {command}` in `{}` to see what it waits for",
                dir.display()
            )),
            RevisionError::NoGit { .. }
            | RevisionError::NotARepository { .. }
            | RevisionError::TooLarge { .. } => None,
        }
    }
}

/// The bytes of the published manifest at the git revision `old`, in the repository of the
/// manifest at `manifest`: `REV:path` is read as git reads it (the path from the repository's
/// root, or from the manifest's folder with `./`), a revision alone as the manifest's own file
/// in it. The commands share the one deadline, as `source-commit-stale`'s do.
pub fn read_revision(manifest: &Path, old: &str) -> Result<Vec<u8>, RevisionError> {
    let dir = match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = manifest
        .file_name()
        .map_or_else(|| "holon.yaml".into(), |n| n.to_string_lossy());
    let (revision, object) = match old.split_once(':') {
        Some((revision, _)) => (revision, old.to_string()),
        None => (old, format!("{old}:./{name}")),
    };
    let git = Git {
        dir,
        deadline: Instant::now() + GIT_LIMIT,
    };
    let stopped = |Stopped(command)| RevisionError::Stopped {
        command,
        dir: dir.to_path_buf(),
    };
    let Some(ran) = git.run(&["cat-file", "blob", &object]).map_err(stopped)? else {
        return Err(RevisionError::NoGit { object });
    };
    if ran.stdout.len() as u64 >= OUTPUT_LIMIT {
        return Err(RevisionError::TooLarge { object });
    }
    if ran.code == Some(0) {
        return Ok(ran.stdout);
    }
    // Why not: each question asked only now, so that a read that works costs one command.
    if git
        .output(&["rev-parse", "--git-dir"])
        .map_err(stopped)?
        .is_none()
    {
        return Err(RevisionError::NotARepository {
            old: old.to_string(),
        });
    }
    let commit = format!("{revision}^{{commit}}");
    let known = revision.is_empty()
        || (git.output(&["rev-parse", "--verify", "--quiet", &commit]))
            .map_err(stopped)?
            .is_some();
    if known {
        return Err(RevisionError::NoSuchPath { object });
    }
    let shallow = git
        .output(&["rev-parse", "--is-shallow-repository"])
        .map_err(stopped)?;
    if shallow.as_deref() == Some("true") {
        return Err(RevisionError::Shallow {
            revision: revision.to_string(),
        });
    }
    Err(RevisionError::UnknownRevision {
        old: old.to_string(),
    })
}

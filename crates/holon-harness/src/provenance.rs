//! `source-commit-stale`: does the commit in `source` hold the code under test? A warning of
//! `cargo holon-test` and the test target, never of `check`, which runs no process.
//!
//! The manifest names the commit of the code that was deployed, so a manifest committed after
//! it can never name its own commit: the code is current when nothing in the agent's folder,
//! the manifest aside, differs between that commit and the work tree. Without git, outside a
//! work tree, or on any git failure, nothing is said.

use std::path::Path;
use std::process::{Command, Stdio};

use holon_core::check::{Diagnostics, Report};
use holon_core::manifest::yaml;

const ID: &str = "source-commit-stale";

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
    let dir = match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = manifest.file_name()?.to_str()?;
    let head = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"])?;
    let short = |s: &str| s.chars().take(12).collect::<String>();
    // Everything in the agent's folder but the manifest itself.
    let code = [".".to_string(), format!(":(exclude){name}")];
    let hint = format!(
        "set `source.commit` to the commit you deploy; the commit under test is `{}`",
        short(&head)
    );
    let changed = git(
        dir,
        &[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            &code[0],
            &code[1],
        ],
    )
    .is_some_and(|s| !s.trim().is_empty());
    let resolved = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{commit}^{{commit}}"),
        ],
    );
    let Some(resolved) = resolved else {
        return Some((
            format!(
                "`source.commit` (`{}`) is not a commit of this repository (or the clone is shallow), so the code under test cannot be matched to it",
                short(commit)
            ),
            hint,
        ));
    };
    let differs = resolved != head
        && git_differs(
            dir,
            &[
                "diff", "--quiet", &resolved, "HEAD", "--", &code[0], &code[1],
            ],
        )?;
    let dirty = " and the work tree has uncommitted changes";
    match (differs, changed) {
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
    }
}

/// `git -C DIR ARGS`, reading nothing and saying nothing on standard error.
fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// `git ARGS` in `dir`: its standard output, trimmed, when it ran and succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    git_raw(dir, args).map(|out| out.trim().to_string())
}

/// `git diff --quiet ...` in `dir`: whether it found a difference (exit 1) or none (exit 0);
/// `None` when it could not tell.
fn git_differs(dir: &Path, args: &[&str]) -> Option<bool> {
    let status = git_command(dir, args).stdout(Stdio::null()).status().ok()?;
    match status.code() {
        Some(0) => Some(false),
        Some(1) => Some(true),
        _ => None,
    }
}

/// How many of the manifest's past versions [`deployed_text`] reads at most.
const VERSIONS_READ: usize = 200;

/// The text of the manifest a served agent announces by its hash, looked up in git: the
/// manifest at the commit the server names, at HEAD, then its past versions in the history
/// (the newest [`VERSIONS_READ`]); the first whose canonical hash is `sha256`, with where it
/// was found. `None` outside a work tree, without git, or when no version matches.
pub(crate) fn deployed_text(
    manifest: &Path,
    sha256: &str,
    commit: Option<&str>,
) -> Option<(String, String)> {
    let dir = match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = manifest.file_name()?.to_str()?;
    // The path from the repository's root, as `git show REV:PATH` wants it.
    let prefix = git(dir, &["rev-parse", "--show-prefix"])?;
    let path = format!("{prefix}{name}");
    let mut revisions: Vec<String> = commit.map(str::to_string).into_iter().collect();
    revisions.push("HEAD".to_string());
    let limit = format!("--max-count={VERSIONS_READ}");
    if let Some(log) = git(dir, &["log", &limit, "--format=%H", "--", name]) {
        revisions.extend(log.lines().map(str::to_string));
    }
    let mut seen = std::collections::HashSet::new();
    for revision in revisions {
        if !seen.insert(revision.clone()) {
            continue;
        }
        let Some(text) = git_raw(dir, &["show", &format!("{revision}:{path}")]) else {
            continue;
        };
        let matches = holon_core::manifest::identity::Identity::of_text(&text)
            .is_some_and(|(identity, _)| identity.sha256 == sha256);
        if matches {
            let at = match revision.as_str() {
                "HEAD" => "HEAD".to_string(),
                r => r.chars().take(12).collect(),
            };
            return Some((text, format!("`{name}` at {at}")));
        }
    }
    None
}

/// `git ARGS` in `dir`: its standard output as it is, when it ran and succeeded.
fn git_raw(dir: &Path, args: &[&str]) -> Option<String> {
    let output = git_command(dir, args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

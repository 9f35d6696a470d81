//! `--watch`: run, then wait, and run again after a change to the agent's folder: `holon.yaml`,
//! `holon-test.toml`, the recordings, the source. Each run is this same binary with the same
//! arguments but `--watch`, in a watched process group of its own (`command::Supervised`), so
//! nothing is shared between runs and no server outlives one: a change while a run is going
//! stops it (SIGTERM to its group, which stops its servers; SIGKILL after a grace) before the
//! next starts. Changes are gathered until the folder is quiet for [`QUIET`]; what a run writes
//! (its JUnit report, receipts, page), build and dependency folders (`target`, `node_modules`,
//! `dist`, `__pycache__`), hidden ones (`.git`, `.venv`) and editors' scratch files are not
//! changes. `q` then Enter, Ctrl-C or SIGTERM ends it, the run going on stopped first.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher};

use holon_harness::command::{self, Supervised};
use holon_harness::exit::{OK, REFUSED, USAGE};

/// How long the folder must be quiet after a change before the run starts again: a save that
/// is several writes, or a checkout of many files, is one change.
const QUIET: Duration = Duration::from_millis(100);
/// How long a run stopped by a change is given to stop its servers before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How often the loop looks whether the run ended, while nothing else happens.
const TICK: Duration = Duration::from_millis(20);
/// Folders whose changes are not the agent's: builds and dependencies.
const NOT_SOURCE: [&str; 4] = ["target", "node_modules", "dist", "__pycache__"];

/// `--watch` on the manifest found (or why none was), the files the runs write (`--junit`,
/// `--receipts`, `--report`), this process's arguments and `--upstream`; the exit code.
pub(crate) fn watch(
    manifest: Result<PathBuf, String>,
    written: [&Option<PathBuf>; 3],
    argv: &[OsString],
    upstream: Option<command::UpstreamMode>,
) -> u8 {
    if upstream == Some(command::UpstreamMode::Record) {
        eprintln!(
            "error: `--watch` with `--upstream record` would record again after every save, and each recording is a change: record once, then watch the replays"
        );
        return USAGE;
    }
    let folder = manifest.and_then(|m| {
        let folder = holon_core::manifest::folder_of(&m);
        std::fs::canonicalize(&folder)
            .map_err(|e| format!("cannot read `{}`: {e}", folder.display()))
    });
    let folder = match folder {
        Ok(folder) => folder,
        Err(message) => {
            eprintln!("error: {message}");
            return REFUSED;
        }
    };
    // Where the files will be, as the watcher names them: their folder resolved, if it is there.
    let written = (written.into_iter().flatten())
        .filter_map(|p| {
            let absolute = std::path::absolute(p).ok()?;
            let name = absolute.file_name()?.to_owned();
            let parent = absolute.parent()?;
            Some(std::fs::canonicalize(parent).map_or(absolute.clone(), |dir| dir.join(name)))
        })
        .collect();
    let (arg0, args) = Watch::arguments(argv);
    Watch {
        arg0,
        args,
        folder,
        written,
    }
    .run()
}

/// What watches, and what it runs.
pub(crate) struct Watch {
    /// The binary as it was called (`argv[0]`), so each run names itself as this one does.
    pub arg0: OsString,
    /// The run's arguments: this command line's, without `--watch`.
    pub args: Vec<OsString>,
    /// The folder watched: the manifest's.
    pub folder: PathBuf,
    /// Files the runs write (`--junit`, `--receipts`, `--report`), absolute.
    pub written: Vec<PathBuf>,
}

/// What the loop hears.
enum Heard {
    /// A file changed.
    Changed(PathBuf),
    /// `q` on stdin.
    Quit,
    /// The watcher failed.
    Failed(String),
}

impl Watch {
    /// `argv` (the process's arguments, `argv[0]` first) without `--watch` before `--`.
    fn arguments(argv: &[OsString]) -> (OsString, Vec<OsString>) {
        let arg0 = argv.first().cloned().unwrap_or_else(|| "holon-test".into());
        let mut after_dashes = false;
        let args = (argv.iter().skip(1))
            .filter(|a| {
                after_dashes |= *a == "--";
                after_dashes || *a != "--watch"
            })
            .cloned()
            .collect();
        (arg0, args)
    }

    /// Runs, then runs again after each change until `q`, Ctrl-C or SIGTERM; the exit code.
    pub(crate) fn run(self) -> u8 {
        command::stop_on_signal();
        let (tx, rx) = mpsc::channel::<Heard>();
        let _watcher = match self.watcher(tx.clone()) {
            Ok(watcher) => watcher,
            Err(e) => {
                eprintln!("error: cannot watch `{}`: {e}", self.folder.display());
                return REFUSED;
            }
        };
        listen_for_quit(tx);
        let mut count = 1;
        rule(&format!("run {count}"));
        let mut running = self.start();
        let mut pending: Option<(PathBuf, Instant)> = None;
        loop {
            let wait = pending.as_ref().map_or(TICK, |(_, at)| {
                at.saturating_duration_since(Instant::now()).min(TICK)
            });
            match rx.recv_timeout(wait) {
                Ok(Heard::Changed(path)) => {
                    // The change named is the last one whose file is still there: a scratch
                    // file renamed onto the one saved is gone by the time the run starts.
                    let named = match pending.take() {
                        Some((before, _)) if !path.exists() && before.exists() => before,
                        _ => path,
                    };
                    pending = Some((named, Instant::now() + QUIET));
                }
                Ok(Heard::Quit) => {
                    if let Some(run) = running.take() {
                        stop(run);
                    }
                    eprintln!("watch: stopped");
                    return OK;
                }
                Ok(Heard::Failed(why)) => eprintln!("warning: watch: {why}"),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return REFUSED,
            }
            if let Some(run) = &mut running
                && let Some(status) = run.try_wait()
            {
                // Whatever the run left in its group goes with it.
                let _ = run.end();
                running = None;
                ended(count, status);
            }
            if let Some((path, at)) = &pending
                && Instant::now() >= *at
            {
                if let Some(run) = running.take() {
                    eprintln!(
                        "\nwatch: `{}` changed: stopping run {count}",
                        self.shown(path)
                    );
                    stop(run);
                }
                count += 1;
                rule(&format!("run {count}: `{}` changed", self.shown(path)));
                pending = None;
                running = self.start();
            }
        }
    }

    /// One run, started; `None` (said) when it cannot be.
    fn start(&self) -> Option<Supervised> {
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(e) => {
                eprintln!("error: watch: cannot find this binary to run it again: {e}");
                return None;
            }
        };
        let mut run = std::process::Command::new(exe);
        std::os::unix::process::CommandExt::arg0(&mut run, &self.arg0);
        run.args(&self.args).stdin(std::process::Stdio::null());
        match Supervised::spawn(&mut run) {
            Ok(run) => Some(run),
            Err(e) => {
                eprintln!("error: watch: cannot start the run: {e}");
                None
            }
        }
    }

    /// The watcher of the folder: itself, and each folder in it that can hold the agent's
    /// files, each of those with everything below it (a build or dependency folder is never
    /// descended into, so its thousands of folders cost no watch).
    fn watcher(&self, tx: Sender<Heard>) -> notify::Result<notify::RecommendedWatcher> {
        let (folder, written) = (self.folder.clone(), self.written.clone());
        let sender = tx.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
                Ok(event) if is_change(&event.kind) => {
                    // A rename's destination before its source: a file saved through a scratch
                    // file (`sed -i`, many editors) is named, not the scratch file.
                    let changed = (event.paths.iter().rev())
                        .find(|p| !ignored(&folder, &written, p) && p.exists())
                        .or_else(|| (event.paths.iter()).find(|p| !ignored(&folder, &written, p)))
                        .cloned();
                    if let Some(path) = changed {
                        let _ = sender.send(Heard::Changed(path));
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = sender.send(Heard::Failed(e.to_string()));
                }
            })?;
        watcher.watch(&self.folder, RecursiveMode::NonRecursive)?;
        for entry in std::fs::read_dir(&self.folder)?.flatten() {
            let path = entry.path();
            if path.is_dir() && !ignored(&self.folder, &self.written, &path) {
                watcher.watch(&path, RecursiveMode::Recursive)?;
            }
        }
        drop(tx);
        Ok(watcher)
    }

    /// `path` as the author names it: relative to the folder watched.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.folder)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// Whether an event is a change of the files' content or names: a read (an open, an access
/// time) is not.
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
        EventKind::Any | EventKind::Other => true,
    }
}

/// Whether a change to `path` is not the agent's: a file a run writes, a build or dependency
/// folder, a hidden file or folder, an editor's scratch file.
fn ignored(folder: &Path, written: &[PathBuf], path: &Path) -> bool {
    if written.iter().any(|w| w == path) {
        return true;
    }
    let Ok(inside) = path.strip_prefix(folder) else {
        return true;
    };
    let hidden = inside.components().any(|c| {
        let name = c.as_os_str().to_string_lossy();
        name.starts_with('.') || NOT_SOURCE.contains(&name.as_ref())
    });
    let name = inside
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Vim's backup and swap files, its write test (`4913`), compiled Python.
    let scratch = name.ends_with('~')
        || [".swp", ".swx", ".pyc"].iter().any(|e| name.ends_with(e))
        || name == "4913";
    hidden || scratch
}

/// A line on stdin that says `q` ends the watch; the end of stdin (none, or `/dev/null`) does
/// not.
fn listen_for_quit(tx: Sender<Heard>) {
    let _ = std::thread::Builder::new()
        .name("holon-watch-stdin".into())
        .spawn(move || {
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                if line.trim().eq_ignore_ascii_case("q") {
                    let _ = tx.send(Heard::Quit);
                    return;
                }
                line.clear();
            }
        });
}

/// Stops a run: SIGTERM to its group (it stops its servers as on Ctrl-C), then, past the
/// grace, SIGKILL to what is left.
fn stop(mut run: Supervised) {
    run.terminate();
    let deadline = Instant::now() + STOP_GRACE;
    let mut pause = Duration::from_millis(1);
    while run.try_wait().is_none() && Instant::now() < deadline {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    let _ = run.end();
}

/// A run that ended, said under its `test result:` line (or under why it could not run).
fn ended(count: u32, status: std::process::ExitStatus) {
    let how = match status.code() {
        Some(0) => "passed".to_string(),
        Some(101) => "failed".to_string(),
        Some(1) => "could not run (said above): fix it and save".to_string(),
        Some(code) => format!("ended with exit code {code}"),
        None => "was ended by a signal".to_string(),
    };
    eprintln!(
        "\nwatch: run {count} {how}; waiting for a change (`q` then Enter, or Ctrl-C, to stop)"
    );
}

/// The line that sets a run apart: `── run 2: `holon.yaml` changed ─────`.
fn rule(title: &str) {
    let fill = 78usize.saturating_sub(title.chars().count() + 4);
    eprintln!("\n── {title} {}", "─".repeat(fill.max(3)));
}

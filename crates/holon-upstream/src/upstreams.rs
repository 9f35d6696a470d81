//! A run's upstreams: the recordings read, the secrets' values checked, a listener per upstream
//! and pass bound and served, the function pass's variables set, each call entered in its turn,
//! and after the run what a record run writes (every file whole, only those whose answers
//! changed, none over an answer the run could not record) and the warnings of what the run saw.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::attribute;
use crate::call::{Call, Entered, PerPass, ProxyState};
use crate::error::{FinishError, StartError};
use crate::fault::Plant;
use crate::index::Index;
use crate::matching;
use crate::mode::{Mode, PLACEHOLDER, Refresh};
use crate::proxy;
use crate::recording::{self, Read, Recording, Request, Scope};
use holon_config::TestConfig;
use holon_config::secrets::{Need, Secrets};
use holon_core::gateway::Pass;
use holon_core::manifest::Manifest;

/// A run's upstreams: their proxies, the recordings, and what the run saw.
pub struct Upstreams {
    mode: Mode,
    config: TestConfig,
    folder: PathBuf,
    state: Arc<ProxyState>,
    turns: PerPass<Arc<tokio::sync::Mutex<()>>>,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    /// `VAR=URL` for the server process, and placeholder secrets in replay.
    server_env: Vec<(String, String)>,
    /// The command that refreshes the recordings.
    refresh: Arc<Refresh>,
    /// What the run says after it of how it started (a file `--force` records over).
    notes: Vec<String>,
    /// Calls entered, per pass.
    calls: Mutex<usize>,
    /// What the calls entered were for: a record run keeps the recording of one whose calls
    /// made no request, and says so.
    entered: Mutex<BTreeSet<Scope>>,
    /// Explore's seed in this run.
    seed: u64,
    bless: bool,
}

/// What starting the upstreams needs from the run.
pub struct Start<'a> {
    /// The checked manifest.
    pub manifest: &'a Manifest,
    /// `holon-test.toml`.
    pub config: TestConfig,
    /// Where the upstreams' answers come from in this run.
    pub mode: Mode,
    /// Whether the function pass runs in this process (its variables are set here).
    pub function: bool,
    /// The command that runs these tests, without the mode (`cargo holon-test`).
    pub command: String,
    /// Explore's seed, written beside explore's recordings.
    pub seed: u64,
    /// Whether the run blesses: a live run then makes one call at a time, so that an upstream's
    /// failure is known to be the call's for sure.
    pub bless: bool,
    /// Whether a record run records over files that do not read (`--force`), rather than
    /// refusing to start.
    pub force: bool,
}

impl Upstreams {
    /// Reads the recordings, checks the secrets' values (a record run needs every one, each
    /// long enough to scrub), binds a listener per upstream and pass, points the function
    /// pass's variables at its listeners (in this process's environment, before any thread of
    /// the harness starts) and starts serving: all before any call. A TLS provider for rustls
    /// must be installed first (the harness installs ring) for an `https` upstream of a record
    /// or live run.
    pub fn start(start: Start<'_>) -> Result<Upstreams, StartError> {
        let Start {
            manifest,
            config,
            mode,
            function,
            command,
            seed,
            bless,
            force,
        } = start;
        let folder = manifest.dir().join(recording::FOLDER);
        let names: Vec<String> = config.upstreams.iter().map(|u| u.name.clone()).collect();
        let refresh = Refresh::new(&command, &config);
        let mut notes = Vec::new();
        let recorded = if mode == Mode::Live {
            Vec::new()
        } else {
            let read = recording::read_folder(&folder, &names);
            if read.refused.is_empty() {
                read.read
            } else if mode == Mode::Record && force {
                for report in &read.refused {
                    notes.push(format!(
                        "upstream: `{}` does not read; `--force` recorded over it where this run recorded its example",
                        report.path.display()
                    ));
                }
                read.read
            } else {
                return Err(StartError::Recordings {
                    reports: read.refused,
                    record: mode == Mode::Record,
                });
            }
        };
        let need = match mode {
            Mode::Record => Need::Every,
            Mode::Live => Need::Set,
            Mode::Replay => Need::Nothing,
        };
        let secrets = Secrets::read(&config, need, refresh.whole(), |name| {
            std::env::var(name).ok()
        })
        .map_err(|report| StartError::Secrets { report })?;
        if mode == Mode::Record {
            writable(&folder)?;
        }
        let mut real = HashMap::new();
        if mode != Mode::Replay {
            for u in &config.upstreams {
                let from_env = std::env::var(&u.env).ok().filter(|v| !v.trim().is_empty());
                match from_env.or_else(|| u.url.clone()) {
                    Some(url) => {
                        real.insert(u.name.clone(), url);
                    }
                    None => {
                        return Err(StartError::NoUrl {
                            name: u.name.clone(),
                            env: u.env.clone(),
                            mode: mode.name(),
                        });
                    }
                }
            }
        }
        let secret_names: Vec<&str> = (config.upstreams.iter())
            .flat_map(|u| u.secrets.iter().map(|s| s.name.as_str()))
            .collect();
        let mut listeners = Vec::new();
        let mut function_env = Vec::new();
        let mut server_env = Vec::new();
        for u in &config.upstreams {
            for pass in Pass::ALL {
                let listen = |source| StartError::Listen {
                    name: u.name.clone(),
                    source,
                };
                let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
                    .and_then(|l| l.set_nonblocking(true).map(|()| l))
                    .map_err(listen)?;
                let port = listener.local_addr().map_err(listen)?.port();
                let url = format!("http://127.0.0.1:{port}");
                match pass {
                    Pass::Function => function_env.push((u.env.clone(), url)),
                    Pass::Mcp => server_env.push((u.env.clone(), url)),
                }
                listeners.push((pass, u.name.clone(), listener));
            }
        }
        if mode == Mode::Replay {
            // No key is needed, and one too short to scrub is not used.
            for name in secret_names {
                if !secrets.holds(name) && !function_env.iter().any(|(k, _)| k == name) {
                    function_env.push((name.to_string(), PLACEHOLDER.into()));
                    server_env.push((name.to_string(), PLACEHOLDER.into()));
                }
            }
        }
        if function {
            set_before_threads(&function_env)?;
        }
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| StartError::Client(e.to_string()))?;
        let state = Arc::new(ProxyState {
            mode,
            secrets,
            real,
            index: Index::new(&recorded),
            recorded,
            fresh: Mutex::new(HashMap::new()),
            current: PerPass::new(|| Mutex::new(Vec::new())),
            left: PerPass::new(tokio::sync::Notify::new),
            requests: Mutex::new(HashMap::new()),
            ledger: Arc::new(crate::ledger::Ledger::default()),
            outside: Mutex::new(Vec::new()),
            reported: Mutex::new(std::collections::HashSet::new()),
            client,
            limit: manifest.runtime.limits.timeout() + Duration::from_secs(5),
            base: manifest.dir(),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("holon-upstream")
            .enable_all()
            .build()
            .map_err(StartError::Runtime)?;
        for (pass, name, listener) in listeners {
            runtime.spawn(proxy::serve(state.clone(), pass, name, listener));
        }
        Ok(Upstreams {
            mode,
            config,
            folder,
            state,
            turns: PerPass::new(|| Arc::new(tokio::sync::Mutex::new(()))),
            runtime: Mutex::new(Some(runtime)),
            server_env,
            refresh: Arc::new(refresh),
            notes,
            calls: Mutex::new(0),
            entered: Mutex::new(BTreeSet::new()),
            seed,
            bless,
        })
    }

    /// Waits for the real requests an agent gave up on that are still open (each at most its
    /// time limit), so that what the run paid for is counted whole.
    pub fn settle(&self) {
        let runtime = self.runtime.lock().ok();
        if let Some(runtime) = runtime.as_ref().and_then(|r| r.as_ref()) {
            runtime.block_on(self.state.ledger.settle(self.state.limit));
        }
    }

    /// What each upstream's requests came to, by what they were for: with `real`, only those
    /// sent to the real service (what a live or record run paid for), else every request as
    /// the agent made it (under replay, priced from the recordings).
    pub fn spend(&self, real: bool) -> BTreeMap<String, crate::ledger::Spend> {
        self.state.ledger.spend(real)
    }

    /// Where the upstreams' answers come from in this run.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether a pass's calls go one at a time, so that each upstream request is one call's
    /// for sure: a record run (nothing recorded yet to tell them apart by), and a live run that
    /// blesses (an upstream's failure must be the call's before an example takes it). Replayed
    /// calls are told apart by their requests' content, and live calls by the input their
    /// requests carry: they fly together.
    pub fn serial(&self) -> bool {
        self.mode == Mode::Record || (self.mode == Mode::Live && self.bless)
    }

    /// The variables the server process is started with.
    pub fn server_env(&self) -> &[(String, String)] {
        &self.server_env
    }

    /// The command that records every example again, with the variables it needs.
    pub fn refresh(&self) -> &str {
        self.refresh.whole()
    }

    /// The command that records example `name` alone again.
    pub fn refresh_one(&self, name: &str) -> String {
        self.refresh.one(name)
    }

    /// The values of the run's secrets, which nothing the run writes or prints may hold.
    pub fn secrets(&self) -> &Secrets {
        &self.state.secrets
    }

    /// The exchanges recorded for example `name`, in order: each one's upstream, request, and
    /// how many times the call made that request before it (what a [`Plant`] names). `None`
    /// when the example has no recording.
    pub fn exchanges_of(&self, name: &str) -> Option<Vec<(String, Request, usize)>> {
        let scope = Scope::Example(name.to_string());
        let read = (self.state.recorded.iter()).find(|r| r.recording.scope == scope)?;
        let mut out: Vec<(String, Request, usize)> = Vec::new();
        for x in &read.recording.exchanges {
            let before = (out.iter())
                .filter(|(u, r, _)| *u == x.upstream && matching::same(r, &x.request))
                .count();
            out.push((x.upstream.clone(), x.request.clone(), before));
        }
        Some(out)
    }

    /// Explore draws with `seed` in this run (what a record run writes beside its cases).
    pub fn use_seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// The seed explore's cases were recorded with: drawing with it again sends the recorded
    /// inputs (replay), or records them again (record, so that an unchanged agent re-records
    /// to an empty diff), whatever `--bless` did to the manifest's bytes since.
    pub fn recorded_seed(&self) -> Option<u64> {
        (self.state.recorded.iter())
            .find(|r| r.recording.scope == Scope::Explore)
            .and_then(|r| r.recording.seed)
    }

    /// Puts a call for `scope` with `inputs` (one call's input, or a batch's) in flight on
    /// `pass`, once it can be told apart from the calls in flight there: at once in a live run,
    /// under replay once no call in flight could make a request it could make and be answered
    /// otherwise (see `attribute`), in a record run once the call before it is done.
    pub async fn enter(&self, pass: Pass, scope: Scope, inputs: &[Value]) -> Entered {
        self.enter_with(pass, scope, inputs, None).await
    }

    /// [`enter`](Self::enter), with `plant` failing one of the call's requests.
    pub async fn enter_with(
        &self,
        pass: Pass,
        scope: Scope,
        inputs: &[Value],
        plant: Option<Plant>,
    ) -> Entered {
        let turn = match self.serial() {
            true => Some(self.turns.get(pass).clone().lock_owned().await),
            false => None,
        };
        let call = Arc::new(Call::new(scope, inputs, plant));
        loop {
            let left = self.state.left.get(pass).notified();
            tokio::pin!(left);
            left.as_mut().enable();
            if let Ok(mut current) = self.state.current.get(pass).lock() {
                let joins =
                    self.mode != Mode::Replay || attribute::may_join(&self.state, &call, &current);
                if joins {
                    current.push(call.clone());
                    break;
                }
            } else {
                break;
            }
            left.await;
        }
        if let Ok(mut calls) = self.calls.lock() {
            *calls += 1;
        }
        if let Ok(mut entered) = self.entered.lock() {
            entered.insert(call.scope.clone());
        }
        Entered {
            call,
            pass,
            state: self.state.clone(),
            refresh: self.refresh.clone(),
            _turn: turn,
        }
    }

    /// After the run: the recordings written (record), the stale ones named (replay), and a
    /// warning for an upstream no request reached. `examples` are the manifest's names. Returns
    /// the lines to say (the harness's reporter says them, scrubbed of the run's secrets)
    /// beside whether the recordings were written.
    pub fn finish(&self, examples: &[String]) -> (Vec<String>, Result<(), FinishError>) {
        if let Some(runtime) = self.runtime.lock().ok().and_then(|mut r| r.take()) {
            runtime.shutdown_background();
        }
        let mut lines = self.notes.clone();
        for problem in self
            .state
            .outside
            .lock()
            .map(|o| o.clone())
            .unwrap_or_default()
        {
            lines.push(format!("warning: outside any call: {problem}"));
        }
        let calls = self.calls.lock().map(|c| *c).unwrap_or(0);
        let counts = self
            .state
            .requests
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default();
        if calls > 0 {
            for u in &self.config.upstreams {
                if counts.get(&u.name).copied().unwrap_or(0) == 0 {
                    lines.push(format!(
                        "warning: no request reached upstream `{}` in this run: does the agent read its base URL from `{}`?",
                        u.name, u.env
                    ));
                }
            }
        }
        let result = match self.mode {
            Mode::Record => self.write(examples, &mut lines),
            Mode::Replay => {
                for read in &self.state.recorded {
                    if let Scope::Example(name) = &read.recording.scope
                        && !examples.contains(name)
                    {
                        lines.push(format!(
                            "warning: `{}` records example `{name}`, which the manifest no longer has ({} removes it)",
                            read.path.display(),
                            self.refresh.whole()
                        ));
                    }
                }
                Ok(())
            }
            Mode::Live => Ok(()),
        };
        (lines, result)
    }

    /// Writes what a record run recorded, at the end of the run and only if it has something
    /// to write: one file per scope whose calls the upstreams answered (none over a recording
    /// when a call of its scope failed, was refused or made no request), only where the
    /// answers changed, each file whole (a temporary file renamed over it); and removes the
    /// files of examples the manifest no longer has.
    fn write(&self, examples: &[String], lines: &mut Vec<String>) -> Result<(), FinishError> {
        let existing: HashMap<&Scope, &Read> = (self.state.recorded.iter())
            .map(|r| (&r.recording.scope, r))
            .collect();
        let shown = |path: &Path| {
            let shown = path.strip_prefix(&self.state.base).unwrap_or(path);
            shown.display().to_string()
        };
        let failed: BTreeSet<Scope> = self.failed_scopes();
        let mut taken: BTreeSet<PathBuf> = existing.values().map(|r| r.path.clone()).collect();
        let mut writes: Vec<(PathBuf, String)> = Vec::new();
        let (mut exchanges, mut unchanged, mut kept) = (0, 0, Vec::new());
        let mut made = proxy::recorded(&self.state);
        // A scope whose calls made no request is in the run too: it records nothing.
        let entered = self.entered.lock().map(|e| e.clone()).unwrap_or_default();
        for scope in entered {
            if !made.iter().any(|(s, _)| *s == scope) {
                made.push((scope, Vec::new()));
            }
        }
        made.sort_by(|a, b| a.0.cmp(&b.0));
        for (scope, mut list) in made {
            if let Scope::Example(name) = &scope
                && !examples.contains(name)
            {
                continue;
            }
            let old = existing.get(&scope);
            if failed.contains(&scope) || list.is_empty() {
                // Nothing replaces a recording but answers: a failed call's trial said why.
                if let Some(old) = old
                    && !old.recording.exchanges.is_empty()
                {
                    kept.push(shown(&old.path));
                }
                continue;
            }
            if scope == Scope::Explore {
                // Explore's cases go out together: a stable order, whatever the arrival order.
                list.sort_by_cached_key(|x| {
                    (
                        x.upstream.clone(),
                        x.request.method.clone(),
                        x.request.path.clone(),
                        format!("{:?}", x.request.body),
                    )
                });
            }
            let recording = Recording {
                seed: (scope == Scope::Explore).then_some(self.seed),
                scope: scope.clone(),
                exchanges: list,
            };
            if let Some(old) = old
                && same(&old.recording, &recording)
            {
                unchanged += 1;
                continue;
            }
            let path = match old {
                Some(old) => old.path.clone(),
                None => {
                    let path = self.new_path(&scope, &taken);
                    taken.insert(path.clone());
                    path
                }
            };
            exchanges += recording.exchanges.len();
            writes.push((path, recording.to_text()));
        }
        let gone: Vec<(&PathBuf, &str)> = (self.state.recorded.iter())
            .filter_map(|read| match &read.recording.scope {
                Scope::Example(name) if !examples.contains(name) => {
                    Some((&read.path, name.as_str()))
                }
                _ => None,
            })
            .collect();
        let files = writes.len();
        // A run that recorded nothing removes nothing either.
        let answered = files > 0 || unchanged > 0;
        for (path, text) in writes {
            write_file(&self.folder, &path, &text)?;
        }
        for (path, name) in gone.into_iter().filter(|_| answered) {
            std::fs::remove_file(path).map_err(|source| FinishError::Remove {
                path: path.clone(),
                source,
            })?;
            lines.push(format!(
                "upstream: removed `{}`: the manifest no longer has example `{name}`",
                shown(path)
            ));
        }
        let mut summary = format!(
            "upstream: recorded {exchanges} exchange{} in {files} file{} in `{}`",
            if exchanges == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" },
            self.folder.display()
        );
        if unchanged > 0 {
            summary.push_str(&format!(
                "; {unchanged} file{} left as {} (the same answers)",
                if unchanged == 1 { "" } else { "s" },
                if unchanged == 1 {
                    "it was"
                } else {
                    "they were"
                }
            ));
        }
        lines.push(summary);
        if !kept.is_empty() {
            let list: Vec<String> = kept.iter().map(|k| format!("`{k}`")).collect();
            lines.push(format!(
                "upstream: kept {} as {}: a call {} record{} was refused or not answered, or made no request (the trials say why); record again once the upstream answers",
                list.join(", "),
                if kept.len() == 1 { "it was" } else { "they were" },
                if kept.len() == 1 { "it" } else { "they" },
                if kept.len() == 1 { "s" } else { "" },
            ));
        }
        Ok(())
    }

    /// The scopes a call of which the upstream did not answer with something to record: a
    /// transient failure, a refusal of the credentials, no connection.
    fn failed_scopes(&self) -> BTreeSet<Scope> {
        let Ok(fresh) = self.state.fresh.lock() else {
            return BTreeSet::new();
        };
        fresh
            .iter()
            .filter(|(_, slots)| {
                slots.iter().any(|s| match s.answer.get() {
                    Some(Ok(response)) => {
                        proxy::transient(response.status) || proxy::refused(response.status)
                    }
                    Some(Err(_)) | None => true,
                })
            })
            .map(|(scope, _)| scope.clone())
            .collect()
    }

    fn new_path(&self, scope: &Scope, taken: &BTreeSet<PathBuf>) -> PathBuf {
        let base = match scope {
            Scope::Example(name) => recording::slug(name),
            Scope::Explore => "explore".into(),
            Scope::Startup => "startup".into(),
        };
        let mut path = self.folder.join(format!("{base}.json"));
        let mut n = 2;
        while taken.contains(&path) {
            path = self.folder.join(format!("{base}-{n}.json"));
            n += 1;
        }
        path
    }
}

/// The recordings folder can be written: it exists (or is made) and a file can be created in it.
fn writable(folder: &Path) -> Result<(), StartError> {
    let refuse = |source| StartError::Unwritable {
        folder: folder.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(folder).map_err(refuse)?;
    let probe = folder.join(".holon-write-probe");
    std::fs::write(&probe, b"").map_err(refuse)?;
    std::fs::remove_file(&probe).map_err(refuse)
}

/// Whether a recording made again says what the recorded one says: the same scope and seed,
/// and each exchange's request the same for replay and its answer the same (a record run gave
/// the agent the recorded answer where the new one differed only in volatile fields).
fn same(old: &Recording, new: &Recording) -> bool {
    old.scope == new.scope
        && old.seed == new.seed
        && old.exchanges.len() == new.exchanges.len()
        && old.exchanges.iter().zip(&new.exchanges).all(|(a, b)| {
            a.upstream == b.upstream
                && matching::same(&a.request, &b.request)
                && a.request.content_type == b.request.content_type
                && a.response == b.response
        })
}

/// Writes `text` to `path` whole: a temporary file in `folder`, renamed over `path`, so that a
/// run stopped at any moment leaves the recording as it was or as it is now.
fn write_file(folder: &Path, path: &Path, text: &str) -> Result<(), FinishError> {
    let failed = |source| FinishError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".recording-").suffix(".tmp");
    // The permissions the file had, or those a file written in place gets (less the umask),
    // rather than a temporary file's owner-only ones.
    match std::fs::metadata(path) {
        Ok(metadata) => {
            builder.permissions(metadata.permissions());
        }
        Err(_) => {
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        }
    }
    let mut temporary = builder.tempfile_in(folder).map_err(failed)?;
    std::io::Write::write_all(&mut temporary, text.as_bytes()).map_err(failed)?;
    temporary
        .persist(path)
        .map(drop)
        .map_err(|e| failed(e.error))
}

/// Sets the function pass's variables in this process. Sound only while no other thread runs
/// (another thread reading the environment at that moment is undefined behaviour), so on Linux
/// the harness first makes sure it is alone.
fn set_before_threads(vars: &[(String, String)]) -> Result<(), StartError> {
    if vars.is_empty() {
        return Ok(());
    }
    if let Some(threads) = threads()
        && threads > 1
    {
        let names: Vec<String> = vars.iter().map(|(k, _)| format!("`{k}`")).collect();
        return Err(StartError::Threads {
            names: names.join(", "),
            threads,
        });
    }
    for (key, value) in vars {
        // SAFETY: no other thread runs (checked above on Linux; elsewhere `Harness::run` is
        // documented to be called first thing in `main`), so no one reads the environment
        // while it changes.
        unsafe {
            std::env::set_var(key, value);
        }
    }
    Ok(())
}

/// How many threads this process has, where the system says.
fn threads() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_dir("/proc/self/task")
            .ok()
            .map(Iterator::count)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_is_written_whole_with_the_permissions_a_file_gets() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (path, plain) = (dir.path().join("a.json"), dir.path().join("plain"));
        std::fs::write(&plain, "").unwrap();
        write_file(dir.path(), &path, "{}\n").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&plain));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(dir.path(), &path, "[]\n").unwrap();
        assert_eq!(
            (
                std::fs::read_to_string(&path).unwrap().as_str(),
                mode(&path)
            ),
            ("[]\n", 0o640)
        );
        // Nothing is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}

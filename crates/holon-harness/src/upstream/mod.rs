//! Recorded upstreams: the services an agent calls (a model, a paid API), declared in
//! `holon-test.toml`, stood in for by a loopback proxy the agent is pointed at through its own
//! variable. Three modes: `replay` (the default: no network, the recordings answer), `record`
//! (the real service answers, and what it answered is written beside the manifest) and `live`
//! (the real service answers, nothing is written).
//!
//! Each pass has its own listener per upstream, and in `replay` and `record` a pass makes one
//! call at a time, so every upstream request is the request of one call: an example's
//! recording answers that example's requests, in the order they were made; explore's cases
//! share one recording.

pub mod fault;
mod matching;
mod proxy;
pub mod recording;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use holon_core::check::{self, Report};
use holon_core::config::TestConfig;
use holon_core::manifest::Manifest;

use fault::Plant;
use matching::Secrets;
use proxy::Shared;
use recording::Recording;
pub use recording::{Request, Scope};

/// The variable that sets the mode (`--upstream`).
pub const MODE_VAR: &str = "HOLON_UPSTREAM";

/// What an unset secret holds in `replay`, so that SDK constructors that insist on a key start
/// without one.
pub const PLACEHOLDER: &str = "holon-test-replay-no-key";

/// Where the upstreams' answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The recordings; no network.
    Replay,
    /// The real services, whose answers are written down.
    Record,
    /// The real services; nothing is written, and examples are judged as a paying caller would
    /// see them.
    Live,
}

impl Mode {
    /// How the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Replay => "replay",
            Mode::Record => "record",
            Mode::Live => "live",
        }
    }
}

/// `--upstream MODE` or `HOLON_UPSTREAM`: `replay`, `record` or `live`.
pub fn parse_mode(text: &str) -> Result<Mode, String> {
    match text.trim() {
        "replay" => Ok(Mode::Replay),
        "record" => Ok(Mode::Record),
        "live" => Ok(Mode::Live),
        other => Err(format!(
            "the upstream mode is `replay`, `record` or `live`, not `{other}`"
        )),
    }
}

/// Which pass a proxy serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The function pass, in the harness's own process.
    Function,
    /// The server process.
    Server,
}

/// One of a thing for each pass.
struct PerSide<T> {
    function: T,
    server: T,
}

impl<T> PerSide<T> {
    fn new(make: impl Fn() -> T) -> PerSide<T> {
        PerSide {
            function: make(),
            server: make(),
        }
    }

    fn get(&self, side: Side) -> &T {
        match side {
            Side::Function => &self.function,
            Side::Server => &self.server,
        }
    }
}

/// One call on a pass, as the proxy attributes the requests it sees: what it is for, how many
/// times it made each request, what went wrong, and the fault planted in it.
pub struct Call {
    scope: Scope,
    occurrences: Mutex<Vec<(Request, usize)>>,
    misses: Mutex<Vec<String>>,
    /// The harness's own failures to get an answer (record): the call is not judged.
    failures: Mutex<Vec<String>>,
    /// The real service's failures (live): the call is judged, but never blessed into an error.
    upstream_failures: Mutex<Vec<String>>,
    plant: Option<Plant>,
    fired: AtomicBool,
    /// Told when the call's verdict is in: a held answer is dropped then.
    ended: Arc<tokio::sync::Notify>,
}

impl Call {
    /// How many times this call made `request` before (0 the first time).
    fn occurrence(&self, request: &Request) -> usize {
        let Ok(mut seen) = self.occurrences.lock() else {
            return 0;
        };
        match seen.iter_mut().find(|(r, _)| matching::same(r, request)) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((request.clone(), 0));
                0
            }
        }
    }

    fn miss(&self, report: String) {
        if let Ok(mut m) = self.misses.lock() {
            m.push(report);
        }
    }

    fn fail(&self, report: String) {
        if let Ok(mut f) = self.failures.lock() {
            f.push(report);
        }
    }

    fn upstream_failed(&self, report: String) {
        if let Ok(mut f) = self.upstream_failures.lock() {
            f.push(report);
        }
    }

    fn played(&self) {
        self.fired.store(true, Ordering::SeqCst);
    }
}

/// A call in flight on a pass: its requests are its own until this is dropped. Held by
/// whatever waits for the call (never by the agent's task), so a call given up on frees the
/// pass.
pub struct Entered {
    call: Arc<Call>,
    side: Side,
    shared: Arc<Shared>,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

/// What went wrong with a call's upstreams, once it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trouble {
    /// A request had no recording (replay): the report, and the command that refreshes.
    Unrecorded(String),
    /// The real service failed while recording.
    Upstream(String),
}

impl Entered {
    /// Whether the fault planted in this call was played (its request was made).
    pub fn fault_played(&self) -> bool {
        self.call.fired.load(Ordering::SeqCst)
    }

    /// The call's end, with `answer`: what a fault trial judges.
    pub fn faulted(self, answer: holon_core::gateway::Answer) -> fault::Faulted {
        fault::Faulted {
            answer,
            played: self.fault_played(),
            misses: self.misses(),
        }
    }

    /// The first failure of a real service this call saw (live: a 429, a 5xx, no connection).
    pub fn upstream_failure(&self) -> Option<String> {
        (self.call.upstream_failures.lock().ok()).and_then(|f| f.first().cloned())
    }

    /// The requests of this call no recording answered.
    pub fn misses(&self) -> Vec<String> {
        self.call
            .misses
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// What went wrong with this call's upstream requests, if anything.
    pub fn trouble(&self, refresh: &str) -> Option<Trouble> {
        let failures = self
            .call
            .failures
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default();
        if let Some(first) = failures.first() {
            return Some(Trouble::Upstream(first.clone()));
        }
        let misses = self
            .call
            .misses
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default();
        if misses.is_empty() {
            return None;
        }
        Some(Trouble::Unrecorded(format!(
            "{}\nrefresh the recordings: {refresh}",
            misses.join("\n")
        )))
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        self.call.ended.notify_one();
        if let Ok(mut current) = self.shared.current.get(self.side).lock()
            && current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &self.call))
        {
            *current = None;
        }
    }
}

/// A run's upstreams: their proxies, the recordings, and what the run saw.
pub struct Upstreams {
    mode: Mode,
    config: TestConfig,
    folder: PathBuf,
    shared: Arc<Shared>,
    turns: PerSide<Arc<tokio::sync::Mutex<()>>>,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    /// `VAR=URL` for the server process, and placeholder secrets in replay.
    server_env: Vec<(String, String)>,
    /// The command that refreshes the recordings.
    refresh: String,
    /// Calls entered, per pass.
    calls: Mutex<usize>,
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
    /// failure is known to be the call's.
    pub bless: bool,
}

impl Upstreams {
    /// Reads the recordings, binds a listener per upstream and pass, points the function pass's
    /// variables at its listeners (in this process's environment, before any thread of the
    /// harness starts) and starts serving. `Err` is what to print before exiting 1.
    pub fn start(start: Start<'_>) -> Result<Upstreams, String> {
        let Start {
            manifest,
            config,
            mode,
            function,
            command,
            seed,
            bless,
        } = start;
        let folder = manifest.dir().join(recording::FOLDER);
        let names: Vec<String> = config.upstreams.iter().map(|u| u.name.clone()).collect();
        let recorded = if mode == Mode::Live {
            Vec::new()
        } else {
            recording::read_all(&folder, &names).map_err(|reports| render(&reports))?
        };
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
                        return Err(format!(
                            "upstream `{}`: `{}` is unset and `holon-test.toml` gives no `url`; `--upstream {}` calls the real service, so it needs one of them",
                            u.name,
                            u.env,
                            mode.name()
                        ));
                    }
                }
            }
        }
        let secret_names: Vec<String> = config
            .upstreams
            .iter()
            .flat_map(|u| u.secrets.iter().cloned())
            .collect();
        let mut listeners = Vec::new();
        let mut function_env = Vec::new();
        let mut server_env = Vec::new();
        for u in &config.upstreams {
            for side in [Side::Function, Side::Server] {
                let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
                    .and_then(|l| l.set_nonblocking(true).map(|()| l))
                    .map_err(|e| {
                        format!("cannot listen on 127.0.0.1 for upstream `{}`: {e}", u.name)
                    })?;
                let port = listener.local_addr().map_err(|e| e.to_string())?.port();
                let url = format!("http://127.0.0.1:{port}");
                match side {
                    Side::Function => function_env.push((u.env.clone(), url)),
                    Side::Server => server_env.push((u.env.clone(), url)),
                }
                listeners.push((side, u.name.clone(), listener));
            }
        }
        if mode == Mode::Replay {
            for name in &secret_names {
                if std::env::var_os(name).is_none_or(|v| v.is_empty()) {
                    function_env.push((name.clone(), PLACEHOLDER.into()));
                    server_env.push((name.clone(), PLACEHOLDER.into()));
                }
            }
        }
        let secrets = Secrets::from_env(&secret_names);
        if function {
            set_before_threads(&function_env)?;
        }
        crate::tls::install_provider();
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the client for the upstreams: {e}"))?;
        let shared = Arc::new(Shared {
            mode,
            secrets,
            real,
            recorded,
            fresh: Mutex::new(HashMap::new()),
            current: PerSide::new(|| Mutex::new(None)),
            requests: Mutex::new(HashMap::new()),
            outside: Mutex::new(Vec::new()),
            client,
            limit: manifest.runtime.limits.timeout() + Duration::from_secs(5),
            base: manifest.dir(),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("holon-upstream")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the upstreams' runtime: {e}"))?;
        for (side, name, listener) in listeners {
            runtime.spawn(proxy::serve(shared.clone(), side, name, listener));
        }
        Ok(Upstreams {
            mode,
            config,
            folder,
            shared,
            turns: PerSide::new(|| Arc::new(tokio::sync::Mutex::new(()))),
            runtime: Mutex::new(Some(runtime)),
            server_env,
            refresh: refresh_command(&command),
            calls: Mutex::new(0),
            seed,
            bless,
        })
    }

    /// Where the upstreams' answers come from in this run.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the example calls go one at a time, so that each upstream request is one
    /// call's (replay and record, and a live run that blesses).
    pub fn serial(&self) -> bool {
        self.mode != Mode::Live || self.bless
    }

    /// The variables the server process is started with.
    pub fn server_env(&self) -> &[(String, String)] {
        &self.server_env
    }

    /// The command that refreshes the recordings.
    pub fn refresh(&self) -> &str {
        &self.refresh
    }

    /// The exchanges recorded for example `name`, in order: each one's upstream, request, and
    /// how many times the call made that request before it (what a [`Plant`] names). `None`
    /// when the example has no recording.
    pub fn exchanges_of(&self, name: &str) -> Option<Vec<(String, Request, usize)>> {
        let scope = Scope::Example(name.to_string());
        let read = (self.shared.recorded.iter()).find(|r| r.recording.scope == scope)?;
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
        (self.shared.recorded.iter())
            .find(|r| r.recording.scope == Scope::Explore)
            .and_then(|r| r.recording.seed)
    }

    /// Makes `scope` the call in flight on `side`, once the call before it is done.
    pub async fn enter(&self, side: Side, scope: Scope) -> Entered {
        self.enter_with(side, scope, None).await
    }

    /// [`enter`](Self::enter), with `plant` failing one of the call's requests.
    pub async fn enter_with(&self, side: Side, scope: Scope, plant: Option<Plant>) -> Entered {
        let turn = self.turns.get(side).clone().lock_owned().await;
        let call = Arc::new(Call {
            scope,
            occurrences: Mutex::new(Vec::new()),
            misses: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            upstream_failures: Mutex::new(Vec::new()),
            plant,
            fired: AtomicBool::new(false),
            ended: Arc::new(tokio::sync::Notify::new()),
        });
        if let Ok(mut current) = self.shared.current.get(side).lock() {
            *current = Some(call.clone());
        }
        if let Ok(mut calls) = self.calls.lock() {
            *calls += 1;
        }
        Entered {
            call,
            side,
            shared: self.shared.clone(),
            _turn: turn,
        }
    }

    /// After the run: the recordings written (record), the stale ones named (replay), and a
    /// warning for an upstream no request reached. `examples` are the manifest's names.
    pub fn finish(&self, examples: &[String]) -> Result<(), String> {
        if let Some(runtime) = self.runtime.lock().ok().and_then(|mut r| r.take()) {
            runtime.shutdown_background();
        }
        let mut lines = Vec::new();
        for problem in self
            .shared
            .outside
            .lock()
            .map(|o| o.clone())
            .unwrap_or_default()
        {
            lines.push(format!("warning: outside any call: {problem}"));
        }
        let calls = self.calls.lock().map(|c| *c).unwrap_or(0);
        let counts = self
            .shared
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
                for read in &self.shared.recorded {
                    if let Scope::Example(name) = &read.recording.scope
                        && !examples.contains(name)
                    {
                        lines.push(format!(
                            "warning: `{}` records example `{name}`, which the manifest no longer has ({} removes it)",
                            read.path.display(),
                            self.refresh
                        ));
                    }
                }
                Ok(())
            }
            Mode::Live => Ok(()),
        };
        for line in lines {
            eprintln!("{line}");
        }
        result
    }

    /// Writes what a record run recorded, one file per scope that ran without an upstream
    /// failure, and removes the files of examples the manifest no longer has.
    fn write(&self, examples: &[String], lines: &mut Vec<String>) -> Result<(), String> {
        let existing: HashMap<Scope, PathBuf> = (self.shared.recorded.iter())
            .map(|r| (r.recording.scope.clone(), r.path.clone()))
            .collect();
        let failed: BTreeSet<Scope> = self.failed_scopes();
        let mut taken: BTreeSet<PathBuf> = existing.values().cloned().collect();
        let (mut files, mut exchanges) = (0, 0);
        let mut made = proxy::recorded(&self.shared);
        made.sort_by(|a, b| a.0.cmp(&b.0));
        for (scope, mut list) in made {
            if failed.contains(&scope) {
                continue;
            }
            if let Scope::Example(name) = &scope
                && !examples.contains(name)
            {
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
            let path = match existing.get(&scope) {
                Some(path) => path.clone(),
                None => {
                    let path = self.new_path(&scope, &taken);
                    taken.insert(path.clone());
                    path
                }
            };
            if list.is_empty() {
                if existing.contains_key(&scope) {
                    std::fs::remove_file(&path)
                        .map_err(|e| format!("cannot remove `{}`: {e}", path.display()))?;
                }
                continue;
            }
            exchanges += list.len();
            files += 1;
            let text = Recording {
                seed: (scope == Scope::Explore).then_some(self.seed),
                scope: scope.clone(),
                exchanges: list,
            }
            .to_text();
            write_file(&path, &text)?;
        }
        for read in &self.shared.recorded {
            if let Scope::Example(name) = &read.recording.scope
                && !examples.contains(name)
            {
                std::fs::remove_file(&read.path)
                    .map_err(|e| format!("cannot remove `{}`: {e}", read.path.display()))?;
                lines.push(format!(
                    "upstream: removed `{}`: the manifest no longer has example `{name}`",
                    read.path.display()
                ));
            }
        }
        lines.push(format!(
            "upstream: recorded {exchanges} exchange{} in {files} file{} in `{}`",
            if exchanges == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" },
            self.folder.display()
        ));
        Ok(())
    }

    fn failed_scopes(&self) -> BTreeSet<Scope> {
        let Ok(fresh) = self.shared.fresh.lock() else {
            return BTreeSet::new();
        };
        fresh
            .iter()
            .filter(|(_, slots)| {
                slots.iter().any(|s| match s.answer.get() {
                    Some(Ok(response)) => proxy::transient(response.status),
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

/// The reports of refused recordings, as `check` prints them.
fn render(reports: &[Report]) -> String {
    let color = crate::exit::color(None);
    let mut out = String::new();
    for report in reports {
        out.push_str(&check::render_human(report, color));
    }
    out.push_str("the recordings were not read, and nothing was written");
    out
}

/// The recordings folder can be written: it exists (or is made) and a file can be created in it.
fn writable(folder: &Path) -> Result<(), String> {
    let refuse = |e: std::io::Error| {
        format!(
            "`--upstream record` cannot write the recordings in `{}`: {e}",
            folder.display()
        )
    };
    std::fs::create_dir_all(folder).map_err(refuse)?;
    let probe = folder.join(".holon-write-probe");
    std::fs::write(&probe, b"").map_err(refuse)?;
    std::fs::remove_file(&probe).map_err(refuse)
}

/// Writes `text` to `path` through a temporary file renamed over it.
fn write_file(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// `cargo holon-test --upstream record ...`: the mode right after the command's name, so the
/// line reads the same for a Rust agent and for `--server-cmd`.
fn refresh_command(command: &str) -> String {
    match command.strip_prefix("cargo holon-test") {
        Some(rest) => format!("cargo holon-test --upstream record{rest}"),
        None => format!("{command} --upstream record"),
    }
}

/// Sets the function pass's variables in this process. Sound only while no other thread runs
/// (another thread reading the environment at that moment is undefined behaviour), so on Linux
/// the harness first makes sure it is alone.
fn set_before_threads(vars: &[(String, String)]) -> Result<(), String> {
    if vars.is_empty() {
        return Ok(());
    }
    if let Some(threads) = threads()
        && threads > 1
    {
        let names: Vec<String> = vars.iter().map(|(k, _)| format!("`{k}`")).collect();
        return Err(format!(
            "the function pass reads {} from this process's environment, which the harness can set only while no other thread runs ({threads} are running): start `Harness::run` first thing in `main`",
            names.join(", ")
        ));
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
    fn the_refresh_command_names_the_mode_first() {
        assert_eq!(
            refresh_command("cargo holon-test"),
            "cargo holon-test --upstream record"
        );
        assert_eq!(
            refresh_command("cargo holon-test --manifest holon.yaml --server-cmd 'python3 a.py'"),
            "cargo holon-test --upstream record --manifest holon.yaml --server-cmd 'python3 a.py'"
        );
    }

    #[test]
    fn modes_parse() {
        assert_eq!(parse_mode("record"), Ok(Mode::Record));
        assert!(parse_mode("recrod").unwrap_err().contains("`recrod`"));
    }
}

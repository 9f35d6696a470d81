//! The MCP pass: one server process shared by the trials of this process, `tools/list`, then
//! every example through `tools/call`, up to N calls in flight at once (see `flight`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::flight::{Crowded, Retries, Slots};
use super::process::{ServerProcess, ServerSpec};
use super::record::Fault;
use super::remote::Remote;
use super::verdict;
use crate::bless::{Collector, Pass};
use crate::context::Run;
use crate::explore::Reply;
use crate::upstream::fault::{Faulted, Plant};
use crate::upstream::{Entered, Mode, Scope, Side, Trouble, Upstreams};
use holon_core::gateway::{Answer, Status};
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Expect, Manifest};

type Client = RunningService<RoleClient, ()>;

/// Where the MCP pass finds its server.
#[derive(Debug, Clone)]
pub enum Target {
    /// Start it: a binary or a command, on a free port.
    Start(ServerSpec),
    /// One already running at an address: nothing is started or stopped.
    Running(Arc<Remote>),
}

/// Extra time given to a call past `timeout_s`, so the server's own `timeout` answer arrives
/// before the harness gives up on it: on loopback it takes milliseconds. (It was 2 s; every
/// second of it is paid twice by a server that hangs, in the crowd and alone.)
const CALL_GRACE: Duration = Duration::from_secs(1);

/// Everything the MCP trials of one process share, started by the first of them.
pub struct Shared {
    manifest: Arc<Manifest>,
    target: Target,
    startup: Duration,
    concurrency: usize,
    /// The examples whose trials run, in trial order: the calls the flight makes.
    selected: OnceLock<Vec<usize>>,
    /// Whether the `tools/list` trial runs.
    list_tools: OnceLock<bool>,
    tools: Slots<Result<Vec<Tool>, String>>,
    state: OnceLock<Result<Live, String>>,
    flight: OnceLock<()>,
    answers: Slots<Result<Answer, String>>,
    retries: Retries,
    /// Held by a call tried again alone: the retries of the examples and explore's go one at
    /// a time.
    retrying: tokio::sync::Mutex<()>,
    /// A call tried alone got no answer in time: the server does not answer.
    silent: AtomicBool,
    /// The server answered a `tools/call` (in time, with anything).
    answered: AtomicBool,
    bless: Option<Arc<Collector>>,
    /// The server's variables, beside `PORT` and `HOST`.
    env: Vec<(String, String)>,
    /// The upstreams the server is pointed at: none for a server already running.
    upstreams: Option<Arc<Upstreams>>,
    /// Whether the answers come from real upstreams, which vary (live mode, or a server
    /// already running with upstreams declared): a difference from an example is then a note.
    live_upstreams: bool,
    /// The first failure of a real upstream each example's call saw (live), for `--bless`.
    upstream_failures: Mutex<HashMap<usize, String>>,
}

struct Live {
    runtime: tokio::runtime::Runtime,
    /// The process the pass started; none for a server already running.
    server: Option<Arc<ServerProcess>>,
    client: Client,
    files: super::files::FileServer,
    /// For a server already running: whether it serves the manifest under test (a note when
    /// it cannot tell, an error when it serves another).
    identity: Result<Option<String>, String>,
}

impl Shared {
    /// Nothing starts until a trial asks for the server; then every selected example's call
    /// goes out, `concurrency` at a time.
    pub fn new(run: &Run, target: Target, env: Vec<(String, String)>) -> Shared {
        let manifest = run.manifest.clone();
        let answers = Slots::new(manifest.examples.len());
        // A server already running calls its own upstreams, the real ones: nothing here can
        // replay into it, so its answers are judged as a live run's are.
        let running = matches!(target, Target::Running(_));
        let upstreams = if running { None } else { run.upstreams.clone() };
        let live_upstreams = match &run.upstreams {
            Some(u) => running || u.mode() == Mode::Live,
            None => false,
        };
        // With recorded upstreams, one call at a time: each upstream request is one call's.
        let serial = upstreams.as_ref().is_some_and(|u| u.serial());
        Shared {
            manifest,
            target,
            startup: run.settings.startup,
            concurrency: if serial {
                1
            } else {
                run.settings.concurrency.max(1)
            },
            selected: OnceLock::new(),
            list_tools: OnceLock::new(),
            tools: Slots::new(1),
            state: OnceLock::new(),
            flight: OnceLock::new(),
            answers,
            retries: Retries::default(),
            retrying: tokio::sync::Mutex::new(()),
            silent: AtomicBool::new(false),
            answered: AtomicBool::new(false),
            bless: run.bless.clone(),
            env,
            upstreams,
            live_upstreams,
            upstream_failures: Mutex::new(HashMap::new()),
        }
    }

    /// What the trials that will run need (libtest's filters applied): `tools/list` or not,
    /// and the examples' calls, in trial order. By default, everything.
    pub fn select(&self, list_tools: bool, examples: Vec<usize>) {
        let _ = self.list_tools.set(list_tools);
        let _ = self.selected.set(examples);
    }

    /// Whether the server was already running (`--url`, `HOLON_SERVER_URL`): none started.
    pub fn running(&self) -> bool {
        matches!(self.target, Target::Running(_))
    }

    /// The note on calls retried alone, for the end of the run.
    pub fn retry_note(&self) -> Option<String> {
        self.retries.note("the server", self.concurrency)
    }

    /// Why a trial should send no more calls: the server answered none of the run's calls in
    /// time, and one tried alone got no answer either. Each call would wait `timeout_s` (and
    /// the grace) for nothing.
    pub fn unanswering(&self) -> Option<String> {
        (self.silent.load(Ordering::SeqCst) && !self.answered.load(Ordering::SeqCst)).then(|| {
            format!(
                "the server answered none of this run's calls within `runtime.limits.timeout_s` ({} s), and a call tried alone got no answer either\ngateway status: {}",
                self.manifest.runtime.limits.timeout_s,
                Status::Timeout
            )
        })
    }

    fn live(&self) -> Result<&Live, String> {
        self.state
            .get_or_init(|| self.start())
            .as_ref()
            .map_err(Clone::clone)
    }

    fn start(&self) -> Result<Live, String> {
        // The trial's own thread drives the client (rmcp's tasks, reqwest, the socket), so a
        // call crosses no thread on this side: each crossing is a wake-up, the slowest part
        // of a call on a busy machine.
        let runtime = super::flight::current_thread()?;
        // Before the server exists: a Ctrl-C while it starts must stop it too, and a server
        // started by a shell (`npm start`) is not the shell, so its death signal alone is not
        // enough.
        super::process::stop_all_on_signal();
        let dir = self.manifest.dir();
        let spec = match &self.target {
            Target::Start(spec) => spec,
            Target::Running(remote) => {
                let client = remote.connect(&runtime, self.startup)?;
                let info = client.peer_info();
                let identity = super::remote::compare(
                    remote,
                    &self.manifest,
                    info.as_ref().and_then(|info| info.meta.as_ref()),
                );
                let files = runtime
                    .block_on(super::files::FileServer::start(dir.join("files")))
                    .map_err(|e| format!("cannot start the test file server: {e}"))?;
                return Ok(Live {
                    runtime,
                    server: None,
                    client,
                    files,
                    identity,
                });
            }
        };
        // The client that saw the server answer is the one the run keeps: a second client
        // would open a second connection, which a server may refuse.
        let first = std::cell::RefCell::new(None);
        let server = ServerProcess::start(spec, &dir, &self.env, self.startup, |port| {
            runtime.block_on(async {
                match tokio::time::timeout(Duration::from_secs(5), connect(port)).await {
                    Ok(Ok(client)) => {
                        first.replace(Some((port, client)));
                        true
                    }
                    _ => false,
                }
            })
        })
        .map_err(|e| format!("the server did not start: {}", e.message))?;
        let server = Arc::new(server);
        let files = runtime
            .block_on(super::files::FileServer::start(dir.join("files")))
            .map_err(|e| format!("cannot start the test file server: {e}"))?;
        let client = match first.into_inner() {
            Some((port, client)) if port == server.port => client,
            _ => runtime
                .block_on(async {
                    tokio::time::timeout(Duration::from_secs(10), connect(server.port)).await
                })
                .map_err(|_| "the MCP `initialize` timed out".to_string())?
                .map_err(|e| format!("the MCP `initialize` failed: {e}"))?,
        };
        Ok(Live {
            runtime,
            server: Some(server),
            client,
            files,
            identity: Ok(None),
        })
    }

    /// Connects before the trials run, for a server already running: whether it serves the
    /// manifest under test is then said before any trial's result. `Err` with why when it
    /// serves another (the `mcp::initialize` trial fails with it too), the note when it could
    /// not be compared.
    pub fn connect_first(&self) -> Result<Option<String>, String> {
        match self.live() {
            Ok(live) => live.identity.clone(),
            // The trials say why it could not be reached.
            Err(_) => Ok(None),
        }
    }

    /// The `mcp::initialize` trial of a server already running: it serves the manifest under
    /// test, or announces none.
    pub fn initialize(&self) -> Result<(), String> {
        self.live()?.identity.clone().map(|_| ())
    }

    /// Stops the server, if one was started; the report of a failed run shows its output.
    pub fn stop(&self) -> Option<String> {
        let live = self.state.get()?.as_ref().ok()?;
        let server = live.server.as_ref()?;
        if self.silent.load(Ordering::SeqCst) {
            server.hangs();
        }
        server.stop();
        Some(server.output.tail())
    }

    /// The `mcp::tools/list` trial: the flight lists the tools alone, before the calls.
    pub fn tools_list(self: &Arc<Self>) -> Result<(), String> {
        self.live()?;
        self.flight.get_or_init(|| self.launch());
        let tools = self
            .tools
            .take(0)
            .unwrap_or_else(|| Err("`tools/list` was not sent".to_string()))?;
        check_tools(&self.manifest, &tools)
    }

    async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        let live = self.live()?;
        let listed =
            tokio::time::timeout(Duration::from_secs(30), live.client.list_all_tools()).await;
        match listed {
            Err(_) => Err("`tools/list` got no answer within 30 s".to_string()),
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => {
                let what = format!("`tools/list` failed: {}", service_error(&e));
                Err(match exited(live).await {
                    Some(status) => format!(
                        "{}\ngateway status: {}",
                        exited_message(status, &what),
                        Status::RuntimeUnavailable
                    ),
                    None => format!("{what}\ngateway status: {}", Status::RuntimeUnavailable),
                })
            }
        }
    }

    /// The `mcp::<example>` trial for `examples[index]`: its call went out with the others
    /// when the first trial asked for the server; this waits for its answer and judges it.
    pub fn call(self: &Arc<Self>, index: usize) -> Result<(), Fault> {
        self.live()?;
        if self
            .selected
            .get()
            .is_some_and(|selected| !selected.contains(&index))
        {
            return Err(Fault::from(
                "this example's call was not made: its trial was filtered out".to_string(),
            ));
        }
        self.flight.get_or_init(|| self.launch());
        let got = self
            .answers
            .take(index)
            .unwrap_or_else(|| Err("this example's call was not made".to_string()))?;
        let example = (self.manifest.examples.get(index))
            .ok_or_else(|| Fault::from(format!("the manifest has no example {index}")))?;
        if let Some(bless) = &self.bless {
            let failure = (self.upstream_failures.lock().ok()).and_then(|mut f| f.remove(&index));
            bless.observe(
                Pass::Mcp,
                self.manifest.gateway(),
                example,
                &got,
                failure.as_deref(),
            );
        }
        verdict::judge_as(
            self.manifest.gateway(),
            example,
            got,
            self.live_upstreams,
            "mcp",
        )
    }

    /// One input through `tools/call` on the shared server, outside the example trials
    /// (explore's cases): what came back (unreachable when the server is gone, or never
    /// started).
    pub fn answer(&self, input: &Value) -> Reply {
        let live = match self.live() {
            Ok(live) => live,
            Err(why) => return Reply::Answer(Answer::Unreachable(why)),
        };
        live.runtime.block_on(async {
            let entered = match &self.upstreams {
                Some(u) => Some(u.enter(Side::Server, Scope::Explore).await),
                None => None,
            };
            let answer = self.send(input).await.0;
            self.reply(entered.as_ref(), answer)
        })
    }

    /// What an explore case came back with, its upstreams considered.
    /// Example `scope`'s input through the server with `plant` failing one of its upstream
    /// requests: a fault trial's call.
    pub fn faulted(&self, input: &Value, scope: Scope, plant: Plant) -> Faulted {
        let unplayed = |answer| Faulted {
            answer,
            played: false,
            misses: Vec::new(),
        };
        let live = match self.live() {
            Ok(live) => live,
            Err(why) => return unplayed(Answer::Unreachable(why)),
        };
        let Some(upstreams) = &self.upstreams else {
            return unplayed(Answer::Unreachable("no upstream is declared".into()));
        };
        live.runtime.block_on(async {
            let entered = upstreams.enter_with(Side::Server, scope, Some(plant)).await;
            let answer = self.send(input).await.0;
            entered.faulted(answer)
        })
    }

    fn reply(&self, entered: Option<&Entered>, answer: Answer) -> Reply {
        let trouble = match (entered, &self.upstreams) {
            (Some(entered), Some(u)) => entered.trouble(u.refresh()),
            _ => None,
        };
        match trouble {
            None => Reply::Answer(answer),
            Some(Trouble::Unrecorded(_)) => Reply::Unrecorded,
            Some(Trouble::Upstream(why)) => Reply::Upstream(why),
        }
    }

    /// Several inputs through `tools/call` at once, in flight together: the answers in the
    /// inputs' order. A call that gets no answer in time, or cannot connect, among others is
    /// tried again alone, as in the examples' flight.
    pub fn answer_all(self: &Arc<Self>, inputs: &[Value]) -> Vec<Reply> {
        let live = match self.live() {
            Ok(live) => live,
            Err(e) => {
                return inputs
                    .iter()
                    .map(|_| Reply::Answer(Answer::Unreachable(e.clone())))
                    .collect();
            }
        };
        live.runtime.block_on(async {
            // The batch is one turn on the upstreams: in record mode its requests are explore's.
            let entered = match &self.upstreams {
                Some(u) => Some(u.enter(Side::Server, Scope::Explore).await),
                None => None,
            };
            let answers = self.answer_together(inputs).await;
            (answers.into_iter())
                .map(|a| self.reply(entered.as_ref(), a))
                .collect()
        })
    }

    async fn answer_together(self: &Arc<Self>, inputs: &[Value]) -> Vec<Answer> {
        {
            let mut calls = tokio::task::JoinSet::new();
            for (i, input) in inputs.iter().cloned().enumerate() {
                let me = self.clone();
                calls.spawn(async move { (i, me.send(&input).await) });
            }
            let mut answers: Vec<Option<Answer>> = vec![None; inputs.len()];
            let mut again = Vec::new();
            while let Some(joined) = calls.join_next().await {
                match joined {
                    Ok((i, (_, Some(why)))) if inputs.len() > 1 => again.push((i, why)),
                    Ok((i, (answer, _))) => {
                        if let Some(slot) = answers.get_mut(i) {
                            *slot = Some(answer);
                        }
                    }
                    Err(e) => {
                        let why = format!("the call's task failed: {e}");
                        return inputs
                            .iter()
                            .map(|_| Answer::Unreachable(why.clone()))
                            .collect();
                    }
                }
            }
            again.sort_unstable_by_key(|(i, _)| *i);
            for (i, why) in again {
                let (Some(input), Some(slot)) = (inputs.get(i), answers.get_mut(i)) else {
                    continue;
                };
                let attempt = async {
                    let (answer, failed) = self.send(input).await;
                    (Ok(answer), failed)
                };
                *slot = Some(match self.again(why, attempt).await {
                    Ok(answer) => answer,
                    Err(why) => Answer::Unreachable(why),
                });
            }
            answers
                .into_iter()
                .map(|a| a.unwrap_or_else(|| Answer::Unreachable("the call gave no answer".into())))
                .collect()
        }
    }

    /// The flight runs on a thread of its own, which drives the client's runtime while the
    /// trials wait for their answers.
    fn launch(self: &Arc<Self>) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("holon-mcp-flight".into())
            .spawn(move || {
                // A panic here (a bug of the harness or the MCP client) must not leave the
                // trials waiting for answers: it is on stderr, and each trial fails.
                let failed =
                    "the call was not made: the harness's calls failed (see the panic above)";
                let _tools = me.tools.on_panic(|_| Err(failed.to_string()));
                let _answers = me.answers.on_panic(|_| Err(failed.to_string()));
                if let Ok(live) = me.live() {
                    live.runtime.block_on(me.clone().fly());
                }
                let why = "the call was not made: the run ended first";
                me.tools.close(|_| Err(why.to_string()));
                me.answers.close(|_| Err(why.to_string()));
            });
        if let Err(e) = spawned {
            let why = format!("cannot start a thread for the calls: {e}");
            self.tools.close(|_| Err(why.clone()));
            self.answers.close(|_| Err(why.clone()));
        }
    }

    /// Every selected call, up to `concurrency` in flight. A call that gets no answer in time,
    /// or cannot reach the server, while others are in flight is tried again alone once the
    /// rest are done: a server that takes one call at a time must not turn into false
    /// failures. After the first such call, the rest go out one at a time.
    async fn fly(self: Arc<Self>) {
        if self.list_tools.get().copied().unwrap_or(true) {
            let tools = self.list_tools().await;
            self.tools.put(0, tools);
        }
        let all: Vec<usize> = (0..self.manifest.examples.len()).collect();
        let order = self.selected.get().unwrap_or(&all).clone();
        let n = self.concurrency;
        let permits = Arc::new(tokio::sync::Semaphore::new(n));
        let alone = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(AtomicUsize::new(0));
        let mut calls = tokio::task::JoinSet::new();
        for index in order {
            let wanted = if alone.load(Ordering::Relaxed) { n } else { 1 };
            let Ok(permit) = permits.clone().acquire_many_owned(wanted as u32).await else {
                break;
            };
            let (me, alone) = (self.clone(), alone.clone());
            let (in_flight, started) = (in_flight.clone(), started.clone());
            calls.spawn(async move {
                let others = in_flight.fetch_add(1, Ordering::SeqCst);
                let mine = started.fetch_add(1, Ordering::SeqCst);
                let (answer, failed) = me.call_once(index).await;
                // Another call was in flight at some moment of this one: at its start, or it
                // started later (a call that started alone may have waited on those).
                let crowded = others > 0 || started.load(Ordering::SeqCst) > mine + 1;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                drop(permit);
                if let Some(why) = failed.filter(|_| crowded) {
                    alone.store(true, Ordering::Relaxed);
                    return Some((index, why));
                }
                me.answers.put(index, answer);
                None
            });
        }
        let mut again = Vec::new();
        while let Some(joined) = calls.join_next().await {
            if let Ok(Some(call)) = joined {
                again.push(call);
            }
        }
        again.sort_unstable_by_key(|(index, _)| *index);
        for (index, why) in again {
            let answer = self.again(why, self.call_once(index)).await;
            self.answers.put(index, answer);
        }
    }

    /// A call that failed among others (`why`), tried again alone, one retry at a time across
    /// the run. Once a call tried alone got no answer in time, the server has shown that it
    /// does not answer: a call that timed out among others is then reported as it failed,
    /// rather than waiting `timeout_s` again (a server that hangs on every call would
    /// otherwise cost that for each call in turn).
    async fn again(
        &self,
        why: Crowded,
        attempt: impl Future<Output = (Result<Answer, String>, Option<Crowded>)>,
    ) -> Result<Answer, String> {
        let _alone = self.retrying.lock().await;
        if why == Crowded::TimedOut && self.silent.load(Ordering::SeqCst) {
            self.retries.not_retried();
            return Ok(Answer::HungNotRetried(
                self.manifest.runtime.limits.timeout_s,
            ));
        }
        let (answer, failed) = attempt.await;
        self.retries.record(why, failed.is_none());
        answer.map(|answer| match answer {
            Answer::Hung(limit) => {
                self.silent.store(true, Ordering::SeqCst);
                Answer::HungAlone(limit)
            }
            other => other,
        })
    }

    /// One `tools/call`, and how it failed when the crowd may be the cause (no answer in time,
    /// no connection), so that alone it could go through.
    /// `Err` when the call's upstream requests went wrong on the harness's side (no
    /// recording, the real service unreachable while recording).
    async fn call_once(&self, index: usize) -> (Result<Answer, String>, Option<Crowded>) {
        let Some(example) = self.manifest.examples.get(index) else {
            let why = format!("the manifest has no example {index}");
            return (Ok(Answer::Unreachable(why)), None);
        };
        let Some(upstreams) = &self.upstreams else {
            let (answer, failed) = self.send(&example.input).await;
            return (Ok(answer), failed);
        };
        let entered = upstreams
            .enter(Side::Server, Scope::Example(example.name.clone()))
            .await;
        let (answer, failed) = self.send(&example.input).await;
        if let Some(why) = entered.upstream_failure()
            && let Ok(mut failures) = self.upstream_failures.lock()
        {
            failures.insert(index, why);
        }
        match entered.trouble(upstreams.refresh()) {
            Some(Trouble::Unrecorded(why) | Trouble::Upstream(why)) => (Err(why), None),
            None => (Ok(answer), failed),
        }
    }

    /// One `tools/call` with `input` as its arguments.
    async fn send(&self, input: &Value) -> (Answer, Option<Crowded>) {
        let live = match self.live() {
            Ok(live) => live,
            Err(why) => return (Answer::Unreachable(why), None),
        };
        if let Some(status) = live.server.as_ref().and_then(|s| s.exit_status()) {
            return (
                Answer::Unreachable(format!("the server exited earlier in the run ({status})")),
                None,
            );
        }
        let arguments = match input {
            Value::Object(map) => map.clone(),
            other => {
                return (
                    Answer::Unreachable(format!(
                        "the call was not sent: the input is {}, but MCP arguments are an object",
                        holon_core::message::type_of(other)
                    )),
                    None,
                );
            }
        };
        let limit = self.manifest.runtime.limits.timeout() + CALL_GRACE;
        let mut params = CallToolRequestParams::new(self.manifest.runtime.tool.clone())
            .with_arguments(arguments);
        // File handles reach the server as signed links in `_meta`, as the gateway sends them.
        match live.files.meta_for(input) {
            Ok(Some(meta)) => params.meta = Some(rmcp::model::RequestMetaObject::from(meta)),
            Ok(None) => {}
            Err(e) => {
                return (
                    Answer::Unreachable(format!("the call was not sent: {e}")),
                    None,
                );
            }
        }
        // `timeout_s` counts from when the call is sent. A call given up on is dropped, and
        // rmcp cancels a dropped call with `notifications/cancelled`, as MCP specifies.
        let called = tokio::time::timeout(limit, live.client.call_tool(params)).await;
        if let Ok(Ok(_) | Err(ServiceError::McpError(_))) = &called {
            self.answered.store(true, Ordering::SeqCst);
        }
        match called {
            Err(_) => (
                Answer::Hung(self.manifest.runtime.limits.timeout_s),
                Some(Crowded::TimedOut),
            ),
            Ok(Ok(result)) => (from_result(result), None),
            Ok(Err(ServiceError::McpError(e))) => (
                Answer::RpcError {
                    code: e.code.0,
                    message: e.message.to_string(),
                },
                None,
            ),
            // An HTTP error status is the server's answer, not a flake to hide.
            Ok(Err(e)) => match http_status(&e) {
                Some(answer) => {
                    self.answered.store(true, Ordering::SeqCst);
                    (answer, None)
                }
                None => {
                    let what = format!("the call failed: {}", service_error(&e));
                    match exited(live).await {
                        Some(status) => (Answer::Unreachable(exited_message(status, &what)), None),
                        None => (Answer::Unreachable(what), Some(Crowded::Refused)),
                    }
                }
            },
        }
    }
}

/// How long a dropped connection is given for the server's exit to show.
const EXIT_SHOWS: Duration = Duration::from_millis(500);

/// The server's exit status, when it exits within a moment: the connection drops a moment
/// before the process can be reaped, and the message should name the cause rather than the
/// client's error. Waited for off the flight's runtime, which must not block.
async fn exited(live: &Live) -> Option<std::process::ExitStatus> {
    let server = live.server.clone()?;
    tokio::task::spawn_blocking(move || server.wait_exit(EXIT_SHOWS))
        .await
        .ok()
        .flatten()
}

fn exited_message(status: std::process::ExitStatus, what: &str) -> String {
    format!("the server exited ({status}) before it answered; {what}")
}

/// The answer of a call the server answered with an HTTP error status (413, 429, 5xx...), with
/// the status's reason phrase and the start of its body. rmcp keeps the status of a 429 and a
/// 5xx (no body) as `HttpStatusError`; any other error status it reports only in words,
/// `HTTP 413 Payload Too Large: <body>`, which is read back here.
fn http_status(error: &ServiceError) -> Option<Answer> {
    use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};
    let with_status = |status: u16| Answer::HttpStatus {
        status,
        reason: reason_of(status),
        body: String::new(),
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        match current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::HttpStatus(e)) => return Some(with_status(e.status)),
            Some(StreamableHttpError::UnexpectedServerResponse(text)) => {
                if let Some(answer) = http_answer(text) {
                    return Some(answer);
                }
            }
            _ => {}
        }
        if let Some(e) = current.downcast_ref::<HttpStatusError>() {
            return Some(with_status(e.status));
        }
        source = current.source();
    }
    None
}

/// `HTTP 413 Payload Too Large: <body>`, as rmcp words an error status it kept no type for.
fn http_answer(text: &str) -> Option<Answer> {
    let rest = text.strip_prefix("HTTP ")?;
    let digits = rest
        .get(..3)
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
    let status: u16 = digits.parse().ok()?;
    let after = rest.get(3..).unwrap_or_default();
    let (phrase, body) = after.split_once(": ").unwrap_or((after, ""));
    let phrase = phrase.trim();
    let reason = if phrase.is_empty() || phrase.starts_with('<') {
        reason_of(status)
    } else {
        phrase.to_string()
    };
    Some(Answer::HttpStatus {
        status,
        reason,
        body: excerpt(body),
    })
}

/// The reason phrase HTTP gives a status (`Too Many Requests`), or nothing for one it names not.
fn reason_of(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or_default()
        .to_string()
}

/// Longest body excerpt kept in an answer.
const EXCERPT: usize = 120;

/// The first line of text of a body, an HTML page's included (its tags and head dropped, a few
/// entities decoded), cut at [`EXCERPT`] characters: what a report can quote of an error page.
fn excerpt(body: &str) -> String {
    let body = match (body.find("<head"), body.find("</head>")) {
        (Some(from), Some(to)) if from < to => {
            format!(
                "{}{}",
                body.get(..from).unwrap_or_default(),
                body.get(to..).unwrap_or_default()
            )
        }
        _ => body.to_string(),
    };
    let mut text = String::with_capacity(body.len());
    let mut rest = body.as_str();
    while let Some(open) = rest.find('<') {
        text.push_str(rest.get(..open).unwrap_or_default());
        let tag = rest.get(open..).unwrap_or_default();
        let close = tag.find('>').map_or(tag.len(), |c| c + 1);
        let name = tag
            .get(1..close)
            .unwrap_or_default()
            .trim_start_matches('/');
        let block = [
            "br", "p", "div", "pre", "h1", "h2", "h3", "li", "tr", "title", "body",
        ];
        if block
            .iter()
            .any(|b| name.to_ascii_lowercase().starts_with(b))
        {
            text.push('\n');
        }
        rest = tag.get(close..).unwrap_or_default();
    }
    text.push_str(rest);
    let text = [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text, |t, (entity, c)| t.replace(entity, c));
    let line = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    if line.chars().count() > EXCERPT {
        let cut: String = line.chars().take(EXCERPT - 3).collect();
        format!("{cut}...")
    } else {
        line
    }
}

/// What went wrong with a request, in words: rmcp's own texts name its Rust types (`Transport
/// [rmcp::transport::worker::WorkerTransport<...>] error`), which a report must not show.
fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => format!("a JSON-RPC error ({}: {})", e.code.0, e.message),
        ServiceError::TransportSend(e) => chain(&*e.error),
        ServiceError::TransportClosed => "the connection to the server is closed".to_string(),
        ServiceError::UnexpectedResponse => {
            "the server answered with something other than the request's result".to_string()
        }
        other => chain(other),
    }
}

/// Why `initialize` failed, in words (see [`service_error`]).
fn init_error(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::TransportError { error, context } => format!("{} (to {context})", chain(&*error.error)),
        E::ExpectedInitResponse(_) | E::ExpectedInitResult(_) => {
            "the server answered `initialize` with something other than its result".to_string()
        }
        E::JsonRpcError(e) => format!(
            "the server answered `initialize` with a JSON-RPC error ({}: {})",
            e.code.0, e.message
        ),
        other => chain(other),
    }
}

/// An error and its sources, in one line, each said once and in words: the HTTP client's
/// error is followed to its cause (a refused connection), and an rmcp text that names a Rust
/// type is left out for its source.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(e) = current {
        current = e.source();
        let text = match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            // Its own text is only the client's, whose sources it does not give.
            Some(StreamableHttpError::Client(client)) => {
                current = Some(client);
                continue;
            }
            Some(StreamableHttpError::UnexpectedContentType(kind)) => format!(
                "the server answered with content type `{}`, neither JSON nor an event stream",
                kind.as_deref().unwrap_or("none")
            ),
            _ => e.to_string(),
        };
        if text.contains("rmcp::") || parts.last().is_some_and(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    match parts.join(": ") {
        joined if joined.is_empty() => "the MCP client failed".to_string(),
        joined => joined,
    }
}

async fn connect(port: u16) -> Result<Client, String> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"));
    ().serve(StreamableHttpClientTransport::with_client(
        http_client()?,
        config,
    ))
    .await
    .map_err(|e| init_error(&e))
}

/// rmcp's default client opens a connection for every request (it turns pooling off against a
/// delayed-ACK stall that `TCP_NODELAY` avoids), which on loopback costs more than the server's
/// own work: this one keeps the connection while it is in use (`remote::IDLE_REUSE`). It never
/// goes through a proxy (the server is on loopback, whatever `HTTP_PROXY` says) and follows no
/// redirect.
fn http_client() -> Result<reqwest::Client, String> {
    super::remote::http_client(super::remote::IDLE_REUSE)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

fn from_result(result: CallToolResult) -> Answer {
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    if result.is_error == Some(true) {
        let code = result
            .structured_content
            .as_ref()
            .and_then(|s| s.pointer("/error/code"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let message = result
            .structured_content
            .as_ref()
            .and_then(|s| s.pointer("/error/message"))
            .and_then(Value::as_str)
            .map(str::to_string);
        return Answer::Failed {
            code,
            message: message
                .or_else(|| text.first().cloned())
                .unwrap_or_default(),
        };
    }
    match result.structured_content {
        Some(value) => Answer::Output(value),
        None => Answer::TextOnly(text.join("\n")),
    }
}

/// Exactly one tool, named `runtime.tool`, with the manifest's input schema, and an output
/// schema (when there is one) that every example's answer validates against.
pub fn check_tools(manifest: &Manifest, tools: &[Tool]) -> Result<(), String> {
    let want = &manifest.runtime.tool;
    let names: Vec<String> = tools.iter().map(|t| format!("`{}`", t.name)).collect();
    let tool = match tools {
        [] => {
            return Err(format!(
                "the server lists no tool; it must list exactly one, `{want}`"
            ));
        }
        [tool] => tool,
        _ => {
            return Err(format!(
                "the server lists {} tools ({}); a Holon agent exposes exactly one, `{want}`",
                tools.len(),
                names.join(", ")
            ));
        }
    };
    if tool.name != *want {
        return Err(format!(
            "the server's tool is named `{}`, but `runtime.tool` in the manifest is `{want}`; the gateway calls `{want}`",
            tool.name
        ));
    }
    let input = Value::Object((*tool.input_schema).clone());
    if !json_eq(&input, &manifest.interface.input) {
        return Err(format!(
            "the tool's `inputSchema` differs from `interface.input`; callers build calls from it\n{}",
            super::compare::diff(&manifest.interface.input, &input)
        ));
    }
    if let Some(schema) = &tool.output_schema {
        let schema = Value::Object((**schema).clone());
        let validator = holon_core::gateway::schema::compile(&schema)
            .map_err(|e| format!("the tool's `outputSchema` does not compile: {e}"))?;
        let mut problems = Vec::new();
        for example in &manifest.examples {
            let answer = match &example.expect {
                Expect::Output(o) => o.clone(),
                Expect::Error(code) => serde_json::json!({"error": {"code": code, "message": ""}}),
            };
            for v in holon_core::gateway::schema::violations(&validator, &answer) {
                problems.push(format!(
                    "  example `{}`: `{}`: {}",
                    example.name,
                    v.at(),
                    v.message
                ));
            }
        }
        if !problems.is_empty() {
            return Err(format!(
                "the tool's `outputSchema` refuses answers the examples promise; strict MCP clients (the TypeScript SDK) will reject them, failures included:\n{}",
                problems.join("\n")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    /// A send error as rmcp's worker reports it, named by the worker's Rust type.
    fn sent(error: StreamableHttpError<reqwest::Error>) -> ServiceError {
        ServiceError::TransportSend(DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>",
            std::any::TypeId::of::<()>(),
            Box::new(error),
        ))
    }

    #[test]
    fn an_error_status_in_words_is_read_back_with_a_line_of_its_page() {
        // express's page for a body past its limit, as rmcp words the status it kept no type for.
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>PayloadTooLargeError: request entity too large<br> &nbsp; &nbsp;at readStream (/app/node_modules/raw-body/index.js:163:17)</pre>\n</body>\n</html>\n";
        let error = sent(StreamableHttpError::UnexpectedServerResponse(
            format!("HTTP 413 Payload Too Large: {page}").into(),
        ));
        let Some(Answer::HttpStatus {
            status,
            reason,
            body,
        }) = http_status(&error)
        else {
            panic!("not read as an HTTP status")
        };
        assert_eq!((status, reason.as_str()), (413, "Payload Too Large"));
        assert_eq!(body, "PayloadTooLargeError: request entity too large");
        // A status HTTP has no phrase for, a body that is plain text, and a long one.
        let Some(Answer::HttpStatus { reason, body, .. }) =
            http_answer("HTTP 499 <unknown status code>: upstream went away")
        else {
            panic!("not read as an HTTP status")
        };
        assert_eq!((reason.as_str(), body.as_str()), ("", "upstream went away"));
        let long = excerpt(&"x".repeat(500));
        assert_eq!(long.chars().count(), EXCERPT);
        assert!(long.ends_with("..."));
        // Not a status at all.
        assert!(http_answer("unexpected end of stream").is_none());
        assert!(http_answer("HTTP 4xx: no").is_none());
    }

    #[test]
    fn a_transport_error_is_said_without_rust_type_names() {
        let ended = sent(StreamableHttpError::UnexpectedEndOfStream);
        // rmcp's own words name the worker's type.
        assert!(ended.to_string().contains("WorkerTransport<"), "{ended}");
        for (error, said) in [
            (ended, "unexpected end of stream"),
            (
                sent(StreamableHttpError::UnexpectedContentType(Some(
                    "text/html".into(),
                ))),
                "the server answered with content type `text/html`, neither JSON nor an event stream",
            ),
            (
                ServiceError::TransportClosed,
                "the connection to the server is closed",
            ),
        ] {
            assert_eq!(service_error(&error), said);
        }
    }
}

//! The MCP pass: one server process shared by the trials of this process, `tools/list`, then
//! every example through `tools/call`, up to N calls in flight at once (see `flight`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::flight::{Crowded, Retries, Slots};
use super::process::{ServerProcess, ServerSpec};
use super::remote::Remote;
use super::verdict;
use crate::bless::{Collector, Pass};
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
/// before the harness gives up on it.
const CALL_GRACE: Duration = Duration::from_secs(2);

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
    bless: Option<Arc<Collector>>,
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
    pub fn new(
        manifest: Arc<Manifest>,
        target: Target,
        startup: Duration,
        concurrency: usize,
        bless: Option<Arc<Collector>>,
    ) -> Shared {
        let answers = Slots::new(manifest.examples.len());
        Shared {
            manifest,
            target,
            startup,
            concurrency: concurrency.max(1),
            selected: OnceLock::new(),
            list_tools: OnceLock::new(),
            tools: Slots::new(1),
            state: OnceLock::new(),
            flight: OnceLock::new(),
            answers,
            retries: Retries::default(),
            bless,
        }
    }

    /// What the trials that will run need (libtest's filters applied): `tools/list` or not,
    /// and the examples' calls, in trial order. By default, everything.
    pub fn select(&self, list_tools: bool, examples: Vec<usize>) {
        let _ = self.list_tools.set(list_tools);
        let _ = self.selected.set(examples);
    }

    /// The note on calls retried alone, for the end of the run.
    pub fn retry_note(&self) -> Option<String> {
        self.retries.note("the server", self.concurrency)
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
        let server = ServerProcess::start(spec, &dir, self.startup, |port| {
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
                let what = format!("`tools/list` failed: {e}");
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
    pub fn call(self: &Arc<Self>, index: usize) -> Result<(), String> {
        self.live()?;
        if self
            .selected
            .get()
            .is_some_and(|selected| !selected.contains(&index))
        {
            return Err("this example's call was not made: its trial was filtered out".into());
        }
        self.flight.get_or_init(|| self.launch());
        let got = self
            .answers
            .take(index)
            .unwrap_or_else(|| Err("this example's call was not made".to_string()))?;
        let example = (self.manifest.examples.get(index))
            .ok_or_else(|| format!("the manifest has no example {index}"))?;
        if let Some(bless) = &self.bless {
            bless.observe(Pass::Mcp, self.manifest.gateway(), example, &got);
        }
        verdict::judge(self.manifest.gateway(), example, got)
    }

    /// One input through `tools/call` on the shared server, outside the example trials
    /// (explore's cases): what came back (unreachable when the server is gone, or never
    /// started).
    pub fn answer(&self, input: &Value) -> Answer {
        match self.live() {
            Ok(live) => live.runtime.block_on(self.send(input)).0,
            Err(why) => Answer::Unreachable(why),
        }
    }

    /// Several inputs through `tools/call` at once, in flight together: the answers in the
    /// inputs' order. A call that gets no answer in time, or cannot connect, among others is
    /// tried again alone, as in the examples' flight.
    pub fn answer_all(self: &Arc<Self>, inputs: &[Value]) -> Vec<Answer> {
        let live = match self.live() {
            Ok(live) => live,
            Err(e) => {
                return inputs
                    .iter()
                    .map(|_| Answer::Unreachable(e.clone()))
                    .collect();
            }
        };
        live.runtime.block_on(async {
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
                let (answer, failed) = self.send(input).await;
                self.retries.record(why, failed.is_none());
                *slot = Some(match answer {
                    Answer::Hung(limit) => Answer::HungAlone(limit),
                    other => other,
                });
            }
            answers
                .into_iter()
                .map(|a| a.unwrap_or_else(|| Answer::Unreachable("the call gave no answer".into())))
                .collect()
        })
    }

    /// The flight runs on a thread of its own, which drives the client's runtime while the
    /// trials wait for their answers.
    fn launch(self: &Arc<Self>) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("holon-mcp-flight".into())
            .spawn(move || {
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
        let mut calls = tokio::task::JoinSet::new();
        for index in order {
            let wanted = if alone.load(Ordering::Relaxed) { n } else { 1 };
            let Ok(permit) = permits.clone().acquire_many_owned(wanted as u32).await else {
                break;
            };
            let (me, alone, in_flight) = (self.clone(), alone.clone(), in_flight.clone());
            calls.spawn(async move {
                let others = in_flight.fetch_add(1, Ordering::SeqCst);
                let (answer, failed) = me.call_once(index).await;
                let crowded = others > 0 || in_flight.load(Ordering::SeqCst) > 1;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                drop(permit);
                if let Some(why) = failed.filter(|_| crowded) {
                    alone.store(true, Ordering::Relaxed);
                    return Some((index, why));
                }
                me.answers.put(index, Ok(answer));
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
            let (answer, failed) = self.call_once(index).await;
            self.retries.record(why, failed.is_none());
            let answer = match answer {
                Answer::Hung(limit) => Answer::HungAlone(limit),
                other => other,
            };
            self.answers.put(index, Ok(answer));
        }
    }

    /// One `tools/call`, and how it failed when the crowd may be the cause (no answer in time,
    /// no connection), so that alone it could go through.
    async fn call_once(&self, index: usize) -> (Answer, Option<Crowded>) {
        match self.manifest.examples.get(index) {
            Some(example) => self.send(&example.input).await,
            None => (
                Answer::Unreachable(format!("the manifest has no example {index}")),
                None,
            ),
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
        match tokio::time::timeout(limit, live.client.call_tool(params)).await {
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
                Some(status) => (Answer::HttpStatus(status), None),
                None => {
                    let what = format!("the call failed: {e}");
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

/// The HTTP status of a call the server answered with an error status (429, 5xx).
fn http_status(error: &ServiceError) -> Option<u16> {
    use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(StreamableHttpError::HttpStatus(e)) =
            current.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(e.status);
        }
        if let Some(e) = current.downcast_ref::<HttpStatusError>() {
            return Some(e.status);
        }
        source = current.source();
    }
    None
}

async fn connect(port: u16) -> Result<Client, String> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"));
    ().serve(StreamableHttpClientTransport::with_client(
        http_client()?,
        config,
    ))
    .await
    .map_err(|e| e.to_string())
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

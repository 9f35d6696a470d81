//! The MCP pass: one server process shared by the trials of this process, `tools/list`, then
//! every example through `tools/call`.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::compare::json_eq;
use super::process::{self, ServerProcess, ServerSpec};
use super::verdict::{self, Got};
use crate::gateway::Gateway;
use crate::manifest::{Example, Expect, Manifest};

type Client = RunningService<RoleClient, ()>;

/// Extra time given to a call past `timeout_s`, so the server's own `timeout` answer arrives
/// before the harness gives up on it.
const CALL_GRACE: Duration = Duration::from_secs(2);

/// Everything the MCP trials of one process share, started by the first of them.
pub struct Shared {
    manifest: Arc<Manifest>,
    gateway: Arc<Gateway>,
    spec: ServerSpec,
    startup: Duration,
    state: OnceLock<Result<Live, String>>,
}

struct Live {
    runtime: tokio::runtime::Runtime,
    server: Arc<ServerProcess>,
    client: Client,
    files: super::files::FileServer,
}

impl Shared {
    /// Nothing starts until a trial asks for the server.
    pub fn new(
        manifest: Arc<Manifest>,
        gateway: Arc<Gateway>,
        spec: ServerSpec,
        startup: Duration,
    ) -> Shared {
        Shared {
            manifest,
            gateway,
            spec,
            startup,
            state: OnceLock::new(),
        }
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
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
        // Before the server exists: a Ctrl-C while it starts must stop it too, and a server
        // started by a shell (`npm start`) is not the shell, so its death signal alone is not
        // enough.
        watch_signals();
        let dir = self.manifest.dir();
        let server = ServerProcess::start(&self.spec, &dir, self.startup, |port| {
            runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(5), connect(port))
                    .await
                    .is_ok_and(|c| c.is_ok())
            })
        })
        .map_err(|e| format!("the server did not start: {}", e.message))?;
        let server = Arc::new(server);
        let files = runtime
            .block_on(super::files::FileServer::start(dir.join("files")))
            .map_err(|e| format!("cannot start the test file server: {e}"))?;
        let client = runtime
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(10), connect(server.port)).await
            })
            .map_err(|_| "the MCP `initialize` timed out".to_string())?
            .map_err(|e| format!("the MCP `initialize` failed: {e}"))?;
        Ok(Live {
            runtime,
            server,
            client,
            files,
        })
    }

    /// Stops the server, if one was started; the report of a failed run shows its output.
    pub fn stop(&self) -> Option<String> {
        let live = self.state.get()?.as_ref().ok()?;
        live.server.stop();
        Some(live.server.output.tail())
    }

    /// The `mcp::tools/list` trial.
    pub fn tools_list(&self) -> Result<(), String> {
        let live = self.live()?;
        let tools = live
            .runtime
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(30), live.client.list_all_tools()).await
            })
            .map_err(|_| "`tools/list` got no answer within 30 s".to_string())?
            .map_err(|e| self.unreachable(live, &format!("`tools/list` failed: {e}")))?;
        check_tools(&self.manifest, &tools)
    }

    /// The `mcp::<example>` trial.
    pub fn call(&self, example: &Example) -> Result<(), String> {
        let got = self.answer(&example.input)?;
        let pass = crate::bless::Pass::Mcp;
        crate::bless::observe(pass, &self.manifest, &self.gateway, example, &got);
        verdict::judge(&self.manifest, &self.gateway, example, got)
    }

    /// One input through `tools/call` on the shared server: what came back, or why nothing
    /// could (the server is gone, or never started).
    pub fn answer(&self, input: &Value) -> Result<Got, String> {
        let live = self.live()?;
        if let Some(status) = live.server.exit_status() {
            return Err(format!(
                "the server exited earlier in the run ({status}); gateway status: runtime_unavailable"
            ));
        }
        let arguments = match input {
            Value::Object(map) => map.clone(),
            other => {
                return Err(format!(
                    "the input is {}, but MCP arguments are an object",
                    crate::gateway::schema::type_of(other)
                ));
            }
        };
        let limit = self.manifest.runtime.limits.timeout() + CALL_GRACE;
        let mut params = CallToolRequestParams::new(self.manifest.runtime.tool.clone())
            .with_arguments(arguments);
        // File handles reach the server as signed links in `_meta`, as the gateway sends them.
        if let Some(meta) = live.files.meta_for(input)? {
            params.meta = Some(rmcp::model::RequestMetaObject::from(meta));
        }
        let answer = live
            .runtime
            .block_on(async { tokio::time::timeout(limit, live.client.call_tool(params)).await });
        Ok(match answer {
            Err(_) => Got::Hung(self.manifest.runtime.limits.timeout_s),
            Ok(Ok(result)) => from_result(result),
            Ok(Err(ServiceError::McpError(e))) => Got::RpcError {
                code: e.code.0,
                message: e.message.to_string(),
            },
            Ok(Err(e)) => return Err(self.unreachable(live, &format!("the call failed: {e}"))),
        })
    }

    fn unreachable(&self, live: &Live, what: &str) -> String {
        // The connection drops a moment before the process can be reaped: give its exit that
        // moment to show, so the message names the cause rather than the client's error.
        match live.server.wait_exit(Duration::from_millis(500)) {
            Some(status) => format!(
                "the server exited ({status}) before it answered\ngateway status: runtime_unavailable\n{what}"
            ),
            None => format!("{what}\ngateway status: runtime_unavailable"),
        }
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
    .map_err(|e| e.to_string())
}

/// rmcp's default client opens a connection for every request (it turns pooling off against a
/// delayed-ACK stall that `TCP_NODELAY` avoids), which on loopback costs more than the server's
/// own work: this one keeps the connection. It never goes through a proxy (the server is on
/// loopback, whatever `HTTP_PROXY` says) and follows no redirect.
fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Ctrl-C or SIGTERM while a server starts or runs: stop every server group, then end as the
/// signal would have ended the process. On a thread of its own, once per process: the client's
/// runtime only runs while a trial waits on it. Returns once the handlers are in place.
fn watch_signals() {
    static WATCHING: OnceLock<()> = OnceLock::new();
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
                    process::stop_all();
                    std::process::exit(code);
                });
            });
        // Without the thread (or its handlers) a signal keeps its default action.
        if spawned.is_ok() {
            let _ = registered.recv();
        }
    });
}

fn from_result(result: CallToolResult) -> Got {
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
        return Got::Failed {
            code,
            message: message
                .or_else(|| text.first().cloned())
                .unwrap_or_default(),
        };
    }
    match result.structured_content {
        Some(value) => Got::Output(value),
        None => Got::TextOnly(text.join("\n")),
    }
}

/// Exactly one tool, named `runtime.tool`, with the manifest's input schema, and an output
/// schema (when there is one) that every example's answer validates against.
pub fn check_tools(manifest: &Manifest, tools: &[Tool]) -> Result<(), String> {
    let want = &manifest.runtime.tool;
    let names: Vec<String> = tools.iter().map(|t| format!("`{}`", t.name)).collect();
    match tools {
        [] => {
            return Err(format!(
                "the server lists no tool; it must list exactly one, `{want}`"
            ));
        }
        [_] => {}
        _ => {
            return Err(format!(
                "the server lists {} tools ({}); a Holon agent exposes exactly one, `{want}`",
                tools.len(),
                names.join(", ")
            ));
        }
    }
    let tool = &tools[0];
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
        let validator = crate::gateway::schema::compile(&schema)
            .map_err(|e| format!("the tool's `outputSchema` does not compile: {e}"))?;
        let mut problems = Vec::new();
        for example in &manifest.examples {
            let answer = match &example.expect {
                Expect::Output(o) => o.clone(),
                Expect::Error(code) => serde_json::json!({"error": {"code": code, "message": ""}}),
            };
            for v in crate::gateway::schema::violations(&validator, &answer) {
                problems.push(format!(
                    "  example `{}`: `{}`: {}",
                    example.name,
                    if v.pointer.is_empty() {
                        "/"
                    } else {
                        &v.pointer
                    },
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

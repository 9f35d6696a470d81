//! The runtime end to end: the word-stats agent as its real binary under the official TypeScript
//! and Python SDKs, the advertised tool, and every bad input a server can be sent, each followed
//! by a call that must still succeed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::seam::{Expect, Manifest, Server};
use holon_kit::Agent;
use holon_kit::{Ctx, Failure};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::util::{AgentProcess, free_port, output_within_async, root, word_stats_binary};

/// The pinned clients, as `.ci/setup-interop` installs them.
const TS_SDK_VERSION: &str = "1.32.2";
const PY_SDK_VERSION: &str = "2.3.0";
/// How long an interop client may run before it counts as hung.
const CLIENT_WITHIN: Duration = Duration::from_secs(60);

fn load(path: &Path) -> Manifest {
    crate::util::seam::checked(path).unwrap_or_else(|refused| panic!("{refused}"))
}

fn word_stats_manifest() -> Manifest {
    load(&root().join("examples/word-stats/holon.yaml"))
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The real binary and the SDKs this project did not write.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn word_stats_binary_serves_both_official_sdks_and_exits_0_on_sigterm() {
    let mut node = node_client();
    let mut python = python_client();
    let manifest = word_stats_manifest();
    let calls: Vec<Value> = manifest
        .examples
        .iter()
        .map(|e| json!({"name": e.name, "arguments": e.input}))
        .collect();
    let calls = Value::Array(calls).to_string();

    let mut server = AgentProcess::start(word_stats_binary(), &[]).await;
    let tool = manifest.runtime.tool.as_str();
    let (ts, py) = tokio::join!(
        run_client(node.arg(&server.url).arg(tool).arg(&calls)),
        run_client(python.arg(&server.url).arg(tool).arg(&calls)),
    );
    for report in [ts, py] {
        assert_interop_report(&manifest, &report);
    }

    let asked = Instant::now();
    server.signal(libc::SIGTERM);
    let status = server
        .wait(Duration::from_secs(5))
        .await
        .expect("the server was still running 5 s after SIGTERM");
    assert!(
        status.success(),
        "SIGTERM must end the server with 0, got {status}"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "an idle server took {:?} to stop",
        asked.elapsed()
    );
    assert_eq!(
        server.stderr(),
        format!(
            "word-stats 1.0.0: listening on http://127.0.0.1:{}/mcp (tool `word_stats`)\n",
            server.port
        ),
        "stderr must be exactly the one listening line"
    );
    assert_eq!(server.stdout(), "", "the server printed on stdout");
}

/// What an interop client printed, checked against the manifest it was served from.
fn assert_interop_report(manifest: &Manifest, report: &Value) {
    let sdk = report["sdk"].as_str().unwrap_or("?");
    let tools = report["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 1, "{sdk}: {report}");
    let tool = &tools[0];
    assert_eq!(tool["name"], manifest.runtime.tool.as_str(), "{sdk}");
    assert_eq!(tool["description"], manifest.description.as_str(), "{sdk}");
    assert_eq!(tool["inputSchema"], manifest.interface.input, "{sdk}");
    assert_eq!(
        tool["outputSchema"],
        crate::util::seam::output_schema(manifest),
        "{sdk}"
    );
    assert_eq!(report["server"]["name"], manifest.name.as_str(), "{sdk}");
    assert_eq!(
        report["server"]["version"],
        manifest.version.as_str(),
        "{sdk}"
    );

    let calls = report["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), manifest.examples.len(), "{sdk}: {report}");
    for (example, call) in manifest.examples.iter().zip(calls) {
        let what = format!("{sdk}, example `{}`", example.name);
        assert_eq!(call["name"], example.name.as_str(), "{what}");
        let structured = &call["structuredContent"];
        // The text content is the same JSON as `structuredContent`, for clients that read text.
        let text: Value = serde_json::from_str(call["text"].as_str().expect("a text content"))
            .unwrap_or_else(|e| panic!("{what}: the text content is not JSON: {e}"));
        assert_eq!(&text, structured, "{what}");
        match &example.expect {
            Expect::Output(output) => {
                assert_eq!(call["isError"], false, "{what}: {call}");
                assert_eq!(structured, output, "{what}");
            }
            Expect::Error(code) => {
                assert_eq!(call["isError"], true, "{what}: {call}");
                assert_eq!(structured["error"]["code"], code.as_str(), "{what}: {call}");
                assert!(structured["error"]["message"].is_string(), "{what}: {call}");
            }
        }
    }
}

fn node_client() -> Command {
    let dir = root().join("tests/interop/node");
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    assert_installed("the TypeScript SDK", &sdk, TS_SDK_VERSION);
    let mut command = Command::new("node");
    command.current_dir(&dir).arg("client.mjs");
    command
}

fn python_client() -> Command {
    let packages = root().join("target/interop/python");
    let sdk = packages.join(format!("mcp-{PY_SDK_VERSION}.dist-info/METADATA"));
    assert_installed("the Python SDK", &sdk, PY_SDK_VERSION);
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let mut command = Command::new(python);
    // `-S`: no site-packages of the machine's, only the pinned folder.
    command
        .env("PYTHONPATH", &packages)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg("-S")
        .arg(root().join("tests/interop/python/client.py"));
    command
}

fn assert_installed(what: &str, marker: &Path, version: &str) {
    let found = std::fs::read_to_string(marker).unwrap_or_default();
    assert!(
        found.contains(&format!("\"version\": \"{version}\""))
            || found.contains(&format!("Version: {version}\n")),
        "{what} {version} is not installed (no `{}`): run `.ci/setup-interop` first",
        marker.display()
    );
}

/// Runs a client to the end (killed if it hangs) and parses the JSON line it printed.
async fn run_client(command: &mut Command) -> Value {
    command.process_group(0);
    let shown = format!("{command:?}");
    let out = output_within_async(command, CLIENT_WITHIN).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{shown} failed ({}):\n{stderr}{stdout}",
        out.status
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{shown} printed no JSON line ({e}):\n{stdout}\n{stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_start_on_a_manifest_that_fails_the_publish_checks() {
    let fixture = "tests/fixtures/runtime/refused.yaml";
    let mut command = Command::new(word_stats_binary());
    command
        .current_dir(root())
        .env("HOLON_MANIFEST", fixture)
        .env("PORT", free_port().to_string())
        .env("HOST", "127.0.0.1")
        .process_group(0);
    // A server that started on the refused manifest would run past the watchdog.
    let out = output_within_async(&mut command, Duration::from_secs(30)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "exit {}: {stderr}", out.status);
    for expected in [
        "the manifest was refused",
        "error[error-code-reserved]: error code `timeout` is reserved by the gateway",
        &format!("{fixture}:20:13"),
        "error[example-output-invalid]: `examples[0].output.words` does not match",
        &format!("{fixture}:31:22"),
        "2 errors",
    ] {
        assert!(stderr.contains(expected), "no `{expected}` in:\n{stderr}");
    }
    assert!(!stderr.contains("listening"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// In-process servers: the advertised tool and the bad inputs.
// ---------------------------------------------------------------------------------------------

/// A server on a free loopback port inside the test's runtime, with a connected rmcp client;
/// dropping it stops the server.
struct InProcess {
    url: String,
    tool: String,
    client: RunningService<RoleClient, ()>,
    shutdown: CancellationToken,
}

impl InProcess {
    async fn start(manifest: Manifest, agent: Arc<dyn Agent>) -> InProcess {
        let tool = manifest.runtime.tool.clone();
        let shutdown = CancellationToken::new();
        let addr = "127.0.0.1:0".parse().expect("an address");
        let server = Server::bind(manifest, agent, addr, shutdown.clone())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        crate::util::agent::tls_provider();
        let url = format!("http://{}/mcp", server.addr());
        tokio::spawn(server.run());
        let client =
            ().serve(StreamableHttpClientTransport::from_uri(url.clone()))
                .await
                .expect("initialize");
        InProcess {
            url,
            tool,
            client,
            shutdown,
        }
    }

    /// Calls the tool; a JSON-RPC error fails the test.
    async fn call(&self, arguments: Value) -> CallToolResult {
        self.try_call(&self.tool, arguments)
            .await
            .unwrap_or_else(|e| panic!("a tool result, not a JSON-RPC error: {e}"))
    }

    async fn try_call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args(arguments));
        self.client.call_tool(params).await
    }

    /// Proves the server survived what came before: a fresh call succeeds.
    async fn assert_still_answers(&self) {
        let result = self
            .call(json!({"do": "echo", "value": "still here"}))
            .await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_eq!(
            result.structured_content,
            Some(json!({"value": "still here"}))
        );
    }

    /// Posts a raw body to the endpoint, as no well-behaved client would.
    async fn post(
        &self,
        body: impl Into<reqwest::Body>,
        headers: &[(&str, &str)],
    ) -> (u16, String) {
        crate::util::agent::tls_provider();
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a reqwest client");
        let mut request = http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.body(body).send().await.expect("an HTTP answer");
        let status = response.status().as_u16();
        (status, response.text().await.expect("a body"))
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The code and message of a failure result (`isError: true`).
fn failure(result: &CallToolResult) -> (String, String) {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a failure: {result:?}"
    );
    let error = &result
        .structured_content
        .as_ref()
        .expect("structuredContent")["error"];
    (
        error["code"].as_str().expect("error.code").to_string(),
        error["message"]
            .as_str()
            .expect("error.message")
            .to_string(),
    )
}

/// The probe agent behind `tests/fixtures/runtime/probe.yaml`: does what `do` says, counts its
/// calls, and holds a sender while it sleeps so a test sees the run dropped.
#[derive(Default)]
struct Probe {
    calls: AtomicUsize,
    sleeper: Mutex<Option<oneshot::Sender<()>>>,
}

#[derive(Deserialize)]
struct ProbeInput {
    #[serde(rename = "do")]
    action: String,
    #[serde(default)]
    value: Value,
}

impl Probe {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn probe_agent(probe: Arc<Probe>) -> Arc<dyn Agent> {
    holon_kit::agent(move |input: ProbeInput, ctx: Ctx| {
        let probe = probe.clone();
        async move {
            probe.calls.fetch_add(1, Ordering::SeqCst);
            match input.action.as_str() {
                "echo" => Ok(json!({ "value": input.value })),
                "panic" => panic!("the probe panics on purpose"),
                "question_mark" => {
                    let n: u32 = "many".parse()?;
                    Ok(json!({ "value": n }))
                }
                "undeclared_code" => Err(ctx.fail("not_declared", "a code the manifest lacks")),
                "declared" => Err(ctx.fail("refused", "the probe refuses")),
                "sleep" => {
                    let _held = probe.sleeper.lock().expect("sleeper").take();
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(json!({ "value": "woke up" }))
                }
                other => Err(std::io::Error::other(format!("the schema let `{other}` in")).into()),
            }
        }
    })
}

async fn probe_server() -> (InProcess, Arc<Probe>) {
    let probe = Arc::new(Probe::default());
    let manifest = load(&root().join("tests/fixtures/runtime/probe.yaml"));
    let server = InProcess::start(manifest, probe_agent(probe.clone())).await;
    (server, probe)
}

#[tokio::test]
async fn advertises_one_tool_with_the_manifest_schemas_and_an_honest_output_schema() {
    let manifest = word_stats_manifest();
    let agent = holon_kit::agent(crate::word_stats::run);
    let server = InProcess::start(manifest.clone(), agent).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1, "{tools:?}");
    let tool = &tools[0];
    assert_eq!(tool.name, manifest.runtime.tool);
    assert_eq!(
        tool.description.as_deref(),
        Some(manifest.description.as_str())
    );
    assert_eq!(
        Value::Object((*tool.input_schema).clone()),
        manifest.interface.input
    );

    let advertised = Value::Object((**tool.output_schema.as_ref().expect("outputSchema")).clone());
    let any_of = advertised["anyOf"].as_array().expect("outputSchema.anyOf");
    assert_eq!(any_of.len(), 2, "{advertised}");
    assert_eq!(any_of[0], manifest.interface.output);
    let mut codes: Vec<&str> = any_of[1]["properties"]["error"]["properties"]["code"]["enum"]
        .as_array()
        .expect("the envelope's code enum")
        .iter()
        .map(|c| c.as_str().expect("a code"))
        .collect();
    codes.sort_unstable();
    assert_eq!(
        codes,
        ["agent_crashed", "empty_text", "invalid_input", "timeout"]
    );

    // What a strict client does with every result: validate it against the advertised schema.
    let schema = jsonschema::draft202012::new(&advertised).expect("outputSchema compiles");
    for example in &manifest.examples {
        let result = server.call(example.input.clone()).await;
        let structured = result.structured_content.expect("structuredContent");
        assert!(
            schema.is_valid(&structured),
            "{} -> {structured}",
            example.name
        );
    }
    let refused = server.call(json!({"text": 5})).await;
    assert_eq!(failure(&refused).0, "invalid_input");
    assert!(
        schema.is_valid(
            refused
                .structured_content
                .as_ref()
                .expect("structuredContent")
        )
    );
    assert!(!schema.is_valid(&json!({"error": {"code": "not_declared", "message": "m"}})));
    assert!(!schema.is_valid(&json!({"words": 1})));
}

#[tokio::test]
async fn a_malformed_json_body_is_a_client_error() {
    let (server, probe) = probe_server().await;
    let (status, body) = server
        .post(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"#,
            &[],
        )
        .await;
    assert!(
        (400..500).contains(&status) && status != 413,
        "{status}: {body}"
    );
    assert_eq!(probe.calls(), 0);
    server.assert_still_answers().await;
}

/// A `tools/call` body of exactly `size` bytes: the padding goes in `value`.
fn call_body_of(size: usize) -> String {
    let body = |pad: usize| {
        json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "probe", "arguments": {"do": "echo", "value": "x".repeat(pad)}}
        })
        .to_string()
    };
    let pad = size - body(0).len();
    let text = body(pad);
    assert_eq!(text.len(), size);
    text
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_413_and_one_at_it_is_read() {
    let (server, probe) = probe_server().await;
    let manifest = load(&root().join("tests/fixtures/runtime/probe.yaml"));
    let limit = crate::util::seam::max_request_body_bytes(&manifest);

    let (status, body) = server.post(call_body_of(limit + 1), &[]).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(probe.calls(), 0);

    // At the limit the body is read; its input is then far over `max_input_bytes`.
    let (status, body) = server.post(call_body_of(limit), &[]).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("a JSON-RPC answer");
    let error = &answer["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "invalid_input", "{answer}");
    assert_eq!(probe.calls(), 0);
    server.assert_still_answers().await;
}

#[tokio::test]
async fn a_bogus_session_id_is_ignored_by_the_stateless_server() {
    let (server, probe) = probe_server().await;
    let body = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "probe", "arguments": {"do": "echo", "value": 1}}
    });
    let (status, text) = server
        .post(body.to_string(), &[("mcp-session-id", "no-such-session")])
        .await;
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).expect("a JSON-RPC answer");
    assert_eq!(answer["id"], 3);
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"value": 1}),
        "{answer}"
    );
    assert_eq!(probe.calls(), 1);
    server.assert_still_answers().await;
}

#[tokio::test]
async fn a_wrong_tool_name_is_a_json_rpc_invalid_params_error() {
    let (server, probe) = probe_server().await;
    match server.try_call("prob", json!({"do": "echo"})).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
            assert!(error.message.contains("`probe`"), "{}", error.message);
        }
        other => panic!("expected JSON-RPC -32602, got {other:?}"),
    }
    assert_eq!(probe.calls(), 0);
    server.assert_still_answers().await;
}

#[tokio::test]
async fn arguments_of_the_wrong_type_are_invalid_input_and_the_function_is_not_called() {
    let (server, probe) = probe_server().await;
    let (code, message) = failure(&server.call(json!({"do": 42})).await);
    assert_eq!(code, "invalid_input");
    assert!(message.contains("`/do`"), "{message}");
    let (code, message) = failure(&server.call(json!({"do": "echo", "extra": true})).await);
    assert_eq!(code, "invalid_input");
    assert!(message.contains("`extra`"), "{message}");
    assert_eq!(probe.calls(), 0);
    server.assert_still_answers().await;
}

/// `{"do": "echo", "value": [[...]]}` nested `levels` deep, the arguments object included.
fn nested_arguments(levels: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 1..levels {
        value = json!([value]);
    }
    json!({"do": "echo", "value": value})
}

#[tokio::test]
async fn nesting_is_refused_at_65_levels_and_passes_the_bounds_at_64() {
    let (server, probe) = probe_server().await;
    let (code, message) = failure(&server.call(nested_arguments(65)).await);
    assert_eq!(code, "invalid_input");
    assert!(
        message.contains("nested deeper than 64 levels"),
        "{message}"
    );
    assert_eq!(probe.calls(), 0);

    let deep = nested_arguments(64);
    let result = server.call(deep.clone()).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"value": deep["value"]}))
    );
    assert_eq!(probe.calls(), 1);
    server.assert_still_answers().await;
}

#[tokio::test]
async fn a_panic_is_agent_crashed_with_no_backtrace_in_the_message() {
    // The panic hook runs inside the call's time. With `RUST_BACKTRACE` set, std's hook
    // symbolises this debug binary's backtrace for longer than the probe's 0.2 s, and the call
    // ends as `timeout`, as the gateway, timing the whole call, would count it: a limit the
    // panic cannot reach keeps this test about the panic.
    let mut manifest = load(&root().join("tests/fixtures/runtime/probe.yaml"));
    manifest.runtime.limits.timeout_s = 30.0;
    let server = InProcess::start(manifest, probe_agent(Arc::new(Probe::default()))).await;
    let (code, message) = failure(&server.call(json!({"do": "panic"})).await);
    assert_eq!(code, "agent_crashed");
    for leak in ["panicked at", ".rs:", "backtrace", "on purpose"] {
        assert!(!message.contains(leak), "`{leak}` leaked: {message}");
    }
    server.assert_still_answers().await;
}

#[tokio::test]
async fn an_undeclared_error_passed_up_with_question_mark_is_agent_crashed() {
    let (server, _probe) = probe_server().await;
    let (code, message) = failure(&server.call(json!({"do": "question_mark"})).await);
    assert_eq!(code, "agent_crashed");
    assert!(message.contains("invalid digit"), "{message}");
    server.assert_still_answers().await;
}

#[tokio::test]
async fn ctx_fail_with_an_undeclared_code_is_agent_crashed_and_a_declared_one_goes_out() {
    let (server, _probe) = probe_server().await;
    let (code, message) = failure(&server.call(json!({"do": "undeclared_code"})).await);
    assert_eq!(code, "agent_crashed");
    assert!(message.contains("`not_declared`"), "{message}");
    let (code, message) = failure(&server.call(json!({"do": "declared"})).await);
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("refused", "the probe refuses")
    );
    server.assert_still_answers().await;
}

#[tokio::test]
async fn arguments_the_schema_admits_but_the_function_type_refuses_are_agent_crashed() {
    #[derive(Deserialize)]
    struct Narrow {
        value: u32,
    }
    let manifest = load(&root().join("tests/fixtures/runtime/probe.yaml"));
    let agent = holon_kit::agent(|input: Narrow, _ctx: Ctx| async move {
        Ok::<_, Failure>(json!({ "value": input.value }))
    });
    let server = InProcess::start(manifest, agent).await;
    // `value` may be any JSON by `interface.input`: the caller is right, the agent is not.
    let (code, message) = failure(&server.call(json!({"do": "echo", "value": "text"})).await);
    assert_eq!(code, "agent_crashed");
    assert!(
        message.contains("the schema and the type disagree"),
        "{message}"
    );
    let result = server.call(json!({"do": "echo", "value": 7})).await;
    assert_eq!(result.structured_content, Some(json!({"value": 7})));
}

#[tokio::test]
async fn a_run_past_timeout_s_is_cancelled_as_timeout() {
    let (server, probe) = probe_server().await;
    let (held, dropped) = oneshot::channel();
    *probe.sleeper.lock().expect("sleeper") = Some(held);
    let asked = Instant::now();
    let (code, message) = failure(&server.call(json!({"do": "sleep"})).await);
    let took = asked.elapsed();
    assert_eq!(code, "timeout");
    assert!(
        message.contains("`runtime.limits.timeout_s` (0.2 s)"),
        "{message}"
    );
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(5),
        "answered after {took:?}"
    );
    // The sleeping run is dropped, not left behind: its sender goes with it.
    let gone = tokio::time::timeout(Duration::from_secs(5), dropped).await;
    assert!(
        matches!(gone, Ok(Err(_))),
        "the timed-out run is still alive"
    );
    server.assert_still_answers().await;
}

#[tokio::test]
async fn an_input_over_max_input_bytes_is_invalid_input_and_one_at_it_is_accepted() {
    let (server, probe) = probe_server().await;
    let limit = 4096; // `runtime.limits.max_input_bytes` of probe.yaml
    let input_of = |size: usize| {
        let empty = json!({"do": "echo", "value": ""}).to_string().len();
        json!({"do": "echo", "value": "x".repeat(size - empty)})
    };
    assert_eq!(input_of(limit).to_string().len(), limit);

    let (code, message) = failure(&server.call(input_of(limit + 1)).await);
    assert_eq!(code, "invalid_input");
    assert!(
        message.contains("4097 bytes, over `runtime.limits.max_input_bytes` (4096)"),
        "{message}"
    );
    assert_eq!(probe.calls(), 0);

    let at_limit = input_of(limit);
    let result = server.call(at_limit.clone()).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"value": at_limit["value"]}))
    );
    server.assert_still_answers().await;
}

// ---------------------------------------------------------------------------------------------
// Who the server is: `serverInfo` and `holon/manifest`.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_announces_its_manifest_on_initialize_and_on_discover() {
    use holon_core::manifest::identity::{Identity, META_KEY};
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};

    let text = std::fs::read_to_string(root().join("examples/word-stats/holon.yaml")).unwrap();
    let (expected, _) = Identity::of_text(&text).unwrap();

    let server = AgentProcess::start(word_stats_binary(), &[]).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url.as_str()))
            .await
            .expect("initialize");
    let info = client.peer_info().expect("the initialize result");
    let implementation = info.server_info.clone().expect("serverInfo");
    assert_eq!(
        (
            implementation.name.as_str(),
            implementation.version.as_str()
        ),
        ("word-stats", "1.0.0")
    );
    let meta = info.meta.clone().expect("the initialize result's _meta");
    assert_eq!(
        Identity::from_meta(&meta),
        Some(expected.clone()),
        "{meta:?}"
    );
    assert_eq!(
        meta.get(META_KEY).unwrap()["sha256"],
        json!(expected.sha256)
    );
    client.cancel().await.unwrap();

    // A 2026-07-28 client discovers instead: the same `_meta`, beside the identity the spec
    // reserves there.
    let discovered = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(server.url.as_str()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("server/discover");
    let info = discovered.peer_info().expect("the discover result");
    let meta = info.meta.clone().expect("the discover result's _meta");
    assert_eq!(Identity::from_meta(&meta), Some(expected), "{meta:?}");
    assert_eq!(
        meta.get("io.modelcontextprotocol/serverInfo")
            .and_then(|s| s.get("name")),
        Some(&json!("word-stats")),
        "{meta:?}"
    );
    discovered.cancel().await.unwrap();
}

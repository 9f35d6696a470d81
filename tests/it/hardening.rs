//! What the open internet and a deploy do to a server, and what a hostile checkout does to
//! `check`: special files in place of `holon.yaml`; connection storms, half-sent requests and
//! idle connections; floats for integers; SIGTERM with calls in flight; every malformed JSON-RPC
//! shape; foreign and allowed `Origin`s. Each against the real binaries.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use crate::util::seam::{Manifest, Server};
use holon_kit::{Ctx, Failure};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::util::{AgentProcess, check_arg, output_within_async, root, run, word_stats_binary};

// ---------------------------------------------------------------------------------------------
// `check` never blocks on a file and never reads past its limit.
// ---------------------------------------------------------------------------------------------

/// `check ARG` in `dir` refuses `file` (what ARG names) as `kind`, with exit code 1.
fn refused_as_not_regular(dir: &Path, arg: &str, file: &str, kind: &str) {
    check_arg(dir, arg)
        .refused()
        .error("file-not-regular", "", (0, 0))
        .message(&format!(
            "`{file}` is {kind}, not a regular file (a manifest is a file of YAML text)"
        ))
        .nothing_else();
    let output = run(dir, &["check", arg]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
}

#[test]
fn check_refuses_a_fifo_without_blocking_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("holon.yaml");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other memory effects.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    // No writer ever opens the FIFO: a blocking open would hang until the watchdog.
    refused_as_not_regular(dir.path(), "holon.yaml", "holon.yaml", "a FIFO");
}

#[test]
fn check_refuses_a_symlink_to_dev_zero_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("holon.yaml")).unwrap();
    refused_as_not_regular(dir.path(), "holon.yaml", "holon.yaml", "a character device");
}

#[test]
fn check_refuses_a_socket() {
    let dir = tempfile::tempdir().unwrap();
    let _listener = UnixListener::bind(dir.path().join("holon.yaml")).unwrap();
    refused_as_not_regular(dir.path(), "holon.yaml", "holon.yaml", "a socket");
}

#[test]
fn check_refuses_a_folder_named_holon_yaml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("agent/holon.yaml")).unwrap();
    refused_as_not_regular(dir.path(), "agent", "agent/holon.yaml", "a folder");
}

// ---------------------------------------------------------------------------------------------
// Helpers: raw HTTP, as an attacker or a broken client sends it.
// ---------------------------------------------------------------------------------------------

/// Longest any single step below may take before the test counts the server as hung.
const WITHIN: Duration = Duration::from_secs(20);

/// The head of a `POST /mcp` with the headers a well-behaved client sends.
fn head(port: u16, content_length: usize, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {content_length}\r\n\
         {extra}\r\n"
    )
}

/// A whole `POST /mcp` of `body`.
fn request(port: u16, body: &str) -> String {
    format!("{}{body}", head(port, body.len(), ""))
}

async fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the server")
}

/// A new connection on which `text` was sent, and nothing more.
async fn sent(port: u16, text: &str) -> TcpStream {
    let mut stream = connect(port).await;
    stream.write_all(text.as_bytes()).await.expect("write");
    stream
}

/// The head of a `POST /mcp` announcing 100 bytes, and only the first 11 of them.
fn half_sent(port: u16) -> String {
    format!("{}{{\"jsonrpc\":", head(port, 100, ""))
}

/// Reads one HTTP response (head, then `content-length` bytes of body): its status, its head
/// and its body parsed as JSON (the test fails if the body is not JSON).
async fn response(stream: &mut TcpStream) -> (u16, String, Value) {
    let mut data = Vec::new();
    let mut chunk = [0u8; 8192];
    let read = async {
        loop {
            if let Some(end) = find(&data, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().expect("a content-length"));
                if data.len() >= end + 4 + length {
                    return (head, data[end + 4..end + 4 + length].to_vec());
                }
            }
            let n = stream.read(&mut chunk).await.expect("read the answer");
            assert!(
                n > 0,
                "the server closed the connection without an answer: {data:?}"
            );
            data.extend_from_slice(&chunk[..n]);
        }
    };
    let (head, body) = tokio::time::timeout(WITHIN, read)
        .await
        .expect("no answer in time");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("an HTTP status");
    let body = serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "status {status}: the body is not JSON ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    });
    (status, head, body)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Waits until the server ends the connection (EOF or reset), failing after [`WITHIN`].
async fn closed_by_server(stream: &mut TcpStream) {
    let mut buf = [0u8; 1024];
    let ended = tokio::time::timeout(WITHIN, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the server kept the connection open");
}

/// Posts `body` (with `headers`) through a fresh client and returns the status and JSON body.
async fn post(url: &str, body: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    crate::util::agent::tls_provider();
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a reqwest client");
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let answer = request
        .body(body.to_string())
        .send()
        .await
        .expect("an HTTP answer");
    let status = answer.status().as_u16();
    let text = answer.text().await.expect("a body");
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("status {status}: the body is not JSON ({e}): {text}"));
    (status, body)
}

/// A word-stats call through the rmcp client must succeed: the server still serves callers.
async fn word_stats_answers(url: &str) {
    crate::util::agent::tls_provider();
    let client = tokio::time::timeout(
        WITHIN,
        ().serve(StreamableHttpClientTransport::from_uri(url.to_string())),
    )
    .await
    .expect("initialize in time")
    .expect("initialize");
    let arguments = json!({"text": "a b a"})
        .as_object()
        .cloned()
        .expect("object");
    let result = tokio::time::timeout(
        WITHIN,
        client.call_tool(CallToolRequestParams::new("word_stats").with_arguments(arguments)),
    )
    .await
    .expect("a call in time")
    .expect("a call");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content.expect("structured")["words"], 3);
    let _ = client.cancel().await;
}

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> Vec<(&'a str, &'a OsStr)> {
    pairs.iter().map(|(k, v)| (*k, OsStr::new(*v))).collect()
}

// ---------------------------------------------------------------------------------------------
// Slow, idle and half-open connections.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_half_sent_request_lines_neither_starves_callers_nor_stays_open() {
    let server = AgentProcess::start(
        word_stats_binary(),
        &env(&[
            ("HOLON_HEADER_TIMEOUT_S", "1"),
            ("HOLON_MAX_CONNECTIONS", "32"),
        ]),
    )
    .await;
    // Ten times the cap, each stopping in the middle of its request line.
    let mut storm = Vec::new();
    for _ in 0..320 {
        storm.push(sent(server.port, "POST /mcp HT").await);
    }
    // Callers are served while the storm holds its connections.
    word_stats_answers(&server.url).await;
    word_stats_answers(&server.url).await;
    // And every half-sent connection is closed by the server: to make room, or at the timeout.
    for stream in &mut storm {
        closed_by_server(stream).await;
    }
    word_stats_answers(&server.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed_after_the_header_timeout() {
    let server = AgentProcess::start(
        word_stats_binary(),
        &env(&[("HOLON_HEADER_TIMEOUT_S", "0.5")]),
    )
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let mut stream = sent(server.port, &request(server.port, &body)).await;
    let (status, head, answer) = response(&mut stream).await;
    assert_eq!(status, 200, "{answer}");
    assert!(!head.contains("connection: close"), "{head}");
    assert_eq!(answer["result"]["tools"][0]["name"], "word_stats");
    // Kept alive, then left idle: the server closes it.
    closed_by_server(&mut stream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_coming_is_answered_408_with_a_json_body_and_closed() {
    let server = AgentProcess::start(
        word_stats_binary(),
        &env(&[("HOLON_BODY_TIMEOUT_S", "0.5")]),
    )
    .await;
    let mut stream = sent(server.port, &half_sent(server.port)).await;
    let (status, head, answer) = response(&mut stream).await;
    assert_eq!(status, 408, "{answer}");
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["jsonrpc"], "2.0");
    closed_by_server(&mut stream).await;
    word_stats_answers(&server.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_shorter_than_its_content_length_is_400_not_500() {
    let server = AgentProcess::start(word_stats_binary(), &[]).await;
    let mut stream = sent(server.port, &half_sent(server.port)).await;
    stream.shutdown().await.expect("end the body early");
    let (status, _, answer) = response(&mut stream).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ended before its `Content-Length`")),
        "{answer}"
    );
    word_stats_answers(&server.url).await;
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC and HTTP: the right error, always as JSON.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_malformed_json_rpc_shape_gets_its_json_rpc_error_as_json() {
    let server = AgentProcess::start(word_stats_binary(), &[]).await;
    let call = |params: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).to_string()
    };
    // (what, body, HTTP status, JSON-RPC code, the id answered)
    let cases: Vec<(&str, String, u16, i64, Value)> =
        vec![
        ("not JSON", r#"{"jsonrpc":"2.0","id":1,"#.into(), 400, -32700, Value::Null),
        ("empty body", String::new(), 400, -32700, Value::Null),
        (
            "a batch",
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.into(),
            400,
            -32600,
            Value::Null,
        ),
        ("a bare string", r#""tools/list""#.into(), 400, -32600, Value::Null),
        (
            "no jsonrpc",
            r#"{"id":1,"method":"tools/list"}"#.into(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#.into(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "a null id",
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.into(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "a method that is not a string",
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#.into(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "neither a request nor a response",
            r#"{"jsonrpc":"2.0","id":1}"#.into(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "arguments as a string",
            call(json!({"name": "word_stats", "arguments": "x"})),
            200,
            -32602,
            json!(7),
        ),
        (
            "no tool name",
            call(json!({"arguments": {"text": "a"}})),
            200,
            -32602,
            json!(7),
        ),
        (
            "params as an array",
            json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": ["word_stats"]})
                .to_string(),
            200,
            -32602,
            json!("s"),
        ),
        (
            "tools/call without params",
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"}).to_string(),
            200,
            -32602,
            json!(7),
        ),
        (
            "an unknown tool",
            call(json!({"name": "word_stat", "arguments": {"text": "a"}})),
            200,
            -32602,
            json!(7),
        ),
    ];
    for (what, body, status, code, id) in cases {
        let (got, answer) = post(&server.url, &body, &[]).await;
        assert_eq!(got, status, "{what}: {answer}");
        assert_eq!(answer["jsonrpc"], "2.0", "{what}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        assert_eq!(answer["id"], id, "{what}: {answer}");
        assert!(answer["error"]["message"].is_string(), "{what}: {answer}");
    }

    crate::util::agent::tls_provider();
    // What rmcp refuses by its headers comes back as JSON too.
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let answers = [
        (
            "GET",
            http.get(&server.url).header("accept", "text/event-stream"),
            405,
        ),
        (
            "a text body",
            http.post(&server.url)
                .header("content-type", "text/plain")
                .header("accept", "application/json, text/event-stream")
                .body(list.clone()),
            415,
        ),
        (
            "no accept header",
            http.post(&server.url)
                .header("content-type", "application/json")
                .body(list.clone()),
            406,
        ),
        (
            "another path",
            http.post(server.url.replace("/mcp", "/other"))
                .body(list.clone()),
            404,
        ),
    ];
    for (what, request, status) in answers {
        let answer = request.send().await.expect("an answer");
        assert_eq!(answer.status().as_u16(), status, "{what}");
        let text = answer.text().await.expect("a body");
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"));
        assert_eq!(body["error"]["code"], -32600, "{what}: {body}");
    }
    word_stats_answers(&server.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_is_403_and_loopback_and_configured_origins_pass() {
    let server = AgentProcess::start(
        word_stats_binary(),
        &env(&[(
            "HOLON_ALLOWED_ORIGINS",
            "https://app.example.com, https://ops.example.com:8443",
        )]),
    )
    .await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for origin in [
        "https://evil.example",
        "https://app.example.com.evil.example",
        "http://app.example.com",
        "https://ops.example.com:9443",
        "null",
    ] {
        let (status, answer) = post(&server.url, &list, &[("origin", origin)]).await;
        assert_eq!(status, 403, "{origin}: {answer}");
        assert_eq!(answer["error"]["code"], -32600, "{origin}: {answer}");
    }
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1:8080",
        "https://[::1]:3000",
        "https://app.example.com",
        "https://ops.example.com:8443",
    ] {
        let (status, answer) = post(&server.url, &list, &[("origin", origin)]).await;
        assert_eq!(status, 200, "{origin}: {answer}");
        assert_eq!(
            answer["result"]["tools"][0]["name"], "word_stats",
            "{origin}"
        );
    }
    // No Origin at all: a non-browser client.
    let (status, _) = post(&server.url, &list, &[]).await;
    assert_eq!(status, 200);
}

// ---------------------------------------------------------------------------------------------
// Floats written for integers.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_valued_floats_reach_the_word_stats_binary_as_integers() {
    let server = AgentProcess::start(word_stats_binary(), &[]).await;
    let text = "Holon is a registry of agents. Agents pay per successful call.";
    let call = |arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"word_stats","arguments":{arguments}}}}}"#
        )
    };
    let (_, expected) = post(
        &server.url,
        &call(&format!(r#"{{"text":"{text}","top":3}}"#)),
        &[],
    )
    .await;
    let expected = &expected["result"]["structuredContent"];
    assert_eq!(
        expected["top_words"].as_array().map(Vec::len),
        Some(3),
        "{expected}"
    );
    for floats in [
        r#""top":3.0"#,
        r#""top":3e0"#,
        r#""top":0.3e1,"words_per_minute":2.3e2"#,
    ] {
        let (status, answer) = post(
            &server.url,
            &call(&format!(r#"{{"text":"{text}",{floats}}}"#)),
            &[],
        )
        .await;
        assert_eq!(status, 200, "{floats}: {answer}");
        assert_eq!(answer["result"]["isError"], false, "{floats}: {answer}");
        assert_eq!(&answer["result"]["structuredContent"], expected, "{floats}");
    }
    let (_, answer) = post(
        &server.url,
        &call(&format!(r#"{{"text":"{text}","top":-0}}"#)),
        &[],
    )
    .await;
    assert_eq!(
        answer["result"]["structuredContent"]["top_words"],
        json!([]),
        "{answer}"
    );
    // A float that is not an integer is still the gate's to refuse.
    let (_, answer) = post(
        &server.url,
        &call(&format!(r#"{{"text":"{text}","top":2.5}}"#)),
        &[],
    )
    .await;
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["code"], "invalid_input",
        "{answer}"
    );
}

/// The input type of `tests/fixtures/runtime/integers.yaml`: integers only, at every depth.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Integers {
    n: u32,
    list: Vec<u16>,
    nested: BTreeMap<String, u64>,
    tree: Tree,
    pair: (String, Option<u8>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tree {
    v: usize,
    #[serde(default)]
    kids: Vec<Tree>,
}

impl Tree {
    fn sum(&self) -> u64 {
        self.v as u64 + self.kids.iter().map(Tree::sum).sum::<u64>()
    }
}

async fn add_up(input: Integers, _ctx: Ctx) -> Result<Value, Failure> {
    let sum = u64::from(input.n)
        + input.list.iter().map(|i| u64::from(*i)).sum::<u64>()
        + input.nested.values().sum::<u64>()
        + input.tree.sum()
        + input.pair.1.map_or(0, u64::from);
    Ok(json!({ "sum": sum }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floats_for_integers_at_every_depth_reach_a_typed_function_in_both_passes() {
    let manifest: Manifest =
        crate::util::seam::checked(&root().join("tests/fixtures/runtime/integers.yaml"))
            .unwrap_or_else(|refused| panic!("{refused}"));
    let input = json!({
        "n": 1.0, "list": [2e0, 3.0], "nested": {"a": 4.0, "b": -0.0},
        "tree": {"v": 5.0, "kids": [{"v": 6e0, "kids": [{"v": 1e1}]}]}, "pair": ["x", 7.0]
    });
    // Parsed from text, as a client's call arrives: `-0` and `1e1` are floats to serde_json.
    let input: Value = serde_json::from_str(&input.to_string()).expect("JSON");
    assert!(input["nested"]["b"].is_f64() && input["tree"]["kids"][0]["kids"][0]["v"].is_f64());

    // The function pass's path, as the harness calls it.
    let agent = holon_kit::agent(add_up);
    let answer =
        crate::util::seam::call_function(manifest.clone(), agent.clone(), input.clone()).await;
    assert_eq!(answer, Ok(json!({"sum": 38})), "the function pass");

    // The served agent: the same answer through the MCP server.
    let shutdown = CancellationToken::new();
    let server = Server::bind(
        manifest,
        agent,
        "127.0.0.1:0".parse().expect("addr"),
        shutdown.clone(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let url = format!("http://{}/mcp", server.addr());
    let serving = tokio::spawn(server.run());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "add_up", "arguments": input}})
    .to_string();
    let (status, answer) = post(&url, &body, &[]).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"sum": 38}),
        "{answer}"
    );
    shutdown.cancel();
    tokio::time::timeout(WITHIN, serving)
        .await
        .expect("the server stops")
        .expect("the server task");
}

// ---------------------------------------------------------------------------------------------
// A deploy's SIGTERM.
// ---------------------------------------------------------------------------------------------

/// Agent functions that block their threads (`std::thread::sleep` in an async function) run
/// apart from the threads that serve connections: with more of them blocked than the server's
/// runtime has workers (which, run on those workers, stalled the whole server), another call
/// is answered, and each blocked one is answered `timeout` at `timeout_s` (1 s in the broken
/// agent's manifest).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_that_block_their_threads_starve_neither_other_calls_nor_their_timeout() {
    let server = AgentProcess::start(
        crate::util::broken_agent_binary(),
        &env(&[("TOKIO_WORKER_THREADS", "2")]),
    )
    .await;
    let call = |id: u64, top: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "broken_stats", "arguments": {"text": "a b a", "top": top}}})
        .to_string()
    };
    // `top: 39` blocks its thread for ever; four of them, two workers.
    let mut stuck = Vec::new();
    for id in 1..=4 {
        stuck.push(sent(server.port, &request(server.port, &call(id, 39))).await);
    }
    let mut other = sent(server.port, &request(server.port, &call(9, 3))).await;
    let (status, _, answer) = response(&mut other).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["words"], 3,
        "{answer}"
    );
    for mut stream in stuck {
        let (status, _, answer) = response(&mut stream).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["result"]["structuredContent"]["error"]["code"], "timeout",
            "{answer}"
        );
    }
}

/// Linux only: a SIGTERM must reach the server after it has read the request, and only Linux's
/// socket table (`/proc/net/tcp`) shows that; macOS has no such file to read.
#[cfg(target_os = "linux")]
mod sigterm {
    use super::*;
    use crate::util::broken_agent_binary;

    /// Waits until the server has accepted the connection from `client` and read every byte sent
    /// on it so far (Linux's socket table shows an accepted socket with an empty receive queue):
    /// from then on the request is the server's, not the kernel's.
    async fn read_by_server(server_port: u16, client: &TcpStream) {
        let client_port = client.local_addr().expect("a local address").port();
        let local = format!("0100007F:{server_port:04X}");
        let remote = format!("0100007F:{client_port:04X}");
        let mut pause = Duration::from_millis(1);
        let started = std::time::Instant::now();
        loop {
            let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
            let read = table.lines().any(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                f.len() > 9
                    && f[1] == local
                    && f[2] == remote
                    && f[4].ends_with(":00000000")
                    && f[9] != "0"
            });
            if read {
                return;
            }
            assert!(
                started.elapsed() < WITHIN,
                "the server never read the request"
            );
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigterm_answers_the_call_in_flight_closes_a_half_sent_one_at_once_and_exits_0() {
        let fixture = root().join("tests/fixtures/runtime/broken-agent-slow.yaml");
        let mut server = AgentProcess::start(
            broken_agent_binary(),
            &[("HOLON_MANIFEST", fixture.as_os_str())],
        )
        .await;
        // `top: 40` runs 1.5 s before it answers the word statistics.
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "broken_stats", "arguments": {"text": "a b a", "top": 40}}})
        .to_string();
        let mut full = sent(server.port, &request(server.port, &body)).await;
        let mut half = sent(server.port, &half_sent(server.port)).await;
        read_by_server(server.port, &full).await;
        read_by_server(server.port, &half).await;

        server.signal(libc::SIGTERM);
        // The half-sent request is dropped at once, while the call in flight still runs.
        let mut buf = [0u8; 64];
        tokio::select! {
            read = half.read(&mut buf) => assert!(
                matches!(read, Ok(0) | Err(_)),
                "the half-sent request got an answer: {:?}",
                String::from_utf8_lossy(&buf)
            ),
            _ = full.readable() => panic!("the call in flight ended before the half-sent one was closed"),
        }
        // A new connection is no longer accepted.
        assert!(
            TcpStream::connect(("127.0.0.1", server.port))
                .await
                .is_err(),
            "the server still accepts connections after SIGTERM"
        );
        let (status, _, answer) = response(&mut full).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["id"], 9);
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"characters": 5, "words": 3, "reading_time_s": 1,
                   "top_words": [{"word": "a", "count": 2}, {"word": "b", "count": 1}]}),
            "{answer}"
        );
        let status = server
            .wait(WITHIN)
            .await
            .expect("the server exits after the drain");
        assert!(
            status.success(),
            "SIGTERM must end the server with 0, got {status}"
        );
        assert!(!server.stderr().contains("panicked"), "{}", server.stderr());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigterm_with_a_call_that_never_ends_still_exits_0_after_timeout_s_and_the_grace() {
        // The broken agent's own manifest: `timeout_s: 1`; `top: 39` blocks its thread for ever.
        let mut server = AgentProcess::start(
            broken_agent_binary(),
            &env(&[("HOLON_SHUTDOWN_GRACE_S", "0.5")]),
        )
        .await;
        let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "broken_stats", "arguments": {"text": "a b", "top": 39}}})
        .to_string();
        let mut stuck = sent(server.port, &request(server.port, &body)).await;
        read_by_server(server.port, &stuck).await;
        server.signal(libc::SIGTERM);
        let (status, _, answer) = response(&mut stuck).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["result"]["structuredContent"]["error"]["code"], "timeout",
            "{answer}"
        );
        let status = server
            .wait(WITHIN)
            .await
            .expect("a blocked function held the exit");
        assert!(status.success(), "got {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_variable_that_is_not_a_value_stops_the_server_at_start_naming_it() {
    for (name, value, expected) in [
        (
            "HOLON_HEADER_TIMEOUT_S",
            "soon",
            "`HOLON_HEADER_TIMEOUT_S` must be a number of seconds above 0 and at most 86400, not `soon`",
        ),
        (
            "HOLON_BODY_TIMEOUT_S",
            "0",
            "`HOLON_BODY_TIMEOUT_S` must be a number of seconds above 0 and at most 86400, not `0`",
        ),
        (
            "HOLON_MAX_CONNECTIONS",
            "-1",
            "`HOLON_MAX_CONNECTIONS` must be a whole number above 0, not `-1`",
        ),
    ] {
        let mut command = std::process::Command::new(word_stats_binary());
        command
            .env("PORT", "0")
            .env("HOST", "127.0.0.1")
            .env(name, value);
        // A server that started on a bad limit would run past the watchdog.
        let out = output_within_async(&mut command, WITHIN).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}={value}: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!("Error: {expected}"),
            "{name}={value}"
        );
    }
}

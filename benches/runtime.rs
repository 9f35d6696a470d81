//! The runtime's cost: sequential calls to the word-stats release binary over loopback, first
//! with the rmcp client, then with the official TypeScript SDK as a peer to read the figure
//! against, and the server's resident memory when idle.
//!
//! Then 50 clients at once (10 times the sequential calls in all), and four storms of 5,000
//! half-sent request lines, with the server's memory after each, against the same binary with
//! no connection cap and no header timeout.
//!
//! `cargo bench --bench runtime` (after `.ci/setup-interop`); `HOLON_BENCH_CALLS` and
//! `HOLON_BENCH_WARMUP` change the 1000 calls and the 100 warm-up calls, `HOLON_BENCH_CLIENTS`
//! the 50 clients, `HOLON_BENCH_STORM` and `HOLON_BENCH_STORM_ROUNDS` the storms.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

#[path = "../tests/it/util/agent.rs"]
mod agent;
#[path = "../tests/it/util/paths.rs"]
mod paths;

use std::ffi::OsStr;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use agent::{AgentProcess, word_stats_binary};
use paths::root;

const MEDIAN_GOAL: Duration = Duration::from_millis(1);
const RSS_GOAL_KB: u64 = 20 * 1024;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(bench());
}

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn bench() {
    let calls = setting("HOLON_BENCH_CALLS", 1000);
    let warmup = setting("HOLON_BENCH_WARMUP", 100);
    let manifest = holon_core::check::into_manifest(holon_core::check::check_file(
        &root().join("examples/word-stats/holon.yaml"),
    ))
    .unwrap_or_else(|refused| panic!("{}", holon_core::check::render_human(&refused, false)));
    let example = manifest
        .examples
        .iter()
        .find(|e| matches!(e.expect, holon_core::manifest::Expect::Output(_)))
        .expect("a successful example");
    let arguments = example.input.as_object().expect("object arguments").clone();
    let tool = manifest.runtime.tool.clone();

    let binary = word_stats_binary();
    let server = AgentProcess::start(binary, &[]).await;
    agent::tls_provider();
    let idle_kb = rss_kb(server.pid());

    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
            .await
            .expect("initialize");
    client.list_all_tools().await.expect("tools/list");
    let params = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
    for _ in 0..warmup {
        client.call_tool(params.clone()).await.expect("a call");
    }
    let mut took = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let result = client.call_tool(params.clone()).await.expect("a call");
        took.push(started.elapsed());
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
    let _ = client.cancel().await;
    let rmcp = Summary::of(took);
    let after_kb = rss_kb(server.pid());

    let node = node_bench(&server.url, &tool, &example.input, calls, warmup).await;
    let after_node_kb = rss_kb(server.pid());

    let clients = setting("HOLON_BENCH_CLIENTS", 50);
    let load = load(&server.url, &params, clients, calls * 10 / clients.max(1)).await;
    let after_load_kb = rss_kb(server.pid());

    let rounds = setting("HOLON_BENCH_STORM_ROUNDS", 4);
    let size = setting("HOLON_BENCH_STORM", 5000);
    let storm_kb = storm(&server, rounds, size).await;
    word_stats_still_answers(&server.url, &params).await;

    // The peer: the same binary with the cap and the header timeout out of the way, as the
    // server was before they existed.
    let unbounded = AgentProcess::start(
        binary,
        &[
            ("HOLON_MAX_CONNECTIONS", OsStr::new("1000000")),
            ("HOLON_HEADER_TIMEOUT_S", OsStr::new("86400")),
        ],
    )
    .await;
    let unbounded_idle_kb = rss_kb(unbounded.pid());
    let unbounded_kb = storm(&unbounded, rounds, size).await;
    drop(unbounded);

    println!(
        "runtime benchmark: word-stats release binary, {calls} sequential calls after {warmup} warm-up, loopback"
    );
    println!("  binary            {}", binary.display());
    println!("  rmcp client       {rmcp}");
    println!("  TypeScript SDK    {node}");
    println!(
        "  ratio             the TypeScript SDK's median is {:.2}x the rmcp client's",
        node.median.as_secs_f64() / rmcp.median.as_secs_f64()
    );
    println!(
        "  server RSS        {} idle after start, {} after the rmcp run, {} after the TypeScript run",
        mb(idle_kb),
        mb(after_kb),
        mb(after_node_kb)
    );
    println!("  {clients} clients        {load}");
    println!(
        "  server RSS        {} after the {clients}-client load",
        mb(after_load_kb)
    );
    println!(
        "  storm             {rounds} rounds of {size} half-sent request lines, RSS while held and \
         after each round: {} (default limits); {} idle then {} with no cap and no header timeout",
        list(&storm_kb),
        mb(unbounded_idle_kb),
        list(&unbounded_kb)
    );
    println!(
        "  goals             median <= 1 ms: {}; idle RSS < 20 MiB: {}",
        verdict(rmcp.median <= MEDIAN_GOAL),
        verdict(idle_kb < RSS_GOAL_KB)
    );
}

struct Summary {
    median: Duration,
    p90: Duration,
    p99: Duration,
    min: Duration,
}

impl Summary {
    fn of(mut took: Vec<Duration>) -> Summary {
        took.sort_unstable();
        let at = |q: f64| took[((took.len() as f64 * q) as usize).min(took.len() - 1)];
        Summary {
            median: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            min: took[0],
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        write!(
            f,
            "median {:.0} us, p90 {:.0} us, p99 {:.0} us, min {:.0} us",
            us(self.median),
            us(self.p90),
            us(self.p99),
            us(self.min)
        )
    }
}

/// The same calls through `tests/interop/node/bench.mjs`.
async fn node_bench(
    url: &str,
    tool: &str,
    arguments: &Value,
    calls: usize,
    warmup: usize,
) -> Summary {
    let dir = root().join("tests/interop/node");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript SDK is not installed: run `.ci/setup-interop` first"
    );
    let out = tokio::process::Command::new("node")
        .current_dir(&dir)
        .arg("bench.mjs")
        .arg(url)
        .arg(tool)
        .arg(arguments.to_string())
        .arg(calls.to_string())
        .arg(warmup.to_string())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), out)
        .await
        .expect("bench.mjs ran past 300 s")
        .expect("run node");
    assert!(
        out.status.success(),
        "bench.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    let us = |key: &str| Duration::from_secs_f64(report[key].as_f64().expect(key) / 1e6);
    Summary {
        median: us("median_us"),
        p90: us("p90_us"),
        p99: us("p99_us"),
        min: us("min_us"),
    }
}

/// `VmRSS` of a process, in kB.
fn rss_kb(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

fn mb(kb: u64) -> String {
    format!("{:.1} MiB", kb as f64 / 1024.0)
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// What the concurrent load gave.
struct Load {
    calls: usize,
    errors: usize,
    wall: Duration,
    summary: Summary,
}

impl std::fmt::Display for Load {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} calls, {} errors, {:.2} s wall ({:.0} calls/s); per call {}",
            self.calls,
            self.errors,
            self.wall.as_secs_f64(),
            self.calls as f64 / self.wall.as_secs_f64(),
            self.summary
        )
    }
}

/// `clients` rmcp clients, each on its own connection, each making `each` calls at once with
/// the others.
async fn load(url: &str, params: &CallToolRequestParams, clients: usize, each: usize) -> Load {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (url, params) = (url.to_string(), params.clone());
        tasks.push(tokio::spawn(async move {
            let client =
                ().serve(StreamableHttpClientTransport::from_uri(url))
                    .await
                    .expect("initialize");
            let mut took = Vec::with_capacity(each);
            let mut errors = 0;
            for _ in 0..each {
                let call = Instant::now();
                match client.call_tool(params.clone()).await {
                    Ok(r) if r.is_error == Some(false) => took.push(call.elapsed()),
                    _ => errors += 1,
                }
            }
            let _ = client.cancel().await;
            (took, errors)
        }));
    }
    let mut took = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (t, e) = task.await.expect("a load client");
        took.extend(t);
        errors += e;
    }
    Load {
        calls: clients * each,
        errors,
        wall: started.elapsed(),
        summary: Summary::of(took),
    }
}

/// `rounds` times: `size` connections that each send half a request line and stop, then are
/// closed by the client; the server's RSS while they are all open, and once its descriptors are
/// back to the idle count.
async fn storm(server: &AgentProcess, rounds: usize, size: usize) -> Vec<(u64, u64)> {
    let idle_fds = fds(server.pid());
    let mut after = Vec::new();
    for _ in 0..rounds {
        let mut held = Vec::with_capacity(size);
        for _ in 0..size {
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
                .await
                .expect("connect");
            stream.write_all(b"POST /mcp HT").await.expect("write");
            held.push(stream);
        }
        let held_kb = rss_kb(server.pid());
        drop(held);
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        while fds(server.pid()) > idle_fds {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the server still holds {} descriptors 60 s after the storm",
                fds(server.pid())
            );
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        after.push((held_kb, rss_kb(server.pid())));
    }
    after
}

/// Open file descriptors of a process.
fn fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

async fn word_stats_still_answers(url: &str, params: &CallToolRequestParams) {
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(url.to_string()))
            .await
            .expect("initialize after the storm");
    let result = client
        .call_tool(params.clone())
        .await
        .expect("a call after the storm");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let _ = client.cancel().await;
}

fn list(rounds: &[(u64, u64)]) -> String {
    rounds
        .iter()
        .map(|(held, after)| format!("{} held -> {} after", mb(*held), mb(*after)))
        .collect::<Vec<_>>()
        .join(", ")
}

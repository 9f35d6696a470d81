//! `cargo holon-test --url`: the MCP pass against a server already running, through the real
//! binary: a token the server requires (passed, refused, never printed), TLS with a certificate
//! made here, which manifest the server was built from, and every bad input.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::util::front::{Behaviour, Front};
use crate::util::{
    AgentProcess, BIN, RUN_LIMIT, code, free_port, output_within_async, root, stderr, stdout, text,
    ticket_triage_binary, word_stats_binary,
};

const TOKEN: &str = "s3cret-T0KEN-never-printed";

fn word_stats_manifest() -> std::path::PathBuf {
    root().join("examples/word-stats/holon.yaml")
}

/// The binary on `manifest` against `url`, with `args`, colour off and no variable of ours.
fn holon_test(manifest: &Path, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .arg("--manifest")
        .arg(manifest)
        .arg("--url")
        .arg(url)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("HOLON_EXPLORE_CASES")
        .env_remove("HOLON_SERVER_URL")
        .env_remove("GITHUB_ACTIONS");
    command
}

async fn run(command: &mut Command) -> Output {
    output_within_async(command, RUN_LIMIT).await
}

/// The trials of word-stats' server through its URL, which passed, sorted: the kit's runtime
/// speaks both eras, and is asked which manifest it serves in each.
const BOTH_ERAS: [&str; 8] = [
    "mcp::2025-11-25::a short article",
    "mcp::2025-11-25::an empty document",
    "mcp::2025-11-25::initialize",
    "mcp::2025-11-25::tools/list",
    "mcp::a short article",
    "mcp::an empty document",
    "mcp::initialize",
    "mcp::tools/list",
];

/// The trials that passed, sorted: libtest prints them as they finish.
fn passed(out: &Output) -> Vec<String> {
    let mut names: Vec<String> = stdout(out)
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... ok"))
        .map(|n| n.trim().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_requires_a_token_passes_with_the_header_and_never_prints_it() {
    let agent = AgentProcess::start(word_stats_binary(), &[]).await;
    let front = Front::start(Behaviour::Require {
        upstream: agent.url.clone(),
        authorization: format!("Bearer {TOKEN}"),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");

    // The token from the environment: every trial passes, and no request was refused.
    let out = run(holon_test(
        &word_stats_manifest(),
        &front.url,
        &[
            "--header",
            "Authorization: Bearer ${TOKEN}",
            "--concurrency",
            "2",
            "--junit",
        ],
    )
    .arg(&junit)
    .env("TOKEN", TOKEN))
    .await;
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(passed(&out), BOTH_ERAS, "{}", text(&out));
    assert_eq!(front.refused.load(Ordering::SeqCst), 0);
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(report.contains("mcp::a short article"), "{report}");
    for shown in [stdout(&out), stderr(&out), report] {
        assert!(!shown.contains(TOKEN), "{shown}");
    }

    // Without it: the 401 is named, with the hint; the run fails.
    let out = run(&mut holon_test(&word_stats_manifest(), &front.url, &[])).await;
    assert_eq!(code(&out), 101, "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("HTTP 401 Unauthorized"), "{said}");
    assert!(
        said.contains("--header 'Authorization: Bearer ${TOKEN}'"),
        "{said}"
    );
    assert!(front.refused.load(Ordering::SeqCst) > 0);

    // The token written out on the command line, on a run that fails and explores: the
    // failures, the replay line, the JUnit report and the annotations show `Authorization: ***`.
    let drifted = dir.path().join("holon.yaml");
    let manifest = std::fs::read_to_string(word_stats_manifest()).unwrap();
    std::fs::write(&drifted, manifest.replacen("words: 11", "words: 12", 1)).unwrap();
    assert_ne!(manifest, std::fs::read_to_string(&drifted).unwrap());
    let literal = format!("Authorization: Bearer {TOKEN}");
    let out = run(holon_test(
        &drifted,
        &front.url,
        &["--header", &literal, "--explore-cases", "3", "--junit"],
    )
    .arg(&junit)
    .env("GITHUB_ACTIONS", "true"))
    .await;
    assert_eq!(code(&out), 101, "{}", text(&out));
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(report.contains("<failure"), "{report}");
    assert!(stdout(&out).contains("::error"), "{}", stdout(&out));
    for shown in [stdout(&out), stderr(&out), report] {
        assert!(!shown.contains(TOKEN), "{shown}");
    }
    assert!(
        passed(&out).contains(&"explore::mcp".to_string()),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_with_a_self_signed_certificate_works_with_ca_cert() {
    let agent = AgentProcess::start(word_stats_binary(), &[]).await;
    let front = Front::start_tls(Behaviour::Pass(agent.url.clone())).await;
    assert!(front.url.starts_with("https://localhost:"), "{}", front.url);
    let dir = tempfile::tempdir().unwrap();
    let certificate = dir.path().join("ca.pem");
    std::fs::write(&certificate, front.certificate.as_ref().unwrap()).unwrap();

    let out =
        run(holon_test(&word_stats_manifest(), &front.url, &["--ca-cert"]).arg(&certificate)).await;
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(passed(&out), BOTH_ERAS, "{}", text(&out));

    // The platform's roots alone do not know it: said, and nothing passes.
    let out = run(&mut holon_test(&word_stats_manifest(), &front.url, &[])).await;
    assert_eq!(code(&out), 101, "{}", text(&out));
    assert!(
        text(&out).to_lowercase().contains("certificate"),
        "{}",
        text(&out)
    );
    assert!(passed(&out).is_empty(), "{}", text(&out));

    // A file that holds no certificate is refused naming it.
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello\n").unwrap();
    let out =
        run(holon_test(&word_stats_manifest(), &front.url, &["--ca-cert"]).arg(&not_pem)).await;
    assert_ne!(code(&out), 0, "{}", text(&out));
    assert!(stderr(&out).contains("not.pem"), "{}", text(&out));
}

/// `git` in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_word_stats_binary_serving_one_manifest_fails_first_on_another() {
    // Started by hand from its own manifest (the one embedded at build time).
    let agent = AgentProcess::start(word_stats_binary(), &[]).await;
    let original = std::fs::read_to_string(word_stats_manifest()).unwrap();
    let edited = original.replacen("version: 1.0.0", "version: 1.1.0", 1);
    assert_ne!(original, edited);

    // The deployed manifest is in the history (committed, then edited in the work tree): the
    // first pointer where they differ is named.
    let repo = tempfile::tempdir().unwrap();
    let manifest = repo.path().join("holon.yaml");
    std::fs::write(&manifest, &original).unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "holon.yaml"]);
    git(repo.path(), &["commit", "-q", "-m", "deployed"]);
    std::fs::write(&manifest, &edited).unwrap();
    let out = run(&mut holon_test(&manifest, &agent.url, &[])).await;
    assert_eq!(code(&out), 101, "{}", text(&out));
    let err = stderr(&out);
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("error"))
        .map(str::trim)
        .collect();
    let first = errors.first().copied().unwrap_or_default();
    assert!(
        first.contains("serves another manifest")
            && first.contains("`word-stats 1.0.0`")
            && first.contains("`word-stats 1.1.0`"),
        "{}",
        text(&out)
    );
    assert!(
        stderr(&out).contains("first difference: `/version`: the server's says \"1.0.0\", this one \"1.1.0\" (the served manifest is `holon.yaml` at HEAD)"),
        "{}",
        text(&out)
    );
    // The run's first failure is that one: the trials report it before any other.
    let said = stdout(&out);
    let failures: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("---- ")?.strip_suffix(" ----"))
        .collect();
    assert_eq!(failures.first(), Some(&"mcp::initialize"), "{}", text(&out));

    // Outside any history the versions are still named, and it says why no pointer is.
    let elsewhere = tempfile::tempdir().unwrap();
    let lone = elsewhere.path().join("holon.yaml");
    std::fs::write(&lone, &edited).unwrap();
    let out = run(&mut holon_test(&lone, &agent.url, &[])).await;
    assert_eq!(code(&out), 101, "{}", text(&out));
    assert!(
        stderr(&out).contains("`word-stats 1.0.0`"),
        "{}",
        text(&out)
    );
    assert!(
        stderr(&out).contains("not in this repository's history"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_model_backed_server_already_running_is_judged_live_with_no_fault_planted() {
    // The ticket-triage server, started by hand against a model whose wording varies: what a
    // deployed model-backed agent is. Its manifest declares the upstream and has recordings.
    // (The fake model runs on a runtime of its own, outside the test's.)
    let model = super::upstream::model();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(judged_live(&model));
}

async fn judged_live(model: &crate::util::fake_model::FakeModel) {
    let agent = AgentProcess::start(
        ticket_triage_binary(),
        &[
            ("OPENAI_BASE_URL", std::ffi::OsStr::new(&model.url)),
            ("OPENAI_API_KEY", std::ffi::OsStr::new(super::upstream::KEY)),
        ],
    )
    .await;
    let manifest = root().join("examples/ticket-triage/holon.yaml");
    assert!(manifest.with_file_name("recordings").is_dir());
    // One call at a time, in the examples' order: the model's wording turns with each call, so
    // two runs give each example two different summaries, at most one of them the recorded one.
    let mut notes = Vec::new();
    for _ in 0..2 {
        let out = run(&mut holon_test(
            &manifest,
            &agent.url,
            &["--concurrency", "1"],
        ))
        .await;
        assert_eq!(code(&out), 0, "{}", text(&out));
        assert_eq!(
            passed(&out),
            [
                "mcp::2025-11-25::a question",
                "mcp::2025-11-25::an empty ticket",
                "mcp::2025-11-25::an outage",
                "mcp::2025-11-25::initialize",
                "mcp::2025-11-25::tools/list",
                "mcp::a question",
                "mcp::an empty ticket",
                "mcp::an outage",
                "mcp::initialize",
                "mcp::tools/list"
            ],
            "{}",
            text(&out)
        );
        // Nothing can be planted in a server's own upstream calls.
        assert!(!text(&out).contains("faults::"), "{}", text(&out));
        notes.extend(
            stderr(&out)
                .lines()
                .filter(|l| l.starts_with("note: live: `mcp::"))
                .map(|l| l.split('`').nth(1).unwrap_or_default().to_string()),
        );
    }
    notes.sort();
    notes.dedup();
    assert_eq!(notes, ["mcp::a question", "mcp::an outage"], "{notes:?}");
}

/// The official Python SDK's word-stats, which announces no `holon/manifest`, on a free port.
struct PythonServer {
    child: std::process::Child,
    url: String,
}

impl PythonServer {
    fn start() -> PythonServer {
        let python = root().join("target/interop/python");
        assert!(
            python.join("mcp").is_dir(),
            "the official Python MCP SDK is not in `{}`: run `.ci/setup-interop` first",
            python.display()
        );
        let port = free_port();
        let child = Command::new("python3")
            .arg(root().join("tests/fixtures/servers/py_server.py"))
            .env("PORT", port.to_string())
            .env("MODE", "ok")
            .env("PYTHONPATH", python)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let listening = crate::util::wait_until(Instant::now() + Duration::from_secs(30), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(listening, "the Python server did not listen on {port}");
        PythonServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_not_built_with_the_kit_is_tested_all_the_same_with_one_line_said() {
    let server = PythonServer::start();
    let out = run(&mut holon_test(&word_stats_manifest(), &server.url, &[])).await;
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(passed(&out), BOTH_ERAS, "{}", text(&out));
    let err = stderr(&out);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("could not be compared"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", text(&out));
    // One line for both eras it announces nothing in.
    assert!(
        notes[0].contains(
            "announces no `holon/manifest` in its answer to `server/discover` (2026-07-28) nor in its answer to `initialize` (2025-11-25)"
        ),
        "{}",
        notes[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_url_is_runtime_unavailable_naming_it_within_the_startup_timeout() {
    // A port nothing listens on.
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let started = Instant::now();
    let out = run(&mut holon_test(
        &word_stats_manifest(),
        &url,
        &["--startup-timeout", "2"],
    ))
    .await;
    let took = started.elapsed();
    assert_eq!(code(&out), 101, "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains(&format!(
            "the server at `{url}` could not be reached within 2 s"
        )),
        "{said}"
    );
    assert!(
        said.contains("gateway status: runtime_unavailable"),
        "{said}"
    );
    // Bounded by the startup timeout, not by a test's patience (the bound is generous).
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_that_is_not_an_mcp_endpoint_is_said_in_one_line() {
    for (behaviour, says) in [
        (
            Behaviour::Answer(
                200,
                "text/html; charset=utf-8",
                "<html><body>hello</body></html>",
            ),
            "is not an MCP endpoint: it answered `server/discover` (2026-07-28) and `initialize` (2025-11-25) with `text/html` rather than JSON or an event stream",
        ),
        (
            Behaviour::Answer(404, "text/plain", "no such page"),
            "answered `server/discover` (2026-07-28) and `initialize` (2025-11-25) with HTTP 404 Not Found: is not an MCP endpoint",
        ),
    ] {
        let front = Front::start(behaviour).await;
        let out = run(&mut holon_test(&word_stats_manifest(), &front.url, &[])).await;
        assert_eq!(code(&out), 101, "{}", text(&out));
        let said = stdout(&out);
        let lines: Vec<&str> = said.lines().filter(|l| l.contains(says)).collect();
        // One line a trial, that line alone: no page, no chain of errors.
        assert_eq!(lines.len(), 4, "{}", text(&out));
        assert!(
            lines.iter().all(|l| l.starts_with("the server at `")),
            "{lines:?}"
        );
        assert!(!text(&out).contains("<html>"), "{}", text(&out));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_headers_and_flags_are_refused_before_any_call() {
    let front = Front::start(Behaviour::Answer(200, "text/plain", "never asked")).await;
    let manifest = word_stats_manifest();
    for (args, exit, says) in [
        (
            vec!["--header", "Authorization Bearer x"],
            2,
            "with a colon after the name",
        ),
        (
            vec!["--header", "Authorization: Bearer x\nX-Evil: 1"],
            2,
            "holds a line break",
        ),
        (vec!["--header", "Bad Name: x"], 2, "is not a header name"),
        (vec!["--server-cmd", "true"], 2, "cannot be used with"),
        (
            vec![
                "--header",
                "Authorization: Bearer ${HOLON_TEST_UNSET_TOKEN}",
            ],
            1,
            "the variable `HOLON_TEST_UNSET_TOKEN` is not set",
        ),
    ] {
        let out =
            run(holon_test(&manifest, &front.url, &args).env_remove("HOLON_TEST_UNSET_TOKEN"))
                .await;
        assert_eq!(code(&out), exit, "{args:?}: {}", text(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains("Bearer x"), "{args:?}: {}", text(&out));
    }
    // Not a URL, or not http(s): a usage error too.
    for url in ["localhost:8080", "ftp://example.org/mcp"] {
        let out = run(&mut holon_test(&manifest, url, &[])).await;
        assert_eq!(code(&out), 2, "{url}: {}", text(&out));
    }
    // `--header` and `--ca-cert` need `--url`.
    let out = run(Command::new(BIN)
        .arg("--manifest")
        .arg(&manifest)
        .args(["--header", "A: b"]))
    .await;
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert_eq!(front.requests.load(Ordering::SeqCst), 0);
}

/// Whether process `pid` is still there (on Linux, a zombie not yet reaped counts as gone).
#[cfg(not(target_os = "linux"))]
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Whether process `pid` is still there (a zombie not yet reaped counts as gone).
#[cfg(target_os = "linux")]
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn under_nextest_the_scaffold_starts_one_server_for_the_whole_run_and_none_is_left() {
    use crate::util::{CARGO_LIMIT, OutputWithin};
    let root = tempfile::tempdir().unwrap();
    let (agent, _) = crate::scaffold::new_agent(root.path(), "one-server");
    // The server notes its pid at start in the file the test names: one line a server.
    let main = agent.join("src/main.rs");
    let source = std::fs::read_to_string(&main).unwrap();
    let counted = source.replace(
        "fn main() -> Result<(), holon_kit::ServeError> {\n",
        "fn main() -> Result<(), holon_kit::ServeError> {\n    if let Some(log) = std::env::var_os(\"SERVER_PIDS\") {\n        use std::io::Write;\n        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();\n        writeln!(file, \"{}\", std::process::id()).unwrap();\n    }\n",
    );
    assert_ne!(source, counted, "{source}");
    std::fs::write(&main, counted).unwrap();
    let pids = root.path().join("server-pids");

    let out = crate::scaffold::cargo(&agent)
        .args(["nextest", "run", "--no-fail-fast"])
        .env("SERVER_PIDS", &pids)
        .env_remove("HOLON_SERVER_URL")
        .output_within(CARGO_LIMIT);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    // Each trial ran in a process of its own, the MCP ones among them.
    let passes: Vec<&str> = said
        .lines()
        .filter(|l| l.trim_start().starts_with("PASS"))
        .collect();
    let mcp = passes.iter().filter(|l| l.contains(" mcp::")).count();
    assert!(mcp >= 4, "{said}");
    assert!(passes.iter().any(|l| l.contains("explore::mcp")), "{said}");
    assert!(said.contains("SETUP PASS"), "{said}");
    // One server served them all.
    let started: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(started.len(), 1, "{started:?}\n{said}");
    // And neither it nor its keeper outlives the run: nextest's exit ends the keeper, which
    // stops the server.
    let keeper: i32 = said
        .split_once("(keeper pid ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .and_then(|(pid, _)| pid.parse().ok())
        .unwrap_or_else(|| panic!("no keeper pid said\n{said}"));
    for (what, pid) in [("server", started[0]), ("keeper", keeper)] {
        let gone =
            crate::util::wait_until(Instant::now() + Duration::from_secs(15), || !alive(pid));
        assert!(gone, "the {what} (pid {pid}) outlived the nextest run");
    }

    // Without the setup script each MCP trial's process starts a server of its own: what the
    // count above is measured against.
    std::fs::remove_file(&pids).unwrap();
    std::fs::remove_file(agent.join(".config/nextest.toml")).unwrap();
    let out = crate::scaffold::cargo(&agent)
        .args(["nextest", "run", "--no-fail-fast"])
        .env("SERVER_PIDS", &pids)
        .output_within(CARGO_LIMIT);
    assert!(out.status.success(), "{}", text(&out));
    let started = std::fs::read_to_string(&pids).unwrap().lines().count();
    assert!(
        started >= mcp,
        "{started} servers for {mcp} MCP trials\n{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holon_server_url_points_the_test_target_at_a_server_already_running() {
    use crate::util::CARGO_LIMIT;
    let agent = AgentProcess::start(word_stats_binary(), &[]).await;
    let front = Front::start(Behaviour::Pass(agent.url.clone())).await;
    let cargo = || {
        let mut c = crate::util::cargo();
        c.current_dir(root())
            .args([
                "test",
                "-q",
                "-p",
                "word-stats",
                "--test",
                "holon",
                "--",
                "mcp::",
            ])
            .env("HOLON_EXPLORE_CASES", "0")
            .env("NO_COLOR", "1");
        c
    };
    let out = output_within_async(cargo().env("HOLON_SERVER_URL", &front.url), CARGO_LIMIT).await;
    assert!(out.status.success(), "{}", text(&out));
    // The MCP pass went to that server, and began by asking it who it is, in each era.
    assert_eq!(passed(&out), BOTH_ERAS, "{}", text(&out));
    assert!(front.requests.load(Ordering::SeqCst) >= 4);

    // A value that is not a URL is refused naming the variable, and nothing runs.
    let out =
        output_within_async(cargo().env("HOLON_SERVER_URL", "localhost:1"), CARGO_LIMIT).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out)
            .contains("error: `HOLON_SERVER_URL`: `localhost:1` is not an `http` or `https` URL"),
        "{}",
        text(&out)
    );
    assert!(passed(&out).is_empty(), "{}", text(&out));
}

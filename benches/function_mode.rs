//! The function pass of a TypeScript and a Python agent against its MCP pass, on the same
//! examples: the templates of `holon-test new --lang typescript|python`, their manifest given
//! `N` more success examples (default 200), run by the real `holon-test` with explore off in one
//! protocol era, `-- function::` against `-- mcp::`, each run timed from spawn to exit (the
//! process of the pass started inside it: the adapter's function mode, or its MCP server).
//! The goal: the function pass at most 1.5 times the MCP pass. Node 22 from
//! tests/interop/eras, the SDKs from tests/interop (`bash .ci/setup-interop` first), the
//! runtime packages from the files `bash .ci/dist` built.
//!
//! `cargo bench -p holon-kit --bench function_mode [-- RUNS [EXAMPLES]]` (default 7 runs each,
//! alternating, after one warm-up run of each).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/it/util/paths.rs"]
mod paths;
#[path = "common/times.rs"]
mod times;

use paths::{PLAIN_BIN, node22, root};
use times::{max, median, min, ms};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(7);
    let examples: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    println!("| Agent | Pass | Wall median | Wall min | Wall max | Runs |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut ratios = Vec::new();
    for lang in ["typescript", "python"] {
        let home = tempfile::tempdir().unwrap();
        let agent = template(home.path(), lang, examples);
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..=runs {
            for (i, pass) in ["function::", "mcp::"].into_iter().enumerate() {
                let took = timed(home.path(), &agent, pass, examples);
                // The first round warms the caches (Node's and Python's compiled modules).
                if round > 0 {
                    times[i].push(took);
                }
            }
        }
        for (i, pass) in ["function", "MCP"].into_iter().enumerate() {
            println!(
                "| {lang}, {examples} examples | {pass} | {} | {} | {} | {runs} |",
                ms(median(&times[i])),
                ms(min(&times[i])),
                ms(max(&times[i]))
            );
        }
        ratios.push((
            lang,
            median(&times[0]).as_secs_f64() / median(&times[1]).as_secs_f64(),
        ));
    }
    println!();
    for (lang, ratio) in ratios {
        println!("{lang}: the function pass takes {ratio:.2}x the MCP pass (goal: at most 1.5x)");
    }
}

/// The template of `lang` in `home`, with `extra` more success examples, ready to run offline.
fn template(home: &Path, lang: &str, extra: usize) -> PathBuf {
    let new = Command::new(PLAIN_BIN)
        .args(["new", "agent", "--lang", lang])
        .current_dir(home)
        .output()
        .unwrap();
    assert!(
        new.status.success(),
        "{}",
        String::from_utf8_lossy(&new.stderr)
    );
    let agent = home.join("agent");
    install_runtime(home);
    if lang == "typescript" {
        std::os::unix::fs::symlink(home.join("node_modules"), agent.join("node_modules")).unwrap();
    }
    std::fs::create_dir(home.join("bin")).unwrap();
    std::os::unix::fs::symlink(node22(), home.join("bin/node")).unwrap();
    // Four words each; "seven" the first of the longest.
    let mut more = String::from("examples:\n");
    for i in 0..extra {
        more.push_str(&format!(
            "  - name: example {i}\n    input: {{ text: \"seven eight three w{i}\" }}\n    output: {{ words: 4, longest: seven }}\n"
        ));
    }
    let path = agent.join("holon.yaml");
    let manifest = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, manifest.replacen("examples:\n", &more, 1)).unwrap();
    agent
}

/// The runtime packages of target/dist in `home`: `node_modules` (the package beside the
/// templates' dependencies, linked) and `python` (the wheel's module).
fn install_runtime(home: &Path) {
    let dist = root().join("target/dist");
    let find = |prefix: &str, suffix: &str| -> PathBuf {
        std::fs::read_dir(&dist)
            .expect("target/dist: run `bash .ci/dist` first")
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                // `holon-kit-VERSION.tgz`, not `holon-kit-holon-test-PLATFORM-VERSION.tgz`.
                (name.strip_prefix(prefix))
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
                    && name.ends_with(suffix)
            })
            .expect("the runtime packages: run `bash .ci/dist` first")
    };
    let modules = home.join("node_modules");
    std::fs::create_dir_all(modules.join("holon-kit")).unwrap();
    let interop = root().join("tests/interop/typescript/node_modules");
    for entry in std::fs::read_dir(interop).unwrap().flatten() {
        std::os::unix::fs::symlink(entry.path(), modules.join(entry.file_name())).unwrap();
    }
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(find("holon-kit-", ".tgz"))
        .arg("-C")
        .arg(modules.join("holon-kit"))
        .arg("--strip-components=1")
        .status()
        .unwrap();
    assert!(untar.success());
    let pip = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--no-deps", "--no-index"])
        .args([
            "--disable-pip-version-check",
            "--root-user-action=ignore",
            "--target",
        ])
        .arg(home.join("python"))
        .arg(find("holon_kit-", ".whl"))
        .status()
        .unwrap();
    assert!(pip.success());
}

/// One run of the pass whose trials begin with `filter`; every trial must pass.
fn timed(home: &Path, agent: &Path, filter: &str, extra: usize) -> Duration {
    let path = std::env::join_paths(std::iter::once(home.join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let start = Instant::now();
    let out = Command::new(PLAIN_BIN)
        .args([
            "--explore-cases",
            "0",
            "--protocol",
            "2026-07-28",
            "--",
            filter,
        ])
        .current_dir(agent)
        .env("PATH", path)
        .env(
            "PYTHONPATH",
            std::env::join_paths([home.join("python"), root().join("target/interop/python")])
                .unwrap(),
        )
        .env("NO_COLOR", "1")
        .env_remove("HOLON_EXPLORE_CASES")
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let passed = stdout.lines().filter(|l| l.ends_with("... ok")).count();
    // The template's four examples and the extra ones; the MCP pass adds `mcp::tools/list`.
    let expected = extra + 4 + usize::from(filter == "mcp::");
    assert!(
        out.status.success() && passed == expected,
        "{filter}: {passed} passed of {expected}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

//! The run's settings in `holon-test.toml` (`[server]`, `[explore]`, `[run]`), through the
//! binary: each honoured, below the command line and the environment, and a value its flag
//! would refuse refused at its line of the file.

use std::path::{Path, PathBuf};

use super::harness::Py;
use crate::util::{Finished, root};

/// word-stats' manifest in a folder of its own, with this `holon-test.toml` beside it.
fn agent(toml: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a folder");
    let manifest = dir.path().join("holon.yaml");
    std::fs::copy(
        root().join("tests/fixtures/harness/word-stats.yaml"),
        &manifest,
    )
    .expect("the manifest");
    std::fs::write(dir.path().join("holon-test.toml"), toml).expect("the file");
    (dir, manifest)
}

/// The number of cases `explore::mcp`'s coverage line says it ran.
fn cases(run: &Finished) -> String {
    let line = (run.stderr.lines())
        .find_map(|l| l.strip_prefix("explore::mcp: "))
        .unwrap_or_else(|| panic!("no coverage line\n{run}"));
    line.split(" cases").next().unwrap_or("").to_string()
}

#[test]
fn explore_cases_in_the_file_are_honoured_below_the_variable_and_the_flag() {
    let (_dir, manifest) = agent("[explore]\ncases = 7\n");
    let run = Py::new("ok").explore().manifest_at(&manifest).run();
    run.expect_failed(&[]);
    assert_eq!(cases(&run), "7", "{run}");
    let run = (Py::new("ok").explore().manifest_at(&manifest))
        .env("HOLON_EXPLORE_CASES", "5")
        .run();
    assert_eq!(cases(&run), "5", "{run}");
    let run = (Py::new("ok").explore().manifest_at(&manifest))
        .env("HOLON_EXPLORE_CASES", "5")
        .args(&["--explore-cases", "4"])
        .run();
    assert_eq!(cases(&run), "4", "{run}");
}

#[test]
fn the_server_s_era_the_concurrency_and_the_junit_report_come_from_the_file() {
    let (dir, manifest) = agent(
        "[server]\nprotocol = \"2025-11-25\"\nstartup_timeout_s = 20\n\n[explore]\ncases = 0\n\n[run]\nconcurrency = 1\njunit = \"out/report.xml\"\n",
    );
    let run = Py::new("ok")
        .every_era()
        .explore()
        .manifest_at(&manifest)
        .run();
    run.expect_code(0);
    let trials: Vec<String> = run.trials().into_keys().collect();
    // One era, as the file pins it; no explore trial, as it turns explore off.
    assert_eq!(
        trials,
        [
            "mcp::a short article",
            "mcp::an empty document",
            "mcp::tools/list"
        ],
        "{run}"
    );
    assert!(
        run.stderr.contains("mcp: tested in 2025-11-25 only"),
        "{run}"
    );
    // The report's path is beside the file, wherever the command ran.
    let report = std::fs::read_to_string(dir.path().join("out/report.xml")).expect("the report");
    assert!(report.contains("mcp::a short article"), "{report}");
}

#[test]
fn a_value_its_flag_would_refuse_is_refused_at_its_line_and_nothing_runs() {
    let (_dir, manifest) = agent("[explore]\ncases = 100001\nsed = 3\n");
    let run = Py::new("ok").explore().manifest_at(&manifest).run();
    run.expect_code(1);
    for needle in [
        "error[unknown-field]: unknown field `sed` in `[explore]`",
        "= hint: did you mean `seed`?",
    ] {
        assert!(run.stderr.contains(needle), "{needle}\n{run}");
    }
    let (_dir, manifest) = agent("[explore]\ncases = 100001\n\n[run]\nconcurrency = 0\n");
    let run = Py::new("ok").explore().manifest_at(&manifest).run();
    run.expect_code(1);
    let file = Path::new(&manifest).with_file_name("holon-test.toml");
    for needle in [
        "error[invalid-value]: `cases = 100001` in `[explore]`: the number of explore cases must be a whole number from 0 (0 turns explore off) to 100000".to_string(),
        format!("--> {}:2:9", file.display()),
        "error[invalid-value]: `concurrency = 0` in `[run]`".to_string(),
        format!("--> {}:5:15", file.display()),
    ] {
        assert!(run.stderr.contains(&needle), "{needle}\n{run}");
    }
    assert!(run.trials().is_empty(), "{run}");
}

//! `holon-test explain ID`: every id the checks report on the broken manifests is listed and
//! explained, an id is found however it is pasted, an unknown one is refused with the nearest
//! named, and the guide's diagnostics page holds every explanation.

use std::process::Output;

use crate::util::{OutputWithin, run};
use crate::util::{PLAIN_BIN, RUN_LIMIT, code, fixtures, root, stderr, stdout};

fn explain(args: &[&str]) -> Output {
    std::process::Command::new(PLAIN_BIN)
        .arg("explain")
        .args(args)
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT)
}

/// The ids `explain --list` lists, in its order.
fn listed() -> Vec<String> {
    let output = explain(&["--list"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    stdout(&output)
        .lines()
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn the_list_has_one_id_a_line_id_first_and_no_id_lists_them_too() {
    let output = explain(&["--list"]);
    let text = stdout(&output);
    let ids = listed();
    assert_eq!(ids.len(), holon_core::ids::ENTRIES.len());
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (id, severity) = (words.next().unwrap(), words.next().unwrap());
        assert!(
            id.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{line}"
        );
        assert!(["error", "warning"].contains(&severity), "{line}");
        assert!(words.next().is_some(), "no summary: {line}");
    }
    let bare = explain(&[]);
    assert_eq!(code(&bare), 0);
    assert_eq!(stdout(&bare), text, "`explain` with no id lists them all");
    assert!(ids.iter().any(|id| id == "source-commit-stale"));
}

#[test]
fn an_id_in_any_case_or_pasted_whole_from_a_report_is_explained() {
    let plain = explain(&["string-unbounded"]);
    assert_eq!(code(&plain), 0, "{}", stderr(&plain));
    assert!(
        stdout(&plain).starts_with("warning[string-unbounded]: a string with no `maxLength`\n\n"),
        "{}",
        stdout(&plain)
    );
    for asked in [
        "STRING-UNBOUNDED",
        "warning[string-unbounded]",
        "warning[string-unbounded]: the string at `interface.input.properties.word` has no `maxLength`",
    ] {
        let output = explain(&[asked]);
        assert_eq!(code(&output), 0, "{asked}: {}", stderr(&output));
        assert_eq!(stdout(&output), stdout(&plain), "{asked}");
    }
    let error = explain(&["error[yaml-syntax]:"]);
    assert!(stdout(&error).starts_with("error[yaml-syntax]: "));
}

#[test]
fn an_unknown_id_exits_2_naming_the_nearest() {
    let output = explain(&["unknwon-field"]);
    assert_eq!(code(&output), 2);
    assert_eq!(stdout(&output), "");
    assert_eq!(
        stderr(&output),
        "error: no diagnostic has the id `unknwon-field` (did you mean `unknown-field`?)\n  = hint: `holon-test explain --list` lists every id\n"
    );
}

/// The ids `check` reports on every broken manifest of the check fixtures, and on the
/// published fixture compared with itself changed.
fn reported() -> std::collections::BTreeSet<String> {
    let mut ids = std::collections::BTreeSet::new();
    let mut add = |output: &Output| {
        let doc: serde_json::Value = serde_json::from_str(&stdout(output)).unwrap();
        for d in doc["diagnostics"].as_array().unwrap() {
            ids.insert(d["check"].as_str().unwrap().to_string());
        }
    };
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        add(&run(&fixtures(), &["check", &name, "--format", "json"]));
    }
    // A change under the published version, and a published manifest that is not there.
    let dir = tempfile::tempdir().unwrap();
    let published = root().join("tests/fixtures/against/published.yaml");
    let text = std::fs::read_to_string(&published).unwrap();
    assert!(text.contains("price: 0.002"));
    std::fs::write(
        dir.path().join("holon.yaml"),
        text.replace("price: 0.002", "price: 0.003"),
    )
    .unwrap();
    let published = published.to_str().unwrap();
    for old in [published, "gone.yaml"] {
        add(&run(
            dir.path(),
            &["check", "holon.yaml", "--against", old, "--format", "json"],
        ));
    }
    ids
}

#[test]
fn every_id_check_reports_on_the_broken_manifests_is_listed_and_explained_with_an_example() {
    let listed = listed();
    let reported = reported();
    assert!(reported.len() >= 40, "{reported:?}");
    for id in &reported {
        assert!(
            listed.contains(id),
            "`{id}` is not listed by `explain --list`"
        );
        let output = explain(&[id]);
        assert_eq!(code(&output), 0, "{id}: {}", stderr(&output));
        let text = stdout(&output);
        let lines = text
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .count();
        assert!(lines >= 5, "`{id}` is explained in {lines} lines:\n{text}");
        assert!(text.contains("```"), "`{id}` has no example:\n{text}");
        assert!(
            text.contains("Related: `"),
            "`{id}` names no related id:\n{text}"
        );
    }
}

/// Every diagnostic is made from an id of `holon_core::ids`: no shipped code writes a
/// `Diagnostic` with an id of its own.
#[test]
fn no_diagnostic_is_made_with_an_id_outside_the_table() {
    let literal = regex::Regex::new(r#"\bcheck:\s*""#).unwrap();
    let mut found = Vec::new();
    let mut folders = vec![root().join("crates"), root().join("src")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (n, line) in text.lines().enumerate() {
                    if literal.is_match(line) {
                        found.push(format!("{}:{}: {line}", path.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The guide's diagnostics page holds every explanation, each under its id, included from the
/// file `explain` prints.
#[test]
fn the_guide_explains_every_id_from_the_same_file() {
    let page = std::fs::read_to_string(root().join("docs/src/reference/diagnostics.md")).unwrap();
    for id in listed() {
        let section =
            format!("### `{id}`\n\n{{{{#include ../../../crates/holon-core/src/ids/{id}.md}}}}\n");
        assert!(page.contains(&section), "the page lacks:\n{section}");
    }
}

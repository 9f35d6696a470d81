//! The README and the guide (`docs/`) cannot drift: every relative link resolves (a page
//! renamed fails, naming the page that links to it), every page is in `SUMMARY.md`, the guide
//! builds with the pinned mdBook, the README stays a front door with CI's own test command, and
//! every command block marked as run (```` ```console run=FOLDER ````) prints what it shows, and
//! the reference's table of settings is the one the harness's table of settings gives.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{
    BIN, OutputWithin, PLAIN_BIN, RUN_LIMIT, root, ticket_triage_binary, word_stats_binary,
};

/// The pages a reader can reach: the README, the guide's sources, and the two files the guide
/// includes as appendices.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![
        root().join("README.md"),
        root().join("ARCHITECTURE.md"),
        root().join("BENCHMARKS.md"),
    ];
    let mut folders = vec![root().join("docs/src")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// `path` relative to the repository's root, as a failure names it.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A page's lines, each with its number, outside fenced code blocks (where a `[x](y)` or a `#`
/// is code, not Markdown).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((n + 1, line));
        }
    }
    lines
}

/// A line with its code spans blanked out: a link inside backticks is an example, not a link.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut parts = line.split('`');
    let mut inside = false;
    for part in parts.by_ref() {
        if !inside {
            out.push_str(part);
        }
        inside = !inside;
    }
    out
}

/// The relative targets a page names, with their line: Markdown links and images, and mdBook's
/// `{{#include PATH}}`.
fn targets(text: &str) -> Vec<(usize, String)> {
    let link = regex::Regex::new(r"\]\(([^)\s]+)(?:\s+[^)]*)?\)").unwrap();
    let include = regex::Regex::new(r"\{\{#include\s+([^}\s]+)\s*\}\}").unwrap();
    let mut found = Vec::new();
    for (n, line) in prose(text) {
        let plain = without_code(line);
        for c in link.captures_iter(&plain) {
            let target = &c[1];
            if !target.contains("://") && !target.starts_with("mailto:") {
                found.push((n, target.to_string()));
            }
        }
        for c in include.captures_iter(line) {
            found.push((n, c[1].to_string()));
        }
    }
    found
}

/// A page's text with mdBook's `{{#include PATH}}` lines replaced by what they include.
fn expanded(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let include = regex::Regex::new(r"\{\{#include\s+([^}\s]+)\s*\}\}").unwrap();
    include
        .replace_all(&text, |c: &regex::Captures| {
            std::fs::read_to_string(path.parent().unwrap().join(&c[1])).unwrap_or_default()
        })
        .into_owned()
}

/// The anchors of a page's headings, as GitHub and mdBook make them: lowercase, letters,
/// digits, `-` and `_` kept, a space made `-`, anything else dropped.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = expanded(path);
    prose(&text)
        .into_iter()
        .filter_map(|(_, line)| line.strip_prefix('#'))
        .map(|heading| heading.trim_start_matches('#'))
        .filter(|heading| heading.starts_with(' '))
        .map(|heading| {
            heading
                .trim()
                .chars()
                .filter_map(|c| match c {
                    c if c.is_alphanumeric() || c == '-' || c == '_' => {
                        Some(c.to_lowercase().next().unwrap_or(c))
                    }
                    c if c.is_whitespace() => Some('-'),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every broken relative link of every page, each said with the page and line that hold it;
/// `gone` is a page taken as renamed away.
fn broken_links(gone: Option<&Path>) -> Vec<String> {
    let mut broken = Vec::new();
    for page in pages().into_iter().filter(|p| Some(p.as_path()) != gone) {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, target) in targets(&text) {
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let at = format!("{}:{line}", shown(&page));
            if !resolved.exists() || gone.is_some_and(|g| same(g, &resolved)) {
                broken.push(format!(
                    "{at}: `{target}` names `{}`, which does not exist",
                    shown(&resolved)
                ));
            } else if let Some(anchor) = anchor
                && resolved.is_file()
                && !anchors(&resolved).contains(anchor)
            {
                broken.push(format!(
                    "{at}: `{target}`: `{}` has no heading `#{anchor}`",
                    shown(&resolved)
                ));
            }
        }
    }
    broken
}

/// Whether two paths name the same file (`a/../b` and `b` do).
fn same(a: &Path, b: &Path) -> bool {
    std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
}

#[test]
fn every_relative_link_of_the_readme_and_the_guide_resolves() {
    let broken = broken_links(None);
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The check itself: a page renamed is named by the pages that link to it.
#[test]
fn a_renamed_page_is_named_by_the_page_that_links_to_it() {
    let page = root().join("docs/src/ci.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let (line, target) = targets(&text)
        .into_iter()
        .find(|(_, t)| t.starts_with("publishing.md"))
        .expect("ci.md links to publishing.md");
    let broken = broken_links(Some(&root().join("docs/src/publishing.md")));
    assert!(
        broken.contains(&format!(
            "docs/src/ci.md:{line}: `{target}` names `docs/src/publishing.md`, which does not exist"
        )),
        "{broken:#?}"
    );
}

#[test]
fn every_page_of_the_guide_is_in_its_summary() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = targets(&summary)
        .into_iter()
        .map(|(_, t)| src.join(t))
        .collect();
    let missing: Vec<String> = pages()
        .into_iter()
        .filter(|p| p.starts_with(&src) && !p.ends_with("SUMMARY.md") && !listed.contains(p))
        .map(|p| shown(&p))
        .collect();
    assert!(
        missing.is_empty(),
        "pages not in docs/src/SUMMARY.md: {missing:?}"
    );
    assert!(listed.len() >= 8, "the guide has {} pages", listed.len());
}

#[test]
fn the_readme_is_a_front_door_with_the_test_command_ci_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines, more than 250");
    let run = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let command = run.lines().last().unwrap();
    let shown = format!("Test command (what `.ci/run` runs):\n\n```sh\n{command}\n```");
    assert!(
        readme.contains(&shown),
        "the README's test command is not `.ci/run`'s last line, `{command}`"
    );
}

/// The guide built with the pinned mdBook (`.ci/docs` installs it), into a folder of its own.
#[test]
fn the_guide_builds() {
    let mdbook = root().join("target/docs-tools/python/bin/mdbook");
    assert!(
        mdbook.is_file(),
        "no `{}`: run `bash .ci/docs` first (the README's test command does)",
        shown(&mdbook)
    );
    let out = tempfile::tempdir().unwrap();
    let built = Command::new(&mdbook)
        .arg("build")
        .arg(root().join("docs"))
        .arg("--dest-dir")
        .arg(out.path())
        .output_within(RUN_LIMIT);
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "mdbook build failed:\n{said}");
    assert!(!said.contains("WARN") && !said.contains("ERROR"), "{said}");
    assert!(out.path().join("reference/diagnostics.html").is_file());
}

/// One command block marked as run: where it is (its page, and the lines of its fences), the
/// folder it runs in (copied), and its commands, each with the output it shows.
struct Block {
    page: PathBuf,
    lines: (usize, usize),
    folder: PathBuf,
    steps: Vec<(String, String)>,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", shown(&self.page), self.lines.0 + 1)
    }
}

/// Every block of every page whose info string is `console run=FOLDER` (FOLDER relative to the
/// repository's root): `$ COMMAND` lines, each followed by what it prints.
fn blocks() -> Vec<Block> {
    let mut blocks = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut current: Option<Block> = None;
        for (n, line) in text.lines().enumerate() {
            if let Some(mut block) = current.take() {
                if line.trim_start().starts_with("```") {
                    block.lines.1 = n;
                    blocks.push(block);
                } else if let Some(command) = line.strip_prefix("$ ") {
                    block.steps.push((command.to_string(), String::new()));
                    current = Some(block);
                } else {
                    let (_, output) = block.steps.last_mut().unwrap_or_else(|| {
                        panic!("{}:{}: output before any `$ ` command", shown(&page), n + 1)
                    });
                    output.push_str(line);
                    output.push('\n');
                    current = Some(block);
                }
            } else if let Some(folder) = line.strip_prefix("```console run=") {
                current = Some(Block {
                    page: page.clone(),
                    lines: (n, n),
                    folder: root().join(folder.trim()),
                    steps: Vec::new(),
                });
            }
        }
    }
    blocks
}

/// What varies from run to run, the same on both sides: a test's duration, a free port, a
/// receipt's latency and run, a call's milliseconds as a person reads them.
fn steady(text: &str) -> String {
    let time = regex::Regex::new(r"finished in \d+\.\d+s").unwrap();
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let ms = regex::Regex::new(r#""ms":\d+"#).unwrap();
    let run = regex::Regex::new(r#""run_id":"[0-9a-f]+-[0-9a-f]+""#).unwrap();
    let said = regex::Regex::new(r"\b\d+ ms\b").unwrap();
    let text = time.replace_all(text, "finished in [TIME]s");
    let text = port.replace_all(&text, "127.0.0.1:[PORT]");
    let text = ms.replace_all(&text, r#""ms":[MS]"#);
    let text = run.replace_all(&text, r#""run_id":"[RUN]""#);
    said.replace_all(&text, "[MS] ms").into_owned()
}

/// A folder of commands named as an author types them: `holon-test`, and `cargo-holon-test`
/// for `cargo holon-test`, each the binary under test.
fn commands() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    for (name, target) in [("holon-test", PLAIN_BIN), ("cargo-holon-test", BIN)] {
        std::os::unix::fs::symlink(target, bin.path().join(name)).unwrap();
    }
    bin
}

/// Copies the folder `from` into `to`, whole.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// `HOLON_DOCS=overwrite` writes what each block's commands printed into the block, as
/// `TRYCMD=overwrite` does: read the diff before you commit it.
fn overwrite(blocks: &[Block], printed: &[Vec<String>]) {
    let mut pages: Vec<&Path> = blocks.iter().map(|b| b.page.as_path()).collect();
    pages.dedup();
    for page in pages {
        let text = std::fs::read_to_string(page).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (block, printed) in blocks.iter().zip(printed).rev() {
            if block.page != page {
                continue;
            }
            let mut body = Vec::new();
            for ((command, _), out) in block.steps.iter().zip(printed) {
                body.push(format!("$ {command}"));
                body.extend(out.lines().map(str::to_string));
            }
            lines.splice(block.lines.0 + 1..block.lines.1, body);
        }
        std::fs::write(page, lines.join("\n") + "\n").unwrap();
    }
}

#[test]
fn every_command_block_marked_as_run_prints_what_it_shows() {
    let blocks = blocks();
    assert!(blocks.len() >= 20, "{} blocks marked as run", blocks.len());
    let bin = commands();
    let path = std::env::join_paths(std::iter::once(bin.path().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut drifted = Vec::new();
    let mut all = Vec::new();
    for block in &blocks {
        let at = block.at();
        assert!(
            block.folder.is_dir(),
            "{at}: no folder `{}`",
            shown(&block.folder)
        );
        let mut printed_here = Vec::new();
        let work = tempfile::tempdir().unwrap();
        copy(&block.folder, work.path());
        for (command, shows) in &block.steps {
            // One pipe for both streams, so the lines come in the order they were written.
            let output = Command::new("sh")
                .arg("-c")
                .arg(format!("exec 2>&1; {command}"))
                .current_dir(work.path())
                .env("PATH", &path)
                // The example agents' servers, which the blocks' `holon-test.toml` start.
                .env("WORD_STATS", word_stats_binary())
                .env("TICKET_TRIAGE", ticket_triage_binary())
                .env("NO_COLOR", "1")
                .env_remove("GITHUB_ACTIONS")
                .stdin(Stdio::null())
                .output_within(RUN_LIMIT);
            let printed = String::from_utf8_lossy(&output.stdout).into_owned();
            // A fence in the output would end the page's block where the output goes on.
            assert!(
                !printed.lines().any(|l| l.trim_start().starts_with("```")),
                "{at}: `{command}` prints a line that starts with a fence:\n{printed}"
            );
            if steady(&printed) == steady(shows) {
                // What the page shows stands: an overwrite changes only what drifted.
                printed_here.push(shows.clone());
            } else {
                drifted.push(format!(
                    "{at}: `{command}` printed:\n{printed}\nthe page shows:\n{shows}"
                ));
                printed_here.push(printed);
            }
        }
        all.push(printed_here);
    }
    if std::env::var_os("HOLON_DOCS").is_some_and(|v| v == "overwrite") {
        overwrite(&blocks, &all);
        return;
    }
    assert!(
        drifted.is_empty(),
        "{}\n(after a change on purpose: HOLON_DOCS=overwrite writes what was printed)",
        drifted.join("\n")
    );
}

/// Where the reference's table of settings starts and ends.
const SETTINGS_TABLE: (&str, &str) = (
    "<!-- The table below is made from the table of settings (crates/holon-harness/src/defs.rs): HOLON_DOCS=overwrite cargo test --test it docs::every writes it again. -->",
    "<!-- End of the table of settings. -->",
);

#[test]
fn every_setting_is_on_the_settings_page_as_its_entry_gives_it() {
    let page = root().join("docs/src/reference/settings.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let (start, end) = SETTINGS_TABLE;
    let (Some(from), Some(to)) = (text.find(start), text.find(end)) else {
        panic!(
            "`{}` has no table of settings between its markers",
            shown(&page)
        );
    };
    let shows = &text[from + start.len()..to];
    let table = format!("\n\n{}\n", holon_harness::command::reference_table());
    if std::env::var_os("HOLON_DOCS").is_some_and(|v| v == "overwrite") {
        let written = format!("{}{table}{}", &text[..from + start.len()], &text[to..]);
        std::fs::write(&page, written).unwrap();
        return;
    }
    assert_eq!(
        shows, table,
        "the table of settings drifted from `defs.rs`\n(HOLON_DOCS=overwrite writes it again)"
    );
}

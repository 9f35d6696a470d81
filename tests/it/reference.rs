//! The reference cannot drift from the binary: every subcommand and every long option that
//! `holon-test --help` and each subcommand's `--help` print is named in the table or the prose of
//! `docs/src/reference/commands.md` (the help blocks shown as printed do not count), read from
//! the built binary's help (wherever the options are defined); the crate's version has its CHANGELOG section; the README and the quick start
//! name the Node version the TypeScript template asks for; the crates' READMEs link absolutely,
//! as crates.io shows them.

use std::collections::BTreeSet;
use std::process::Command;

use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, root, stdout};

/// `holon-test ARGS --help`, as printed.
fn help(args: &[&str]) -> String {
    let out = Command::new(PLAIN_BIN)
        .args(args)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT);
    assert!(out.status.success(), "{args:?} --help: {out:?}");
    stdout(&out)
}

/// The subcommands a help lists under `Commands:` (`help` aside).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long options a help defines (an option's own line, not one named in a description),
/// `--help` and `--version` aside.
fn options(help: &str) -> BTreeSet<String> {
    let option = regex::Regex::new(r"^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)").unwrap();
    help.lines()
        .filter_map(|l| option.captures(l).map(|c| c[1].to_string()))
        .filter(|o| o != "--help" && o != "--version")
        .collect()
}

/// A page's text outside its fenced blocks: the help the page shows as printed does not count as
/// naming an option, the table and the prose do.
fn prose(page: &str) -> String {
    let mut fenced = false;
    let mut text = String::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

/// Whether `text` names `option` as a word of its own (`--url` is not named by `--url-x`).
fn names(text: &str, option: &str) -> bool {
    regex::Regex::new(&format!(r"(^|[^\w-]){}($|[^\w-])", regex::escape(option)))
        .unwrap()
        .is_match(text)
}

#[test]
fn every_subcommand_and_option_of_the_help_is_on_the_commands_page() {
    let page =
        prose(&std::fs::read_to_string(root().join("docs/src/reference/commands.md")).unwrap());
    let top = help(&[]);
    let commands = subcommands(&top);
    assert!(commands.len() >= 7, "{commands:?} in:\n{top}");
    let mut missing = Vec::new();
    for option in options(&top) {
        if !names(&page, &option) {
            missing.push(format!("`holon-test {option}`"));
        }
    }
    for command in &commands {
        // A row of the table, as the page writes every command.
        if !page.contains(&format!("| `cargo holon-test {command}")) {
            missing.push(format!("`holon-test {command}` (a row of the table)"));
        }
        for option in options(&help(&[command])) {
            if !names(&page, &option) {
                missing.push(format!("`holon-test {command} {option}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/src/reference/commands.md does not name:\n{}",
        missing.join("\n")
    );
}

/// The check itself: an option the help defines is found, one only named in a description is
/// not taken for one.
#[test]
fn the_options_are_read_from_their_own_lines() {
    let call = options(&help(&["call"]));
    for option in ["--example", "--function", "--save", "--url"] {
        assert!(call.contains(option), "{call:?}");
    }
    let report = options(&help(&["report"]));
    assert!(!report.contains("--receipts"), "{report:?}");
}

#[test]
fn the_readme_and_the_quick_start_name_the_node_the_template_asks_for() {
    let package: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("crates/holon-cli/templates/typescript/package.json"))
            .unwrap(),
    )
    .unwrap();
    let engines = package["engines"]["node"].as_str().expect("engines.node");
    let version = engines.trim_start_matches(">=");
    for page in ["README.md", "docs/src/quick-start.md"] {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        assert!(
            text.contains(&format!("Node.js {version} or later")),
            "{page} does not say `Node.js {version} or later` (`engines`: `{engines}`)"
        );
        assert!(!text.contains("Node.js 20"), "{page} names Node.js 20");
    }
}

#[test]
fn the_crates_readmes_link_absolutely() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)|^\[[^\]]+\]:\s*(\S+)").unwrap();
    let mut relative = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let readme = entry.unwrap().path().join("README.md");
        let Ok(text) = std::fs::read_to_string(&readme) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for c in link.captures_iter(line) {
                let target = c.get(1).or_else(|| c.get(2)).unwrap().as_str();
                if !target.starts_with("https://") && !target.starts_with('#') {
                    relative.push(format!("{}:{}: `{target}`", readme.display(), n + 1));
                }
            }
        }
    }
    assert!(
        relative.is_empty(),
        "links that break on crates.io:\n{}",
        relative.join("\n")
    );
}

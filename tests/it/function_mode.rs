//! The function pass of a TypeScript or Python agent: the template's adapter in its function
//! mode (`[server] function`), under the bad input it must survive: an agent that prints to
//! stdout (the protocol has its own connection), a call that never answers (`timeout` at
//! `timeout_s`), one that ends the process (that call alone `agent_crashed`, with the
//! process's last lines, and the process started again for the rest), and an agent module that
//! does not import (its error shown once, whole, every call failing in one line).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::runtime_packages::{installed, link_node_modules, pythonpath};
use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, root, text};

/// The template of `lang` from `new`, ready to run offline: the runtime package from the built
/// files, the rest from the interop folders, Node 22 first on the PATH.
fn template(lang: &str) -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().expect("a folder");
    let new = Command::new(PLAIN_BIN)
        .args(["new", "agent", "--lang", lang])
        .current_dir(home.path())
        .output_within(RUN_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    let agent = home.path().join("agent");
    if lang == "typescript" {
        link_node_modules(&installed(), &agent);
    }
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).expect("a folder");
    std::os::unix::fs::symlink(crate::util::paths::node22(), bin.join("node")).expect("a link");
    (home, agent)
}

/// `holon-test` in the agent, explore off.
fn run(home: &Path, agent: &Path) -> Output {
    run_with(home, agent, &[])
}

/// `holon-test` in the agent with `args`, explore off.
fn run_with(home: &Path, agent: &Path, args: &[&str]) -> Output {
    let path = std::env::join_paths(std::iter::once(home.join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("a PATH");
    Command::new(PLAIN_BIN)
        .args(["--explore-cases", "0"])
        .args(args)
        .current_dir(agent)
        .env("PATH", path)
        .env("PYTHONPATH", pythonpath(&installed()))
        .env("NO_COLOR", "1")
        .env_remove("HOLON_PROTOCOL")
        .env_remove("HOLON_EXPLORE_CASES")
        .output_within(RUN_LIMIT)
}

/// The template's function mode, as its `holon-test.toml` names it.
fn command(lang: &str) -> &'static str {
    match lang {
        "typescript" => "node agent.ts --function",
        _ => "python agent.py --function",
    }
}

/// Inserts `planted` before `anchor` in the agent's `file`.
fn plant(agent: &Path, file: &str, anchor: &str, planted: &str) {
    let path = agent.join(file);
    let source = std::fs::read_to_string(&path).expect("the agent");
    assert!(source.contains(anchor), "{source}");
    std::fs::write(
        &path,
        source.replacen(anchor, &format!("{planted}{anchor}"), 1),
    )
    .expect("write");
}

/// The manifest with an example the agent's planted lines answer badly (`hang`, `exit`) first,
/// and a `timeout_s` of 5 s; the manifest as it was.
fn bad_example(agent: &Path, text: &str) -> String {
    let path = agent.join("holon.yaml");
    let manifest = std::fs::read_to_string(&path).expect("the manifest");
    let name = if text == "hang" { "a hang" } else { "an exit" };
    let changed = manifest.replace("timeout_s: 10", "timeout_s: 5").replacen(
        "examples:\n",
        &format!(
            "examples:\n  - name: {name}\n    input: {{ text: {text} }}\n    output: {{ words: 1, longest: {text} }}\n"
        ),
        1,
    );
    assert_ne!(manifest, changed);
    std::fs::write(&path, changed).expect("write");
    manifest
}

/// Each trial's line: `ok` or `FAILED`, by name.
fn outcomes(out: &Output) -> std::collections::BTreeMap<String, bool> {
    (String::from_utf8_lossy(&out.stdout).lines())
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| {
            let (name, end) = l.rsplit_once(" ... ")?;
            Some((name.trim().to_string(), end == "ok"))
        })
        .collect()
}

/// The failure of `trial`, as printed.
fn failure<'a>(out: &'a str, trial: &str) -> &'a str {
    let start = out
        .find(&format!("---- {trial} ----"))
        .unwrap_or_else(|| panic!("no failure of `{trial}`:\n{out}"));
    let rest = &out[start..];
    let end = rest[5..].find("\n---- ").map_or(rest.len(), |e| e + 5);
    &rest[..end]
}

fn survives_what_a_function_mode_does_wrong(lang: &str, planted: (&str, &str, &str)) {
    let (home, agent) = template(lang);
    let (file, anchor, lines) = planted;
    plant(&agent, file, anchor, lines);
    // Each alone: what a call that never answers does to the others is wait its turn.
    for bad in ["hang", "exit"] {
        let manifest = bad_example(&agent, bad);
        let out = run(home.path(), &agent);
        let printed = text(&out);
        let ended = outcomes(&out);
        for good in [
            "a sentence",
            "short words left out",
            "an empty text",
            "no word long enough",
        ] {
            // Printed to stdout at every call, and never taken for an answer; in flight when
            // the process exited, and answered once it was started again. (The MCP server
            // the exit ends too is the MCP pass's to report.)
            assert_eq!(
                ended.get(&format!("function::{good}")),
                Some(&true),
                "{bad}: {printed}"
            );
        }
        if bad == "hang" {
            let hang = failure(&printed, "function::a hang");
            assert!(
                hang.contains("the run passed `runtime.limits.timeout_s` (5 s) and was cancelled")
                    && hang.contains("gateway status: timeout"),
                "{hang}"
            );
        } else {
            let exit = failure(&printed, "function::an exit");
            for needle in [
                "got `agent_crashed`",
                "the agent's function mode exited (exit status: 3) during the call; it is started again for the calls after this one. Its last lines:",
                "leaving now",
            ] {
                assert!(exit.contains(needle), "{needle}\n{exit}");
            }
        }
        std::fs::write(agent.join("holon.yaml"), manifest).expect("restore");
    }

    // An agent module that does not import: said once, whole; each call in one line.
    let (home, agent) = template(lang);
    let broken = match lang {
        "typescript" => "throw new Error('the agent cannot load: MISSING_KEY is unset');\n",
        _ => "raise RuntimeError(\"the agent cannot load: MISSING_KEY is unset\")\n",
    };
    let source = std::fs::read_to_string(agent.join(file)).expect("the agent");
    std::fs::write(agent.join(file), format!("{broken}{source}")).expect("write");
    let out = run(home.path(), &agent);
    let printed = text(&out);
    // Whole, once, with the module's own error and where it is.
    let said = format!("error: the agent's function mode (`{}`", command(lang));
    assert_eq!(printed.matches(&said).count(), 1, "{printed}");
    let whole = &printed[printed.find(&said).unwrap_or(0)..];
    assert!(
        whole.contains("the agent cannot load: MISSING_KEY is unset"),
        "{printed}"
    );
    let at_line_1 = [format!("{file}:1"), format!("{file}\", line 1")];
    assert!(at_line_1.iter().any(|at| whole.contains(at)), "{printed}");
    let call = failure(&printed, "function::a sentence");
    assert!(
        call.contains("did not start: the server exited before it answered (exit status: 1) (its output is printed above)"),
        "{call}"
    );
}

#[test]
fn the_typescript_function_mode_survives_prints_hangs_exits_and_a_module_that_does_not_load() {
    survives_what_a_function_mode_does_wrong(
        "typescript",
        (
            "agent.ts",
            "  const minLength = input.min_length ?? 1;\n",
            "  console.log('{\"id\": 1, \"output\": {\"words\": 0, \"longest\": \"\"}}');\n  if (input.text === 'hang') { await new Promise(() => {}); }\n  if (input.text === 'exit') { console.error('leaving now'); process.exit(3); }\n",
        ),
    );
}

#[test]
fn the_python_function_mode_survives_prints_hangs_exits_and_a_module_that_does_not_load() {
    survives_what_a_function_mode_does_wrong(
        "python",
        (
            "agent.py",
            "    min_length = input.get(\"min_length\", 1)\n",
            "    import asyncio, os, sys\n    print('{\"id\": 1, \"output\": {\"words\": 0, \"longest\": \"\"}}', flush=True)\n    if input[\"text\"] == \"hang\":\n        await asyncio.Event().wait()\n    if input[\"text\"] == \"exit\":\n        print(\"leaving now\", file=sys.stderr, flush=True)\n        os._exit(3)\n",
        ),
    );
}

/// `call --function` in a TypeScript or Python agent goes through the adapter's function mode
/// that `[server] function` names, and without one is refused, naming the file and the key.
#[test]
fn call_function_goes_through_the_function_mode_holon_test_toml_names() {
    for lang in ["typescript", "python"] {
        let (home, agent) = template(lang);
        let path = std::env::join_paths(std::iter::once(home.path().join("bin")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("a PATH");
        let call = |flags: &[&str]| {
            Command::new(PLAIN_BIN)
                .args(["call", r#"{"text": "one two one"}"#, "--format", "json"])
                .args(flags)
                .current_dir(&agent)
                .env("PATH", &path)
                .env("PYTHONPATH", pythonpath(&installed()))
                .env("NO_COLOR", "1")
                .output_within(RUN_LIMIT)
        };
        for (flags, pass) in [(&["--function"][..], "function"), (&[][..], "mcp")] {
            let out = call(flags);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{lang} {flags:?}: {}",
                text(&out)
            );
            let got: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("one JSON document");
            assert_eq!(
                (got["status"].as_str(), got["pass"].as_str()),
                (Some("success"), Some(pass)),
                "{lang}: {got}"
            );
        }
        let settings = agent.join("holon-test.toml");
        let text_of = std::fs::read_to_string(&settings).expect("the settings");
        let without: String = (text_of.lines())
            .filter(|l| !l.starts_with("function ="))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&settings, without).expect("write");
        let refused = call(&["--function"]);
        assert_eq!(refused.status.code(), Some(2), "{lang}: {}", text(&refused));
        assert!(
            String::from_utf8_lossy(&refused.stderr).starts_with(
                "error: `--function` calls the agent function, and `holon-test.toml` names none: add `function = \"CMD\"` under `[server]`"
            ),
            "{lang}: {}",
            text(&refused)
        );
    }
}

/// An agent that blocks the loop its calls run on for 5 s on one input (`timeout_s` 2 s),
/// with every call in flight at once: that input's two trials fail, as blocking, and no other.
fn one_blocked_input_fails_alone(lang: &str, planted: (&str, &str, &str)) {
    let (home, agent) = template(lang);
    let (file, anchor, lines) = planted;
    plant(&agent, file, anchor, lines);
    let path = agent.join("holon.yaml");
    let manifest = std::fs::read_to_string(&path).expect("the manifest");
    let changed = manifest.replace("timeout_s: 10", "timeout_s: 2").replacen(
        "examples:\n",
        "examples:\n  - name: a block\n    input: { text: block }\n    output: { words: 1, longest: block }\n",
        1,
    );
    assert_ne!(manifest, changed);
    std::fs::write(&path, changed).expect("write");
    let out = run_with(home.path(), &agent, &["--concurrency", "16"]);
    let printed = text(&out);
    let ended = outcomes(&out);
    let failed: Vec<&String> = ended
        .iter()
        .filter(|(_, ok)| !**ok)
        .map(|(n, _)| n)
        .collect();
    let blocking = [
        "function::a block",
        "mcp::2025-11-25::a block",
        "mcp::a block",
    ];
    assert_eq!(failed, blocking, "{printed}");
    let blocked = failure(&printed, "function::a block");
    // An adapter of the agent's own answers no ping: it is replaced, as blocked or not.
    let said = match printed.contains("is an adapter of this agent's own") {
        true => "made alone; the function mode was started again for the calls after it",
        false => "this input blocks the agent's process",
    };
    assert!(
        blocked.contains(said) && blocked.contains("gateway status: timeout"),
        "{blocked}"
    );
    assert!(
        failure(&printed, "mcp::a block").contains("this input blocks the server"),
        "{printed}"
    );
    // The call is said to block what answers, and the calls that waited behind it (when any
    // did: the others may have answered before it blocked) are not said to be its seriality.
    for who in ["the agent function", "the server"] {
        let said = format!("blocked {who} alone (reported as such)");
        assert!(printed.contains(&said), "{said}\n{printed}");
    }
    assert!(!printed.contains("takes calls one at a time"), "{printed}");
}

#[test]
fn a_python_function_that_blocks_its_loop_fails_only_its_own_trials() {
    one_blocked_input_fails_alone(
        "python",
        (
            "agent.py",
            "    min_length = input.get(\"min_length\", 1)\n",
            "    import time\n    if input[\"text\"] == \"block\":\n        time.sleep(5)\n",
        ),
    );
}

#[test]
fn a_typescript_function_that_spins_fails_only_its_own_trials() {
    one_blocked_input_fails_alone(
        "typescript",
        (
            "agent.ts",
            "  const minLength = input.min_length ?? 1;\n",
            "  if (input.text === 'block') { const until = Date.now() + 5000; while (Date.now() < until) {} }\n",
        ),
    );
}

/// Explore through a function mode whose loop one input blocks (`min_length` 100, an edge of
/// the schema) among a batch in flight: the input it reports fails alone, under `call
/// --function`, and no input it does not block is blamed.
#[test]
fn explore_blames_only_the_input_that_blocks_a_python_function() {
    let (home, agent) = template("python");
    plant(
        &agent,
        "agent.py",
        "    min_length = input.get(\"min_length\", 1)\n",
        "    import time\n    if input.get(\"min_length\") == 100:\n        time.sleep(4)\n",
    );
    let path = agent.join("holon.yaml");
    let manifest = std::fs::read_to_string(&path).expect("the manifest");
    std::fs::write(&path, manifest.replace("timeout_s: 10", "timeout_s: 2")).expect("write");
    let bin = std::env::join_paths(std::iter::once(home.path().join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("a PATH");
    let holon = |args: &[&str]| {
        Command::new(PLAIN_BIN)
            .args(args)
            .current_dir(&agent)
            .env("PATH", &bin)
            .env("PYTHONPATH", pythonpath(&installed()))
            .env("NO_COLOR", "1")
            .env_remove("HOLON_PROTOCOL")
            .env_remove("HOLON_EXPLORE_CASES")
            .output_within(RUN_LIMIT)
    };
    let out = holon(&[
        "--explore-cases",
        "24",
        "--concurrency",
        "16",
        "--",
        "explore::function",
        "--exact",
    ]);
    let printed = text(&out);
    let ended = outcomes(&out);
    assert_eq!(ended.get("explore::function"), Some(&false), "{printed}");
    let report = failure(&printed, "explore::function");
    assert!(report.contains("timeout"), "{report}");
    // The input it reports, smallest first: the one `min_length` 100 blocks.
    let line = (report.lines())
        .find(|l| l.contains("\"min_length\":100") || l.contains("\"min_length\": 100"))
        .unwrap_or_else(|| panic!("no blocking input named:\n{report}"));
    let start = line.find('{').expect("an input");
    let end = line.rfind('}').expect("an input");
    let input = &line[start..=end];
    let alone = holon(&["call", "--function", input]);
    let said = text(&alone);
    assert!(!alone.status.success(), "{said}");
    assert!(said.contains("timeout"), "{said}");
}

/// The TypeScript template under a Node older than its `engines.node` (here one that says
/// 20.11.1 and fails as Node 20 does on a `.ts` file): the run names both versions, in the
/// function pass and the MCP pass, and no trial calls it the agent's crash.
#[test]
fn an_old_node_is_named_with_the_version_the_template_needs() {
    let (home, agent) = template("typescript");
    let node = home.path().join("bin/node");
    std::fs::remove_file(&node).expect("the link");
    std::fs::write(
        &node,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo v20.11.1; exit 0; fi\necho 'TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension \".ts\"' >&2\nexit 1\n",
    )
    .expect("a node");
    let mut permissions = std::fs::metadata(&node).expect("node").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&node, permissions).expect("executable");
    let out = run(home.path(), &agent);
    let printed = text(&out);
    assert!(!out.status.success(), "{printed}");
    let said = "is Node 20.11.1, and package.json's `engines.node` asks for >=22.18: install Node 22.18.0 or later, or put it first on PATH";
    assert!(printed.contains(said), "{printed}");
    let call = failure(&printed, "function::a sentence");
    assert!(call.contains(said), "{call}");
    assert!(!printed.contains("agent_crashed"), "{printed}");
}

/// An agent scaffolded before the runtime packages: `agent.ts` or `agent.py` with today's
/// template's `run`, beside the adapter of its own that `new` wrote then (a copy in
/// tests/fixtures/adapters, with that template's `holon-test.toml` and package file), its types
/// written by `types` for an agent without the package.
fn old_agent(lang: &str) -> (tempfile::TempDir, PathBuf) {
    let (home, agent) = template(lang);
    let fixtures = root().join("tests/fixtures/adapters").join(lang);
    for entry in std::fs::read_dir(&fixtures)
        .expect("the adapter's files")
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).expect("a fixture");
        let text = text
            .replace("{{name}}", "agent")
            .replace("{{description}}", "An agent.")
            .replace("{{kit_version}}", env!("CARGO_PKG_VERSION"));
        std::fs::write(agent.join(entry.file_name()), text).expect("write");
    }
    let (file, import) = match lang {
        "typescript" => ("agent.ts", "import { serve } from 'holon-kit';\n\n"),
        _ => ("agent.py", "from holon_kit import serve\n\n"),
    };
    let source = std::fs::read_to_string(agent.join(file)).expect("the agent");
    let serve = match lang {
        "typescript" => "\nserve(run);\n",
        _ => "\n\nif __name__ == \"__main__\":\n    serve(run)\n",
    };
    assert!(
        source.contains(import) && source.ends_with(serve),
        "{source}"
    );
    let old = source.replacen(import, "", 1);
    std::fs::write(agent.join(file), &old[..old.len() - serve.len()]).expect("write");
    if lang == "typescript" {
        // The SDK the adapter imports, with no runtime package.
        std::fs::remove_file(agent.join("node_modules")).expect("the link");
        std::os::unix::fs::symlink(
            root().join("tests/interop/typescript/node_modules"),
            agent.join("node_modules"),
        )
        .expect("a link");
    }
    let types = Command::new(PLAIN_BIN)
        .arg("types")
        .current_dir(&agent)
        .output_within(RUN_LIMIT);
    assert!(types.status.success(), "{}", text(&types));
    (home, agent)
}

#[test]
fn an_agent_with_an_adapter_of_its_own_still_passes_and_the_run_says_once_how_to_move() {
    for lang in ["typescript", "python"] {
        let (home, agent) = old_agent(lang);
        let types = std::fs::read_to_string(agent.join(match lang {
            "typescript" => "holon.types.ts",
            _ => "holon_types.py",
        }))
        .expect("the types");
        assert!(
            !types.contains("holon-kit") && !types.contains("holon_kit"),
            "{types}"
        );
        let out = run(home.path(), &agent);
        let printed = text(&out);
        assert!(out.status.success(), "{lang}: {printed}");
        let ended = outcomes(&out);
        assert!(
            ended.contains_key("function::a sentence") && ended.values().all(|ok| *ok),
            "{lang}: {printed}"
        );
        let (adapter, registry, file) = match lang {
            "typescript" => ("node holon.ts --function", "npm", "package.json"),
            _ => ("python holon.py --function", "PyPI", "pyproject.toml"),
        };
        let note = format!(
            "note: the function mode `{adapter}` is an adapter of this agent's own; the kit's runtime package, `holon-kit` on {registry} at {}, serves `run` and its function mode for you, with `ctx.download`: add it to {file}",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(printed.matches(&note).count(), 1, "{lang}: {printed}");
        assert!(
            printed.contains("(the guide's \"Moving to the runtime package\" says how)"),
            "{printed}"
        );
    }
}

#[test]
fn a_runtime_package_of_another_version_than_the_binary_is_said_in_one_line() {
    let packages = installed();
    for lang in ["typescript", "python"] {
        let (home, agent) = template(lang);
        // The package as another release of it would be: its version is all that differs.
        let copy = home.path().join("packages");
        let (path, env) = match lang {
            "typescript" => {
                let modules = copy.join("node_modules");
                std::fs::create_dir_all(&modules).expect("a folder");
                for entry in std::fs::read_dir(&packages.node_modules)
                    .expect("the packages")
                    .flatten()
                {
                    if entry.file_name() != "holon-kit" {
                        let to = std::fs::read_link(entry.path()).expect("a link");
                        std::os::unix::fs::symlink(to, modules.join(entry.file_name()))
                            .expect("a link");
                    }
                }
                let package = modules.join("holon-kit");
                let copied = Command::new("cp")
                    .arg("-R")
                    .arg(packages.node_modules.join("holon-kit"))
                    .arg(&package)
                    .output_within(RUN_LIMIT);
                assert!(copied.status.success(), "{}", text(&copied));
                std::fs::remove_file(agent.join("node_modules")).expect("the link");
                std::os::unix::fs::symlink(&modules, agent.join("node_modules")).expect("a link");
                (package.join("package.json"), None)
            }
            _ => {
                let copied = Command::new("cp")
                    .arg("-R")
                    .arg(&packages.python)
                    .arg(&copy)
                    .output_within(RUN_LIMIT);
                assert!(copied.status.success(), "{}", text(&copied));
                (copy.join("holon_kit/__init__.py"), Some(copy.clone()))
            }
        };
        let said = std::fs::read_to_string(&path).expect("the version's file");
        let version = env!("CARGO_PKG_VERSION");
        assert!(said.contains(&format!("\"{version}\"")), "{said}");
        std::fs::write(
            &path,
            said.replacen(&format!("\"{version}\""), "\"0.1.9\"", 1),
        )
        .expect("write");
        let mut command = Command::new(PLAIN_BIN);
        command
            .args(["--explore-cases", "0", "--", "function::"])
            .current_dir(&agent)
            .env("PATH", path_with_node(home.path()))
            .env("NO_COLOR", "1");
        if let Some(python) = env {
            command.env(
                "PYTHONPATH",
                std::env::join_paths([python, root().join("target/interop/python")])
                    .expect("a PYTHONPATH"),
            );
        }
        let out = command.output_within(RUN_LIMIT);
        let printed = text(&out);
        assert!(out.status.success(), "{lang}: {printed}");
        let note = format!(
            "note: the agent runs on holon-kit 0.1.9 and this holon-test is {version}: pin `holon-kit` at {version} in"
        );
        assert_eq!(printed.matches(&note).count(), 1, "{lang}: {printed}");
    }
}

/// This process's PATH with Node 22 first.
fn path_with_node(home: &Path) -> std::ffi::OsString {
    std::env::join_paths(
        std::iter::once(home.join("bin")).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .expect("a PATH")
}

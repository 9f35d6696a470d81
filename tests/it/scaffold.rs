//! `cargo holon-test new`, then `cargo holon-test` in the new agent: the README's quick start,
//! exactly, and the two mistakes the harness must then catch.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{BIN, CARGO_LIMIT, OutputWithin, RUN_LIMIT, text};

fn bin_dir() -> PathBuf {
    Path::new(BIN).parent().expect("bin dir").to_path_buf()
}

/// The workspace's target folder, where the agents of the tests build (see [`cargo`]): an agent
/// there must not be named as one of the workspace's packages, whose binary it would replace.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is the target folder's tmp")
        .to_path_buf()
}

/// `cargo` with our freshly built `cargo-holon-test` first on the PATH, as an install would put it.
///
/// An agent in `dir` without a lock file gets the workspace's: it is built against the versions
/// the kit is tested with, and in the workspace's target folder, so its dependencies are the
/// builds the examples' test targets made (the same crates, versions and features) and only
/// the kit's crates and the agent are compiled again. (Resolved afresh, a new agent would
/// build every dependency once more in each CI run.)
pub(super) fn cargo(dir: &Path) -> Command {
    let lock = dir.join("Cargo.lock");
    if dir.join("Cargo.toml").is_file() && !lock.exists() {
        std::fs::copy(crate::util::root().join("Cargo.lock"), &lock).expect("copy Cargo.lock");
    }
    let path = std::env::join_paths(std::iter::once(bin_dir()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let mut c = crate::util::cargo();
    c.current_dir(dir)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("NO_COLOR", "1")
        // The workspace's own profile (Cargo.toml): a scaffolded agent is a workspace of its
        // own, whose test binaries would otherwise carry full debug info.
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env_remove("RUSTFLAGS");
    c
}

/// `cargo holon-test new NAME --kit-path KIT` in `dir`, which must succeed: the new agent's
/// folder, and what `new` printed.
pub(super) fn new_agent(dir: &Path, name: &str) -> (PathBuf, Output) {
    let new = cargo(dir)
        .args(["holon-test", "new", name, "--kit-path"])
        .arg(crate::util::root())
        .output_within(CARGO_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    (dir.join(name), new)
}

/// The trials a run passed, by name.
pub(super) fn passed_trials(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("test ")
                .and_then(|l| l.strip_suffix(" ... ok"))
        })
        .map(|n| n.trim().to_string())
        .collect()
}

pub(super) fn failed_trials(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("test ")
                .and_then(|l| l.strip_suffix(" ... FAILED"))
        })
        .map(|n| n.trim().to_string())
        .collect()
}

#[test]
fn a_new_agent_passes_its_own_tests_and_catches_drift() {
    let root = tempfile::tempdir().expect("tempdir");
    let (agent, new) = new_agent(root.path(), "my-agent");
    assert!(
        text(&new).contains("cd my-agent") && text(&new).contains("cargo holon-test"),
        "{}",
        text(&new)
    );

    // Editors get the manifest's schema out of the box: written beside it, named on its first
    // line for yaml-language-server, and the same as `cargo holon-test schema` prints.
    let schema = cargo(&agent)
        .args(["holon-test", "schema"])
        .output_within(CARGO_LIMIT);
    assert!(schema.status.success(), "{}", text(&schema));
    assert_eq!(
        std::fs::read_to_string(agent.join("holon.schema.json")).unwrap(),
        String::from_utf8_lossy(&schema.stdout)
    );
    let manifest = std::fs::read_to_string(agent.join("holon.yaml")).unwrap();
    assert!(
        manifest.starts_with("# yaml-language-server: $schema=holon.schema.json\n"),
        "{manifest}"
    );
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    let document: serde_json::Value = serde_saphyr::from_str(&manifest).unwrap();
    assert!(
        jsonschema::is_valid(&schema, &document),
        "the new agent's manifest does not match the schema written beside it"
    );

    let check = cargo(&agent)
        .args(["holon-test", "check"])
        .output_within(CARGO_LIMIT);
    assert!(check.status.success(), "{}", text(&check));
    assert!(
        text(&check).contains("accepted with 0 warnings"),
        "{}",
        text(&check)
    );

    let first = cargo(&agent)
        .args(["holon-test"])
        .output_within(CARGO_LIMIT);
    assert!(first.status.success(), "{}", text(&first));
    let out = text(&first);
    for trial in [
        "function::a sentence",
        "mcp::tools/list",
        "mcp::a sentence",
        "mcp::an empty text",
        "function::no word long enough",
        "explore::function",
        "explore::mcp",
        // The kit's runtime speaks both protocol eras, and is tested in each.
        "mcp::2025-11-25::tools/list",
        "mcp::2025-11-25::a sentence",
    ] {
        assert!(
            out.contains(&format!("test {trial}")),
            "missing {trial}:\n{out}"
        );
    }
    assert!(out.contains("16 passed; 0 failed"), "{out}");
    // The first build says nothing the author must act on: no compiler warning, the kit's
    // crates' included (a path dependency's are shown).
    assert!(!out.lines().any(|l| l.starts_with("warning: ")), "{out}");

    // The runtime takes the tool's name from the manifest it embeds, so a rebuilt server
    // follows a rename. A server built before the rename (a stale deployment) does not, and
    // the MCP pass must say so.
    let stale = root.path().join("stale-server");
    let built = target_dir().join("debug/my-agent");
    std::fs::copy(&built, &stale).expect("copy the server built from the original manifest");
    let manifest = agent.join("holon.yaml");
    let original = std::fs::read_to_string(&manifest).expect("read manifest");
    std::fs::write(
        &manifest,
        original.replace("tool: my_agent", "tool: my_agent_v2"),
    )
    .expect("write");
    let renamed = cargo(&agent)
        .args(["holon-test", "--server-cmd"])
        .arg(&stale)
        .output_within(CARGO_LIMIT);
    assert_eq!(renamed.status.code(), Some(101), "{}", text(&renamed));
    // Every call names a tool the server does not have, so they fail too, each saying why.
    assert!(
        failed_trials(&renamed).contains(&"mcp::tools/list".to_string()),
        "{}",
        text(&renamed)
    );
    assert!(
        text(&renamed).contains("unknown tool `my_agent_v2`"),
        "{}",
        text(&renamed)
    );
    assert!(
        text(&renamed).contains("`runtime.tool` in the manifest is `my_agent_v2`"),
        "{}",
        text(&renamed)
    );
    let rebuilt = cargo(&agent)
        .args(["holon-test"])
        .output_within(CARGO_LIMIT);
    assert!(
        rebuilt.status.success(),
        "a rebuilt server follows the manifest:\n{}",
        text(&rebuilt)
    );

    // An example output that no longer matches the code: both passes of that example fail, the
    // MCP pass in each era.
    std::fs::write(
        &manifest,
        original.replace(
            "output: { words: 8, longest: examples }",
            "output: { words: 9, longest: examples }",
        ),
    )
    .expect("write");
    let drifted = cargo(&agent)
        .args(["holon-test"])
        .output_within(CARGO_LIMIT);
    assert_eq!(drifted.status.code(), Some(101), "{}", text(&drifted));
    let mut failed = failed_trials(&drifted);
    failed.sort();
    assert_eq!(
        failed,
        [
            "function::a sentence",
            "mcp::2025-11-25::a sentence",
            "mcp::a sentence"
        ],
        "{}",
        text(&drifted)
    );
    assert!(text(&drifted).contains("`/words`"), "{}", text(&drifted));
}

#[test]
fn new_refuses_bad_names_and_existing_folders() {
    let root = tempfile::tempdir().expect("tempdir");
    for bad in ["My_Agent", "x", "self", "agent-"] {
        let out = Command::new(BIN)
            .current_dir(root.path())
            .args(["new", bad])
            .output_within(RUN_LIMIT);
        assert_eq!(out.status.code(), Some(1), "{bad}: {}", text(&out));
        assert!(
            text(&out).contains("is not a valid agent name"),
            "{bad}: {}",
            text(&out)
        );
    }
    let taken = root.path().join("taken");
    std::fs::create_dir(&taken).expect("mkdir");
    std::fs::write(taken.join("notes.txt"), "mine").expect("write");
    let out = Command::new(BIN)
        .current_dir(root.path())
        .args(["new", "taken"])
        .output_within(RUN_LIMIT);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("already exists and is not empty"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(taken.join("notes.txt")).expect("kept"),
        "mine"
    );
    assert_eq!(
        std::fs::read_dir(&taken).expect("list").count(),
        1,
        "nothing was added"
    );

    let empty = root.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let out = Command::new(BIN)
        .current_dir(root.path())
        .args(["new", "fine-name", "--path", "empty"])
        .output_within(RUN_LIMIT);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        empty.join("holon.yaml").is_file() && empty.join(".github/workflows/holon.yml").is_file()
    );
}

#[test]
fn a_new_model_agent_passes_its_own_tests_offline_and_without_a_key() {
    let root = tempfile::tempdir().expect("tempdir");
    let new = cargo(root.path())
        .args(["holon-test", "new", "my-triage", "--model", "--kit-path"])
        .arg(crate::util::root())
        .output_within(CARGO_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    let agent = root.path().join("my-triage");
    for file in [
        "holon-test.toml",
        "recordings/an-outage.json",
        "recordings/explore.json",
    ] {
        assert!(agent.join(file).is_file(), "no {file}");
    }
    // As CI runs it: no key, no model anywhere.
    let run = cargo(&agent)
        .args(["holon-test"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("HOLON_UPSTREAM")
        .output_within(CARGO_LIMIT);
    let out = text(&run);
    assert!(run.status.success(), "{out}");
    for trial in ["function::an outage", "mcp::a question", "explore::mcp"] {
        assert!(
            out.contains(&format!("test {trial}")),
            "missing {trial}:\n{out}"
        );
    }
    assert!(!out.contains("had no recording"), "{out}");
    // Nor does the model agent's own code build with a warning (its TLS provider included).
    assert!(!out.lines().any(|l| l.starts_with("warning: ")), "{out}");
    // The workflow CI runs needs no secret.
    let workflow =
        std::fs::read_to_string(agent.join(".github/workflows/holon.yml")).expect("workflow");
    assert!(!workflow.contains("secrets."), "{workflow}");
}

#[test]
fn the_model_template_is_the_ticket_triage_example() {
    // One agent, two places: what `new --model` writes is the example the tests record, so
    // the template's recordings answer its requests exactly.
    let example = crate::util::root().join("examples/ticket-triage");
    let template = crate::util::root().join("crates/holon-cli/templates/model");
    for file in [
        "src/lib.rs",
        "holon-test.toml",
        "recordings/an-outage.json",
        "recordings/a-question.json",
        "recordings/explore.json",
    ] {
        assert_eq!(
            std::fs::read_to_string(example.join(file)).expect("the example's"),
            std::fs::read_to_string(template.join(file)).expect("the template's"),
            "{file} differs between the example and the template (HOLON_REGENERATE=1 cargo test --test it upstream:: refreshes both)"
        );
    }
    let body = |path: PathBuf| {
        let text = std::fs::read_to_string(path).expect("a manifest");
        let (_, body) = text
            .split_once("\ninterface:")
            .map(|(h, b)| (h.to_string(), b.to_string()))
            .expect("an interface");
        body.replace("tool: ticket_triage", "tool: {{tool}}")
    };
    assert_eq!(
        body(example.join("holon.yaml")),
        body(template.join("holon.yaml"))
    );
}

#[test]
fn new_refuses_an_unknown_language_listing_the_languages() {
    let root = tempfile::tempdir().expect("tempdir");
    let out = Command::new(BIN)
        .current_dir(root.path())
        .args(["new", "my-agent", "--lang", "cobol"])
        .output_within(RUN_LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("invalid value 'cobol' for '--lang <LANG>'")
            && text(&out).contains("[possible values: typescript, python, rust]"),
        "{}",
        text(&out)
    );
    // What only the Rust template reads is refused with another language, not ignored.
    let out = Command::new(BIN)
        .current_dir(root.path())
        .args(["new", "my-agent", "--lang", "python", "--kit-path", "."])
        .output_within(RUN_LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("`--kit-path` is for a Rust agent, not with `--lang python`"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_dir(root.path()).expect("list").count(),
        0,
        "nothing was written"
    );
    // A folder that exists is refused in every language, as for Rust.
    let taken = root.path().join("taken");
    std::fs::create_dir(&taken).expect("mkdir");
    std::fs::write(taken.join("notes.txt"), "mine").expect("write");
    for lang in ["typescript", "python"] {
        let out = Command::new(BIN)
            .current_dir(root.path())
            .args(["new", "taken", "--lang", lang])
            .output_within(RUN_LIMIT);
        assert_eq!(out.status.code(), Some(1), "{lang}: {}", text(&out));
        assert!(
            text(&out).contains("already exists and is not empty"),
            "{}",
            text(&out)
        );
        assert_eq!(std::fs::read_dir(&taken).expect("list").count(), 1);
    }
}

/// The packages a template names, as `name -> version`.
fn pins(
    pairs: impl IntoIterator<Item = (String, String)>,
) -> std::collections::BTreeMap<String, String> {
    pairs.into_iter().collect()
}

#[test]
fn the_typescript_and_python_templates_pin_what_their_offline_tests_install() {
    // The TypeScript runtime package's dependencies are the interop folder's, version for
    // version (its build and the offline tests install the second, an author the first); the
    // templates depend on the package at the kit's version, and the model one on `openai` too.
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(crate::util::root().join(path)).unwrap())
            .unwrap()
    };
    let template = read("crates/holon-cli/templates/typescript-model/package.json");
    let plain = read("crates/holon-cli/templates/typescript/package.json");
    let runtime = read("runtime/typescript/package.json");
    let interop = read("tests/interop/typescript/package.json");
    let of = |doc: &serde_json::Value, field: &str| {
        pins(
            doc[field]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(name, _)| *name != "holon-test")
                .map(|(n, v)| (n.clone(), v.as_str().unwrap().to_string())),
        )
    };
    let mut sdk = of(&interop, "dependencies");
    let openai = sdk.remove("openai").unwrap();
    assert_eq!(of(&runtime, "dependencies"), sdk);
    assert!(sdk["@modelcontextprotocol/server"].starts_with("2."));
    assert_eq!(
        of(&plain, "dependencies"),
        pins([("holon-kit".to_string(), "{{kit_version}}".to_string())])
    );
    assert_eq!(
        of(&template, "dependencies"),
        pins([
            ("holon-kit".to_string(), "{{kit_version}}".to_string()),
            ("openai".to_string(), openai)
        ])
    );
    for doc in [&template, &plain, &runtime] {
        assert_eq!(of(doc, "devDependencies"), of(&interop, "devDependencies"));
    }
    for doc in [&template, &plain] {
        assert_eq!(doc["devDependencies"]["holon-test"], "{{kit_version}}");
    }

    // The Python runtime package's dependencies are pinned in
    // tests/interop/python/requirements.txt; the templates depend on the package.
    let read_text = |path: &str| std::fs::read_to_string(crate::util::root().join(path)).unwrap();
    let pyproject = read_text("crates/holon-cli/templates/python/pyproject.toml");
    let model = read_text("crates/holon-cli/templates/python-model/pyproject.toml");
    // The model template's: the plain one's and `openai`, at the version the tests install.
    assert_eq!(
        model.replacen("    \"openai==3.57.0\",\n", "", 1),
        pyproject,
        "{model}"
    );
    let requirements = read_text("tests/interop/python/requirements.txt");
    let pinned = pins(requirements.lines().filter_map(|l| {
        l.split_once("==")
            .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
    }));
    let named = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix('"').and_then(|l| l.strip_suffix("\",")))
            .map(str::to_string)
            .collect()
    };
    // The package, then the dev group: the kit and mypy.
    assert_eq!(
        named(&pyproject),
        [
            "holon-kit=={{kit_version}}",
            "holon-test=={{kit_version}}",
            "mypy==2.4.1"
        ],
        "{pyproject}"
    );
    let package = named(&read_text("runtime/python/pyproject.toml"));
    assert_eq!(
        package,
        [
            "httpx2==2.16.2",
            "mcp==2.3.0",
            "pyyaml==6.0.3",
            "uvicorn==0.54.0"
        ]
    );
    for requirement in package
        .iter()
        .chain(named(&model).iter())
        .chain(named(&pyproject).iter())
    {
        if requirement.contains("{{kit_version}}") {
            continue;
        }
        let (name, version) = requirement.split_once("==").unwrap();
        assert_eq!(
            pinned.get(name).map(String::as_str),
            Some(version),
            "{name}"
        );
    }
    assert!(
        pyproject.contains("dev = [\n    \"holon-test=={{kit_version}}\","),
        "{pyproject}"
    );
}

/// `npm test` or `uv run holon-test`, with its time.
fn timed(command: &mut Command, limit: std::time::Duration) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let out = command.output_within(limit);
    (out, start.elapsed())
}

/// Every example passed through the agent function (the adapter's function mode) and through the
/// server, and explore through each; the output's first lines on failure.
fn assert_template_passed(run: &Output) {
    let out = text(run);
    assert!(run.status.success(), "{out}");
    for trial in [
        "function::a sentence",
        "function::short words left out",
        "function::an empty text",
        "function::no word long enough",
        "explore::function",
        "mcp::tools/list",
        "mcp::a sentence",
        "mcp::short words left out",
        "mcp::an empty text",
        "mcp::no word long enough",
        "explore::mcp",
    ] {
        assert!(
            passed_trials(run).contains(&trial.to_string()),
            "{trial}:\n{out}"
        );
    }
}

/// The first example's output changed in holon.yaml: the run fails, naming that example only, in
/// both passes.
fn drift_and_assert_named(agent: &Path, run: &mut dyn FnMut() -> Output) {
    let manifest = agent.join("holon.yaml");
    let original = std::fs::read_to_string(&manifest).expect("the manifest");
    let drifted = original.replace(
        "output: { words: 8, longest: examples }",
        "output: { words: 8, longest: example }",
    );
    assert_ne!(original, drifted);
    std::fs::write(&manifest, drifted).expect("write");
    let out = run();
    assert!(!out.status.success(), "{}", text(&out));
    // Both eras the server speaks see the drift; the second is said in one line.
    let mut failed = failed_trials(&out);
    failed.sort();
    assert_eq!(
        failed,
        [
            "function::a sentence",
            "mcp::2025-11-25::a sentence",
            "mcp::a sentence"
        ],
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("(the same cause as `function::a sentence`, reported in full)"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("`/longest`"), "{}", text(&out));
}

/// The agent made to answer an output its schema refuses (`words: -1`) for a text of more
/// than 1,000 characters, which explore reaches (the edge of `maxLength`): the run fails
/// `explore::mcp` and prints the command that replays it, which must run as printed, in the
/// author's words (`npx holon-test ...`, `uv run holon-test ...`), and fail the same way.
fn assert_rerun_runs_as_printed(
    shell: &dyn Fn() -> Command,
    agent: &Path,
    (file, anchor, planted): (&str, &str, &str),
    form: &str,
    run: &mut dyn FnMut() -> Output,
) {
    let path = agent.join(file);
    let original = std::fs::read_to_string(&path).expect("the agent");
    assert!(original.contains(anchor), "{original}");
    std::fs::write(
        &path,
        original.replacen(anchor, &format!("{anchor}{planted}"), 1),
    )
    .expect("write");
    let out = run();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        failed_trials(&out).contains(&"explore::mcp".to_string()),
        "{}",
        text(&out)
    );
    let printed = text(&out);
    let replay = (printed.lines())
        .find_map(|l| l.strip_prefix("replay: "))
        .unwrap_or_else(|| panic!("no replay line:\n{printed}"))
        .to_string();
    assert!(replay.starts_with(form), "{replay}");
    let again = shell().args(["-c", &replay]).output_within(REGISTRY_LIMIT);
    assert_eq!(
        again.status.code(),
        Some(101),
        "{replay}:\n{}",
        text(&again)
    );
    // The trial it replays, `explore::function` or `explore::mcp`, fails again, alone.
    let trial = replay.rsplit(' ').next().unwrap_or_default();
    assert!(trial.starts_with("explore::"), "{replay}");
    assert_eq!(failed_trials(&again), [trial], "{}", text(&again));
    std::fs::write(&path, original).expect("restore");
}

const REGISTRY_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The agent and the types of its manifest (`holon.types.ts`, `holon_types.py`), through the
/// author's own commands (`kit`: `npx holon-test ARGS`, `uv run holon-test ARGS`; `check`: `tsc`,
/// `mypy`): an edit of the agent runs at once, with no build; an undeclared code fails the type
/// check; a new required output field makes a run say the types are out of date, naming the
/// command in the author's words, and once they are written again fails the type check.
fn assert_the_types_hold(
    agent: &Path,
    (file, answer, edited, code): (&str, &str, &str, &str),
    kit: &dyn Fn(&[&str]) -> Output,
    check: &dyn Fn() -> Output,
    form: &str,
) {
    let passed = check();
    assert!(passed.status.success(), "{}", text(&passed));
    let path = agent.join(file);
    let source = std::fs::read_to_string(&path).expect("the agent");
    let edit = |from: &str, to: &str| {
        assert!(source.contains(from), "`{from}` in {source}");
        std::fs::write(&path, source.replacen(from, to, 1)).expect("an edit");
    };

    // The edit is what runs: the example it changes fails, with no build in between.
    edit(answer, edited);
    let run = kit(&[]);
    assert!(
        failed_trials(&run).contains(&"mcp::a sentence".to_string()),
        "{}",
        text(&run)
    );
    // A code holon.yaml does not declare.
    edit(code, &code.replace("empty_text", "text_too_long"));
    let undeclared = check();
    assert!(!undeclared.status.success(), "{}", text(&undeclared));
    assert!(
        text(&undeclared).contains("text_too_long"),
        "{}",
        text(&undeclared)
    );
    std::fs::write(&path, &source).expect("restore");

    // A new required output field, in the schema and the examples.
    let manifest = agent.join("holon.yaml");
    let original = std::fs::read_to_string(&manifest).expect("the manifest");
    let changed = original
        .replace("required: [words, longest]", "required: [words, longest, lines]")
        .replace(
            "        description: The longest such word, the first one on a tie.\n",
            "        description: The longest such word, the first one on a tie.\n      lines:\n        type: integer\n        minimum: 0\n        description: The lines of the text.\n",
        )
        .replace("longest: examples }", "longest: examples, lines: 1 }")
        .replace("longest: server }", "longest: server, lines: 1 }");
    assert_eq!(changed.matches("lines").count(), 5, "{changed}");
    std::fs::write(&manifest, &changed).expect("a new field");
    let listed = kit(&["--", "--list"]);
    let said = format!(
        "is out of date with `holon.yaml`: its types are not the manifest's `interface` any more (run `{form} types`)"
    );
    assert!(text(&listed).contains(&said), "{said}\n{}", text(&listed));
    let types = kit(&["types"]);
    assert!(types.status.success(), "{}", text(&types));
    let missing = check();
    assert!(!missing.status.success(), "{}", text(&missing));
    assert!(text(&missing).contains("lines"), "{}", text(&missing));
    std::fs::write(&manifest, original).expect("restore");
    let types = kit(&["types"]);
    assert!(types.status.success(), "{}", text(&types));
    let passed = check();
    assert!(passed.status.success(), "{}", text(&passed));
}

#[test]
fn the_typescript_quick_start_works_as_written_with_no_rust_and_names_a_drifted_example() {
    use crate::util::dist::{Machine, dist};
    let dist = dist();
    let machine = Machine::new();
    // `holon-test` as npm will serve it once published, from the built files; the SDK and
    // everything else from the public registry.
    let registry = crate::util::registry::Registry::start(&[
        &dist.launcher,
        &dist.platform,
        &dist.runtime_npm,
    ]);
    let npm = |program: &str, dir: &Path| {
        let mut c = machine.command(program);
        c.current_dir(dir).env("npm_config_registry", &registry.url);
        c
    };
    // The README's two commands.
    let new = npm("npx", machine.home())
        .args(["holon-test", "new", "my-agent", "--lang", "typescript"])
        .output_within(REGISTRY_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    assert!(
        text(&new).contains("npm install && npm test"),
        "{}",
        text(&new)
    );
    let agent = machine.home().join("my-agent");
    let install = npm("npm", &agent)
        .arg("install")
        .output_within(REGISTRY_LIMIT);
    assert!(install.status.success(), "{}", text(&install));
    let (first, took) = timed(npm("npm", &agent).arg("test"), REGISTRY_LIMIT);
    eprintln!("the TypeScript template's first `npm test`: {took:.2?}");
    assert_template_passed(&first);
    assert_the_types_hold(
        &agent,
        (
            "agent.ts",
            "return { words: words.length, longest };",
            "return { words: words.length, longest: longest.toUpperCase() };",
            "ctx.fail('empty_text'",
        ),
        &|args| {
            npm("npx", &agent)
                .arg("holon-test")
                .args(args)
                .output_within(REGISTRY_LIMIT)
        },
        &|| npm("npx", &agent).arg("tsc").output_within(REGISTRY_LIMIT),
        "npx holon-test",
    );
    drift_and_assert_named(&agent, &mut || {
        npm("npm", &agent).arg("test").output_within(REGISTRY_LIMIT)
    });
    assert_rerun_runs_as_printed(
        &|| npm("sh", &agent),
        &agent,
        (
            "agent.ts",
            "const minLength = input.min_length ?? 1;\n",
            "  if (input.text.length > 1000) return { words: -1, longest: '' };\n",
        ),
        "npx holon-test ",
        &mut || npm("npm", &agent).arg("test").output_within(REGISTRY_LIMIT),
    );
}

#[test]
fn the_python_quick_start_works_as_written_with_no_rust_and_names_a_drifted_example() {
    use crate::util::dist::{Machine, dist};
    let dist = dist();
    let machine = Machine::new();
    // `holon-test` as PyPI will serve it once published, from the built wheel; the SDK and
    // everything else from the public index.
    let uv = |program: &str, dir: &Path| {
        let mut c = machine.command(program);
        c.current_dir(dir).env("UV_FIND_LINKS", &dist.dir);
        c
    };
    // The README's two commands.
    let new = uv("uvx", machine.home())
        .args(["holon-test", "new", "my-agent", "--lang", "python"])
        .output_within(REGISTRY_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    assert!(text(&new).contains("uv run holon-test"), "{}", text(&new));
    let agent = machine.home().join("my-agent");
    // `uv run` installs the project's environment, then runs.
    let (first, took) = timed(uv("uv", &agent).args(["run", "holon-test"]), REGISTRY_LIMIT);
    eprintln!("the Python template's first `uv run holon-test`, its install included: {took:.2?}");
    assert_template_passed(&first);
    assert_the_types_hold(
        &agent,
        (
            "agent.py",
            "return {\"words\": len(words), \"longest\": longest}",
            "return {\"words\": len(words), \"longest\": longest.upper()}",
            "ctx.fail(\"empty_text\"",
        ),
        &|args| {
            uv("uv", &agent)
                .args(["run", "holon-test"])
                .args(args)
                .output_within(REGISTRY_LIMIT)
        },
        &|| {
            uv("uv", &agent)
                .args(["run", "mypy"])
                .output_within(REGISTRY_LIMIT)
        },
        "uv run holon-test",
    );
    drift_and_assert_named(&agent, &mut || {
        uv("uv", &agent)
            .args(["run", "holon-test"])
            .output_within(REGISTRY_LIMIT)
    });
    assert_rerun_runs_as_printed(
        &|| uv("sh", &agent),
        &agent,
        (
            "agent.py",
            "    text = input[\"text\"]\n",
            "    if len(text) > 1000:\n        return {\"words\": -1, \"longest\": \"\"}\n",
        ),
        "uv run holon-test ",
        &mut || {
            uv("uv", &agent)
                .args(["run", "holon-test"])
                .output_within(REGISTRY_LIMIT)
        },
    );
}

/// One HTTP POST to `/mcp` on loopback, its connection closed after: the status and the
/// JSON-RPC message of the body (a JSON body, or the last `data:` of an event stream).
pub(crate) fn post(
    port: u16,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("a read timeout");
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(&answer)));
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {head:?}"));
    let mut payload = answer[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        payload = dechunk(&payload);
    }
    let payload = String::from_utf8_lossy(&payload).into_owned();
    let json = payload
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .unwrap_or(&payload)
        .to_string();
    (
        status,
        serde_json::from_str(json.trim()).unwrap_or(serde_json::Value::Null),
    )
}

/// A chunked body's bytes.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&body[..end]);
        let size =
            usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&body[start..start + size]);
        body = body.get(start + size + 2..).unwrap_or(&[]);
    }
    out
}

pub(crate) const ERA_2025: [(&str, &str); 1] = [("mcp-protocol-version", "2025-11-25")];

fn call(name: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": {"text": text}}})
}

/// A template's server, started on a free port; stopped when dropped.
pub(crate) fn start_server(
    agent: &Path,
    program: &str,
    args: &[&str],
    envs: &[(&str, &std::ffi::OsStr)],
) -> (crate::util::Running, u16) {
    let port = crate::util::free_port();
    let mut running = crate::util::Running::spawn(
        Command::new(program)
            .args(args)
            .current_dir(agent)
            .env("PORT", port.to_string())
            .envs(envs.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    );
    running.wait_for("the server's start", RUN_LIMIT, |r| {
        r.stderr().contains("listening on")
    });
    (running, port)
}

#[test]
fn the_typescript_and_python_runtime_packages_keep_the_runtimes_wire_contract_in_both_eras() {
    let root = tempfile::tempdir().expect("tempdir");
    let packages = crate::util::runtime_packages::installed();
    let site = crate::util::runtime_packages::pythonpath(&packages);
    for lang in ["typescript", "python"] {
        let new = Command::new(crate::util::PLAIN_BIN)
            .current_dir(root.path())
            .args(["new", lang, "--lang", lang])
            .output_within(RUN_LIMIT);
        assert!(new.status.success(), "{}", text(&new));
        let agent = root.path().join(lang);
        // The agent, given three behaviours the examples never show: slow, crashing, and
        // failing with a code it did not declare.
        let (file, anchor, prelude) = if lang == "typescript" {
            (
                "agent.ts",
                "  const minLength = input.min_length ?? 1;\n",
                "  if (input.text === 'slow') { console.error('slow call started'); await new Promise((r) => setTimeout(r, 1500)); if (ctx.signal.aborted) { console.error('the run was aborted'); } }\n  if (input.text === 'crash') { throw new TypeError('boom'); }\n  if (input.text === 'undeclared') { throw ctx.fail('not_declared', 'no such code'); }\n",
            )
        } else {
            (
                "agent.py",
                "    min_length = input.get(\"min_length\", 1)\n",
                "    import asyncio, sys\n    if input[\"text\"] == \"slow\":\n        print(\"slow call started\", file=sys.stderr, flush=True)\n        await asyncio.sleep(1.5)\n    if input[\"text\"] == \"crash\":\n        raise TypeError(\"boom\")\n    if input[\"text\"] == \"undeclared\":\n        raise ctx.fail(\"not_declared\", \"no such code\")\n",
            )
        };
        let source = std::fs::read_to_string(agent.join(file)).expect("the agent");
        assert!(source.contains(anchor), "{source}");
        std::fs::write(
            agent.join(file),
            source.replace(anchor, &format!("{prelude}{anchor}")),
        )
        .expect("write");
        // Node runs the TypeScript as it is: no build. (An undeclared code fails `tsc`, which
        // this agent is not held to: a JavaScript caller of `ctx.fail` is not either.)
        let node = crate::util::paths::node22();
        let (program, args): (&str, &[&str]) = if lang == "typescript" {
            crate::util::runtime_packages::link_node_modules(&packages, &agent);
            (node.to_str().expect("a UTF-8 path"), &["agent.ts"])
        } else {
            ("python3", &["agent.py"])
        };
        // The manifest's identity, as the Rust runtime announces it and `--url` reads it.
        let text = std::fs::read_to_string(agent.join("holon.yaml")).expect("the manifest");
        let (identity, _) =
            holon_core::manifest::identity::Identity::of_text(&text).expect("an identity");
        let envs = [("PYTHONPATH", site.as_os_str())];
        let (mut server, port) = start_server(&agent, program, args, &envs);

        // 2026-07-28: `server/discover`, and a call with the `_meta` envelope.
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let modern = [("mcp-protocol-version", "2026-07-28")];
        let (status, discover) = post(
            port,
            &[modern[0], ("mcp-method", "server/discover")],
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        );
        assert_eq!(status, 200, "{lang}: {discover}");
        assert!(
            discover["result"]["supportedVersions"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "2026-07-28")),
            "{lang}: {discover}"
        );
        assert_eq!(
            discover["result"]["_meta"]["holon/manifest"],
            identity.to_meta(),
            "{lang}: {discover}"
        );
        let mut modern_call = call(
            lang,
            "Agents answer with exactly what their examples promise.",
        );
        modern_call["params"]["_meta"] = meta.clone();
        let (status, answer) = post(
            port,
            &[modern[0], ("mcp-method", "tools/call"), ("mcp-name", lang)],
            &modern_call,
        );
        assert_eq!(status, 200, "{lang}: {answer}");
        assert_eq!(
            answer["result"]["structuredContent"],
            serde_json::json!({"words": 8, "longest": "examples"}),
            "{lang}: {answer}"
        );

        // 2025-11-25: `initialize` names the manifest; failures as the gateway reads them.
        let (_, init) = post(
            port,
            &ERA_2025,
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
        );
        assert_eq!(
            init["result"]["serverInfo"],
            serde_json::json!({"name": lang, "version": "0.1.0"}),
            "{lang}: {init}"
        );
        assert_eq!(
            init["result"]["_meta"]["holon/manifest"],
            identity.to_meta(),
            "{lang}: {init}"
        );
        for (input, code, says) in [
            ("crash", "agent_crashed", "TypeError: boom"),
            (
                "undeclared",
                "agent_crashed",
                "`not_declared`, which is not declared",
            ),
            ("  ", "empty_text", "the text is empty"),
        ] {
            let (_, answer) = post(port, &ERA_2025, &call(lang, input));
            let result = &answer["result"];
            assert_eq!(result["isError"], true, "{lang} {input}: {answer}");
            assert_eq!(
                result["structuredContent"]["error"]["code"], code,
                "{lang}: {answer}"
            );
            let message = result["structuredContent"]["error"]["message"]
                .as_str()
                .unwrap();
            assert!(message.contains(says), "{lang}: {message}");
            assert!(
                !message.contains("\n") && !message.contains("Traceback"),
                "{lang}: a stack in {message}"
            );
            let text = result["content"][0]["text"].as_str().unwrap();
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(text).unwrap(),
                result["structuredContent"]
            );
        }
        let (_, unknown) = post(port, &ERA_2025, &call("other_tool", "x"));
        assert_eq!(unknown["error"]["code"], -32602, "{lang}: {unknown}");

        // A browser page from elsewhere, or a rebound host name, is refused (the Python SDK
        // answers a foreign `Host` with 421 Misdirected Request).
        let foreign_host = if lang == "python" { 421 } else { 403 };
        for (header, refused) in [
            (("origin", "https://elsewhere.example"), 403),
            (("host", "elsewhere.example"), foreign_host),
        ] {
            let (status, _) = post(port, &[ERA_2025[0], header], &call(lang, "a text"));
            assert_eq!(status, refused, "{lang}: {header:?}");
        }

        // SIGTERM with a call in flight: the call gets its answer, then the server ends.
        let slow = std::thread::spawn(move || post(port, &ERA_2025, &call(lang, "slow")));
        server.wait_for("the slow call", RUN_LIMIT, |r| {
            r.stderr().contains("slow call started")
        });
        server.signal(libc::SIGTERM);
        let (status, answer) = slow.join().expect("the slow call");
        assert_eq!(status, 200, "{lang}: {answer}");
        assert_eq!(
            answer["result"]["structuredContent"],
            serde_json::json!({"words": 1, "longest": "slow"}),
            "{lang}: {answer}"
        );
        // (The limit counts from the server's start.) Node exits 0; uvicorn, once drained,
        // raises the signal it caught again, so the process ends as SIGTERM says.
        let ended = server.finish(RUN_LIMIT);
        if lang == "typescript" {
            assert_eq!(ended.status.code(), Some(0), "{lang}: {ended}");
        } else {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                ended.status.signal(),
                Some(libc::SIGTERM),
                "{lang}: {ended}"
            );
        }

        // `HOLON_MANIFEST` replaces the manifest: with `timeout_s: 1`, the slow call is cut.
        let manifest = std::fs::read_to_string(agent.join("holon.yaml")).expect("manifest");
        let quick = agent.join("quick.yaml");
        std::fs::write(&quick, manifest.replace("timeout_s: 10", "timeout_s: 1")).expect("write");
        let envs = [
            ("PYTHONPATH", site.as_os_str()),
            ("HOLON_MANIFEST", quick.as_os_str()),
        ];
        let (mut server, port) = start_server(&agent, program, args, &envs);
        let (_, answer) = post(port, &ERA_2025, &call(lang, "slow"));
        assert_eq!(
            answer["result"]["structuredContent"]["error"]["code"], "timeout",
            "{lang}: {answer}"
        );
        if lang == "typescript" {
            // The run is told: `ctx.signal` is aborted at the timeout.
            server.wait_for("the abort", RUN_LIMIT, |r| {
                r.stderr().contains("the run was aborted")
            });
        }
    }
}

/// A new TypeScript or Python agent, with or without `--model`, is the author's own files: at
/// most 20 lines of code outside the agent file and the generated types (there are none: the
/// wire code is the runtime package's), and the package pinned at the kit's version.
#[test]
fn a_new_typescript_or_python_agent_holds_no_wire_code_and_pins_the_runtime_package() {
    let home = tempfile::tempdir().expect("tempdir");
    let version = env!("CARGO_PKG_VERSION");
    for (lang, model) in [
        ("typescript", false),
        ("typescript", true),
        ("python", false),
        ("python", true),
    ] {
        let name = format!("{lang}-{model}");
        let mut new = Command::new(crate::util::PLAIN_BIN);
        new.current_dir(home.path())
            .args(["new", &name, "--lang", lang]);
        if model {
            new.arg("--model");
        }
        let out = new.output_within(RUN_LIMIT);
        assert!(out.status.success(), "{}", text(&out));
        let agent = home.path().join(&name);
        let (own, types, package) = match lang {
            "typescript" => ("agent.ts", "holon.types.ts", "package.json"),
            _ => ("agent.py", "holon_types.py", "pyproject.toml"),
        };
        let mut code = 0;
        let mut folders = vec![agent.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("a folder").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                    continue;
                }
                let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let source = [".ts", ".mts", ".js", ".mjs", ".py"]
                    .iter()
                    .any(|e| file.ends_with(e));
                if !source || file == own || file == types {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("a file");
                code += (text.lines().map(str::trim))
                    .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'))
                    .count();
            }
        }
        assert!(
            code <= 20,
            "{name}: {code} lines of code outside {own} and {types}"
        );
        assert!(!agent.join("holon.ts").exists() && !agent.join("holon.py").exists());
        let manifest = std::fs::read_to_string(agent.join(package)).expect("the package file");
        let pinned = match lang {
            "typescript" => format!("\"holon-kit\": \"{version}\""),
            _ => format!("\"holon-kit=={version}\""),
        };
        assert!(manifest.contains(&pinned), "{name}: {manifest}");
        let agent_file = std::fs::read_to_string(agent.join(own)).expect("the agent");
        assert!(agent_file.contains("serve(run)"), "{name}: {agent_file}");
    }
}

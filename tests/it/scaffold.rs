//! `cargo holon-test new`, then `cargo holon-test` in the new agent: the README's quick start,
//! exactly, and the two mistakes the harness must then catch.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{BIN, CARGO_LIMIT, OutputWithin, RUN_LIMIT, text};

fn bin_dir() -> PathBuf {
    Path::new(BIN).parent().expect("bin dir").to_path_buf()
}

/// `cargo` with our freshly built `cargo-holon-test` first on the PATH, as an install would put it.
pub(super) fn cargo(dir: &Path) -> Command {
    let path = std::env::join_paths(std::iter::once(bin_dir()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(dir)
        .env("PATH", path)
        // One target folder for every run, so the agent's dependencies build once.
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-target"),
        )
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

    // The runtime takes the tool's name from the manifest it embeds, so a rebuilt server
    // follows a rename. A server built before the rename (a stale deployment) does not, and
    // the MCP pass must say so.
    let stale = root.path().join("stale-server");
    let built = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-target/debug/my-agent");
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

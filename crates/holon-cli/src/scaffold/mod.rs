//! `holon-test new`: a new agent from the templates embedded in the binary, in Rust (holon-kit's
//! runtime), TypeScript or Python (the kit's runtime packages, `holon-kit` on npm and PyPI).

use std::path::{Path, PathBuf};

/// One template file: where it goes in the new agent, and its text with `{{...}}` holes.
#[derive(Clone, Copy)]
pub struct Template {
    /// Path inside the new agent.
    pub path: &'static str,
    /// Its contents, with `{{name}}`-style holes `render` fills.
    pub text: &'static str,
}

/// The template at `templates/FOLDER/FILE`, written to FILE in the new agent (or to the path
/// after `=>`).
macro_rules! template {
    ($folder:literal, $file:literal) => {
        template!($folder, $file => $file)
    };
    ($folder:literal, $file:literal => $path:literal) => {
        Template {
            path: $path,
            text: include_str!(concat!("../../templates/", $folder, "/", $file)),
        }
    };
}

/// Which agent `new` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An agent that computes its answer (word statistics).
    Plain,
    /// An agent with a model behind it (ticket triage through an OpenAI-compatible API), with
    /// its upstream declared and recorded.
    Model,
    /// The plain agent in TypeScript, on the official SDK.
    TypeScript,
    /// The plain agent in Python, on the official SDK.
    Python,
    /// The model-backed agent in TypeScript, on the official `openai` SDK.
    TypeScriptModel,
    /// The model-backed agent in Python, on the official `openai` SDK.
    PythonModel,
}

impl Kind {
    /// Every file of a new agent of this kind.
    pub fn templates(self) -> &'static [Template] {
        match self {
            Kind::Plain => TEMPLATES,
            Kind::Model => MODEL_TEMPLATES,
            Kind::TypeScript => TYPESCRIPT_TEMPLATES,
            Kind::Python => PYTHON_TEMPLATES,
            Kind::TypeScriptModel => TYPESCRIPT_MODEL_TEMPLATES,
            Kind::PythonModel => PYTHON_MODEL_TEMPLATES,
        }
    }

    /// The language whose types of the manifest (`holon-test types`) the agent imports.
    fn types(self) -> Option<crate::types::Language> {
        match self {
            Kind::TypeScript | Kind::TypeScriptModel => Some(crate::types::Language::TypeScript),
            Kind::Python | Kind::PythonModel => Some(crate::types::Language::Python),
            Kind::Plain | Kind::Model => None,
        }
    }

    /// What the agent does, as its manifest and package say it.
    fn description(self) -> &'static str {
        match self {
            Kind::Plain | Kind::TypeScript | Kind::Python => {
                "Counts the words of a text and finds the longest one."
            }
            Kind::Model | Kind::TypeScriptModel | Kind::PythonModel => {
                "Reads a support ticket and returns its priority and a one-line summary, written by a chat model."
            }
        }
    }
}

/// The server, the same for both kinds of agent.
const MAIN: Template = template!("agent", "src/main.rs");

/// The manifest's JSON Schema, for editors.
const SCHEMA: Template = Template {
    path: "holon.schema.json",
    text: "{{manifest_schema}}\n",
};

const GITIGNORE: Template = template!("agent", "gitignore" => ".gitignore");

/// The CI workflow: the test target on every push and pull request (no secret: a model-backed
/// agent replays its recordings).
const WORKFLOW: Template = template!("agent", ".github/workflows/holon.yml");

/// nextest's setup script, which starts the agent's server once for a whole `cargo nextest run`
/// and points the test target at it (`HOLON_SERVER_URL`).
const NEXTEST: Template = template!("agent", ".config/nextest.toml");

/// The manifest of the plain agent, the same in every language: the three templates teach one
/// agent.
const MANIFEST: Template = template!("agent", "holon.yaml");

/// Every file of a new agent. Embedded, so an installed `cargo-holon-test` needs no source tree.
pub const TEMPLATES: &[Template] = &[
    template!("agent", "Cargo.toml.tmpl" => "Cargo.toml"),
    MANIFEST,
    template!("agent", "src/lib.rs"),
    MAIN,
    template!("agent", "tests/holon.rs"),
    template!("agent", "README.md"),
    SCHEMA,
    GITIGNORE,
    NEXTEST,
    WORKFLOW,
];

/// Every file of a new model-backed agent (`new --model`): the one of `examples/ticket-triage`,
/// its recordings included, so that it passes its own tests offline on the first run.
pub const MODEL_TEMPLATES: &[Template] = &[
    template!("model", "Cargo.toml.tmpl" => "Cargo.toml"),
    MODEL_MANIFEST,
    template!("model", "holon-test.toml"),
    template!("model", "src/lib.rs"),
    MAIN,
    template!("model", "tests/holon.rs"),
    MODEL_RECORDINGS[0],
    MODEL_RECORDINGS[1],
    MODEL_RECORDINGS[2],
    template!("model", "README.md"),
    SCHEMA,
    GITIGNORE,
    WORKFLOW,
];

/// Every file of a new TypeScript agent (`new --lang typescript`): the function in `agent.ts`,
/// served by the runtime package (`holon-kit` on npm, at the kit's version), `holon-test` as a
/// development dependency, and `holon-test.toml` naming the server command.
pub const TYPESCRIPT_TEMPLATES: &[Template] = &[
    template!("typescript", "package.json"),
    template!("typescript", "tsconfig.json"),
    MANIFEST,
    template!("typescript", "holon-test.toml"),
    template!("typescript", "agent.ts"),
    template!("typescript", "README.md"),
    SCHEMA,
    template!("typescript", "gitignore" => ".gitignore"),
    template!("typescript", ".github/workflows/holon.yml"),
];

/// The model-backed agent's manifest and recordings, the same in every language: the requests
/// of the three agents are the same, so one set of recordings answers them all.
const MODEL_MANIFEST: Template = template!("model", "holon.yaml");
const MODEL_RECORDINGS: [Template; 3] = [
    template!("model", "recordings/an-outage.json"),
    template!("model", "recordings/a-question.json"),
    template!("model", "recordings/explore.json"),
];

/// Every file of a new model-backed TypeScript agent (`new --lang typescript --model`): the
/// plain TypeScript agent's runtime and checks, the agent on the official `openai` SDK, the
/// model declared in `holon-test.toml` and its answers in `recordings/`.
pub const TYPESCRIPT_MODEL_TEMPLATES: &[Template] = &[
    template!("typescript-model", "package.json"),
    template!("typescript", "tsconfig.json"),
    MODEL_MANIFEST,
    template!("typescript-model", "holon-test.toml"),
    template!("typescript-model", "agent.ts"),
    MODEL_RECORDINGS[0],
    MODEL_RECORDINGS[1],
    MODEL_RECORDINGS[2],
    template!("typescript-model", "README.md"),
    SCHEMA,
    template!("typescript", "gitignore" => ".gitignore"),
    template!("typescript", ".github/workflows/holon.yml"),
];

/// Every file of a new model-backed Python agent (`new --lang python --model`), as the
/// TypeScript one's.
pub const PYTHON_MODEL_TEMPLATES: &[Template] = &[
    template!("python-model", "pyproject.toml"),
    MODEL_MANIFEST,
    template!("python-model", "holon-test.toml"),
    template!("python-model", "agent.py"),
    MODEL_RECORDINGS[0],
    MODEL_RECORDINGS[1],
    MODEL_RECORDINGS[2],
    template!("python-model", "README.md"),
    SCHEMA,
    template!("python", "gitignore" => ".gitignore"),
    template!("python", ".github/workflows/holon.yml"),
];

/// Every file of a new Python agent (`new --lang python`): the function in `agent.py`, served
/// by the runtime package (`holon-kit` on PyPI, at the kit's version), `holon-test` as a
/// development dependency, and `holon-test.toml` naming the server command.
pub const PYTHON_TEMPLATES: &[Template] = &[
    template!("python", "pyproject.toml"),
    MANIFEST,
    template!("python", "holon-test.toml"),
    template!("python", "agent.py"),
    template!("python", "README.md"),
    SCHEMA,
    template!("python", "gitignore" => ".gitignore"),
    template!("python", ".github/workflows/holon.yml"),
];

/// Why an agent could not be created.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name breaks the manifest's or cargo's rules.
    #[error("`{name}` is not a valid agent name: {rule}")]
    InvalidName {
        /// The name given.
        name: String,
        /// The rule it breaks.
        rule: String,
    },
    /// The folder exists and holds files.
    #[error("`{0}` already exists and is not empty; nothing was written")]
    NotEmpty(PathBuf),
    /// Writing failed.
    #[error("cannot write `{path}`: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Where the new agent's `holon-kit` dependency comes from.
#[derive(Debug, Clone)]
pub enum KitSource {
    /// The published crate at this version.
    Version(String),
    /// A local checkout of holon-kit.
    Path(PathBuf),
}

/// The values that fill the templates.
#[derive(Debug, Clone)]
pub struct Names {
    /// The package, binary and manifest name (`my-agent`).
    pub name: String,
    /// The library name (`my_agent`), and the tool.
    pub crate_name: String,
}

const KEYWORDS: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "gen",
    "macro",
    "override",
    "priv",
    "try",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "std",
    "core",
    "alloc",
    "proc_macro",
    "test",
];

/// Checks a name against the manifest's rule (`^[a-z][a-z0-9-]{1,63}$`), and for a Rust agent
/// (`crate_rules`) cargo's.
pub fn names(name: &str, crate_rules: bool) -> Result<Names, ScaffoldError> {
    let invalid = |rule: &str| ScaffoldError::InvalidName {
        name: name.to_string(),
        rule: rule.to_string(),
    };
    if !holon_core::check::valid_name(name) {
        return Err(invalid(
            "a name is 2 to 64 characters of lowercase letters, digits and `-`, starting with a letter (`^[a-z][a-z0-9-]{1,63}$`)",
        ));
    }
    if name.ends_with('-') || name.contains("--") {
        return Err(invalid("a name cannot end with `-` or hold `--`"));
    }
    let crate_name = name.replace('-', "_");
    if crate_rules && KEYWORDS.contains(&crate_name.as_str()) {
        return Err(invalid("it is a Rust keyword or a name cargo reserves"));
    }
    Ok(Names {
        name: name.to_string(),
        crate_name,
    })
}

/// Fills a template.
pub fn render(text: &str, names: &Names, kit: &KitSource, kind: Kind) -> String {
    let kit_dep = match kit {
        KitSource::Version(v) => format!("version = \"{v}\""),
        KitSource::Path(p) => format!("path = {}", toml_string(&p.display().to_string())),
    };
    text.replace("{{name}}", &names.name)
        .replace("{{crate_name}}", &names.crate_name)
        .replace("{{tool}}", &names.crate_name)
        .replace("{{kit}}", &kit_dep)
        // The wheel and the npm packages carry this binary, at the crate's version.
        .replace("{{kit_version}}", env!("CARGO_PKG_VERSION"))
        .replace("{{description}}", kind.description())
        .replace("{{manifest_schema}}", &manifest_schema())
}

/// The JSON Schema of `holon.yaml` as `cargo holon-test schema` prints it and `new` writes it
/// beside the manifest (`holon.schema.json`), for editors.
pub fn manifest_schema() -> String {
    serde_json::to_string_pretty(&holon_core::check::json_schema()).unwrap_or_default()
}

fn toml_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Creates the agent in `dir`, which must not exist or be empty. Nothing is overwritten; if
/// writing fails part way, what was created is removed.
pub fn create(
    dir: &Path,
    names: &Names,
    kit: &KitSource,
    kind: Kind,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    let existed = dir.exists();
    if existed {
        let mut entries = std::fs::read_dir(dir).map_err(|source| ScaffoldError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        if entries.next().is_some() {
            return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
        }
    }
    let result = write_all(dir, names, kit, kind);
    if result.is_err() {
        if existed {
            for t in kind.templates() {
                let _ = std::fs::remove_file(dir.join(t.path));
            }
            if let Some(language) = kind.types() {
                let _ = std::fs::remove_file(dir.join(language.file()));
            }
        } else {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    result
}

fn write_all(
    dir: &Path,
    names: &Names,
    kit: &KitSource,
    kind: Kind,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    let mut written = Vec::new();
    for t in kind.templates() {
        let path = dir.join(t.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ScaffoldError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        write_new(&path, &render(t.text, names, kit, kind))?;
        written.push(path);
    }
    // The types of the manifest just written, as `holon-test types` writes them: the agent
    // imports them from its first line.
    let manifest_template = (kind.templates().iter()).find(|t| t.path == MANIFEST.path);
    if let (Some(language), Some(template)) = (kind.types(), manifest_template) {
        let manifest = dir.join(template.path);
        let text = render(template.text, names, kit, kind);
        let checked =
            holon_core::check::into_manifest(holon_core::check::check_str(&text, &manifest))
                .map_err(|_| ScaffoldError::Io {
                    path: manifest.clone(),
                    source: std::io::Error::other("the template's manifest is refused"),
                })?;
        let path = dir.join(language.file());
        write_new(&path, &language.render(&checked))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes a new file; `create_new`: a file that appeared meanwhile is never overwritten.
fn write_new(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    let io = |source| ScaffoldError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template of `kind` written to `path`, rendered for `n`.
    fn rendered(kind: Kind, path: &str, n: &Names) -> String {
        let template = (kind.templates().iter())
            .find(|t| t.path == path)
            .unwrap_or_else(|| panic!("{kind:?} has no {path}"));
        render(template.text, n, &KitSource::Version("0.1.0".into()), kind)
    }

    #[test]
    fn names_follow_the_manifest_and_cargo_rules() {
        assert_eq!(names("my-agent", true).unwrap().crate_name, "my_agent");
        // Cargo's reserved names bind a Rust agent only.
        assert!(names("self", false).is_ok());
        for bad in [
            "My-agent",
            "a",
            "1abc",
            "my_agent",
            "ab-",
            "a--b",
            "self",
            "test",
            &"a".repeat(65),
        ] {
            assert!(names(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_hole_is_filled() {
        let n = names("my-agent", true).unwrap();
        for kind in [Kind::Plain, Kind::Model, Kind::TypeScript, Kind::Python] {
            for t in kind.templates() {
                let text = render(t.text, &n, &KitSource::Path("/kit".into()), kind);
                assert!(!text.contains("{{"), "{} keeps a hole", t.path);
            }
        }
    }

    #[test]
    fn every_manifest_template_passes_check_with_no_warnings() {
        let n = names("my-agent", true).unwrap();
        // (The model-backed template's transient codes have no example: its fault trials reach
        // them, and the run answers those warnings.)
        for kind in [Kind::Plain, Kind::TypeScript, Kind::Python] {
            let text = rendered(kind, "holon.yaml", &n);
            let report = holon_core::check::check_str(&text, Path::new("holon.yaml"));
            let shown = holon_core::check::render_human(&report, false);
            assert!(report.accepted(), "{kind:?}: {shown}");
            assert_eq!(report.warnings(), 0, "{kind:?}: {shown}");
        }
    }

    #[test]
    fn every_test_config_template_names_its_server_and_is_accepted() {
        let n = names("my-agent", true).unwrap();
        for (kind, command) in [
            (Kind::TypeScript, "node agent.ts"),
            (Kind::Python, "python agent.py"),
            (Kind::TypeScriptModel, "node agent.ts"),
            (Kind::PythonModel, "python agent.py"),
        ] {
            let text = rendered(kind, "holon-test.toml", &n);
            let config = holon_config::parse(
                &text,
                Path::new("holon-test.toml"),
                holon_harness::command::file_keys(),
            )
            .unwrap_or_else(|r| panic!("{}", holon_core::check::render_human(&r, false)));
            let server = config.server.expect("a server");
            assert_eq!(server.command, command, "{kind:?}");
            // The function mode, for the function pass.
            assert_eq!(
                server.function,
                Some(format!("{command} --function")),
                "{kind:?}"
            );
            let model = matches!(kind, Kind::TypeScriptModel | Kind::PythonModel);
            assert_eq!(config.upstreams.len(), usize::from(model), "{kind:?}");
        }
    }

    #[test]
    fn the_workflow_template_is_valid_yaml_that_runs_the_test_target_with_a_report() {
        let n = names("my-agent", true).unwrap();
        let text = rendered(Kind::Plain, ".github/workflows/holon.yml", &n);
        let doc = holon_core::manifest::yaml::parse(&text)
            .expect("valid YAML")
            .to_json();
        assert!(doc.pointer("/on/push").is_some() && doc.pointer("/on/pull_request").is_some());
        let steps = doc
            .pointer("/jobs/test/steps")
            .and_then(|s| s.as_array())
            .expect("steps");
        let test = steps
            .iter()
            .find(|s| s["run"] == "cargo test --test holon")
            .expect("a step that runs the test target");
        assert_eq!(test["env"]["HOLON_JUNIT"], "target/holon-junit.xml");
        assert!(
            steps
                .iter()
                .any(|s| s["with"]["report_paths"] == "target/holon-junit.xml"),
            "no step reads the JUnit report"
        );
        // And, once there is a tag, the version a change needs (its run is tested in
        // `tests/it/against.rs`).
        assert!(
            steps.iter().any(|s| s["run"]
                .as_str()
                .is_some_and(|r| r.contains("cargo holon-test check --against \"$tag\""))),
            "no step checks the version against the newest tag"
        );
    }

    #[test]
    fn the_typescript_and_python_workflows_run_the_tests_with_a_report_on_node_22_and_check_the_version()
     {
        let n = names("my-agent", false).unwrap();
        for (kind, command, kit) in [
            (Kind::TypeScript, "npm test", "npx holon-test"),
            (Kind::Python, "uv run holon-test", "uv run holon-test"),
        ] {
            let text = rendered(kind, ".github/workflows/holon.yml", &n);
            let doc = holon_core::manifest::yaml::parse(&text)
                .expect("valid YAML")
                .to_json();
            assert!(doc.pointer("/on/push").is_some() && doc.pointer("/on/pull_request").is_some());
            let steps = doc
                .pointer("/jobs/test/steps")
                .and_then(|s| s.as_array())
                .expect("steps");
            let test = steps
                .iter()
                .find(|s| s["run"] == command)
                .unwrap_or_else(|| panic!("{kind:?}: no step runs `{command}`"));
            assert_eq!(test["env"]["HOLON_JUNIT"], "holon-junit.xml", "{kind:?}");
            assert!(
                steps
                    .iter()
                    .any(|s| s["with"]["report_paths"] == "holon-junit.xml"),
                "{kind:?}: no step reads the JUnit report"
            );
            // Once there is a tag, the version a change needs, as Rust's workflow checks it.
            let against = format!("{kit} check --against \"$tag\"");
            assert!(
                steps
                    .iter()
                    .any(|s| s["run"].as_str().is_some_and(|r| r.contains(&against))),
                "{kind:?}: no step runs `{against}`"
            );
            // Node 22 LTS or later with npm's cache, uv with its own.
            let cached = match kind {
                Kind::TypeScript => steps.iter().any(|s| {
                    s["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("actions/setup-node@"))
                        && s["with"]["node-version"].as_u64().is_some_and(|v| v >= 22)
                        && s["with"]["cache"] == "npm"
                }),
                _ => steps.iter().any(|s| {
                    s["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("astral-sh/setup-uv@"))
                        && s["with"]["enable-cache"] == true
                }),
            };
            assert!(
                cached,
                "{kind:?}: no cached toolchain step on Node 22 or uv"
            );
        }
        // `engines` says what the workflow runs on.
        let package: serde_json::Value =
            serde_json::from_str(&rendered(Kind::TypeScript, "package.json", &n)).unwrap();
        assert_eq!(package["engines"]["node"], ">=22.18");
    }

    #[test]
    fn every_gitignore_covers_what_the_kit_writes() {
        let n = names("my-agent", true).unwrap();
        for kind in [Kind::Plain, Kind::TypeScript, Kind::Python] {
            let text = rendered(kind, ".gitignore", &n);
            let ignored: Vec<&str> = text.lines().collect();
            // The Rust agent's JUnit report goes to `target/`, which is ignored whole.
            let junit = if kind == Kind::Plain {
                "/target"
            } else {
                "holon-junit.xml"
            };
            for output in [junit, "live.jsonl", "holon-report.html"] {
                assert!(ignored.contains(&output), "{kind:?}: `{output}` in {text}");
            }
        }
    }
}

//! `holon-test types`: the types of a manifest's `interface` for TypeScript and Python, on a
//! manifest no language says directly (keywords and other keys as field names, a string known
//! only by its pattern, `anyOf` of mixed types, a `$ref` back to itself, `allOf`, maps, tuples),
//! each file held to its language's own checker (`tsc` strict, `mypy --strict`) and read back
//! as Python; a refused manifest, no language to tell, and a file gone out of date.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, code, root, stderr, text};

/// `fixture` as `holon.yaml` in a folder of its own, with `package` beside it when given.
fn agent(fixture: &str, package: Option<&str>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::copy(
        root().join("tests/fixtures").join(fixture),
        dir.path().join("holon.yaml"),
    )
    .expect("the manifest");
    if let Some(file) = package {
        std::fs::write(dir.path().join(file), "").expect("the package file");
    }
    let path = dir.path().to_path_buf();
    (dir, path)
}

fn holon_test(dir: &Path, args: &[&str]) -> Output {
    Command::new(PLAIN_BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("HOLON_TEST_LAUNCHER")
        .env_remove("UV")
        .output_within(RUN_LIMIT)
}

#[test]
fn a_manifest_no_language_says_directly_is_typed_soundly_and_passes_each_checker() {
    let (_keep, dir) = agent("types/awkward.yaml", None);
    for lang in ["typescript", "python"] {
        let out = holon_test(&dir, &["types", "--lang", lang]);
        assert_eq!(code(&out), 0, "{}", text(&out));
        assert!(
            stderr(&out).contains("and `ErrorCode`, the 1 code `interface.errors` declares"),
            "{}",
            text(&out)
        );
    }
    let ts = std::fs::read_to_string(dir.join("holon.types.ts")).expect("holon.types.ts");
    for line in [
        "  class: string;",
        "  \"x-y\": boolean;",
        // A pattern says nothing a type can: the string, whole.
        "  id: string;",
        "  value?: number | string | null;",
        "  kind?: \"a\" | \"b\" | 1 | true | null;",
        // Back to itself: anything, there.
        "    next?: unknown;",
        "  pair?: Array<string | number>;",
        "  empty?: Record<string, never>;",
        "export type ErrorCode = 'not_today';",
        "  fail(code: ErrorCode, message: string): Error;",
    ] {
        assert!(ts.lines().any(|l| l == line), "`{line}` in:\n{ts}");
    }
    let py = std::fs::read_to_string(dir.join("holon_types.py")).expect("holon_types.py");
    for line in [
        // Keys that are keywords or no identifier: the functional syntax.
        "Input = TypedDict(",
        "        \"from\": int,",
        "        \"x-y\": bool,",
        "        \"value\": NotRequired[float | str | None],",
        "        \"kind\": NotRequired[Literal[\"a\", \"b\", 1, True] | None],",
        "    next: NotRequired[Any]",
        "ErrorCode = Literal[\"not_today\"]",
    ] {
        assert!(py.lines().any(|l| l == line), "`{line}` in:\n{py}");
    }

    // `tsc --strict`, as the TypeScript template runs it.
    let typescript = root().join("tests/interop/typescript/node_modules");
    assert!(
        typescript.join(".bin/tsc").is_file(),
        "no tsc in `{}`: run `.ci/setup-interop` first",
        typescript.display()
    );
    std::os::unix::fs::symlink(&typescript, dir.join("node_modules")).expect("a link");
    std::fs::write(dir.join("package.json"), "{ \"type\": \"module\" }").expect("package.json");
    std::fs::write(
        dir.join("tsconfig.json"),
        r#"{ "compilerOptions": { "target": "es2023", "module": "nodenext", "strict": true, "noEmit": true, "types": [], "erasableSyntaxOnly": true, "verbatimModuleSyntax": true }, "include": ["holon.types.ts"] }"#,
    )
    .expect("tsconfig.json");
    let tsc = Command::new(typescript.join(".bin/tsc"))
        .current_dir(&dir)
        .output_within(RUN_LIMIT);
    assert!(tsc.status.success(), "tsc: {}", text(&tsc));

    // `mypy --strict`, as the Python template runs it, and the module read by Python itself.
    let python = root().join("target/interop/python");
    assert!(
        python.join("mypy").is_dir(),
        "no mypy in `{}`: run `.ci/setup-interop` first",
        python.display()
    );
    let mypy = Command::new(crate::util::dist::interpreter())
        .args([
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "holon_types.py",
        ])
        .env("PYTHONPATH", &python)
        .current_dir(&dir)
        .output_within(RUN_LIMIT);
    assert!(mypy.status.success(), "mypy: {}", text(&mypy));
    let read = Command::new(crate::util::dist::interpreter())
        .args([
            "-c",
            "import holon_types as t; print(sorted(t.Input.__required_keys__), sorted(t.Output.__required_keys__))",
        ])
        .current_dir(&dir)
        .output_within(RUN_LIMIT);
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        "['class', 'from', 'id', 'x-y'] ['nested', 'ok']",
        "{}",
        text(&read)
    );
}

#[test]
fn types_of_a_refused_manifest_or_of_no_language_are_refused_and_nothing_is_written() {
    let (_keep, dir) = agent("harness/word-stats.yaml", Some("package.json"));
    let manifest = dir.join("holon.yaml");
    let text_of = std::fs::read_to_string(&manifest).expect("the manifest");
    std::fs::write(
        &manifest,
        text_of.replace("code: empty_text", "code: Empty-Text"),
    )
    .expect("refused");
    let out = holon_test(&dir, &["types"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    for needle in [
        "error[",
        "holon.yaml:",
        "error: no types written: `holon.yaml` is refused",
    ] {
        assert!(stderr(&out).contains(needle), "{needle}: {}", text(&out));
    }
    assert!(!dir.join("holon.types.ts").exists());

    let (_keep, dir) = agent("harness/word-stats.yaml", None);
    let out = holon_test(&dir, &["types"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        stderr(&out).contains("has no `package.json` or `pyproject.toml` to tell (pass `--lang typescript` or `--lang python`"),
        "{}",
        text(&out)
    );
    assert!(!dir.join("holon.types.ts").exists() && !dir.join("holon_types.py").exists());
}

#[test]
fn a_test_run_says_when_a_types_file_is_out_of_date_naming_the_command() {
    let (_keep, dir) = agent("harness/word-stats.yaml", Some("pyproject.toml"));
    let out = holon_test(&dir, &["types"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let list = |dir: &Path| holon_test(dir, &["--server-cmd", "true", "--", "--list"]);
    let fresh = list(&dir);
    assert_eq!(code(&fresh), 0, "{}", text(&fresh));
    assert!(!stderr(&fresh).contains("out of date"), "{}", text(&fresh));
    // A new declared code: the file no longer says the manifest's.
    let manifest = dir.join("holon.yaml");
    let before = std::fs::read_to_string(&manifest).expect("the manifest");
    std::fs::write(
        &manifest,
        before.replace(
            "  errors:\n",
            "  errors:\n    - { code: too_long, description: The text is too long., retryable: false, billed: false }\n",
        ),
    )
    .expect("a new code");
    let stale = list(&dir);
    assert_eq!(code(&stale), 0, "{}", text(&stale));
    let warning = "warning: `holon_types.py` is out of date with `holon.yaml`: its types are not the manifest's `interface` any more (run `holon-test types`)";
    assert!(stderr(&stale).contains(warning), "{}", text(&stale));
    // A run that blesses says it again as it ends, where the author reads what it wrote.
    let blessed = holon_test(&dir, &["--bless", "--server-cmd", "true", "--", "--list"]);
    let said = stderr(&blessed);
    assert_eq!(said.matches(warning).count(), 2, "{}", text(&blessed));
    assert!(said.trim_end().ends_with(warning), "{}", text(&blessed));
}

/// The `Ctx` of an agent on the runtime package is the package's, typed by the declared codes
/// (with `ctx.download`); one with an adapter of its own keeps the `Ctx` its adapter implements.
#[test]
fn the_ctx_is_the_runtime_package_s_when_the_agent_depends_on_it() {
    for (package, file, runtime, own) in [
        (
            (
                "package.json",
                r#"{ "dependencies": { "holon-kit": "0.2.0" } }"#,
            ),
            "holon.types.ts",
            [
                "import type { Ctx as RuntimeCtx } from 'holon-kit';",
                "export type Ctx = RuntimeCtx<ErrorCode>;",
            ],
            "export interface Ctx {",
        ),
        (
            (
                "pyproject.toml",
                "[project]\nname = \"a\"\ndependencies = [\n    \"holon-kit==0.2.0\",\n]\n",
            ),
            "holon_types.py",
            [
                "from holon_kit import Ctx as RuntimeCtx",
                "Ctx = RuntimeCtx[ErrorCode]",
            ],
            "class Ctx(Protocol):",
        ),
    ] {
        let (_keep, dir) = agent("types/awkward.yaml", None);
        std::fs::write(dir.join(package.0), package.1).expect("the package file");
        let out = holon_test(&dir, &["types"]);
        assert_eq!(code(&out), 0, "{}", text(&out));
        let written = std::fs::read_to_string(dir.join(file)).expect("the types");
        for line in runtime {
            assert!(
                written.lines().any(|l| l == line),
                "`{line}` in:\n{written}"
            );
        }
        assert!(!written.contains(own), "{written}");
        // Without the package: the adapter's own `Ctx`.
        let without = package.1.replace("holon-kit", "other-package");
        std::fs::write(dir.join(package.0), without).expect("the package file");
        let out = holon_test(&dir, &["types"]);
        assert_eq!(code(&out), 0, "{}", text(&out));
        let written = std::fs::read_to_string(dir.join(file)).expect("the types");
        assert!(
            written.contains(own) && !written.contains("RuntimeCtx"),
            "{written}"
        );
    }
}

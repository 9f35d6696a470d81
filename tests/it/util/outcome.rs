//! Running `check` through the real binary and asserting on what it reports.
//!
//! `check("fixture.yaml")` runs `check FILE --format json` and `check FILE` (human output) in the
//! fixtures folder, so every path printed is the bare file name, then checks what must hold of
//! every run: one JSON document of the documented shape, an exit code that agrees with it, and
//! human output that reports the same diagnostics at the same places. The fluent methods then
//! pick diagnostics out one by one; `nothing_else` fails on any diagnostic not picked.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{code, root, run, stderr, stdout};

/// `tests/fixtures/check`.
pub fn fixtures() -> PathBuf {
    root().join("tests/fixtures/check")
}

/// Checks a fixture from `tests/fixtures/check`, in JSON and in human form.
pub fn check(fixture: &str) -> Outcome {
    let dir = fixtures();
    assert!(dir.join(fixture).exists(), "no fixture `{fixture}`");
    let outcome = Outcome::json(&dir, fixture);
    outcome.agrees_with_human(&human_output(&dir, fixture));
    outcome
}

/// Checks the file at `path` (run from its folder, so messages name the bare file), JSON only:
/// for generated manifests too large to run twice.
pub fn check_file(path: &Path) -> Outcome {
    let dir = path.parent().expect("a file in a folder");
    let name = path
        .file_name()
        .expect("a file name")
        .to_str()
        .expect("a UTF-8 name");
    Outcome::json(dir, name)
}

/// Runs `check ARG --format json` in `dir`, where `ARG` may be a folder or a missing path.
pub fn check_arg(dir: &Path, arg: &str) -> Outcome {
    Outcome::json(dir, arg)
}

/// The human report (standard error) of `check ARG` in `dir`, with any absolute path to the crate
/// replaced by `[ROOT]`.
pub fn human(dir: &Path, arg: &str) -> String {
    normalise(&human_output(dir, arg))
}

fn human_output(dir: &Path, arg: &str) -> String {
    let output = run(dir, &["check", arg]);
    assert!(
        output.stdout.is_empty(),
        "human output goes to stderr, but stdout has:\n{}",
        stdout(&output)
    );
    let text = stderr(&output);
    assert!(
        !text.contains('\x1b'),
        "NO_COLOR is set, but the output has escape codes:\n{text}"
    );
    let code = code(&output);
    let summary = text.lines().last().unwrap_or_default();
    match code {
        0 => assert!(
            summary.starts_with("ok: "),
            "exit 0 but the summary is `{summary}`"
        ),
        1 => assert!(
            summary.starts_with("error: "),
            "exit 1 but the summary is `{summary}`"
        ),
        other => panic!("`check {arg}` exited {other}:\n{text}"),
    }
    text
}

/// Replaces machine-specific paths with placeholders.
pub fn normalise(text: &str) -> String {
    text.replace(root().to_str().expect("a UTF-8 path"), "[ROOT]")
}

/// What one run reported, and the diagnostics picked out of it so far.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code.
    pub code: i32,
    /// The JSON document on stdout.
    pub doc: Value,
    diagnostics: Vec<Value>,
    picked: Vec<bool>,
    current: Option<usize>,
}

impl Outcome {
    fn json(dir: &Path, arg: &str) -> Outcome {
        let output = run(dir, &["check", arg, "--format", "json"]);
        let code = code(&output);
        let text = stdout(&output);
        assert!(
            output.stderr.is_empty(),
            "`--format json` printed on stderr:\n{}",
            stderr(&output)
        );
        let doc = one_document(&text);
        let diagnostics = shape(&doc);
        let errors = diagnostics
            .iter()
            .filter(|d| d["severity"] == "error")
            .count();
        let accepted = doc["accepted"] == true;
        assert_eq!(
            accepted,
            errors == 0,
            "`accepted` disagrees with the diagnostics:\n{text}"
        );
        assert_eq!(
            code,
            if accepted { 0 } else { 1 },
            "the exit code disagrees with `accepted`:\n{text}"
        );
        let places: Vec<(u64, u64)> = diagnostics
            .iter()
            .map(|d| (number(d, "line"), number(d, "column")))
            .collect();
        assert!(
            places.is_sorted(),
            "diagnostics are not in file order:\n{text}"
        );
        let picked = vec![false; diagnostics.len()];
        Outcome {
            code,
            doc,
            diagnostics,
            picked,
            current: None,
        }
    }

    /// Every diagnostic is in the human output too, with the same message and place, and the
    /// summary counts them.
    fn agrees_with_human(&self, human: &str) {
        let file = self.doc["manifest"].as_str().unwrap_or_default();
        for d in &self.diagnostics {
            let header = format!(
                "{}[{}]: {}",
                text(d, "severity"),
                text(d, "check"),
                text(d, "message")
            );
            assert!(
                human.contains(&header),
                "the human output lacks `{header}`:\n{human}"
            );
            let (line, column) = (number(d, "line"), number(d, "column"));
            if line > 0 {
                let at = format!("--> {file}:{line}:{column}\n");
                assert!(
                    human.contains(&at),
                    "the human output lacks `{at}`:\n{human}"
                );
            }
            // Every hint ends by naming the id's explanation, in the form the binary was run
            // by (`cargo-holon-test` directly: cargo's subcommand).
            let explain = format!("run `cargo holon-test explain {}`", text(d, "check"));
            let hint = match d.get("hint").and_then(|h| h.as_str()) {
                Some(hint) if hint.ends_with('?') => format!("{hint} {explain}"),
                Some(hint) => format!("{hint}; {explain}"),
                None => explain,
            };
            let hint = format!("= hint: {hint}\n");
            assert!(
                human.contains(&hint),
                "the human output lacks `{hint}`:\n{human}"
            );
        }
        let count = |severity: &str| {
            self.diagnostics
                .iter()
                .filter(|d| d["severity"] == severity)
                .count()
        };
        let plural = |n: usize, w: &str| {
            if n == 1 {
                format!("1 {w}")
            } else {
                format!("{n} {w}s")
            }
        };
        let summary = if count("error") > 0 {
            format!(
                "error: `{file}` refused: {}, {}\n",
                plural(count("error"), "error"),
                plural(count("warning"), "warning")
            )
        } else {
            format!(
                "ok: `{file}` accepted with {}\n",
                plural(count("warning"), "warning")
            )
        };
        assert!(
            human.ends_with(&summary),
            "the human output does not end with `{summary}`:\n{human}"
        );
    }

    /// The manifest was accepted (exit 0).
    #[track_caller]
    pub fn accepted(self) -> Self {
        assert_eq!(self.code, 0, "expected acceptance:\n{self}");
        self
    }

    /// The manifest was refused (exit 1).
    #[track_caller]
    pub fn refused(self) -> Self {
        assert_eq!(self.code, 1, "expected a refusal:\n{self}");
        self
    }

    /// Picks the one error `check` at `pointer`, and asserts its line and column.
    #[track_caller]
    pub fn error(self, check: &str, pointer: &str, at: (u64, u64)) -> Self {
        self.pick("error", check, pointer, Some(at))
    }

    /// Picks the one error `check` at `pointer`, and asserts its line only (for places that
    /// are the YAML reader's to choose within the line).
    #[track_caller]
    pub fn error_on_line(self, check: &str, pointer: &str, line: u64) -> Self {
        let outcome = self.pick("error", check, pointer, None);
        let d = outcome.current();
        assert_eq!(number(d, "line"), line, "wrong line for {d}");
        outcome
    }

    /// Picks the one warning `check` at `pointer`, and asserts its line and column.
    #[track_caller]
    pub fn warning(self, check: &str, pointer: &str, at: (u64, u64)) -> Self {
        self.pick("warning", check, pointer, Some(at))
    }

    /// The picked diagnostic's message is exactly `expected`.
    #[track_caller]
    pub fn message(self, expected: &str) -> Self {
        assert_eq!(
            text(self.current(), "message"),
            expected,
            "in {}",
            self.current()
        );
        self
    }

    /// The picked diagnostic's message contains `part`.
    #[track_caller]
    pub fn message_contains(self, part: &str) -> Self {
        let message = text(self.current(), "message");
        assert!(
            message.contains(part),
            "`{message}` does not contain `{part}`"
        );
        self
    }

    /// The picked diagnostic's hint is exactly `expected`.
    #[track_caller]
    pub fn hint(self, expected: &str) -> Self {
        assert_eq!(
            self.current().get("hint").and_then(Value::as_str),
            Some(expected),
            "in {}",
            self.current()
        );
        self
    }

    /// Every diagnostic was picked: the run reported nothing the test did not expect.
    #[track_caller]
    pub fn nothing_else(self) {
        let left: Vec<String> = self
            .diagnostics
            .iter()
            .zip(&self.picked)
            .filter(|(_, p)| !**p)
            .map(|(d, _)| d.to_string())
            .collect();
        assert!(
            left.is_empty(),
            "unexpected diagnostics:\n{}",
            left.join("\n")
        );
    }

    /// The check ids reported, in order.
    pub fn checks(&self) -> Vec<&str> {
        self.diagnostics.iter().map(|d| text(d, "check")).collect()
    }

    #[track_caller]
    fn pick(mut self, severity: &str, check: &str, pointer: &str, at: Option<(u64, u64)>) -> Self {
        let found: Vec<usize> = (0..self.diagnostics.len())
            .filter(|&i| {
                let d = &self.diagnostics[i];
                d["severity"] == severity && d["check"] == check && d["pointer"] == pointer
            })
            .collect();
        assert_eq!(
            found.len(),
            1,
            "expected one {severity} `{check}` at `{pointer}`, found {}:\n{self}",
            found.len()
        );
        let i = found[0];
        let d = &self.diagnostics[i];
        if let Some(at) = at {
            assert_eq!(
                (number(d, "line"), number(d, "column")),
                at,
                "wrong place for {d}"
            );
        }
        assert!(!text(d, "message").is_empty(), "empty message in {d}");
        self.picked[i] = true;
        self.current = Some(i);
        self
    }

    #[track_caller]
    fn current(&self) -> &Value {
        &self.diagnostics[self
            .current
            .expect("pick a diagnostic first with `error` or `warning`")]
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "exit {}", self.code)?;
        for d in &self.diagnostics {
            writeln!(f, "  {d}")?;
        }
        Ok(())
    }
}

/// The one JSON document `text` holds; fails on none, on two, or on anything after it.
#[track_caller]
pub fn one_document(text: &str) -> Value {
    let mut documents = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let doc = match documents.next() {
        Some(Ok(doc)) => doc,
        other => panic!("stdout is not a JSON document ({other:?}):\n{text}"),
    };
    assert!(
        documents.next().is_none(),
        "stdout holds more than one JSON document:\n{text}"
    );
    doc
}

/// Checks the documented shape and returns the diagnostics:
/// `{manifest, accepted, diagnostics: [{severity, check, pointer, line, column, message, hint?}]}`.
#[track_caller]
pub fn shape(doc: &Value) -> Vec<Value> {
    let keys: Vec<&str> = doc
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["manifest", "accepted", "diagnostics"], "in {doc}");
    assert!(
        doc["manifest"].is_string() && doc["accepted"].is_boolean(),
        "in {doc}"
    );
    let diagnostics = doc["diagnostics"]
        .as_array()
        .expect("`diagnostics` is an array")
        .clone();
    for d in &diagnostics {
        let keys: Vec<&str> = d
            .as_object()
            .expect("a diagnostic is an object")
            .keys()
            .map(String::as_str)
            .collect();
        let expected = ["severity", "check", "pointer", "line", "column", "message"];
        assert!(
            keys == expected || keys == [&expected[..], &["hint"]].concat(),
            "unexpected keys in {d}"
        );
        assert!(matches!(text(d, "severity"), "error" | "warning"), "in {d}");
        let check = text(d, "check");
        assert!(
            !check.is_empty()
                && check
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "check id `{check}`"
        );
        let pointer = text(d, "pointer");
        assert!(
            pointer.is_empty() || pointer.starts_with('/'),
            "pointer `{pointer}`"
        );
        assert_eq!(
            number(d, "line") == 0,
            number(d, "column") == 0,
            "a line without a column in {d}"
        );
    }
    diagnostics
}

fn text<'a>(d: &'a Value, key: &str) -> &'a str {
    d[key]
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` is not a string in {d}"))
}

fn number(d: &Value, key: &str) -> u64 {
    d[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {d}"))
}

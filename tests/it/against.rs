//! `cargo holon-test check --against OLD`: the manifest compared with the published one, each
//! difference classed major, minor or patch, and the version that allows.
//!
//! Each test changes one thing in a copy of `tests/fixtures/against/published.yaml` and runs the
//! real binary on the two: a bound moved down by one, left alone, and moved up by one; one case
//! per class; the version's two errors; a git revision, a tag and every way OLD can be bad.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::outcome::shape;
use crate::util::{BIN, OutputWithin, RUN_LIMIT, code, normalise, one_document, root, stderr};

/// `tests/fixtures/against`.
fn fixtures() -> PathBuf {
    root().join("tests/fixtures/against")
}

/// The published manifest's text.
fn published() -> String {
    std::fs::read_to_string(fixtures().join("published.yaml")).expect("the published fixture")
}

/// `text` with each `from` replaced by its `to`; each `from` must be in it exactly once, so an
/// edit that changes nothing (or the wrong place) fails the test instead of testing the fixture.
#[track_caller]
fn edit(text: &str, edits: &[(&str, &str)]) -> String {
    let mut text = text.to_string();
    for (from, to) in edits {
        assert_eq!(
            text.matches(from).count(),
            1,
            "`{from}` is not in the manifest exactly once"
        );
        text = text.replacen(from, to, 1);
    }
    text
}

/// A folder with `published.yaml` and `holon.yaml`.
struct Pair {
    dir: tempfile::TempDir,
}

impl Pair {
    fn new(published: &str, manifest: &str) -> Pair {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(dir.path().join("published.yaml"), published).expect("writing");
        std::fs::write(dir.path().join("holon.yaml"), manifest).expect("writing");
        Pair { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `check holon.yaml --against published.yaml`, in JSON and in human form.
    fn check(&self) -> Compared {
        Compared::run(self.path(), &["holon.yaml", "--against", "published.yaml"])
    }
}

/// The published manifest against itself with `edits` made (its version left as it was).
#[track_caller]
fn changed(edits: &[(&str, &str)]) -> Compared {
    let published = published();
    Pair::new(&published, &edit(&published, edits)).check()
}

/// What one `check --against` reported, JSON and human.
#[derive(Debug)]
struct Compared {
    code: i32,
    doc: Value,
    human: String,
}

impl Compared {
    /// `check ARGS --format json` and `check ARGS` in `dir`: one document of the documented
    /// shape, `against` included; the same exit code both ways; every change and diagnostic of
    /// the document in the human report too, at its place.
    #[track_caller]
    fn run(dir: &Path, args: &[&str]) -> Compared {
        let json = check(dir, args, &["--format", "json"]);
        let human = check(dir, args, &[]);
        assert!(
            json.stderr.is_empty(),
            "`--format json` printed on stderr:\n{}",
            stderr(&json)
        );
        let text = String::from_utf8_lossy(&json.stdout).into_owned();
        let mut doc = one_document(&text);
        let against = doc
            .as_object_mut()
            .and_then(|d| d.remove("against"))
            .unwrap_or_else(|| panic!("no `against` in the document:\n{text}"));
        let diagnostics = shape(&doc);
        doc["against"] = against;
        let compared = Compared {
            code: code(&json),
            doc,
            human: normalise(&stderr(&human)),
        };
        assert_eq!(code(&human), compared.code, "{}", compared.human);
        let accepted = compared.doc["accepted"] == true;
        assert_eq!(compared.code, if accepted { 0 } else { 1 }, "{text}");
        let against = &compared.doc["against"];
        let keys: Vec<&str> = against
            .as_object()
            .expect("`against` is an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["manifest", "version", "required_bump", "changes"],
            "{text}"
        );
        for change in compared.changes() {
            let keys: Vec<&str> = change
                .as_object()
                .expect("a change is an object")
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, ["pointer", "bump", "message"], "{change}");
            let line = format!(
                " {}: {}\n",
                change["pointer"].as_str().unwrap(),
                change["message"].as_str().unwrap()
            );
            assert!(
                compared.human.contains(&line),
                "the human report lacks `{line}`:\n{}",
                compared.human
            );
        }
        for d in &diagnostics {
            let header = format!(
                "{}[{}]: {}\n",
                d["severity"].as_str().unwrap(),
                d["check"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            );
            assert!(
                compared.human.contains(&header),
                "the human report lacks `{header}`:\n{}",
                compared.human
            );
        }
        compared
    }

    fn changes(&self) -> &Vec<Value> {
        self.doc["against"]["changes"]
            .as_array()
            .expect("`changes` is an array")
    }

    fn diagnostics(&self) -> Vec<&Value> {
        self.doc["diagnostics"].as_array().unwrap().iter().collect()
    }

    /// The version the changes need together.
    #[track_caller]
    fn needs(&self, bump: &str) -> &Self {
        assert_eq!(self.doc["against"]["required_bump"], bump, "{}", self.human);
        self
    }

    /// The one change; its bump and pointer.
    #[track_caller]
    fn only(&self, bump: &str, pointer: &str) -> &str {
        assert_eq!(self.changes().len(), 1, "{}", self.human);
        self.change(bump, pointer)
    }

    /// The change of `bump` at `pointer` (there is one); its message.
    #[track_caller]
    fn change(&self, bump: &str, pointer: &str) -> &str {
        let found: Vec<&Value> = (self.changes().iter())
            .filter(|c| c["pointer"] == pointer && c["bump"] == bump)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "one {bump} change at `{pointer}` expected:\n{}",
            self.human
        );
        found[0]["message"].as_str().unwrap()
    }

    /// The one diagnostic `check`; its message.
    #[track_caller]
    fn error(&self, check: &str, pointer: &str) -> &Value {
        let found: Vec<&Value> = (self.diagnostics().into_iter())
            .filter(|d| d["check"] == check)
            .collect();
        assert_eq!(found.len(), 1, "one `{check}` expected:\n{}", self.human);
        assert_eq!(found[0]["severity"], "error", "{}", found[0]);
        assert_eq!(found[0]["pointer"], pointer, "{}", found[0]);
        found[0]
    }

    /// The checks reported, in order.
    fn checks(&self) -> Vec<&str> {
        (self.diagnostics().into_iter())
            .map(|d| d["check"].as_str().unwrap())
            .collect()
    }
}

fn check(dir: &Path, args: &[&str], more: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("check")
        .args(args)
        .args(more)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .output_within(RUN_LIMIT)
}

/// A bound moved down by one, left alone, and moved up by one: `line` is the line that holds it
/// in the published manifest with `{}` for its value. Each move needs `[down, up]`, at
/// `pointer`; leaving it alone needs nothing.
#[track_caller]
fn at_the_edge(line: &str, value: i64, pointer: &str, [down, up]: [&str; 2]) {
    let published = line.replace("{}", &value.to_string());
    for (to, bump) in [(value - 1, down), (value, "none"), (value + 1, up)] {
        let moved = line.replace("{}", &to.to_string());
        let compared = changed(&[(&published, &moved)]);
        compared.needs(bump);
        if bump == "none" {
            assert!(compared.changes().is_empty(), "{}", compared.human);
            assert_eq!(compared.code, 0, "{}", compared.human);
        } else {
            let message = compared.only(bump, pointer);
            assert!(
                message.contains(&format!("from {value} to {to}")),
                "{message}"
            );
            // The version was left as published: a published version is immutable.
            compared.error("version-not-bumped", "/version");
        }
    }
}

// The input: every bound at its edge. Lowering a maximum or raising a minimum refuses a call
// that was admitted: major. The other way admits more calls: minor.

#[test]
fn input_max_length_at_the_edge() {
    at_the_edge(
        "text: { type: string, minLength: 1, maxLength: {}, description: The text to clean. }",
        100,
        "/interface/input/properties/text/maxLength",
        ["major", "minor"],
    );
}

#[test]
fn input_min_length_at_the_edge() {
    at_the_edge(
        "text: { type: string, minLength: {}, maxLength: 100, description: The text to clean. }",
        1,
        "/interface/input/properties/text/minLength",
        ["minor", "major"],
    );
}

#[test]
fn input_maximum_at_the_edge() {
    at_the_edge(
        "top: { type: integer, minimum: 1, maximum: {}, default: 10",
        50,
        "/interface/input/properties/top/maximum",
        ["major", "minor"],
    );
}

#[test]
fn input_minimum_at_the_edge() {
    at_the_edge(
        "top: { type: integer, minimum: {}, maximum: 50, default: 10",
        1,
        "/interface/input/properties/top/minimum",
        ["minor", "major"],
    );
}

#[test]
fn input_max_items_at_the_edge() {
    at_the_edge(
        "maxItems: {}\n        default: []",
        5,
        "/interface/input/properties/tags/maxItems",
        ["major", "minor"],
    );
}

#[test]
fn a_bound_of_a_definition_the_input_refers_to_at_the_edge() {
    at_the_edge(
        "label: { type: string, maxLength: {}, pattern:",
        20,
        "/interface/input/$defs/label/maxLength",
        ["major", "minor"],
    );
}

#[test]
fn max_input_bytes_at_the_edge() {
    at_the_edge(
        "max_input_bytes: {} }",
        2000,
        "/runtime/limits/max_input_bytes",
        ["major", "minor"],
    );
}

// The output: the other way round. An answer a caller could not get before breaks it (a bound
// widened: major); a narrower output gives only answers it could get already (minor).

#[test]
fn output_maximum_at_the_edge() {
    at_the_edge(
        "words: { type: integer, minimum: 0, maximum: {}",
        1000,
        "/interface/output/properties/words/maximum",
        ["minor", "major"],
    );
}

#[test]
fn output_minimum_at_the_edge() {
    at_the_edge(
        "words: { type: integer, minimum: {}, maximum: 1000",
        0,
        "/interface/output/properties/words/minimum",
        ["major", "minor"],
    );
}

#[test]
fn output_max_length_at_the_edge() {
    at_the_edge(
        "cleaned: { type: string, maxLength: {}",
        100,
        "/interface/output/properties/cleaned/maxLength",
        ["minor", "major"],
    );
}

#[test]
fn timeout_changed_either_way_is_minor() {
    at_the_edge(
        "timeout_s: {}, max_input_bytes",
        30,
        "/runtime/limits/timeout_s",
        ["minor", "minor"],
    );
}

// Properties, `required`, types, enums, patterns.

#[test]
fn a_new_required_input_property_is_major() {
    let compared = changed(&[
        ("required: [text]\n", "required: [text, lang]\n"),
        (
            "      tags:\n",
            "      lang: { type: string, maxLength: 5, description: The language. }\n      tags:\n",
        ),
    ]);
    compared.needs("major");
    let message = compared.change("major", "/interface/input/required/1");
    assert_eq!(
        message,
        "`interface.input` requires `lang` now: a call admitted before is refused now"
    );
    // Declared too: a new property, admitted now (it was refused as undeclared).
    compared.change("minor", "/interface/input/properties/lang");
}

#[test]
fn an_optional_input_property_with_its_default_is_minor() {
    let compared = changed(&[(
        "      tags:\n",
        "      lang: { type: string, maxLength: 5, default: en, description: The language. }\n      tags:\n",
    )]);
    compared.needs("minor");
    let message = compared.only("minor", "/interface/input/properties/lang");
    assert_eq!(
        message,
        "`interface.input` admits a new optional property `lang`: calls refused before are admitted now, and every call admitted before still is"
    );
}

#[test]
fn a_new_property_of_an_open_input_is_major() {
    // Without `additionalProperties: false`, `lang` was admitted with any value: a string of at
    // most 5 characters is narrower.
    let published = edit(
        &published(),
        &[(
            "    additionalProperties: false\n    required: [text]\n",
            "    required: [text]\n",
        )],
    );
    let manifest = edit(
        &published,
        &[(
            "      tags:\n",
            "      lang: { type: string, maxLength: 5, default: en, description: The language. }\n      tags:\n",
        )],
    );
    let compared = Pair::new(&published, &manifest).check();
    compared.needs("major");
    let message = compared.only("major", "/interface/input/properties/lang");
    assert!(
        message.contains("which it admitted with other values before"),
        "{message}"
    );
}

#[test]
fn an_input_property_removed_under_additional_properties_false_is_major() {
    let compared = changed(&[(
        "      top: { type: integer, minimum: 1, maximum: 50, default: 10, description: How many words to return. }\n",
        "",
    )]);
    compared.needs("major");
    let message = compared.only("major", "/interface/input/properties/top");
    assert_eq!(
        message,
        "`interface.input` no longer admits the property `top` (it admits no undeclared property): a call admitted before is refused now"
    );
    // What was removed is located in the published manifest.
    assert!(
        compared
            .human
            .contains("  published.yaml:15:7 /interface/input/properties/top: "),
        "{}",
        compared.human
    );
}

#[test]
fn an_input_made_optional_is_minor() {
    let compared = changed(&[("required: [text]\n", "required: []\n")]);
    compared.needs("minor");
    compared.only("minor", "/interface/input/required/0");
}

#[test]
fn additional_properties_false_added_to_an_open_input_is_major_and_removed_is_minor() {
    let open = "    additionalProperties: false\n    required: [text]\n";
    let compared = changed(&[(open, "    required: [text]\n")]);
    compared.needs("minor");
    compared.only("minor", "/interface/input/additionalProperties");
    let published = edit(&published(), &[(open, "    required: [text]\n")]);
    let compared = Pair::new(&published, &self::published()).check();
    compared.needs("major");
    compared.only("major", "/interface/input/additionalProperties");
}

#[test]
fn an_input_enum_value_removed_is_major_and_added_is_minor() {
    let line = "enum: [strict, loose], maxLength: 10";
    let compared = changed(&[(line, "enum: [strict], maxLength: 10")]);
    compared.needs("major");
    let message = compared.only("major", "/interface/input/properties/mode/enum/1");
    assert_eq!(
        message,
        "`enum` of `interface.input.properties.mode` lost `\"loose\"`: a call admitted before is refused now"
    );
    let compared = changed(&[(line, "enum: [loose, strict], maxLength: 10")]);
    compared.needs("patch");
    compared.only("patch", "/interface/input/properties/mode/enum");
    let compared = changed(&[(line, "enum: [strict, loose, gentle], maxLength: 10")]);
    compared.needs("minor");
    compared.only("minor", "/interface/input/properties/mode/enum/2");
}

#[test]
fn an_input_pattern_added_or_changed_is_major_and_removed_is_minor() {
    let compared = changed(&[(
        "minLength: 1, maxLength: 100, description",
        "minLength: 1, maxLength: 100, pattern: \"^[^<]*$\", description",
    )]);
    compared.needs("major");
    let added = compared.only("major", "/interface/input/properties/text/pattern");
    assert!(
        added.starts_with("`pattern: \"^[^<]*$\"` added to `interface.input.properties.text`"),
        "{added}"
    );
    let label = "pattern: \"^[a-z]+$\"";
    let compared = changed(&[(label, "pattern: \"^[a-z0-9]+$\"")]);
    compared.needs("major");
    compared.only("major", "/interface/input/$defs/label/pattern");
    let compared = changed(&[(&format!("{label}, "), "")]);
    compared.needs("minor");
    let removed = compared.only("minor", "/interface/input/$defs/label/pattern");
    assert!(
        removed
            .starts_with("`pattern` (`\"^[a-z]+$\"`) removed from `interface.input.$defs.label`"),
        "{removed}"
    );
}

#[test]
fn an_input_type_changed_is_major_and_widened_is_minor() {
    let top = "top: { type: integer";
    let compared = changed(&[(top, "top: { type: string")]);
    compared.needs("major");
    let message = compared.only("major", "/interface/input/properties/top/type");
    assert_eq!(
        message,
        "`type` of `interface.input.properties.top` changed from `\"integer\"` to `\"string\"`: some calls admitted before are refused now"
    );
    let compared = changed(&[(top, "top: { type: number")]);
    compared.needs("minor");
    compared.only("minor", "/interface/input/properties/top/type");
    let compared = changed(&[(top, "top: { type: [integer, \"null\"]")]);
    compared.needs("minor");
}

#[test]
fn an_output_field_dropped_from_required_is_major_and_a_new_output_property_is_minor() {
    let compared = changed(&[(
        "required: [words, cleaned, level]",
        "required: [words, cleaned]",
    )]);
    compared.needs("major");
    let message = compared.only("major", "/interface/output/required/2");
    assert_eq!(
        message,
        "`interface.output` no longer requires `level`: an answer can be given now that could not be given before"
    );
    let compared = changed(&[(
        "      level: {",
        "      lines: { type: integer, minimum: 0, description: Lines in the text. }\n      level: {",
    )]);
    compared.needs("minor");
    compared.only("minor", "/interface/output/properties/lines");
}

#[test]
fn an_output_type_changed_or_widened_is_major() {
    let words = "words: { type: integer";
    let compared = changed(&[(words, "words: { type: string")]);
    compared.needs("major");
    compared.only("major", "/interface/output/properties/words/type");
    let compared = changed(&[(words, "words: { type: number")]);
    compared.needs("major");
    let message = compared.only("major", "/interface/output/properties/words/type");
    assert!(message.contains("widened from"), "{message}");
}

#[test]
fn an_output_enum_value_added_is_major_and_removed_is_minor() {
    let line = "enum: [low, high], maxLength: 4";
    let compared = changed(&[(line, "enum: [low, high, none], maxLength: 4")]);
    compared.needs("major");
    compared.only("major", "/interface/output/properties/level/enum/2");
    let compared = changed(&[(line, "enum: [low], maxLength: 4")]);
    compared.needs("minor");
    compared.only("minor", "/interface/output/properties/level/enum/1");
}

#[test]
fn what_the_rules_cannot_prove_compatible_is_major() {
    // `anyOf` rearranged: the same values, but these rules do not prove it.
    let compared = changed(&[(
        "anyOf: [{ type: integer, minimum: 1, maximum: 9 }, { type: \"null\" }]",
        "anyOf: [{ type: \"null\" }, { type: integer, minimum: 1, maximum: 9 }]",
    )]);
    compared.needs("major");
    let message = compared.only("major", "/interface/input/properties/limit/anyOf");
    assert!(message.contains("not proven compatible"), "{message}");
    // A `$ref` retargeted.
    let compared = changed(&[("$ref: \"#/$defs/label\"", "$ref: \"#/$defs/word\"")]);
    compared.needs("major");
    let message = compared.only("major", "/interface/input/properties/tags/items/$ref");
    assert!(message.contains("not proven compatible"), "{message}");
}

/// The published manifest with a property `probe` added to the input (or the output), whose
/// schema ends with `extra`: what the tests below move one keyword of.
fn with_probe(output: bool, extra: &str) -> String {
    let (at, line) = if output {
        (
            "      level: {",
            format!(
                "      probe: {{ type: integer, description: A probe.{extra} }}\n      level: {{"
            ),
        )
    } else {
        (
            "      tags:\n",
            format!(
                "      probe: {{ type: integer, default: 5, description: A probe.{extra} }}\n      tags:\n"
            ),
        )
    };
    edit(&published(), &[(at, &line)])
}

#[test]
fn every_bound_from_above_and_below_at_the_edge() {
    let upper = [
        "maxLength",
        "maxItems",
        "maxProperties",
        "maximum",
        "exclusiveMaximum",
        "maxContains",
    ];
    let lower = [
        "minLength",
        "minItems",
        "minProperties",
        "minimum",
        "exclusiveMinimum",
        "minContains",
    ];
    for (keyword, is_upper) in upper
        .iter()
        .map(|k| (k, true))
        .chain(lower.iter().map(|k| (k, false)))
    {
        for output in [false, true] {
            let published = with_probe(output, &format!(", {keyword}: 7"));
            let side = if output { "output" } else { "input" };
            let pointer = format!("/interface/{side}/properties/probe/{keyword}");
            for (to, narrower) in [(6, is_upper), (8, !is_upper)] {
                let manifest = edit(
                    &published,
                    &[(&format!("{keyword}: 7"), &format!("{keyword}: {to}"))],
                );
                let compared = Pair::new(&published, &manifest).check();
                // Narrower breaks a caller of the input, wider one of the output.
                let bump = if narrower != output { "major" } else { "minor" };
                compared.needs(bump);
                compared.only(bump, &pointer);
            }
            let compared = Pair::new(&published, &published).check();
            compared.needs("none");
            // Added: narrower; removed: wider.
            let bare = with_probe(output, "");
            let (added, removed) = if output {
                ("minor", "major")
            } else {
                ("major", "minor")
            };
            Pair::new(&bare, &published).check().needs(added);
            Pair::new(&published, &bare).check().needs(removed);
        }
    }
}

#[test]
fn a_format_is_judged_as_a_pattern_is() {
    let published = with_probe(false, "");
    let formatted = with_probe(false, ", format: int32");
    let compared = Pair::new(&published, &formatted).check();
    compared.needs("major");
    compared.only("major", "/interface/input/properties/probe/format");
    let changed = with_probe(false, ", format: int64");
    Pair::new(&formatted, &changed).check().needs("major");
    Pair::new(&formatted, &published).check().needs("minor");
}

#[test]
fn a_default_changed_on_the_input_is_minor_and_on_the_output_a_patch() {
    let compared = changed(&[("maximum: 50, default: 10", "maximum: 50, default: 12")]);
    compared.needs("minor");
    let message = compared.only("minor", "/interface/input/properties/top/default");
    assert!(
        message.ends_with("a call that leaves it out means something else now"),
        "{message}"
    );
    let published = with_probe(true, ", default: 1");
    let manifest = with_probe(true, ", default: 2");
    Pair::new(&published, &manifest).check().needs("patch");
}

#[test]
fn every_keyword_the_rules_do_not_judge_is_not_proven_compatible() {
    for (keyword, a, b) in [
        (
            "oneOf",
            "[{ minimum: 1 }, { maximum: 0 }]",
            "[{ maximum: 0 }, { minimum: 1 }]",
        ),
        ("not", "{ const: 3 }", "{ const: 4 }"),
        ("if", "{ minimum: 3 }", "{ minimum: 4 }"),
        ("then", "{ maximum: 9 }", "{ maximum: 8 }"),
        ("else", "{ maximum: 9 }", "{ maximum: 8 }"),
        (
            "allOf",
            "[{ minimum: 1 }]",
            "[{ minimum: 1 }, { maximum: 9 }]",
        ),
        (
            "prefixItems",
            "[{ minimum: 1 }]",
            "[{ minimum: 1 }, { maximum: 9 }]",
        ),
        (
            "dependentSchemas",
            "{ a: { minimum: 1 } }",
            "{ a: { minimum: 2 } }",
        ),
        ("unevaluatedProperties", "false", "true"),
    ] {
        let published = with_probe(false, &format!(", {keyword}: {a}"));
        let manifest = with_probe(false, &format!(", {keyword}: {b}"));
        let compared = Pair::new(&published, &manifest).check();
        compared.needs("major");
        let message = compared.only(
            "major",
            &format!("/interface/input/properties/probe/{keyword}"),
        );
        assert!(
            message.contains("not proven compatible"),
            "{keyword}: {message}"
        );
    }
    // `allOf` of one length is compared item by item.
    let published = with_probe(false, ", allOf: [{ minimum: 1 }]");
    let manifest = with_probe(false, ", allOf: [{ minimum: 0 }]");
    let compared = Pair::new(&published, &manifest).check();
    compared.needs("minor");
    compared.only("minor", "/interface/input/properties/probe/allOf/0/minimum");
    // A definition's change is judged in the schema's direction, unless a `not` could turn
    // its reference around.
    let compared = changed(&[(
        "word: { type: string, maxLength: 30",
        "word: { type: string, maxLength: 31",
    )]);
    compared.needs("minor");
    let published = with_probe(false, ", not: { const: 3 }");
    let manifest = edit(
        &published,
        &[(
            "word: { type: string, maxLength: 30",
            "word: { type: string, maxLength: 31",
        )],
    );
    let compared = Pair::new(&published, &manifest).check();
    compared.needs("major");
    assert!(
        compared
            .only("major", "/interface/input/$defs")
            .contains("not proven compatible")
    );
}

// The runtime, the declared codes, billing.

#[test]
fn the_tool_renamed_is_major() {
    let compared = changed(&[("tool: clean_text", "tool: clean")]);
    compared.needs("major");
    let message = compared.only("major", "/runtime/tool");
    assert_eq!(
        message,
        "`runtime.tool` renamed from `\"clean_text\"` to `\"clean\"`: a caller that calls the tool by its name finds none"
    );
}

#[test]
fn a_declared_code_removed_or_renamed_is_major_and_a_new_one_is_minor() {
    let compared = changed(&[("code: dictionary_down", "code: dictionary_unreachable")]);
    compared.needs("major");
    compared.change("major", "/interface/errors/1/code");
    compared.change("minor", "/interface/errors/1/code");
    assert_eq!(compared.changes().len(), 2, "{}", compared.human);
    let compared = changed(&[(
        "runtime:\n",
        "    - { code: too_long, description: The text is too long to clean. }\nruntime:\n",
    )]);
    compared.needs("minor");
    compared.only("minor", "/interface/errors/2/code");
}

#[test]
fn retryable_changed_is_minor_and_a_description_is_a_patch() {
    let compared = changed(&[(
        "The dictionary is unreachable., retryable: true",
        "The dictionary is unreachable., retryable: false",
    )]);
    compared.needs("minor");
    compared.only("minor", "/interface/errors/1/retryable");
    let compared = changed(&[(
        "The dictionary is unreachable.,",
        "The word list is unreachable.,",
    )]);
    compared.needs("patch");
    compared.only("patch", "/interface/errors/1/description");
}

#[test]
fn a_failure_that_was_free_and_is_billed_now_is_major() {
    // `charge_on` changed to `attempt`.
    let compared = changed(&[("charge_on: success", "charge_on: attempt")]);
    compared.needs("major");
    compared.only("major", "/pricing/charge_on");
    // Under `charge_on: attempt`, a code marked `billed: true`.
    let attempt = edit(
        &published(),
        &[("charge_on: success", "charge_on: attempt")],
    );
    let billed = edit(
        &attempt,
        &[(
            "retryable: false, billed: false",
            "retryable: false, billed: true",
        )],
    );
    let compared = Pair::new(&attempt, &billed).check();
    compared.needs("major");
    let message = compared.only("major", "/interface/errors/0/billed");
    assert_eq!(
        message,
        "declared code `empty_text` was free and is billed now"
    );
    // And back: billed, then free, breaks no caller.
    let compared = Pair::new(&billed, &attempt).check();
    compared.needs("minor");
    // Under `charge_on: success`, `billed` bills nothing.
    let compared = changed(&[(
        "retryable: false, billed: false",
        "retryable: false, billed: true",
    )]);
    compared.needs("patch");
}

#[test]
fn charge_on_back_to_success_is_minor_and_a_new_code_billed_is_major() {
    let attempt = edit(
        &published(),
        &[("charge_on: success", "charge_on: attempt")],
    );
    let compared = Pair::new(&attempt, &published()).check();
    compared.needs("minor");
    compared.only("minor", "/pricing/charge_on");
    let billed = edit(
        &attempt,
        &[(
            "runtime:\n",
            "    - { code: too_long, description: The text is too long to clean., billed: true }\nruntime:\n",
        )],
    );
    let compared = Pair::new(&attempt, &billed).check();
    compared.needs("major");
    compared.change("major", "/interface/errors/2/billed");
    compared.change("minor", "/interface/errors/2/code");
}

#[test]
fn what_is_only_the_document_is_a_patch() {
    for (edits, pointer) in [
        (
            vec![("currency: EUR", "currency: USD")],
            "/pricing/currency",
        ),
        (
            vec![(
                "description: The text to clean.",
                "description: The text to tidy.",
            )],
            "/interface/input/properties/text/description",
        ),
        (
            vec![(
                "    - { code: empty_text, description: The text is only blanks., retryable: false, billed: false }\n    - { code: dictionary_down, description: The dictionary is unreachable., retryable: true, billed: false }\n",
                "    - { code: dictionary_down, description: The dictionary is unreachable., retryable: true, billed: false }\n    - { code: empty_text, description: The text is only blanks., retryable: false, billed: false }\n",
            )],
            "/interface/errors",
        ),
        (
            vec![(
                "  - name: blanks\n    input: { text: \"   \" }\n    error: empty_text\n  - name: a dictionary outage\n    input: { text: outage }\n    error: dictionary_down\n",
                "  - name: a dictionary outage\n    input: { text: outage }\n    error: dictionary_down\n  - name: blanks\n    input: { text: \"   \" }\n    error: empty_text\n",
            )],
            "/examples",
        ),
    ] {
        let compared = changed(&edits);
        compared.needs("patch");
        compared.only("patch", pointer);
    }
}

#[test]
fn a_folder_is_read_for_its_holon_yaml_and_a_missing_value_is_a_usage_error() {
    let pair = Pair::new(&published(), &published());
    std::fs::create_dir(pair.path().join("old")).unwrap();
    std::fs::write(
        pair.path().join("old/holon.yaml"),
        edit(&published(), &[("price: 0.002", "price: 0.003")]),
    )
    .unwrap();
    let compared = Compared::run(pair.path(), &["holon.yaml", "--against", "old"]);
    compared.needs("patch");
    assert_eq!(compared.doc["against"]["manifest"], "old/holon.yaml");
    let output = check(pair.path(), &["holon.yaml", "--against"], &[]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
}

// One case per class, with the version each allows.

#[test]
fn none_the_same_document_however_it_is_written() {
    // Comments, key order, quoting, flow or block style, `1.0` for `1`: the same document.
    let relaid = std::fs::read_to_string(fixtures().join("published-relaid.yaml")).unwrap();
    assert_ne!(relaid, published());
    let compared = Pair::new(&published(), &relaid).check();
    compared.needs("none");
    assert!(compared.changes().is_empty(), "{}", compared.human);
    assert_eq!(compared.code, 0, "{}", compared.human);
    assert!(
        compared.human.contains(
            "note: against `published.yaml` (version 1.4.2): the same document: no new version needed"
        ),
        "{}",
        compared.human
    );
}

#[test]
fn patch_what_a_caller_reads_but_does_not_call_by() {
    for (from, to, pointer) in [
        (
            "description: Cleans a text and counts its words.",
            "description: Cleans a text.",
            "/description",
        ),
        (
            "capability: text.cleaning",
            "capability: text.tidying",
            "/capability",
        ),
        ("price: 0.002", "price: 0.003", "/pricing/price"),
        (
            "commit: 0123456789abcdef0123456789abcdef01234567",
            "commit: 1123456789abcdef0123456789abcdef01234567",
            "/source/commit",
        ),
        (
            "output: { words: 2, cleaned: Hello world, level: low }",
            "output: { words: 2, cleaned: Hello world, level: high }",
            "/examples/0/output/level",
        ),
        (
            "  - name: a dictionary outage\n",
            "  - name: one word\n    input: { text: word }\n    output: { words: 1, cleaned: word, level: low }\n  - name: a dictionary outage\n",
            "/examples/2",
        ),
        (
            "  - name: blanks\n    input: { text: \"   \" }\n    error: empty_text\n",
            "",
            "/examples/1",
        ),
    ] {
        let compared = changed(&[(from, to)]);
        compared.needs("patch");
        compared.only("patch", pointer);
        compared.error("version-not-bumped", "/version");
        // The smallest version that allows it.
        let bumped = edit(
            &published(),
            &[(from, to), ("version: 1.4.2", "version: 1.4.3")],
        );
        let compared = Pair::new(&published(), &bumped).check();
        assert_eq!(compared.code, 0, "{}", compared.human);
        compared.needs("patch");
    }
}

#[test]
fn minor_needs_a_minor_version_and_a_bigger_one_is_fine() {
    let widen = ("maxItems: 5\n", "maxItems: 6\n");
    for (version, accepted) in [
        ("1.4.2", false),
        ("1.4.3", false),
        ("1.5.0", true),
        ("2.0.0", true),
    ] {
        let manifest = edit(
            &published(),
            &[widen, ("version: 1.4.2", &format!("version: {version}"))],
        );
        let compared = Pair::new(&published(), &manifest).check();
        compared.needs("minor");
        assert_eq!(
            compared.code == 0,
            accepted,
            "{version}: {}",
            compared.human
        );
        match version {
            "1.4.2" => {
                let d = compared.error("version-not-bumped", "/version");
                assert_eq!(d["line"], 4);
                assert_eq!(
                    d["hint"],
                    "set `version` to `1.5.0`, a minor version after `1.4.2`"
                );
            }
            "1.4.3" => {
                let d = compared.error("version-bump-too-small", "/version");
                assert_eq!(
                    d["message"],
                    "`version` `1.4.3` is a patch version after the published `1.4.2`, but the 1 change since needs a minor version (at `/interface/input/properties/tags/maxItems`: `maxItems` of `interface.input.properties.tags` raised from 5 to 6: calls refused before are admitted now, and every call admitted before still is)"
                );
            }
            _ => assert!(compared.checks().is_empty(), "{}", compared.human),
        }
    }
}

#[test]
fn major_needs_a_major_version() {
    let narrow = ("maxItems: 5\n", "maxItems: 4\n");
    for (version, check) in [
        ("1.4.1", Some("version-not-bumped")),
        ("1.4.2", Some("version-not-bumped")),
        ("1.4.3", Some("version-bump-too-small")),
        ("1.5.0", Some("version-bump-too-small")),
        ("2.0.0-rc.1", None),
        ("2.0.0", None),
    ] {
        let manifest = edit(
            &published(),
            &[narrow, ("version: 1.4.2", &format!("version: {version}"))],
        );
        let compared = Pair::new(&published(), &manifest).check();
        compared.needs("major");
        assert_eq!(
            compared.checks(),
            Vec::from_iter(check),
            "{}",
            compared.human
        );
        if let Some(check) = check {
            let d = compared.error(check, "/version");
            assert_eq!(
                d["hint"],
                "set `version` to `2.0.0`, a major version after `1.4.2`"
            );
        }
        if version == "1.4.1" {
            let d = compared.error("version-not-bumped", "/version");
            assert!(
                d["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("`version` is `1.4.1`, below the published `1.4.2`: a published version is immutable"),
                "{d}"
            );
        }
    }
}

#[test]
fn below_one_a_major_change_bumps_the_minor_number() {
    let published = edit(&published(), &[("version: 1.4.2", "version: 0.4.2")]);
    let narrow = ("maxItems: 5\n", "maxItems: 4\n");
    for (version, accepted) in [("0.4.3", false), ("0.5.0", true)] {
        let manifest = edit(
            &published,
            &[narrow, ("version: 0.4.2", &format!("version: {version}"))],
        );
        let compared = Pair::new(&published, &manifest).check();
        assert_eq!(compared.code == 0, accepted, "{}", compared.human);
        if !accepted {
            let d = compared.error("version-bump-too-small", "/version");
            assert!(
                d["hint"]
                    .as_str()
                    .unwrap()
                    .starts_with("set `version` to `0.5.0`"),
                "{d}"
            );
        }
    }
}

/// Every class at once: the changes grouped major, minor, patch, each with its place; the
/// version's error; the same as JSON.
#[test]
fn every_class_at_once_as_a_person_and_a_tool_read_it() {
    let compared = changed(&[
        ("maxItems: 5\n", "maxItems: 4\n"),
        ("timeout_s: 30", "timeout_s: 60"),
        ("price: 0.002", "price: 0.003"),
        (
            "      top: { type: integer, minimum: 1, maximum: 50, default: 10, description: How many words to return. }\n",
            "",
        ),
        ("version: 1.4.2", "version: 1.5.0"),
    ]);
    compared.needs("major");
    insta::assert_snapshot!("human_every_class", compared.human);
    // The guide shows this very report.
    let page = std::fs::read_to_string(root().join("docs/src/publishing.md")).unwrap();
    let start = page
        .find("error[version-bump-too-small]: `version` `1.5.0`")
        .expect("the guide's example report");
    let end = start + page[start..].find("```").unwrap();
    assert_eq!(page[start..end], compared.human);
    insta::assert_snapshot!(
        "json_every_class",
        serde_json::to_string_pretty(&compared.doc).unwrap()
    );
}

#[test]
fn github_annotations_carry_the_version_errors() {
    let published = published();
    let pair = Pair::new(
        &published,
        &edit(&published, &[("maxItems: 5\n", "maxItems: 4\n")]),
    );
    let output = check(
        pair.path(),
        &["holon.yaml", "--against", "published.yaml"],
        &["--format", "github"],
    );
    assert_eq!(code(&output), 1);
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with("::error file=holon.yaml,line=4,col=10,title=version-not-bumped::`version` is still `1.4.2`, the published version: a published version is immutable"),
        "{text}"
    );
}

// Git: a revision, a tag, and every way one can fail.

/// A git repository in a temporary folder, with the published manifest committed and tagged
/// `v1.4.2`, then a second commit; configured by the environment only (no system or global
/// configuration is read).
struct Repo(tempfile::TempDir);

impl Repo {
    fn new() -> Repo {
        let repo = Repo(tempfile::tempdir().unwrap());
        repo.git(&["init", "-q"]);
        std::fs::create_dir(repo.path().join("agent")).unwrap();
        repo.write(&published());
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "1.4.2"]);
        repo.git(&["tag", "v1.4.2"]);
        repo.write(&edit(&published(), &[("price: 0.002", "price: 0.003")]));
        repo.git(&["commit", "-q", "-am", "a new price"]);
        repo
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn manifest(&self) -> PathBuf {
        self.path().join("agent/holon.yaml")
    }

    fn write(&self, text: &str) {
        std::fs::write(self.manifest(), text).unwrap();
    }

    fn git(&self, args: &[&str]) -> String {
        let output = git(self.path()).args(args).output().expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    /// `check --against OLD` in the agent's folder.
    fn check(&self, old: &str) -> Compared {
        Compared::run(&self.path().join("agent"), &["--against", old])
    }
}

/// git in `dir`, configured by the environment only.
fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir);
    for (name, value) in isolated_git() {
        command.env(name, value);
    }
    command
}

/// The variables that keep a test's git away from the machine's configuration and give it an
/// identity.
fn isolated_git() -> [(&'static str, &'static str); 6] {
    [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.org"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.org"),
    ]
}

#[test]
fn a_tag_and_a_revision_are_read_from_git() {
    let repo = Repo::new();
    // The tag: the price changed since (a patch), and `version` did not.
    let compared = repo.check("v1.4.2");
    compared.needs("patch");
    compared.only("patch", "/pricing/price");
    compared.error("version-not-bumped", "/version");
    assert_eq!(compared.doc["against"]["manifest"], "v1.4.2:holon.yaml");
    assert_eq!(compared.doc["against"]["version"], "1.4.2");
    assert!(
        compared.human.contains(
            "note: against `v1.4.2:holon.yaml` (version 1.4.2): 1 change, which needs a patch version"
        ),
        "{}",
        compared.human
    );
    // A revision: HEAD is the manifest as committed, the same document.
    repo.check("HEAD").needs("none");
    repo.check("HEAD~1").needs("patch");
    // The manifest named by an absolute path, from another folder: git reads the revision in
    // the manifest's folder, and messages name it by its file name.
    let elsewhere = tempfile::tempdir().unwrap();
    let manifest = repo.manifest().display().to_string();
    let compared = Compared::run(elsewhere.path(), &[&manifest, "--against", "v1.4.2"]);
    compared.needs("patch");
    assert_eq!(compared.doc["against"]["manifest"], "v1.4.2:holon.yaml");
    // `REV:path`, from the repository's root.
    let compared = repo.check("v1.4.2:agent/holon.yaml");
    compared.needs("patch");
    assert_eq!(
        compared.doc["against"]["manifest"],
        "v1.4.2:agent/holon.yaml"
    );
}

#[test]
fn a_revision_git_does_not_know_is_refused_in_one_line() {
    let repo = Repo::new();
    let compared = repo.check("v9.9.9");
    assert_eq!(compared.code, 1);
    let d = compared.error("against-unreadable", "");
    assert_eq!(
        d["message"],
        "`v9.9.9` is neither a file nor a revision git knows"
    );
    assert_eq!(compared.doc["against"]["required_bump"], Value::Null);
    assert!(
        compared.human.starts_with(
            "error[against-unreadable]: `v9.9.9` is neither a file nor a revision git knows\n"
        ),
        "{}",
        compared.human
    );
    // A known revision without the file.
    let compared = repo.check("v1.4.2:nowhere/holon.yaml");
    let d = compared.error("against-unreadable", "");
    assert_eq!(
        d["message"],
        "`v1.4.2:nowhere/holon.yaml` is not a file in the repository: the revision is known, the path is not in it"
    );
}

#[test]
fn a_shallow_clone_without_the_tag_says_so_and_how_to_fetch_it() {
    let repo = Repo::new();
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    let output = git(clone.path())
        .args(["clone", "-q", "--depth", "1", "--no-tags", &url, "."])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let compared = Compared::run(&clone.path().join("agent"), &["--against", "v1.4.2"]);
    let d = compared.error("against-unreadable", "");
    assert_eq!(
        d["message"],
        "git does not know the revision `v1.4.2`: the clone is shallow, and it is not among the commits fetched"
    );
    assert!(
        d["hint"]
            .as_str()
            .unwrap()
            .starts_with("fetch it: `git fetch --depth=1 origin tag v1.4.2`"),
        "{d}"
    );
    // Fetched as the hint says, it is read.
    let output = git(clone.path())
        .args(["fetch", "-q", "--depth=1", "origin", "tag", "v1.4.2"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    Compared::run(&clone.path().join("agent"), &["--against", "v1.4.2"]).needs("patch");
}

#[test]
fn a_folder_that_is_no_repository_is_refused_in_one_line() {
    let pair = Pair::new(&published(), &published());
    let compared = Compared::run(pair.path(), &["holon.yaml", "--against", "v1.4.2"]);
    let d = compared.error("against-unreadable", "");
    assert_eq!(
        d["message"],
        "`v1.4.2` is not a file, and the manifest's folder is not in a git repository to read it as a revision from"
    );
}

#[test]
fn a_git_that_does_not_finish_is_stopped_after_five_seconds() {
    // A `git` that never answers (a hook, a credential prompt, a network file system hang the
    // same way), first on the PATH; it notes its process id, to be looked for after.
    let pair = Pair::new(&published(), &published());
    let bin = pair.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let pid_file = pair.path().join("git.pid");
    let script = bin.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 3600\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Instant::now();
    let output = Command::new(BIN)
        .args([
            "check",
            "holon.yaml",
            "--against",
            "v1.4.2",
            "--format",
            "json",
        ])
        .current_dir(pair.path())
        .env("PATH", path)
        .output_within(RUN_LIMIT);
    let took = started.elapsed();
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let doc = one_document(&String::from_utf8_lossy(&output.stdout));
    let d = &doc["diagnostics"][0];
    assert_eq!(d["check"], "against-unreadable", "{doc}");
    assert_eq!(
        d["message"],
        "`git cat-file` did not finish within 5 s and was stopped (a hook or a prompt that waits?)"
    );
    assert!(
        took >= Duration::from_secs(5),
        "{took:?}: git was not waited for"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    // Stopped with what it started: the process is gone (or, reaped by whoever inherits it, on
    // its way).
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    let gone = crate::util::wait_until(Instant::now() + Duration::from_secs(10), || {
        let ps = Command::new("ps")
            .args(["-o", "stat=", "-p", &pid])
            .output()
            .unwrap();
        let state = String::from_utf8_lossy(&ps.stdout).trim().to_string();
        state.is_empty() || state.starts_with('Z')
    });
    assert!(gone, "git's process {pid} is still running");
}

// The published manifest: missing, refused by its own checks, another agent's, not YAML.

#[test]
fn a_published_manifest_that_does_not_exist_is_refused_in_one_line() {
    let pair = Pair::new(&published(), &published());
    let compared = Compared::run(pair.path(), &["holon.yaml", "--against", "gone/holon.yaml"]);
    let d = compared.error("against-unreadable", "");
    assert_eq!(
        d["message"],
        "the published manifest `gone/holon.yaml` does not exist"
    );
    assert_eq!(d["line"], 0);
    assert_eq!(compared.doc["against"]["manifest"], "gone/holon.yaml");
    assert_eq!(compared.doc["against"]["version"], Value::Null);
    // A folder is read as the `holon.yaml` in it, and a folder without one says so.
    std::fs::create_dir(pair.path().join("empty")).unwrap();
    let compared = Compared::run(pair.path(), &["holon.yaml", "--against", "empty"]);
    let d = compared.error("against-unreadable", "");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .starts_with("the published manifest cannot be read: cannot read `empty/holon.yaml`: "),
        "{d}"
    );
}

#[test]
fn a_published_manifest_its_own_checks_refuse_is_compared_where_it_can_be_read() {
    let refused = edit(
        &published(),
        &[(
            "capability: text.cleaning\n",
            "capability: text.cleaning\ncolour: blue\n",
        )],
    );
    let pair = Pair::new(
        &refused,
        &edit(&published(), &[("maxItems: 5\n", "maxItems: 4\n")]),
    );
    let compared = pair.check();
    let d = compared.error("against-refused", "");
    assert_eq!(
        d["message"],
        "the published manifest `published.yaml` fails its own publish checks (1 error, the first `unknown-field` at published.yaml:7:1: unknown field `colour` in the manifest): what could be read was compared"
    );
    // What could be read was compared: the bound, and the field the checks refused.
    compared.needs("major");
    compared.change("major", "/interface/input/properties/tags/maxItems");
    compared.change("patch", "/colour");
    compared.error("version-not-bumped", "/version");
}

#[test]
fn another_agents_manifest_is_refused_and_nothing_compared() {
    let other = edit(&published(), &[("name: text-tool", "name: word-stats")]);
    let compared = Pair::new(&other, &published()).check();
    let d = compared.error("against-other-agent", "/name");
    assert_eq!(
        d["message"],
        "`name` is `text-tool`, and the published manifest `published.yaml` is `word-stats`'s: another agent, not a version of this one, so nothing was compared"
    );
    assert_eq!(d["line"], 3);
    assert_eq!(compared.doc["against"]["required_bump"], Value::Null);
    assert!(compared.changes().is_empty());
}

#[test]
fn a_published_file_that_is_not_a_manifest_is_refused_in_one_line() {
    let compared = Pair::new("name: [unclosed\n", &published()).check();
    let d = compared.error("against-unreadable", "");
    assert!(
        d["message"].as_str().unwrap().starts_with(
            "the published manifest `published.yaml` cannot be compared: it is not a manifest: "
        ),
        "{d}"
    );
    let compared = Pair::new("", &published()).check();
    compared.error("against-unreadable", "");
    let binary = tempfile::tempdir().unwrap();
    std::fs::write(binary.path().join("published.yaml"), b"name: \xff\n").unwrap();
    std::fs::write(binary.path().join("holon.yaml"), published()).unwrap();
    let compared = Compared::run(
        binary.path(),
        &["holon.yaml", "--against", "published.yaml"],
    );
    let d = compared.error("against-unreadable", "");
    assert_eq!(
        d["message"],
        "the published manifest `published.yaml` cannot be read: the file is not UTF-8 text (invalid byte at offset 6) (at published.yaml:1:7)"
    );
}

#[test]
fn a_manifest_refused_itself_is_still_compared() {
    let manifest = edit(
        &published(),
        &[
            ("maxItems: 5\n", "maxItems: 4\n"),
            ("tool: clean_text", "tool: clean text"),
        ],
    );
    let compared = Pair::new(&published(), &manifest).check();
    compared.needs("major");
    compared.error("invalid-tool-name", "/runtime/tool");
    compared.error("version-not-bumped", "/version");
    compared.change("major", "/runtime/tool");
}

// Size: as linear as `check` itself.

#[test]
fn huge_schemas_are_compared_in_linear_time() {
    // An enum of 200,000 values in the opposite order, one gone, and 20,000 properties in the
    // opposite order, one changed: compared value by value or property by property, this would
    // not end in a day; matched through sets and indexes, it is a few seconds.
    let (values, properties) = (200_000, 20_000);
    let build = |reversed: bool, gone: Option<usize>, changed: Option<usize>| {
        let order = |n: usize| -> Vec<usize> {
            if reversed {
                (0..n).rev().collect()
            } else {
                (0..n).collect()
            }
        };
        let listed: Vec<String> = (order(values).into_iter())
            .filter(|i| Some(*i) != gone)
            .map(|i| format!("v{i}"))
            .collect();
        let declared: String = (order(properties).into_iter())
            .map(|i| {
                let max = if Some(i) == changed { 7 } else { 8 };
                format!("      p{i}: {{ maxLength: {max} }}\n")
            })
            .collect();
        edit(
            &published(),
            &[
                ("      tags:\n", &format!("{declared}      tags:\n")),
                (
                    "enum: [strict, loose]",
                    &format!("enum: [strict, loose, {}]", listed.join(", ")),
                ),
            ],
        )
    };
    let pair = Pair::new(
        &build(false, None, None),
        &build(true, Some(values / 3), Some(properties / 2)),
    );
    let started = Instant::now();
    let output = check(
        pair.path(),
        &["holon.yaml", "--against", "published.yaml"],
        &["--format", "json"],
    );
    let took = started.elapsed();
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let doc = one_document(&String::from_utf8_lossy(&output.stdout));
    let changes = doc["against"]["changes"].as_array().unwrap();
    let pointers: Vec<&str> = changes
        .iter()
        .map(|c| c["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(
        pointers,
        [
            format!("/interface/input/properties/p{}/maxLength", properties / 2),
            format!("/interface/input/properties/mode/enum/{}", values / 3 + 2),
        ]
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
        "{doc}"
    );
    assert!(took < Duration::from_secs(40), "{took:?}");
}

/// Every fixture is used by a test above, so none rots unchecked.
#[test]
fn every_fixture_is_tested() {
    let source = include_str!("against.rs");
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            source.contains(&format!("\"{name}\"")),
            "`tests/fixtures/against/{name}` is used by no test"
        );
    }
}

// The scaffold's CI workflow.

/// The `run` script of the scaffold workflow's step named `name`.
fn workflow_step(name: &str) -> String {
    let path = root().join("crates/holon-cli/templates/agent/.github/workflows/holon.yml");
    let text = std::fs::read_to_string(path).unwrap();
    let workflow: Value = serde_saphyr::from_str(&text).unwrap();
    let steps = workflow["jobs"]["test"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step `{name}`"));
    step["run"].as_str().unwrap().to_string()
}

#[test]
fn the_scaffold_workflow_checks_the_version_against_the_newest_tag() {
    // The agent's repository: 1.4.2, then 1.10.0 (tagged both), then a change that needs a
    // major version, `version` left at 1.10.0. By version, 1.10.0 is the newest tag (by text it
    // would be 1.4.2).
    let origin = tempfile::tempdir().unwrap();
    let commit = |text: &str, message: &str, tag: Option<&str>| {
        std::fs::write(origin.path().join("holon.yaml"), text).unwrap();
        for args in [&["add", "-A"][..], &["commit", "-q", "-m", message]] {
            let output = git(origin.path()).args(args).output().unwrap();
            assert!(output.status.success(), "{output:?}");
        }
        if let Some(tag) = tag {
            let output = git(origin.path()).args(["tag", tag]).output().unwrap();
            assert!(output.status.success(), "{output:?}");
        }
    };
    let output = git(origin.path()).args(["init", "-q"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let step = workflow_step("Check the version against the newest tag");
    // The step reads the tags the checkout fetched: it has no credentials to fetch them.
    let path = root().join("crates/holon-cli/templates/agent/.github/workflows/holon.yml");
    let workflow: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let checkout = workflow["jobs"]["test"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout@"))
        })
        .expect("a checkout step");
    assert_eq!(checkout["with"]["fetch-tags"], true, "{checkout}");
    assert_eq!(checkout["with"]["persist-credentials"], false, "{checkout}");
    // The workflow's shell, in a checkout as `actions/checkout` makes it with `fetch-tags`
    // (one commit, and the tags each with its own commit only), with a `cargo` that runs this
    // binary for `cargo holon-test` and notes what it installs.
    let run = || {
        let work = tempfile::tempdir().unwrap();
        let url = format!("file://{}", origin.path().display());
        let output = git(work.path())
            .args(["clone", "-q", "--depth", "1", "--no-tags", &url, "repo"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let output = git(&work.path().join("repo"))
            .args(["fetch", "-q", "--depth=1", "--tags", "origin"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let bin = work.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let installed = work.path().join("installed");
        let cargo = bin.join("cargo");
        std::fs::write(
            &cargo,
            format!(
                "#!/bin/sh\ncase \"$1\" in\n  pkgid) echo 'registry+https://github.com/rust-lang/crates.io-index#holon-kit@0.2.0' ;;\n  install) shift; echo \"$@\" > '{}' ;;\n  holon-test) shift; exec '{BIN}' \"$@\" ;;\n  *) exit 2 ;;\nesac\n",
                installed.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &step])
            .current_dir(work.path().join("repo"))
            .env("PATH", path)
            .env("NO_COLOR", "1");
        for (name, value) in isolated_git() {
            command.env(name, value);
        }
        let output = command.output_within(RUN_LIMIT);
        let installed = std::fs::read_to_string(installed).unwrap_or_default();
        (output, installed)
    };
    // No tag yet: nothing to compare with, and nothing installed.
    commit(&published(), "1.4.2", None);
    let (output, installed) = run();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("no version tag yet"),
        "{output:?}"
    );
    assert_eq!(installed, "");
    let output = git(origin.path()).args(["tag", "v1.4.2"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let newer = edit(
        &published(),
        &[
            ("version: 1.4.2", "version: 1.10.0"),
            ("price: 0.002", "price: 0.003"),
        ],
    );
    commit(&newer, "1.10.0", Some("v1.10.0"));
    commit(
        &edit(&newer, &[("maxItems: 5\n", "maxItems: 4\n")]),
        "fewer tags",
        None,
    );
    let (output, installed) = run();
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert_eq!(installed.trim(), "holon-kit --locked --version 0.2.0");
    let said = stderr(&output);
    assert!(
        said.starts_with(
            "error[version-not-bumped]: `version` is still `1.10.0`, the published version"
        ),
        "{said}"
    );
    assert!(
        said.contains("note: against `v1.10.0:holon.yaml` (version 1.10.0): 1 change, which needs a major version"),
        "{said}"
    );
    // Bumped as far as the change needs, it passes.
    let bumped = edit(
        &newer,
        &[
            ("maxItems: 5\n", "maxItems: 4\n"),
            ("version: 1.10.0", "version: 2.0.0"),
        ],
    );
    commit(&bumped, "2.0.0", None);
    let (output, _) = run();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
}

/// A description changed near its end: both sides are shown around the first difference, not
/// cut at the same place, where the change would not show.
#[test]
fn a_long_description_changed_at_its_end_shows_the_change() {
    let said = |end: &str| {
        edit(
            &published(),
            &[(
                "description: Cleans a text and counts its words.\n",
                &format!(
                    "description: Cleans a text and counts its words, the way a careful editor would, keeping {end}.\n"
                ),
            )],
        )
    };
    let compared = Pair::new(&said("names"), &said("numbers")).check();
    let message = compared.only("patch", "/description");
    assert_eq!(
        message,
        "`description` changed from `\"...tor would, keeping names.\"` to `\"...tor would, keeping numbers.\"`: the published document changed, not its interface",
        "{}",
        compared.human
    );
}

/// A new output property under `additionalProperties: false` is a minor version, said as it
/// is: no answer could hold it before, and a caller that reads the fields it knows is not
/// broken by it.
#[test]
fn a_new_output_property_of_a_closed_output_says_no_answer_could_hold_it_before() {
    let compared = changed(&[(
        "      level: { type: string, enum: [low, high], maxLength: 4, description: How much was cleaned. }\n",
        "      level: { type: string, enum: [low, high], maxLength: 4, description: How much was cleaned. }\n      lang: { type: string, maxLength: 5, description: The text's language. }\n",
    )]);
    compared.needs("minor");
    let message = compared.only("minor", "/interface/output/properties/lang");
    assert!(
        message.contains("has a new property `lang`, which no answer could hold before"),
        "{message}"
    );
    assert!(
        !message.contains("every answer given now could be given before"),
        "{message}"
    );
}

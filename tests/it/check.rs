//! `cargo holon-test check` on fixture manifests: every check id, accepted and refused, the JSON
//! document, hostile files, and snapshots of the message text.
//!
//! Each fixture in `tests/fixtures/check` is named after the check it shows and says what it
//! breaks on its first line. Payloads too large to commit are generated into a temporary folder.

use std::fmt::Write as _;

use crate::util::{
    OutputWithin, RUN_LIMIT, check, check_arg, check_file, code, fixtures, human, normalise,
    one_document, root, run, stderr, stdout,
};

// The YAML document.

#[test]
fn yaml_syntax() {
    check("yaml-syntax.yaml")
        .refused()
        .error("yaml-syntax", "", (29, 9))
        .message("while parsing a flow mapping, did not find expected ',' or '}'")
        .nothing_else();
}

#[test]
fn yaml_duplicate_key() {
    check("yaml-duplicate-key.yaml")
        .refused()
        .error("yaml-duplicate-key", "/version", (5, 1))
        .message("duplicate key `version`")
        .nothing_else();
}

#[test]
fn yaml_duplicate_key_inside_a_section_is_named_by_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let text = std::fs::read_to_string(fixtures().join("yaml-duplicate-key.yaml"))
        .unwrap()
        .replace("version: 1.0.1\n", "")
        .replace("description: Echoes a word back.\n", "")
        .replace(
            "max_input_bytes: 1000 }\n",
            "max_input_bytes: 1000 }\n  tool: echo2\n",
        );
    std::fs::write(&path, text).unwrap();
    check_file(&path)
        .refused()
        .error("yaml-duplicate-key", "/runtime/tool", (24, 3))
        .message("duplicate key `tool`")
        .nothing_else();
}

#[test]
fn yaml_alias_bomb_is_refused() {
    check("yaml-too-complex.yaml")
        .refused()
        .error("yaml-too-complex", "", (7, 10))
        .message("aliases expand the document past what a manifest may hold (an alias bomb?)")
        .nothing_else();
}

#[test]
fn yaml_deep_nesting_is_refused_without_overflowing_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    std::fs::write(
        &path,
        format!(
            "name: deep\nexamples: {}{}\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
    )
    .unwrap();
    check_file(&path)
        .refused()
        .error_on_line("yaml-too-complex", "", 2)
        .message("the document is nested deeper than 160 levels")
        .nothing_else();
}

// A mapping of hundreds of thousands of keys: each check over it is linear in its keys (the
// duplicate search compared every pair, and each diagnostic was located by a search of the
// mapping, so these runs did not end). The time is measured in benches/check.rs.

#[test]
fn a_duplicate_among_200000_keys_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let mut text = String::from("big:\n");
    for i in 0..200_000 {
        let _ = writeln!(text, "  key{i:07}: {i}");
    }
    text.push_str("  key0000000: again\n");
    std::fs::write(&path, text).unwrap();
    check_file(&path)
        .refused()
        .error("yaml-duplicate-key", "/big/key0000000", (200_002, 3))
        .message("duplicate key `key0000000`")
        .nothing_else();
}

#[test]
fn two_hundred_thousand_unknown_keys_list_the_first_thousand_and_count_the_rest() {
    let keys = 200_000;
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(fixtures().join("accepted.yaml")).unwrap();
    let first = text.lines().count() + 1;
    for i in 0..keys {
        let _ = writeln!(text, "key{i:07}: {i}");
    }
    std::fs::write(dir.path().join("holon.yaml"), text).unwrap();
    let outcome = check_file(&dir.path().join("holon.yaml"));
    assert_eq!(outcome.code, 1);
    let diagnostics = outcome.doc["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1001);
    for (i, d) in diagnostics.iter().take(1000).enumerate() {
        assert_eq!(d["check"], "unknown-field", "{d}");
        assert_eq!(d["pointer"], format!("/key{i:07}"), "{d}");
        assert_eq!(d["line"].as_u64(), Some((first + i) as u64), "{d}");
        assert_eq!(d["column"], 1, "{d}");
    }
    // The rest are counted, by one diagnostic of the same check after the last one listed.
    let rest = &diagnostics[1000];
    assert_eq!(rest["check"], "unknown-field", "{rest}");
    assert_eq!(rest["severity"], "error", "{rest}");
    assert_eq!(rest["pointer"], "", "{rest}");
    assert_eq!(rest["line"].as_u64(), Some((first + 999) as u64), "{rest}");
    assert_eq!(
        rest["message"],
        "199000 more `unknown-field` errors are not listed: a check lists its first 1000"
    );
    let report = human(dir.path(), "holon.yaml");
    assert_eq!(
        report.lines().last(),
        Some("error: `holon.yaml` refused: 200000 errors, 0 warnings")
    );
}

#[test]
fn diagnostics_on_one_long_line_are_each_shown_in_a_short_window() {
    // The whole manifest as one line of JSON (which is YAML), then a thousand unknown keys,
    // each with a long value: a line of 30 MB, with a diagnostic every 30 KB.
    let keys = 1000;
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml")).unwrap();
    let options = serde_saphyr::options! { strict_booleans: true };
    let manifest: serde_json::Value = serde_saphyr::from_str_with_options(&text, options).unwrap();
    let mut line = manifest.to_string();
    line.pop();
    let value = "v".repeat(30_000);
    for i in 0..keys {
        let _ = write!(line, ",\"key{i:04}\":\"{value}\"");
    }
    line.push('}');
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("holon.yaml"), format!("{line}\n")).unwrap();
    let report = human(dir.path(), "holon.yaml");
    assert_eq!(report.matches("error[unknown-field]").count(), keys);
    assert!(
        report.lines().all(|l| l.len() < 200),
        "a line is too long to read"
    );
    // Each window shows its own key, the caret under its opening quote.
    let lines: Vec<&str> = report.lines().collect();
    for i in [0, keys / 2, keys - 1] {
        let key = format!("\"key{i:04}\"");
        let heading = format!("unknown field `key{i:04}` in the manifest");
        let at = lines.iter().position(|l| l.ends_with(&heading)).unwrap();
        let (source, caret) = (lines[at + 3], lines[at + 4]);
        let column = caret.find('^').unwrap();
        assert_eq!(
            &source[column..column + key.len()],
            key,
            "{source}\n{caret}"
        );
    }
}

#[test]
fn thirty_thousand_codes_and_examples_are_each_checked_once() {
    // Every example fails with a code that is not declared, and no declared code has an
    // example: each example was compared with every code (and each code with every example).
    let n = 30_000;
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml")).unwrap();
    let mut errors = String::from("  errors:\n");
    for i in 0..n {
        let _ = writeln!(errors, "    - {{ code: c{i:05}, description: d }}");
    }
    let mut text = text.replace(
        "  errors:\n    - { code: empty_word, description: The word is empty. }\n",
        &errors,
    );
    text = text.replace("    error: empty_word\n", "    error: c00000\n");
    for i in 0..n {
        let _ = writeln!(
            text,
            "  - {{ name: e{i:05}, input: {{ word: a }}, error: x{i:05} }}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("holon.yaml"), text).unwrap();
    let outcome = check_file(&dir.path().join("holon.yaml"));
    let counted = |check: &str| -> Vec<String> {
        (outcome.doc["diagnostics"].as_array().unwrap().iter())
            .filter(|d| d["check"] == check && d["pointer"] == "")
            .map(|d| d["message"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        counted("example-error-undeclared"),
        [
            "29000 more `example-error-undeclared` errors are not listed: a check lists its first 1000"
        ]
    );
    // `c00000` has its example.
    assert_eq!(
        counted("error-without-example"),
        [
            "28999 more `error-without-example` warnings are not listed: a check lists its first 1000"
        ]
    );
}

#[test]
fn empty_file() {
    check("empty.yaml")
        .refused()
        .error("empty-manifest", "", (1, 1))
        .message("the manifest is empty")
        .hint("run `cargo holon-test new NAME` to start from a template")
        .nothing_else();
}

#[test]
fn only_comments_is_empty_too() {
    check("empty-manifest.yaml")
        .refused()
        .error("empty-manifest", "", (1, 1))
        .nothing_else();
}

#[test]
fn a_scalar_or_a_sequence_is_not_a_manifest() {
    check("scalar.yaml")
        .refused()
        .error("wrong-type", "", (2, 1))
        .message("the manifest must be a mapping, not a string")
        .nothing_else();
    check("sequence.yaml")
        .refused()
        .error("wrong-type", "", (2, 1))
        .message("the manifest must be a mapping, not a sequence")
        .nothing_else();
}

// The file.

#[test]
fn binary_file_is_not_text() {
    // A valid first line, then bytes from a fixed generator, NULs included: the first byte that
    // is not UTF-8 is the 0xff at offset 9, line 2, column 2.
    let mut bytes = b"name: x\n\0\xff".to_vec();
    let mut state: u32 = 0x2545_f491;
    for _ in 0..4096 {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        bytes.push((state >> 24) as u8);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    std::fs::write(&path, bytes).unwrap();
    check_file(&path)
        .refused()
        .error("file-not-text", "", (2, 2))
        .message("the file is not UTF-8 text (invalid byte at offset 9)")
        .nothing_else();
}

#[test]
fn a_50_mb_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(50 * 1024 * 1024)
        .unwrap();
    check_file(&path)
        .refused()
        .error("file-unreadable", "", (0, 0))
        .message("the file is 52428800 bytes; a manifest is at most 33554432 bytes")
        .nothing_else();
}

#[test]
fn a_folder_is_read_for_its_holon_yaml() {
    let examples = root().join("examples");
    let outcome = check_arg(&examples, "word-stats").accepted();
    assert_eq!(outcome.doc["manifest"], "word-stats/holon.yaml");
    outcome.nothing_else();
}

#[test]
fn with_no_path_the_nearest_holon_yaml_is_checked() {
    let dir = root().join("examples/word-stats");
    let output = run(&dir, &["check", "--format", "json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(one_document(&stdout(&output))["manifest"], "holon.yaml");
}

#[test]
fn a_folder_without_holon_yaml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("agent")).unwrap();
    check_arg(dir.path(), "agent")
        .refused()
        .error("file-unreadable", "", (0, 0))
        .message("no `holon.yaml` in `agent`")
        .nothing_else();
    assert_eq!(
        human(dir.path(), "agent"),
        "error: no `holon.yaml` in `agent`\n"
    );
}

#[test]
fn a_missing_path() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = check_arg(dir.path(), "nowhere/holon.yaml").refused();
    assert_eq!(outcome.doc["manifest"], "nowhere/holon.yaml");
    outcome
        .error("file-unreadable", "", (0, 0))
        .message("`nowhere/holon.yaml` does not exist")
        .nothing_else();
    let output = run(dir.path(), &["check", "nowhere/holon.yaml"]);
    assert_eq!(code(&output), 1);
    assert_eq!(
        stderr(&output),
        "error: `nowhere/holon.yaml` does not exist\n"
    );
}

// The command line.

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["check", "--format", "xml"][..],
        &["check", "--bogus"],
        &["check", "a.yaml", "b.yaml"],
        &["chekc"],
    ] {
        let output = run(&fixtures(), args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).starts_with("error: "),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_is_not_an_error() {
    let output = run(&fixtures(), &["check", "--help"]);
    assert_eq!(code(&output), 0);
    assert!(stdout(&output).contains("--format"), "{}", stdout(&output));
}

// The manifest's own fields.

#[test]
fn wrong_type() {
    check("wrong-type.yaml")
        .refused()
        .error("wrong-type", "/capability", (5, 13))
        .message("`capability` must be a string, not a number")
        .error("wrong-type", "/interface/errors/0/retryable", (20, 71))
        .message("`interface.errors[0].retryable` must be `true` or `false`, not a string")
        .error("wrong-type", "/pricing", (24, 10))
        .message("`pricing` must be a mapping, not a string")
        .error("wrong-type", "/examples/1/error", (31, 12))
        .message("`examples[1].error` must be a string, not a sequence")
        // The one example of `empty_word` is unreadable, so the code has none; nothing more:
        // in particular no "neither `output` nor `error`" for the example whose error is a list.
        .warning(
            "error-without-example",
            "/interface/errors/0/code",
            (20, 15),
        )
        .nothing_else();
}

#[test]
fn missing_field() {
    check("missing-field.yaml")
        .refused()
        .error("missing-field", "/capability", (2, 1))
        .message("missing field `capability` in the manifest")
        .error("missing-field", "/interface/errors/1/code", (20, 7))
        .message("missing field `code` in a declared error")
        .error("missing-field", "/runtime/tool", (22, 3))
        .message("missing field `tool` in `runtime`")
        .nothing_else();
}

/// A misspelt `examples` is the one fact of a manifest with no examples: said once, at the
/// misspelling, not as a missing field, no successful example and a code with no example.
#[test]
fn a_misspelt_examples_key_is_one_error_at_the_misspelling() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml"))
        .unwrap()
        .replace("\nexamples:\n", "\nexmaples:\n");
    std::fs::write(&path, text).unwrap();
    check_file(&path)
        .refused()
        .error("unknown-field", "/exmaples", (25, 1))
        .message("unknown field `exmaples` in the manifest, which has no `examples`: a misspelt `examples`?")
        .hint("did you mean `examples`?")
        .nothing_else();
}

/// An example input the schema refuses is named by its place, the value cut short, so that the
/// reason is read at once: a word of 1,095 characters is not printed whole first.
#[test]
fn a_long_invalid_value_is_cut_short_before_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let long = "w".repeat(1095);
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml"))
        .unwrap()
        .replace(
            "input: { word: hello }",
            &format!("input: {{ word: {long} }}"),
        );
    std::fs::write(&path, text).unwrap();
    let report = check_file(&path);
    let invalid: Vec<&serde_json::Value> = (report.doc["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["check"] == "example-input-invalid")
        .collect();
    assert_eq!(invalid.len(), 1, "{:?}", report.doc);
    let message = invalid[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`examples[0].input.word` does not match `interface.input`: \"www"),
        "{message}"
    );
    assert!(
        message.ends_with("... is longer than 100 characters"),
        "{message}"
    );
    assert!(
        message.len() < 160,
        "{} characters: {message}",
        message.len()
    );
}

#[test]
fn unknown_field_says_what_was_meant() {
    check("unknown-field.yaml")
        .refused()
        // `limits` is required and missing: the misspelling is why, said once, there.
        .error("unknown-field", "/runtime/limts", (23, 3))
        .message("unknown field `limts` in `runtime`, which has no `limits`: a misspelt `limits`?")
        .hint("did you mean `limits`?")
        .error("unknown-field", "/sorce", (24, 1))
        .message("unknown field `sorce` in the manifest")
        .hint("did you mean `source`?")
        .error("unknown-field", "/examples/0/notes", (30, 5))
        .message("unknown field `notes` in `examples[0]`")
        .hint("expected one of `name`, `input`, `output`, `error`")
        .nothing_else();
}

#[test]
fn invalid_name() {
    check("invalid-name.yaml")
        .refused()
        .error("invalid-name", "/name", (2, 7))
        .message("`Echo_Agent` is not a valid agent name")
        .hint("a name matches `^[a-z][a-z0-9-]{1,63}$`: lowercase letters, digits and `-`, starting with a letter")
        .nothing_else();
}

#[test]
fn invalid_version() {
    check("invalid-version.yaml")
        .refused()
        .error("invalid-version", "/version", (3, 10))
        .message_contains("`1.0` is not a semantic version")
        .hint("write it as MAJOR.MINOR.PATCH, e.g. `1.0.0`")
        .nothing_else();
}

#[test]
fn invalid_tool_name() {
    check("invalid-tool-name.yaml")
        .refused()
        .error("invalid-tool-name", "/runtime/tool", (22, 9))
        .message("`echo a word` is not a valid MCP tool name")
        .nothing_else();
}

#[test]
fn invalid_value() {
    check("invalid-value.yaml")
        .refused()
        .error("invalid-value", "/runtime/limits/timeout_s", (23, 24))
        .message("`timeout_s` must be more than 0 and at most 86400 seconds, not 0")
        .error("invalid-value", "/runtime/limits/max_input_bytes", (23, 44))
        .message("`max_input_bytes` must be a positive integer, not 1000.5")
        .error("invalid-value", "/pricing/currency", (24, 36))
        .message("`eur` is not a currency code")
        .error("invalid-value", "/pricing/charge_on", (24, 52))
        .message("`charge_on` is `success` or `attempt`, not `on_success`")
        .hint("did you mean `success`?")
        .nothing_else();
}

// The two schemas.

#[test]
fn schema_dialect() {
    check("schema-dialect.yaml")
        .refused()
        .error("schema-dialect", "/interface/input/$schema", (8, 14))
        .message("`$schema` is \"http://json-schema.org/draft-07/schema#\", the registry takes only JSON Schema 2020-12")
        .nothing_else();
}

#[test]
fn schema_not_object() {
    // MCP carries arguments and `structuredContent` as objects: both roots must say so.
    check("schema-not-object.yaml")
        .refused()
        .error("schema-not-object", "/interface/input", (7, 5))
        .message("`interface.input` must be `type: object` at its root, and there is no `type`")
        .hint("MCP sends tool arguments as a JSON object")
        .error("schema-not-object", "/interface/output/type", (12, 11))
        .message("`interface.output` must be `type: object` at its root, and `type` is \"array\"")
        .nothing_else();
}

#[test]
fn schema_invalid() {
    check("schema-invalid.yaml")
        .refused()
        .error(
            "schema-invalid",
            "/interface/input/properties/word/type",
            (12, 21),
        )
        .message_contains("not valid JSON Schema 2020-12: \"text\" is not valid")
        .error(
            "schema-invalid",
            "/interface/input/properties/word/maxLength",
            (12, 38),
        )
        .message("not valid JSON Schema 2020-12: -1 is less than the minimum of 0")
        .nothing_else();
}

#[test]
fn schema_compile() {
    check("schema-compile.yaml")
        .refused()
        .error("schema-compile", "/interface/output", (14, 5))
        .message_contains("the schema does not compile: ")
        .message_contains("/$defs/word")
        .nothing_else();
}

#[test]
fn pattern_not_re2() {
    check("pattern-not-re2.yaml")
        .refused()
        .error(
            "pattern-not-re2",
            "/interface/input/properties/word/pattern",
            (12, 54),
        )
        .message("pattern `^(a)\\1$` does not compile under RE2: backreference `\\1` is not supported by RE2")
        .error(
            "pattern-not-re2",
            "/interface/output/patternProperties/(?=a)",
            (18, 7),
        )
        .message("pattern `(?=a)` does not compile under RE2: lookahead `(?=` is not supported by RE2, which has no lookaround")
        .nothing_else();
}

#[test]
fn unique_items_needs_max_items_up_to_1000() {
    // `most` (maxItems: 1000) is in the fixture too: `nothing_else` proves it is accepted.
    check("unique-items-unbounded.yaml")
        .refused()
        .error("unique-items-unbounded", "/interface/output/properties/tags/uniqueItems", (19, 41))
        .message("`uniqueItems: true` needs `maxItems` <= 1000 on the same node, and there is no `maxItems`")
        .error("unique-items-unbounded", "/interface/output/properties/more/uniqueItems", (20, 41))
        .message("`uniqueItems: true` needs `maxItems` <= 1000 on the same node, and `maxItems` is 1001")
        .nothing_else();
}

// Declared errors.

#[test]
fn error_code_format() {
    check("error-code-format.yaml")
        .refused()
        .error("error-code-format", "/interface/errors/1/code", (21, 15))
        .message("error code `Word-Too-Long` does not match `^[a-z][a-z0-9_]*$`")
        .hint("use lowercase letters, digits and `_`, e.g. `word_too_long`")
        .nothing_else();
}

#[test]
fn error_code_reserved_all_seven() {
    let reserved = [
        "timeout",
        "invalid_output",
        "agent_crashed",
        "agent_error",
        "runtime_unavailable",
        "gateway_error",
        "invalid_input",
    ];
    let mut outcome = check("error-code-reserved.yaml").refused();
    for (i, code) in reserved.iter().enumerate() {
        outcome = outcome
            .error(
                "error-code-reserved",
                &format!("/interface/errors/{}/code", i + 1),
                (21 + i as u64, 15),
            )
            .message(&format!("error code `{code}` is reserved by the gateway"));
    }
    outcome.nothing_else();
}

#[test]
fn error_code_duplicate() {
    check("error-code-duplicate.yaml")
        .refused()
        .error("error-code-duplicate", "/interface/errors/1/code", (21, 15))
        .message("error code `empty_word` is declared twice (first at `interface.errors[0]`)")
        .nothing_else();
}

#[test]
fn error_description_missing() {
    check("error-description-missing.yaml")
        .refused()
        .error(
            "error-description-missing",
            "/interface/errors/0/description",
            (20, 7),
        )
        .message("error code `empty_word` has no description")
        .error(
            "error-description-missing",
            "/interface/errors/1/description",
            (22, 20),
        )
        .message("error code `blank_word` has no description")
        .nothing_else();
}

// Examples.

#[test]
fn example_name_missing() {
    check("example-name-missing.yaml")
        .refused()
        .error("example-name-missing", "/examples/0/name", (26, 5))
        .message("`examples[0]` has no `name`")
        .error("example-name-missing", "/examples/1/name", (28, 11))
        .message("`examples[1]` has an empty `name`")
        .nothing_else();
}

#[test]
fn example_name_duplicate() {
    check("example-name-duplicate.yaml")
        .refused()
        .error("example-name-duplicate", "/examples/1/name", (29, 11))
        .message("example name `a word` is used twice (first at `examples[0]`)")
        .nothing_else();
}

#[test]
fn example_input_missing() {
    check("example-input-missing.yaml")
        .refused()
        .error("example-input-missing", "/examples/0/input", (26, 5))
        .message("example `a word` has no `input`")
        .nothing_else();
}

#[test]
fn example_outcome_is_output_or_error() {
    check("example-outcome.yaml")
        .refused()
        .error("example-outcome", "/examples/2/error", (35, 12))
        .message("example `both` has both `output` and `error`")
        .error("example-outcome", "/examples/3", (36, 5))
        .message("example `neither` has neither `output` nor `error`")
        .nothing_else();
}

#[test]
fn no_success_example() {
    check("no-success-example.yaml")
        .refused()
        .error("no-success-example", "/examples", (26, 3))
        .message("the manifest has no successful example")
        .nothing_else();
}

#[test]
fn example_input_invalid() {
    check("example-input-invalid.yaml")
        .refused()
        .error("example-input-invalid", "/examples/0/input/word", (27, 20))
        .message("`examples[0].input.word` does not match `interface.input`: 5 is not of type \"string\" (found an integer)")
        .error("example-input-invalid", "/examples/0/input/lang", (27, 29))
        .message("`examples[0].input.lang` does not match `interface.input`: property `lang` is not allowed (`additionalProperties: false`)")
        .nothing_else();
}

#[test]
fn example_output_invalid_points_at_the_property() {
    check("example-output-invalid.yaml")
        .refused()
        // Missing: the pointer names the property; the place is the mapping it is missing from.
        .error("example-output-invalid", "/examples/0/output/words", (33, 7))
        .message("`examples[0].output.words` does not match `interface.output`: missing required property `words`")
        .error("example-output-invalid", "/examples/0/output/details/lines", (33, 41))
        .message("`examples[0].output.details.lines` does not match `interface.output`: property `lines` is not allowed (`unevaluatedProperties`)")
        .error("example-output-invalid", "/examples/0/output/sentences", (34, 18))
        .message("`examples[0].output.sentences` does not match `interface.output`: property `sentences` is not allowed (`additionalProperties: false`)")
        .nothing_else();
}

#[test]
fn example_error_undeclared() {
    check("example-error-undeclared.yaml")
        .refused()
        .error("example-error-undeclared", "/examples/1/error", (31, 12))
        .message("example `an empty word` fails with `empty_wrod`, which is not declared in `interface.errors`")
        .hint("did you mean `empty_word`?")
        .warning("error-without-example", "/interface/errors/0/code", (20, 15))
        .nothing_else();
}

#[test]
fn input_too_large_by_one_byte() {
    // `{"word":"hello"}` is exactly `max_input_bytes` (16) and passes; `{"word":"hellos"}` does not.
    check("input-too-large.yaml")
        .refused()
        .error("input-too-large", "/examples/2/input", (33, 12))
        .message("the input of example `a longer word` is 17 bytes, over `runtime.limits.max_input_bytes` (16)")
        .nothing_else();
}

// Payload bounds, on generated manifests: the line of the input is 24 and its `data` starts at
// column 20.

const INPUT_LINE: u64 = 24;
const DATA_COLUMN: u64 = 20;

/// A manifest whose one example's input is `{ data: DATA }`, any JSON allowed in `data`, and
/// whose byte limit is out of the way.
fn payload_manifest(data: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "name: bounds
version: 1.0.0
description: Takes any JSON.
capability: test.bounds
interface:
  input:
    type: object
    additionalProperties: false
    required: [data]
    properties:
      data: {{ description: Any JSON. }}
  output:
    type: object
    additionalProperties: false
    required: [ok]
    properties:
      ok: {{ type: boolean, description: Always true. }}
runtime:
  tool: bounds
  limits: {{ timeout_s: 10, max_input_bytes: 100000000 }}
pricing: {{ price: 0, currency: EUR }}
examples:
  - name: the payload
    input: {{ data: {data} }}
    output: {{ ok: true }}
"
    );
    assert_eq!(
        text.lines()
            .nth(INPUT_LINE as usize - 1)
            .unwrap()
            .find("data: ")
            .map(|i| i as u64 + 7),
        Some(DATA_COLUMN)
    );
    std::fs::write(dir.path().join("holon.yaml"), text).unwrap();
    dir
}

/// `levels` nested arrays in flow style.
fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// An array of arrays of zeros that makes the input hold `total` values: the root object, the
/// `data` array, the inner arrays and their items.
fn values(total: usize) -> String {
    let mut left = total - 2;
    let mut arrays = Vec::new();
    while left > 0 {
        let items = (left - 1).min(10_000);
        arrays.push(format!("[{}]", vec!["0"; items].join(",")));
        left -= items + 1;
    }
    format!("[{}]", arrays.join(","))
}

fn zeros(len: usize) -> String {
    format!("[{}]", vec!["0"; len].join(","))
}

#[test]
fn payload_depth_64_is_accepted_65_refused() {
    // The input object is the first level, so `data` holds 63 or 64 more.
    let at_bound = payload_manifest(&nested(63));
    check_file(&at_bound.path().join("holon.yaml"))
        .accepted()
        .nothing_else();
    let past = payload_manifest(&nested(64));
    check_file(&past.path().join("holon.yaml"))
        .refused()
        .error(
            "payload-too-deep",
            &format!("/examples/0/input/data{}", "/0".repeat(63)),
            (INPUT_LINE, DATA_COLUMN + 63),
        )
        .message("the input of example `the payload` is nested deeper than 64 levels")
        .hint("the gateway refuses payloads past 64 levels, 200000 values or arrays of 10000 items")
        .nothing_else();
}

#[test]
fn payload_200_000_values_is_accepted_200_001_refused() {
    let at_bound = payload_manifest(&values(200_000));
    check_file(&at_bound.path().join("holon.yaml"))
        .accepted()
        .nothing_else();
    let data = values(200_001);
    let last = DATA_COLUMN + data.len() as u64 - 3; // the last zero, before `]]`
    let past = payload_manifest(&data);
    check_file(&past.path().join("holon.yaml"))
        .refused()
        .error(
            "payload-too-many-values",
            "/examples/0/input/data/19/9978",
            (INPUT_LINE, last),
        )
        .message("the input of example `the payload` holds more than 200000 values")
        .nothing_else();
}

#[test]
fn payload_array_of_10_000_is_accepted_10_001_refused() {
    let at_bound = payload_manifest(&zeros(10_000));
    check_file(&at_bound.path().join("holon.yaml"))
        .accepted()
        .nothing_else();
    let past = payload_manifest(&zeros(10_001));
    check_file(&past.path().join("holon.yaml"))
        .refused()
        .error(
            "payload-array-too-long",
            "/examples/0/input/data",
            (INPUT_LINE, DATA_COLUMN),
        )
        .message(
            "the input of example `the payload` holds an array of 10001 items, more than 10000",
        )
        .nothing_else();
}

// Lints: warnings, not refusals.

#[test]
fn string_unbounded() {
    check("string-unbounded.yaml")
        .accepted()
        .warning(
            "string-unbounded",
            "/interface/input/properties/word",
            (12, 13),
        )
        .message("the string at `interface.input.properties.word` has no `maxLength`")
        .nothing_else();
}

#[test]
fn number_unbounded() {
    check("number-unbounded.yaml")
        .accepted()
        .warning(
            "number-unbounded",
            "/interface/input/properties/times",
            (13, 14),
        )
        .message("the number at `interface.input.properties.times` has no `minimum` or `maximum`")
        .warning(
            "number-unbounded",
            "/interface/input/properties/pitch",
            (14, 14),
        )
        .message("the number at `interface.input.properties.pitch` has no `maximum`")
        .nothing_else();
}

#[test]
fn optional_without_default() {
    check("optional-without-default.yaml")
        .accepted()
        .warning(
            "optional-without-default",
            "/interface/input/properties/times",
            (13, 7),
        )
        .message("optional property `times` has no `default`")
        .nothing_else();
}

#[test]
fn property_without_description() {
    check("property-without-description.yaml")
        .accepted()
        .warning(
            "property-without-description",
            "/interface/input/properties/word",
            (12, 7),
        )
        .message("property `word` has no `description`")
        .nothing_else();
}

#[test]
fn input_open() {
    check("input-open.yaml")
        .accepted()
        .warning("input-open", "/interface/input", (8, 5))
        .message("the input does not set `additionalProperties: false`")
        .nothing_else();
}

#[test]
fn schema_empty_keyword() {
    // `default: null` is data, on purpose; `lowercased.` is a description split at its comma.
    check("schema-empty-keyword.yaml")
        .accepted()
        .warning(
            "schema-empty-keyword",
            "/interface/output/properties/word/lowercased.",
            (18, 72),
        )
        .message("`lowercased.` in `interface.output.properties.word` has no value")
        .nothing_else();
}

/// The five typos authors make most are each warned at their key with the keyword meant; what
/// 2020-12 reads as an annotation (`$comment`, `title`, `deprecated`, `examples`) and an
/// extension of the author's own (`x-ui`) are not. What each typo leaves undone (an open input,
/// an unbounded string and number, an output of no declared shape) its own lint says too.
#[test]
fn schema_unknown_keyword() {
    check("schema-unknown-keyword.yaml")
        .accepted()
        .warning("input-open", "/interface/input", (8, 5))
        .warning(
            "schema-unknown-keyword",
            "/interface/input/additonalProperties",
            (9, 5),
        )
        .message("`additonalProperties` in `interface.input` is not a keyword of JSON Schema 2020-12: the gateway ignores it, and checks no `additionalProperties` here")
        .hint("did you mean `additionalProperties`?")
        .warning("string-unbounded", "/interface/input/properties/word", (14, 13))
        .warning(
            "schema-unknown-keyword",
            "/interface/input/properties/word/maxLenght",
            (14, 29),
        )
        .hint("did you mean `maxLength`?")
        .warning("number-unbounded", "/interface/input/properties/times", (15, 14))
        .warning(
            "schema-unknown-keyword",
            "/interface/input/properties/times/minimun",
            (15, 31),
        )
        .hint("did you mean `minimum`?")
        // With `properties` misspelt, the output is a bare object, which its own lint says.
        .warning("output-bare-object", "/interface/output", (17, 5))
        .warning(
            "schema-unknown-keyword",
            "/interface/output/requried",
            (18, 5),
        )
        .message("`requried` in `interface.output` is not a keyword of JSON Schema 2020-12: the gateway ignores it, and checks no `required` here")
        .hint("did you mean `required`?")
        .warning(
            "schema-unknown-keyword",
            "/interface/output/propertis",
            (19, 5),
        )
        .hint("did you mean `properties`?")
        .nothing_else();
}

/// A key no keyword is close to is warned as ignored, with the `x-` form that keeps it; a
/// keyword of an earlier draft is named as 2020-12 names it.
#[test]
fn schema_unknown_keyword_far_from_any_and_from_an_earlier_draft() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml"))
        .unwrap()
        .replace(
            "      word: { type: string, description: The same word. }\n",
            "      word: { type: string, description: The same word., unit: letters }\n    definitions: {}\n",
        );
    std::fs::write(&path, text).unwrap();
    check_file(&path)
        .accepted()
        .warning(
            "schema-unknown-keyword",
            "/interface/output/properties/word/unit",
            (18, 58),
        )
        .message("`unit` in `interface.output.properties.word` is not a keyword of JSON Schema 2020-12: the gateway ignores it")
        .hint("an annotation of your own starts with `x-` (`x-unit`), which every tool leaves alone")
        .warning(
            "schema-unknown-keyword",
            "/interface/output/definitions",
            (19, 5),
        )
        .hint("2020-12 names it `$defs`")
        .nothing_else();
}

/// The keyword check is one pass over the keys: a schema of 10,000 properties, each with an
/// unknown key, is checked in one run, its first 1,000 listed and the rest counted.
#[test]
fn schema_unknown_keyword_in_ten_thousand_properties_is_listed_then_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let mut properties = String::new();
    for i in 0..10_000 {
        writeln!(
            properties,
            "      p{i}: {{ type: string, description: A field., colour: red }}"
        )
        .unwrap();
    }
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml"))
        .unwrap()
        .replace(
            "      word: { type: string, description: The same word. }\n",
            &format!("      word: {{ type: string, description: The same word. }}\n{properties}"),
        );
    std::fs::write(&path, text).unwrap();
    let report = check_file(&path);
    let unknown: Vec<&serde_json::Value> = (report.doc["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["check"] == "schema-unknown-keyword")
        .collect();
    assert_eq!(
        unknown.len(),
        1001,
        "1,000 listed and one that counts the rest"
    );
    assert!(
        unknown[1000]["message"]
            .as_str()
            .unwrap()
            .contains("9000 more"),
        "{}",
        unknown[1000]
    );
}

#[test]
fn output_bare_object() {
    check("output-bare-object.yaml")
        .accepted()
        .warning(
            "output-bare-object",
            "/interface/output/properties/meta",
            (19, 13),
        )
        .message("`interface.output.properties.meta` is a bare `object`")
        .nothing_else();
}

#[test]
fn error_without_example() {
    check("error-without-example.yaml")
        .accepted()
        .warning(
            "error-without-example",
            "/interface/errors/1/code",
            (21, 15),
        )
        .message("declared error `word_too_long` has no example")
        .nothing_else();
}

#[test]
fn error_without_example_of_a_retryable_code_names_the_fault_trials() {
    check("error-without-example-retryable.yaml")
        .accepted()
        .warning(
            "error-without-example",
            "/interface/errors/1/code",
            (21, 15),
        )
        .hint("add an example whose `error` is this code, so the tests prove the agent raises it")
        .warning(
            "error-without-example",
            "/interface/errors/2/code",
            (22, 15),
        )
        .message("declared error `dictionary_down` has no example")
        .hint("a code marked `retryable: true` is transient, so no example can show it (`--bless` and `call --save` never write one): a fault trial that reaches it proves the agent raises it, and the run then drops this warning (the fault trials run on the upstreams `holon-test.toml` declares)")
        .nothing_else();
}

// Whole runs.

#[test]
fn accepted_manifests_have_no_warnings() {
    check("accepted.yaml").accepted().nothing_else();
    let examples = root().join("examples/word-stats");
    check_arg(&examples, "holon.yaml").accepted().nothing_else();
}

#[test]
fn all_problems_in_one_run() {
    let outcome = check("all-problems.yaml").refused();
    assert_eq!(
        outcome.checks(),
        [
            "invalid-name",
            "invalid-version",
            "string-unbounded",
            "error-code-reserved",
            "invalid-tool-name",
            "invalid-value",
            "example-output-invalid",
            "example-name-duplicate",
            "example-error-undeclared",
        ]
    );
    outcome
        .error("invalid-name", "/name", (2, 7))
        .error("invalid-version", "/version", (3, 10))
        .warning(
            "string-unbounded",
            "/interface/input/properties/word",
            (12, 13),
        )
        .error("error-code-reserved", "/interface/errors/0/code", (20, 15))
        .error("invalid-tool-name", "/runtime/tool", (22, 9))
        .error("invalid-value", "/pricing/currency", (24, 36))
        .error(
            "example-output-invalid",
            "/examples/0/output/word",
            (28, 21),
        )
        .error("example-name-duplicate", "/examples/1/name", (29, 11))
        .error("example-error-undeclared", "/examples/2/error", (34, 12))
        .nothing_else();
}

#[test]
fn json_output_is_one_document_of_the_documented_shape() {
    let output = run(
        &fixtures(),
        &["check", "unknown-field.yaml", "--format", "json"],
    );
    assert_eq!(code(&output), 1);
    let doc = one_document(&stdout(&output));
    insta::assert_snapshot!("json_refused", normalise(&stdout(&output)));
    let first = &doc["diagnostics"][0];
    assert_eq!(first["severity"], "error");
    assert_eq!(first["check"], "unknown-field");
    assert_eq!(first["pointer"], "/runtime/limts");
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(23), Some(3))
    );
    assert_eq!(first["hint"], "did you mean `limits`?");
    // A diagnostic with no hint has no `hint` key.
    let output = run(
        &fixtures(),
        &["check", "missing-field.yaml", "--format", "json"],
    );
    let doc = one_document(&stdout(&output));
    let first = &doc["diagnostics"][0];
    assert_eq!(first["check"], "missing-field");
    assert!(first.get("hint").is_none(), "no hint, no key: {first}");
}

// The message text, as a person reads it.

#[test]
fn human_output_snapshots() {
    let cases = [
        ("all_problems", "all-problems.yaml"),
        ("yaml", "yaml-duplicate-key.yaml"),
        ("fields", "unknown-field.yaml"),
        ("schema", "unique-items-unbounded.yaml"),
        ("codes", "error-description-missing.yaml"),
        ("examples", "example-output-invalid.yaml"),
        ("bounds", "input-too-large.yaml"),
        ("lints", "number-unbounded.yaml"),
        ("accepted", "accepted.yaml"),
    ];
    for (name, fixture) in cases {
        insta::assert_snapshot!(format!("human_{name}"), human(&fixtures(), fixture));
    }
}

#[test]
fn human_output_cuts_a_long_line_around_the_caret() {
    let dir = payload_manifest(&zeros(10_001));
    let text = human(dir.path(), "holon.yaml");
    assert!(
        text.lines().all(|l| l.len() < 200),
        "a line is too long to read:\n{text}"
    );
    insta::assert_snapshot!("human_long_line", text);
}

/// Every fixture is used by a test above, so none rots unchecked.
#[test]
fn every_fixture_is_tested() {
    let source = include_str!("check.rs");
    let mut unused = String::new();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !source.contains(&format!("\"{name}\"")) {
            let _ = writeln!(unused, "{name}");
        }
    }
    assert!(unused.is_empty(), "fixtures no test uses:\n{unused}");
}

/// Every check id in the library is asserted by a test above: a new check cannot land untested.
#[test]
fn every_check_id_is_tested() {
    // File handles are checked beside the downloads they guard, in files.rs; special files in
    // place of the manifest beside the server's other hostile inputs, in hardening.rs; the
    // version against the published manifest in against.rs.
    let source = [
        include_str!("check.rs"),
        include_str!("files.rs"),
        include_str!("hardening.rs"),
        include_str!("against.rs"),
    ]
    .concat();
    // A check names its id by its constant in `holon_core::ids` (`ids::UNKNOWN_FIELD` for
    // `unknown-field`).
    let id = regex::Regex::new(r"\bids::([A-Z0-9]+(?:_[A-Z0-9]+)+)\b").unwrap();
    let mut ids = std::collections::BTreeSet::new();
    // Modules split into folders are read too.
    let mut folders: Vec<_> = [
        "crates/holon-core/src/check",
        "crates/holon-core/src/gateway",
        "crates/holon-core/src/manifest",
    ]
    .iter()
    .map(|area| root().join(area))
    .collect();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            ids.extend(
                id.captures_iter(&text)
                    .map(|c| c[1].to_lowercase().replace('_', "-")),
            );
        }
    }
    assert!(ids.len() >= 40, "the scan found only {ids:?}");
    let known: Vec<&str> = holon_core::ids::ENTRIES.iter().map(|e| e.id).collect();
    assert!(ids.iter().all(|id| known.contains(&id.as_str())), "{ids:?}");
    let untested: Vec<&String> = ids
        .iter()
        .filter(|id| !source.contains(&format!("\"{id}\"")))
        .collect();
    assert!(
        untested.is_empty(),
        "check ids no test asserts: {untested:?}"
    );
}

/// `check --format github`: one workflow command per diagnostic, at the line and column the JSON
/// report gives, escaped so that a path with commas, colons or a line break stays one property.
#[test]
fn github_format_annotates_every_diagnostic_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let odd = "a,b:c\nd";
    std::fs::create_dir(dir.path().join(odd)).unwrap();
    std::fs::copy(
        fixtures().join("example-output-invalid.yaml"),
        dir.path().join(odd).join("holon.yaml"),
    )
    .unwrap();
    let file = format!("{odd}/holon.yaml");
    let json: serde_json::Value = serde_json::from_str(&stdout(&run(
        dir.path(),
        &["check", &file, "--format", "json"],
    )))
    .unwrap();
    let output = run(dir.path(), &["check", &file, "--format", "github"]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let expected: Vec<String> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            // The hint, as the human report ends it: naming the id's explanation.
            let check = d["check"].as_str().unwrap();
            let explain = format!("run `cargo holon-test explain {check}`");
            let hint = match d["hint"].as_str() {
                Some(hint) if hint.ends_with('?') => format!("{hint} {explain}"),
                Some(hint) => format!("{hint}; {explain}"),
                None => explain,
            };
            let message = format!("{}\nhint: {hint}", d["message"].as_str().unwrap());
            format!(
                "::{} file=a%2Cb%3Ac%0Ad/holon.yaml,line={},col={},title={}::{}",
                d["severity"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["check"].as_str().unwrap(),
                message
                    .replace('%', "%25")
                    .replace('\r', "%0D")
                    .replace('\n', "%0A")
            )
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(stdout(&output).lines().collect::<Vec<_>>(), expected);
    assert_eq!(stderr(&output), "", "only the annotations are printed");
}

/// Inside a GitHub Actions job the human report is printed as always, and the annotations too.
#[test]
fn github_actions_gets_annotations_beside_the_human_report() {
    let output = std::process::Command::new(crate::util::BIN)
        .args(["check", "example-output-invalid.yaml"])
        .current_dir(fixtures())
        .env("GITHUB_ACTIONS", "true")
        .env_remove("GITHUB_WORKSPACE")
        .output_within(RUN_LIMIT);
    assert_eq!(code(&output), 1);
    assert!(stderr(&output).contains("error[example-output-invalid]"));
    let annotations = stdout(&output);
    assert!(
        annotations.starts_with("::error file=example-output-invalid.yaml,line="),
        "{annotations}"
    );
    assert!(annotations.contains(",title=example-output-invalid::"));
}

/// `cargo holon-test schema` agrees with `check` on every manifest the tests hold: each one
/// `check` accepts is valid against it, and each one refused for a structural reason is not.
#[test]
fn manifest_schema_agrees_with_check_on_every_fixture() {
    let output = run(&root(), &["schema"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let schema: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(
        jsonschema::meta::is_valid(&schema),
        "the schema is not valid JSON Schema"
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    let structural = [
        "missing-field",
        "unknown-field",
        "wrong-type",
        "invalid-value",
        "invalid-name",
        "invalid-version",
        "invalid-tool-name",
        "example-outcome",
    ];
    let mut manifests: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["tests/fixtures/check", "tests/fixtures/harness"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            manifests.push(entry.unwrap().path());
        }
    }
    for agent in [
        "examples/word-stats",
        "examples/csv-profile",
        "tests/fixtures/agents/broken-agent",
    ] {
        manifests.push(root().join(agent).join("holon.yaml"));
    }
    manifests.retain(|p| p.extension().is_some_and(|e| e == "yaml"));
    let (mut accepted, mut refused) = (0, 0);
    for path in &manifests {
        let report = check_file(path);
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let options = serde_saphyr::options! { strict_booleans: true };
        // Files that are no YAML document at all are the YAML checks' business.
        let Ok(document) = serde_saphyr::from_str_with_options::<serde_json::Value>(&text, options)
        else {
            continue;
        };
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        let places: Vec<String> = validator
            .iter_errors(&document)
            .map(|e| e.instance_path().to_string())
            .collect();
        let structural_errors: Vec<&serde_json::Value> = report.doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["severity"] == "error" && structural.contains(&d["check"].as_str().unwrap())
            })
            .collect();
        // Each structural refusal is one the editor shows too, at its place or at the mapping
        // that holds it (where a missing or unknown field is).
        for d in &structural_errors {
            let pointer = d["pointer"].as_str().unwrap();
            let parent = pointer.rsplit_once('/').map_or("", |(p, _)| p);
            assert!(
                places.iter().any(|p| p == pointer || p == parent),
                "`{}`: check refuses {d}, but the schema says nothing there: {errors:?}",
                path.display()
            );
        }
        // A key that is no 2020-12 keyword is a warning of check and an error of the editor's,
        // at the schema that holds it: the two name the same places.
        let parent_of = |d: &serde_json::Value| {
            let pointer = d["pointer"].as_str().unwrap();
            pointer
                .rsplit_once('/')
                .map_or("", |(parent, _)| parent)
                .to_string()
        };
        let diagnostics = report.doc["diagnostics"].as_array().unwrap();
        let typos: Vec<String> = (diagnostics.iter())
            .filter(|d| d["check"] == "schema-unknown-keyword")
            .map(parent_of)
            .collect();
        // A keyword with no value (a flow mapping split at a comma) is its own warning in
        // check, and an unknown key to the editor too.
        let unknown: Vec<String> = (diagnostics.iter())
            .filter(|d| d["check"] == "schema-empty-keyword")
            .map(parent_of)
            .chain(typos.iter().cloned())
            .collect();
        for parent in &typos {
            assert!(
                places.iter().any(|p| p == parent),
                "`{}`: check warns of an unknown keyword in `{parent}`, but the schema says nothing there: {errors:?}",
                path.display()
            );
        }
        let first_structural = structural_errors.first().map(|d| (*d).clone());
        if report.doc["accepted"] == true {
            accepted += 1;
            let others: Vec<&String> = (errors.iter().zip(&places))
                .filter(|(_, place)| !unknown.contains(place))
                .map(|(e, _)| e)
                .collect();
            assert!(
                others.is_empty(),
                "`{}` is accepted by check but the schema refuses it: {others:?}",
                path.display()
            );
        } else if let Some(d) = first_structural {
            refused += 1;
            assert!(
                !errors.is_empty(),
                "`{}` is refused by check ({d}) but the schema admits it",
                path.display()
            );
        }
    }
    assert!(
        accepted >= 10 && refused >= 10,
        "too few manifests compared: {accepted} accepted, {refused} refused structurally"
    );
}

/// An empty `examples` list is one refusal, `no-success-example`, at the list.
#[test]
fn empty_examples_list_has_no_success_example() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("holon.yaml");
    let text = std::fs::read_to_string(fixtures().join("accepted.yaml")).unwrap();
    let cut = text.find("\nexamples:").expect("an examples section");
    std::fs::write(&path, format!("{}\nexamples: []\n", &text[..cut])).unwrap();
    let line = text[..cut].lines().count() as u64 + 1;
    check_file(&path)
        .refused()
        .error("no-success-example", "/examples", (line, 11))
        .warning(
            "error-without-example",
            "/interface/errors/0/code",
            (20, 15),
        )
        .nothing_else();
}

//! Every diagnostic id the kit reports, in one table: the publish checks, `check --against`,
//! `holon-test.toml`, the recordings and the run's own warnings. Each id has its severity, a
//! one-line summary and an explanation (`ids/ID.md`: what the registry or the gateway does and
//! why it matters, a manifest that triggers it and the fix, the related ids), which
//! `holon-test explain ID` prints and the guide's diagnostics page includes.
//!
//! An [`Id`] is made here and nowhere else: a check names one of the constants below, so an id
//! without an entry cannot be reported.

use serde::Serialize;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The registry refuses the manifest.
    Error,
    /// A habit of the guides is missing; the manifest is still accepted.
    Warning,
}

/// A diagnostic id, which carries its entry: only this module makes one.
#[derive(Debug, Clone, Copy)]
pub struct Id(&'static Entry);

impl Id {
    /// The id as reports print it (`unknown-field`).
    pub const fn name(self) -> &'static str {
        self.0.id
    }

    /// Its entry: the severity, the summary and the explanation.
    pub fn entry(self) -> &'static Entry {
        self.0
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Id {}

impl std::hash::Hash for Id {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

/// One id's entry: what `explain --list` lists and `explain ID` prints.
#[derive(Debug)]
pub struct Entry {
    /// The id (`unknown-field`).
    pub id: &'static str,
    /// Its severity where it is usually reported.
    pub severity: Severity,
    /// What it means, in one line.
    pub summary: &'static str,
    /// The explanation, in Markdown.
    pub text: &'static str,
}

macro_rules! ids {
    ($($name:ident = $id:literal, $severity:ident, $summary:literal;)*) => {
        $(
            #[doc = concat!("`", $id, "`: ", $summary, ".")]
            pub const $name: Id = Id(&Entry {
                id: $id,
                severity: Severity::$severity,
                summary: $summary,
                text: include_str!(concat!("ids/", $id, ".md")),
            });
        )*
        /// Every entry, in the order the guide lists them: the file, its structure, the
        /// schemas, the codes, the examples, the warnings, `--against`, `holon-test.toml`, the
        /// recordings, the run.
        pub static ENTRIES: &[&Entry] = &[$($name.0),*];
    };
}

ids! {
    FILE_UNREADABLE = "file-unreadable", Error, "the file cannot be read";
    FILE_NOT_REGULAR = "file-not-regular", Error, "the path names a folder, a FIFO, a socket or a device, not a file";
    FILE_NOT_TEXT = "file-not-text", Error, "the file is not UTF-8 text";
    EMPTY_MANIFEST = "empty-manifest", Error, "the file holds no YAML document";
    YAML_SYNTAX = "yaml-syntax", Error, "the file is not valid YAML";
    YAML_DUPLICATE_KEY = "yaml-duplicate-key", Error, "a mapping has the same key twice";
    YAML_TOO_COMPLEX = "yaml-too-complex", Error, "aliases, nesting or node count past what a manifest may hold";
    MISSING_FIELD = "missing-field", Error, "a required field is absent";
    UNKNOWN_FIELD = "unknown-field", Error, "a field the format does not have";
    WRONG_TYPE = "wrong-type", Error, "a field's value is of the wrong type";
    INVALID_VALUE = "invalid-value", Error, "a field's value is outside what the format allows";
    INVALID_NAME = "invalid-name", Error, "`name` is not a valid agent name";
    INVALID_VERSION = "invalid-version", Error, "`version` is not a semantic version";
    INVALID_TOOL_NAME = "invalid-tool-name", Error, "`runtime.tool` is not a valid MCP tool name";
    SCHEMA_DIALECT = "schema-dialect", Error, "`$schema` names a dialect other than JSON Schema 2020-12";
    SCHEMA_INVALID = "schema-invalid", Error, "a schema is not valid JSON Schema 2020-12";
    SCHEMA_NOT_OBJECT = "schema-not-object", Error, "a schema is not `type: object` at its root";
    SCHEMA_COMPILE = "schema-compile", Error, "a schema does not compile";
    PATTERN_NOT_RE2 = "pattern-not-re2", Error, "a `pattern` the gateway's RE2 engine cannot run";
    UNIQUE_ITEMS_UNBOUNDED = "unique-items-unbounded", Error, "`uniqueItems: true` without `maxItems` of 1000 or less";
    ERROR_CODE_FORMAT = "error-code-format", Error, "a declared error code is not snake_case";
    ERROR_CODE_DUPLICATE = "error-code-duplicate", Error, "an error code is declared twice";
    ERROR_DESCRIPTION_MISSING = "error-description-missing", Error, "a declared error code has no description";
    ERROR_CODE_RESERVED = "error-code-reserved", Error, "a declared error code is one the gateway reserves";
    FILE_HANDLE_MISSING = "file-handle-missing", Error, "an example's file handle has no file in `files/`";
    FILE_HANDLE_ESCAPE = "file-handle-escape", Error, "an example's file handle leaves `files/`";
    EXAMPLE_NAME_MISSING = "example-name-missing", Error, "an example has no name";
    EXAMPLE_NAME_DUPLICATE = "example-name-duplicate", Error, "two examples have the same name";
    EXAMPLE_INPUT_MISSING = "example-input-missing", Error, "an example has no input";
    EXAMPLE_OUTCOME = "example-outcome", Error, "an example has both or neither of `output` and `error`";
    NO_SUCCESS_EXAMPLE = "no-success-example", Error, "no example succeeds";
    EXAMPLE_INPUT_INVALID = "example-input-invalid", Error, "an example's input does not match `interface.input`";
    EXAMPLE_OUTPUT_INVALID = "example-output-invalid", Error, "an example's output does not match `interface.output`";
    EXAMPLE_ERROR_UNDECLARED = "example-error-undeclared", Error, "an example's error code is not declared";
    PAYLOAD_TOO_DEEP = "payload-too-deep", Error, "an example's payload nests deeper than 64 levels";
    PAYLOAD_TOO_MANY_VALUES = "payload-too-many-values", Error, "an example's payload holds more than 200,000 values";
    PAYLOAD_ARRAY_TOO_LONG = "payload-array-too-long", Error, "an example's payload has an array of more than 10,000 items";
    INPUT_TOO_LARGE = "input-too-large", Error, "an example's input is larger than `max_input_bytes`";
    STRING_UNBOUNDED = "string-unbounded", Warning, "a string with no `maxLength`";
    NUMBER_UNBOUNDED = "number-unbounded", Warning, "a number without both bounds";
    OPTIONAL_WITHOUT_DEFAULT = "optional-without-default", Warning, "an optional input property with no `default`";
    PROPERTY_WITHOUT_DESCRIPTION = "property-without-description", Warning, "an input property with no `description`";
    INPUT_OPEN = "input-open", Warning, "the input does not set `additionalProperties: false`";
    OUTPUT_BARE_OBJECT = "output-bare-object", Warning, "an output field typed `object` with no shape";
    ERROR_WITHOUT_EXAMPLE = "error-without-example", Warning, "a declared error code no example shows";
    SCHEMA_EMPTY_KEYWORD = "schema-empty-keyword", Warning, "a schema keyword with no value";
    SCHEMA_UNKNOWN_KEYWORD = "schema-unknown-keyword", Warning, "a key of a schema that no JSON Schema 2020-12 vocabulary reads";
    VERSION_NOT_BUMPED = "version-not-bumped", Error, "the manifest changed and `version` did not go up";
    VERSION_BUMP_TOO_SMALL = "version-bump-too-small", Error, "`version` went up by less than the changes need";
    AGAINST_UNREADABLE = "against-unreadable", Error, "the published manifest `--against` names cannot be read";
    AGAINST_REFUSED = "against-refused", Error, "the published manifest fails its own publish checks";
    AGAINST_OTHER_AGENT = "against-other-agent", Error, "the published manifest is another agent's";
    TOML_SYNTAX = "toml-syntax", Error, "`holon-test.toml` is not valid TOML";
    SECRET_UNSET = "secret-unset", Error, "a secret a record run needs is unset or empty";
    SECRET_TOO_SHORT = "secret-too-short", Error, "a secret's value is too short to scrub";
    RECORDING_SYNTAX = "recording-syntax", Error, "a recording is not JSON";
    RECORDING_INVALID = "recording-invalid", Error, "a recording does not have the recordings' format";
    RECORDING_DUPLICATE = "recording-duplicate", Error, "two recordings record the same example";
    RECORDING_UPSTREAM_UNKNOWN = "recording-upstream-unknown", Error, "a recording names an upstream `holon-test.toml` does not declare";
    SOURCE_COMMIT_STALE = "source-commit-stale", Warning, "`source.commit` does not hold the code under test";
}

/// The entry a person asked for: the id in any case, or pasted as a report prints it
/// (`warning[string-unbounded]`, `error[yaml-syntax]:`). Unknown, the nearest id.
pub fn find(asked: &str) -> Result<&'static Entry, &'static Entry> {
    let mut id = asked.trim();
    if let Some((_, rest)) = id.split_once('[') {
        id = rest.split(']').next().unwrap_or(rest);
    }
    let id = id.trim().trim_end_matches(':').to_lowercase();
    if let Some(entry) = ENTRIES.iter().find(|e| e.id == id) {
        return Ok(entry);
    }
    let mut nearest = FILE_UNREADABLE.0;
    let mut best = f64::MIN;
    for e in ENTRIES {
        let score = strsim::jaro_winkler(&id, e.id);
        if score > best {
            (nearest, best) = (e, score);
        }
    }
    Err(nearest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_found_in_any_case_or_pasted_from_a_report() {
        for asked in [
            "string-unbounded",
            "STRING-UNBOUNDED",
            "warning[string-unbounded]",
            "warning[string-unbounded]: the string at `text` has no `maxLength`",
            "  String-Unbounded  ",
        ] {
            assert_eq!(
                find(asked).map(|e| e.id).map_err(|e| e.id),
                Ok("string-unbounded"),
                "{asked}"
            );
        }
        assert_eq!(
            find("error[yaml-syntax]:").map(|e| e.id).map_err(|e| e.id),
            Ok("yaml-syntax")
        );
    }

    #[test]
    fn an_unknown_id_names_the_nearest() {
        assert_eq!(
            find("string-unbound").map(|e| e.id).map_err(|e| e.id),
            Err("string-unbounded")
        );
        assert_eq!(
            find("unknwon-field").map(|e| e.id).map_err(|e| e.id),
            Err("unknown-field")
        );
    }

    #[test]
    fn every_id_is_listed_once_with_an_explanation_of_five_lines_and_an_example() {
        let mut seen = std::collections::HashSet::new();
        for e in ENTRIES {
            assert!(seen.insert(e.id), "`{}` is listed twice", e.id);
            let lines = e.text.lines().filter(|l| !l.trim().is_empty()).count();
            assert!(lines >= 5, "`{}` is explained in {lines} lines", e.id);
            assert!(e.text.contains("```"), "`{}` has no example", e.id);
            // The related ids are ids: a renamed one is not left behind in another's text.
            let related = e.text.split("Related: ").nth(1);
            let related = related.unwrap_or_else(|| panic!("`{}` names no related id", e.id));
            for name in related.split('`').skip(1).step_by(2) {
                assert!(
                    ENTRIES
                        .iter()
                        .any(|other| other.id == name && other.id != e.id),
                    "`{}` names `{name}` as related",
                    e.id
                );
            }
        }
    }
}

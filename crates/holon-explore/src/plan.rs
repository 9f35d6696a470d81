//! The plan: every input of a trial, drawn once before the first call (the edge cases the gate
//! admits first, then random ones), each admitted by the gateway's gate.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use crate::error::ExploreError;
use crate::settings::{MAX_CASES, Settings};
use crate::{edges, generate, schema};
use holon_core::gateway::Gateway;
use holon_core::gateway::handles::handles_in;
use holon_core::manifest::Manifest;

/// One case of a trial.
#[derive(Debug, Clone)]
pub struct Case {
    /// Its place in the plan, from 0.
    pub index: usize,
    /// Where it came from.
    pub origin: Origin,
    /// The input, admitted by the gate.
    pub input: Value,
}

/// Where a case came from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// An edge case, with what makes it one.
    Edge(String),
    /// Drawn at random.
    Random,
}

/// Every input of a trial, drawn before the first call.
pub struct Plan {
    /// The cases, edges first (this shard's, under `--partition`).
    pub cases: Vec<Case>,
    /// Inputs drawn that the gate refused (never sent).
    pub refused: usize,
    /// The cases of the whole run, every shard's.
    pub drawn: usize,
    /// The file handles an input may carry: `holon://files/NAME` for each file in `files/`.
    pub handles: Vec<String>,
}

impl Plan {
    /// Whether every `holon://files/` string in `input` is one of [`Plan::handles`]: an input
    /// `check` would take as an example's, whose file the tests can serve.
    pub fn names_files(&self, input: &Value) -> bool {
        handles_in(input).iter().all(|h| self.handles.contains(h))
    }
}

/// Draws the plan: the edge cases the gate admits, in order, then random inputs the gate
/// admits, up to `settings.cases`. `Err` when the generator finds no input the gate admits.
pub fn plan(
    manifest: &Manifest,
    gateway: &Gateway,
    settings: &Settings,
) -> Result<Plan, ExploreError> {
    // Never more than the settings allow, whoever built them: the plan is held in memory.
    let wanted = settings.cases.min(MAX_CASES) as usize;
    let known = handles(manifest);
    let schemas = schema::Schemas {
        root: &manifest.interface.input,
        handles: known.clone(),
        max_bytes: manifest.runtime.limits.max_input_bytes,
    };
    let mut cases = Vec::with_capacity(wanted);
    let mut refused = 0;
    let mut last_refusal = None;
    for edge in edges::edges(&schemas) {
        if cases.len() == wanted {
            break;
        }
        match gateway.admit(&edge.input) {
            Ok(()) => cases.push(Case {
                index: cases.len(),
                origin: Origin::Edge(edge.label),
                input: edge.input,
            }),
            // An edge past a bound the schema sets (below `minimum`) is the generator's own
            // probe: not sent, and not counted as a drawn input the gate refused.
            Err(e) => last_refusal = Some(e.to_string()),
        }
    }
    let mut seed = [0u8; 32];
    for chunk in seed.chunks_mut(8) {
        chunk.copy_from_slice(&settings.seed.to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    let strategy = generate::strategy(&schemas);
    if let Ok(strategy) = &strategy {
        // Enough tries for a gate that refuses nine drawn inputs in ten; past that the schema
        // is one the generator cannot serve, and the plan says so rather than looping.
        let tries = (wanted - cases.len()) * 10 + 100;
        for _ in 0..tries {
            if cases.len() == wanted {
                break;
            }
            let Ok(tree) = strategy.new_tree(&mut runner) else {
                break;
            };
            let input = tree.current();
            match gateway.admit(&input) {
                Ok(()) => cases.push(Case {
                    index: cases.len(),
                    origin: Origin::Random,
                    input,
                }),
                Err(e) => {
                    refused += 1;
                    last_refusal = Some(e.to_string());
                }
            }
        }
    }
    if cases.is_empty() && wanted > 0 {
        let why = match (strategy.err(), last_refusal) {
            (Some(e), _) => e.to_string(),
            (None, Some(refusal)) => format!("the gate refused all {refused}; the last: {refusal}"),
            (None, None) => "it drew none".to_string(),
        };
        return Err(ExploreError::CannotGenerate { why });
    }
    let drawn = cases.len();
    // Every shard draws the same plan, and keeps its share: together, the whole plan once.
    if let Some(partition) = &settings.partition {
        cases.retain(|c| partition.takes(c.index as u64, &c.input.to_string()));
    }
    Ok(Plan {
        cases,
        refused,
        drawn,
        handles: known,
    })
}

/// The file handles the examples can use: `holon://files/NAME` for each file in `files/`.
fn handles(manifest: &Manifest) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(manifest.dir().join("files"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(|n| format!("holon://files/{n}")))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// A checked manifest with this input schema and example input, in a folder with
    /// `files/a.csv` and `files/b.csv`.
    fn manifest(input: &Value, example: &Value) -> (tempfile::TempDir, Manifest, Arc<Gateway>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        for name in ["a.csv", "b.csv"] {
            std::fs::write(dir.path().join("files").join(name), "x\n1\n").unwrap();
        }
        let text = format!(
            "name: probe\nversion: 1.0.0\ndescription: d\ncapability: c.d\ninterface:\n  input: {input}\n  output: {{type: object}}\nruntime:\n  tool: probe\n  limits: {{timeout_s: 1, max_input_bytes: 20000}}\npricing: {{price: 0.001, currency: EUR, charge_on: success}}\nexamples:\n  - name: one\n    input: {example}\n    output: {{}}\n"
        );
        let path = dir.path().join("holon.yaml");
        std::fs::write(&path, &text).unwrap();
        let manifest = holon_core::check::into_manifest(holon_core::check::check_file(&path))
            .unwrap_or_else(|r| panic!("{}", holon_core::check::render_human(&r, false)));
        let gateway = manifest.gateway.clone();
        (dir, manifest, gateway)
    }

    fn settings(cases: u32) -> Settings {
        Settings {
            cases,
            seed: 7,
            seed_from_manifest: false,
            differential: true,
            replay: String::new(),
            command: String::new(),
            partition: None,
        }
    }

    #[test]
    fn every_keyword_the_publish_checks_accept_is_generated_from() {
        let input = json!({
            "type": "object", "additionalProperties": false, "required": ["name", "count"],
            "$defs": {"tag": {"type": "string", "enum": ["red", "green", "blue"]}},
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                "plain": {"type": "string", "minLength": 2, "maxLength": 8},
                "count": {"type": "integer", "minimum": 1, "maximum": 99},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "step": {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 100},
                "flag": {"type": ["boolean", "null"]},
                "kind": {"const": "fixed"},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 3}], "items": false},
                "either": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "string", "maxLength": 2}]},
                "one": {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "boolean"}]},
                "both": {"allOf": [{"type": "string", "maxLength": 5}, {"minLength": 3}]},
                "when": {"type": "string", "format": "date"},
                "file": {"type": "string", "pattern": "^holon://files/"}
            }
        });
        let (_dir, manifest, gateway) = manifest(&input, &json!({"name": "ab", "count": 1}));
        let plan = plan(&manifest, &gateway, &settings(300)).unwrap();
        assert_eq!(plan.cases.len(), 300);
        let edges = plan
            .cases
            .iter()
            .filter(|c| matches!(c.origin, Origin::Edge(_)))
            .count();
        assert!(edges > 30 && edges < 300, "{edges} edges");
        let seen = |key: &str| -> Vec<&Value> {
            plan.cases.iter().filter_map(|c| c.input.get(key)).collect()
        };
        let has = |key: &str, v: Value| seen(key).contains(&&v);
        for case in &plan.cases {
            assert!(gateway.admit(&case.input).is_ok(), "{}", case.input);
        }
        // Bounds at their extremes, exclusive ones just inside.
        assert!(has("count", json!(1)) && has("count", json!(99)));
        let ratios: Vec<f64> = seen("ratio").iter().filter_map(|v| v.as_f64()).collect();
        assert!(ratios.iter().any(|r| *r < 1e-6) && ratios.iter().any(|r| *r > 1.0 - 1e-6));
        assert!(has("step", json!(0)) && has("step", json!(100)));
        assert!(seen("step").iter().all(|v| v.as_i64().unwrap() % 5 == 0));
        // Type arrays, const, enum through `$ref`, anyOf / oneOf branches, allOf merged.
        assert!(has("flag", json!(true)) && has("flag", json!(false)) && has("flag", Value::Null));
        assert!(seen("kind").iter().all(|v| **v == json!("fixed")) && has("kind", json!("fixed")));
        let tags: Vec<&Value> = seen("tags")
            .iter()
            .flat_map(|t| t.as_array().unwrap())
            .collect();
        for tag in ["red", "green", "blue"] {
            assert!(tags.contains(&&json!(tag)), "no `{tag}`");
        }
        let tag_counts: Vec<usize> = seen("tags")
            .iter()
            .map(|t| t.as_array().unwrap().len())
            .collect();
        assert!(tag_counts.contains(&1) && tag_counts.contains(&3));
        assert!(
            seen("pair")
                .iter()
                .all(|p| p.as_array().unwrap().len() <= 2)
        );
        assert!(
            seen("either").iter().any(|v| v.is_i64())
                && seen("either").iter().any(|v| v.is_string())
        );
        assert!(
            seen("one").iter().any(|v| v.is_i64()) && seen("one").iter().any(|v| v.is_boolean())
        );
        assert!(!seen("both").is_empty());
        // Strings: lengths at the bounds in characters, the hard classes, patterns, formats.
        let plain: Vec<&str> = seen("plain").iter().filter_map(|v| v.as_str()).collect();
        let lengths: Vec<usize> = plain.iter().map(|s| s.chars().count()).collect();
        assert!(lengths.contains(&2) && lengths.contains(&8), "{lengths:?}");
        for (class, hard) in [
            ("a line break", '\n'),
            ("a NUL", '\0'),
            ("non-ASCII", 'ï'),
            ("an astral-plane character", '🦀'),
        ] {
            assert!(
                plain.iter().any(|s| s.contains(hard)),
                "no string with {class}"
            );
        }
        assert!(!seen("name").is_empty());
        let date = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}$").unwrap();
        // `format` is an annotation the gate does not check: edges send it hard strings too,
        // random cases plausible values.
        let dates: Vec<&str> = plan
            .cases
            .iter()
            .filter(|c| matches!(c.origin, Origin::Random))
            .filter_map(|c| c.input.get("when")?.as_str())
            .collect();
        assert!(
            !dates.is_empty() && dates.iter().all(|d| date.is_match(d)),
            "{dates:?}"
        );
        // Handles come from `files/`.
        assert!(
            has("file", json!("holon://files/a.csv")) && has("file", json!("holon://files/b.csv"))
        );
        assert!(
            seen("file").len() < plan.cases.len(),
            "an optional property is sometimes absent"
        );
    }

    #[test]
    fn extreme_bounds_and_multiples_draw_without_overflow() {
        let input = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": -9223372036854775808i64, "maximum": 9223372036854775807i64, "multipleOf": 4611686018427387904u64},
                "b": {"type": "integer", "multipleOf": 4611686018427387904u64},
                "c": {"type": "integer", "minimum": -9223372036854775808i64},
                "d": {"type": "number", "minimum": -1e308, "maximum": 1e308, "multipleOf": 1e300},
                "e": {"type": ["integer", "string"], "maximum": -9223372036854775808i64, "maxLength": 0}
            }
        });
        let (_dir, manifest, gateway) = manifest(&input, &json!({}));
        let plan = plan(&manifest, &gateway, &settings(300)).unwrap();
        assert_eq!(plan.cases.len(), 300);
        for case in &plan.cases {
            assert!(gateway.admit(&case.input).is_ok(), "{}", case.input);
        }
    }

    #[test]
    fn the_plan_is_the_same_for_the_same_seed() {
        let input = json!({"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string", "maxLength": 50}}});
        let (_dir, manifest, gateway) = manifest(&input, &json!({}));
        let inputs = |seed: u64| -> Vec<Value> {
            let mut s = settings(200);
            s.seed = seed;
            plan(&manifest, &gateway, &s)
                .unwrap()
                .cases
                .into_iter()
                .map(|c| c.input)
                .collect()
        };
        assert_eq!(inputs(7), inputs(7));
        assert_ne!(inputs(7), inputs(8));
    }

    #[test]
    fn a_schema_the_generator_cannot_satisfy_is_reported_not_looped_on() {
        // Satisfiable (the example is), but `[a-z]+` draws at most 32 letters.
        let input = json!({
            "type": "object", "required": ["code"],
            "properties": {"code": {"type": "string", "pattern": "^[a-z]+$", "minLength": 40}}
        });
        let (_dir, manifest, gateway) = manifest(&input, &json!({"code": "a".repeat(40)}));
        let started = std::time::Instant::now();
        let error = plan(&manifest, &gateway, &settings(100))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("explore cannot generate an input that `interface.input` admits: the gate refused all "),
            "{error}"
        );
        assert!(
            error.contains("minLength") || error.contains("shorter than 40"),
            "{error}"
        );
        assert!(error.contains("HOLON_EXPLORE_CASES=0"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }
}

//! Explore: inputs generated from `interface.input` between the examples (edge cases first,
//! then random ones), each admitted by the gateway's gate before it is sent, each answer judged
//! as the gateway would settle it, a failure shrunk and printed as a ready-to-paste example.
//!
//! The whole plan (every input) is drawn once per run, before the first call, and shared by
//! both trials, so a sender may take the inputs as one batch; the harness sends them one at a
//! time.

mod edges;
mod generate;
mod judge;
mod report;
mod schema;
mod shrink;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use holon_core::gateway::{Answer, Gateway};
use holon_core::manifest::Manifest;

pub use judge::Outcome;

/// Cases per trial unless told otherwise.
pub const DEFAULT_CASES: u32 = 100;

/// The most cases a trial may ask for: each is an input drawn and kept before the first call,
/// and a call, so a count past this is a typo rather than a plan (100,000 cases of word-stats
/// take about 6 s in the function pass, far longer through a server).
pub const MAX_CASES: u32 = 100_000;

/// How a run explores, once its settings are resolved (`crate::settings`).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Cases per trial; 0 turns explore off.
    pub cases: u32,
    /// The seed: the same seed draws the same inputs.
    pub seed: u64,
    /// Whether the seed came from the manifest's bytes (rather than being given).
    pub seed_from_manifest: bool,
    /// Compare the server's answers with the function's.
    pub differential: bool,
    /// The command that replays a trial, with `{trial}` for its name.
    pub replay: String,
}

/// A case count: a whole number from 0 (off) to 100,000 (`MAX_CASES`).
pub fn parse_cases(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(cases) => check_cases(cases),
        Err(_) => Err(cases_wanted()),
    }
}

/// `cases`, when it is at most `MAX_CASES`.
pub fn check_cases(cases: u32) -> Result<u32, String> {
    if cases <= MAX_CASES {
        Ok(cases)
    } else {
        Err(cases_wanted())
    }
}

fn cases_wanted() -> String {
    format!(
        "the number of explore cases must be a whole number from 0 (0 turns explore off) to {MAX_CASES}"
    )
}

/// A seed: a whole number, decimal or `0x` hexadecimal.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse::<u64>(),
    };
    parsed.map_err(|_| {
        "the explore seed must be a whole number from 0 to 2^64-1 (decimal or 0x hexadecimal)"
            .to_string()
    })
}

/// The seed a manifest's bytes give: the same on every machine and in CI, and a new one when
/// the manifest changes.
pub fn manifest_seed(path: &Path) -> Result<u64, String> {
    use sha2::Digest;
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read `{}` for the explore seed: {e}", path.display()))?;
    let digest = sha2::Sha256::digest(&bytes);
    let mut first = [0u8; 8];
    for (to, from) in first.iter_mut().zip(digest.iter()) {
        *to = *from;
    }
    Ok(u64::from_le_bytes(first))
}

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
    /// The cases, edges first.
    pub cases: Vec<Case>,
    /// Inputs drawn that the gate refused (never sent).
    pub refused: usize,
}

/// Draws the plan: the edge cases the gate admits, in order, then random inputs the gate
/// admits, up to `settings.cases`. `Err` when the generator finds no input the gate admits.
pub fn plan(manifest: &Manifest, gateway: &Gateway, settings: &Settings) -> Result<Plan, String> {
    // Never more than the settings allow, whoever built them: the plan is held in memory.
    let wanted = settings.cases.min(MAX_CASES) as usize;
    let schemas = schema::Schemas {
        root: &manifest.interface.input,
        handles: handles(manifest),
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
            Err(e) => {
                refused += 1;
                last_refusal = Some(e.to_string());
            }
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
            (Some(e), _) => e,
            (None, Some(refusal)) => format!("the gate refused all {refused}; the last: {refusal}"),
            (None, None) => "it drew none".to_string(),
        };
        return Err(format!(
            "explore cannot generate an input that `interface.input` admits: {why}\n(simplify the schema, or turn explore off with `HOLON_EXPLORE_CASES=0`)"
        ));
    }
    Ok(Plan { cases, refused })
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

/// What a call of a case came back with.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The agent's answer (`Answer::Unreachable` when nothing could be sent).
    Answer(Answer),
    /// The agent's upstream had no recording for a request of this case (replay): the case is
    /// counted, not judged, and shrinking never keeps such an input.
    Unrecorded,
    /// The agent's upstream failed on the harness's side (it could not be reached while
    /// recording): the trial fails with this.
    Upstream(String),
}

/// A way to call the agent: one input in, what came back out.
pub type Call = Box<dyn Fn(&Value) -> Reply + Send + Sync>;

/// A way to call the agent with several inputs in flight at once: the replies, in the inputs'
/// order. A call that got no answer in time among others has been tried again alone.
pub type Batch = Box<dyn Fn(&[Value]) -> Vec<Reply> + Send + Sync>;

/// What the explore trials of one run share: the plan, drawn once, and the function's answers,
/// which the differential of `explore::mcp` reuses instead of calling the function again.
pub struct Explorer {
    manifest: Arc<Manifest>,
    settings: Arc<Settings>,
    plan: OnceLock<Result<Plan, String>>,
    answers: Mutex<HashMap<String, Answer>>,
}

/// Which pass a trial explores.
pub enum Pass {
    /// The function: its answers are kept for the differential.
    Function,
    /// The server; `reference`, when given, is the function its answers must equal.
    Server {
        /// The function, for the differential.
        reference: Option<Call>,
    },
}

impl Explorer {
    /// The explorer of one run.
    pub fn new(manifest: Arc<Manifest>, settings: Arc<Settings>) -> Arc<Explorer> {
        Arc::new(Explorer {
            manifest,
            settings,
            plan: OnceLock::new(),
            answers: Mutex::new(HashMap::new()),
        })
    }

    /// One answer settled as the gateway would; the server's compared with the function's
    /// for the same input (kept from `explore::function`, or asked now).
    fn settle(&self, pass: &Pass, input: &Value, got: Answer) -> Outcome {
        let mut outcome = judge::settle(self.manifest.gateway(), &got);
        match pass {
            Pass::Function => {
                if let Ok(mut answers) = self.answers.lock() {
                    answers.insert(input.to_string(), got);
                }
            }
            Pass::Server {
                reference: Some(reference),
            } if outcome.defect.is_none() => {
                let kept = self
                    .answers
                    .lock()
                    .ok()
                    .and_then(|a| a.get(&input.to_string()).cloned());
                let expected = kept.or_else(|| match reference(input) {
                    Reply::Answer(answer) => Some(answer),
                    Reply::Unrecorded | Reply::Upstream(_) => None,
                });
                if let Some(expected) = expected
                    && let Some(difference) = judge::differ(&expected, &got)
                {
                    outcome.defect = Some(difference);
                }
            }
            Pass::Server { .. } => {}
        }
        outcome
    }

    /// The trial named `name`: the plan's cases through `call`, or, when given, `batch` inputs
    /// at a time through `batch` (the shrinking still goes one at a time); `Err` is the
    /// failure's report.
    pub fn run(
        &self,
        name: &str,
        call: &Call,
        batch: Option<&(Batch, usize)>,
        pass: &Pass,
    ) -> Result<(), String> {
        let manifest = &*self.manifest;
        let (gateway, settings) = (manifest.gateway(), &*self.settings);
        let plan = self
            .plan
            .get_or_init(|| plan(manifest, gateway, settings))
            .as_ref()
            .map_err(Clone::clone)?;
        let settle = |input: &Value, got| self.settle(pass, input, got);
        // Shrinking keeps only inputs whose every upstream request was recorded.
        let check = |input: &Value| match call(input) {
            Reply::Answer(answer) => Some(settle(input, answer)),
            Reply::Unrecorded | Reply::Upstream(_) => None,
        };
        let mut tally = report::Tally::default();
        let mut found = None;
        // The size of the defect's batch when none of its calls got an answer in time, alone or
        // among others; 0 otherwise.
        let mut silent = 0;
        // The cases go out `size` at a time; each batch is judged in plan order, so the first
        // defect found is the first in the plan, whatever the concurrency.
        let size = batch.map_or(1, |(_, n)| (*n).max(1));
        'cases: for chunk in plan.cases.chunks(size) {
            let gots = match batch {
                Some((send, _)) if chunk.len() > 1 => {
                    send(&chunk.iter().map(|c| c.input.clone()).collect::<Vec<_>>())
                }
                _ => chunk.iter().map(|c| call(&c.input)).collect(),
            };
            let unanswered = |r: &Reply| {
                matches!(
                    r,
                    Reply::Answer(Answer::HungAlone(_) | Answer::HungNotRetried(_))
                )
            };
            silent = if gots.len() > 1 && gots.iter().all(unanswered) {
                gots.len()
            } else {
                0
            };
            for (case, got) in chunk.iter().zip(gots) {
                tally.cases += 1;
                let got = match got {
                    Reply::Answer(answer) => answer,
                    Reply::Unrecorded => {
                        tally.unrecorded += 1;
                        continue;
                    }
                    Reply::Upstream(why) => {
                        eprintln!("{}", tally.line(name, manifest, plan.refused));
                        return Err(why);
                    }
                };
                let outcome = settle(&case.input, got);
                if matches!(case.origin, Origin::Edge(_)) {
                    tally.edges += 1;
                }
                *tally
                    .statuses
                    .entry(outcome.status.code().to_string())
                    .or_default() += 1;
                if outcome.defect.is_some() {
                    found = Some((case, outcome));
                    break 'cases;
                }
            }
        }
        eprintln!("{}", tally.line(name, manifest, plan.refused));
        let Some((case, outcome)) = found else {
            return match tally.only_failures(manifest) {
                Some(reached) => Err(format!(
                    "no case succeeded, while the examples show successes: the agent answers only failures ({reached}), and some are transient (`retryable: true`): is the upstream reachable? An agent whose model or API cannot be reached fails every call; declare the upstream in `holon-test.toml` and record it (`cargo holon-test --upstream record`), or give a live run its key and URL"
                )),
                None => Ok(()),
            };
        };
        // A server that answered none of the calls in flight, and none tried alone, does not
        // fail on this input: each smaller one would only wait `timeout_s` again.
        let shrunk = if silent > 0 {
            shrink::Shrunk {
                input: case.input.clone(),
                outcome,
                steps: 0,
                cut_short: Some(format!(
                    "none of the {silent} calls in flight with it got an answer in time, nor one tried alone: the server does not answer, whatever the input"
                )),
            }
        } else {
            shrink::shrink(
                case.input.clone(),
                outcome,
                |v| gateway.admit(v).is_ok(),
                check,
            )
        };
        Err(report::Failure {
            trial: name,
            case,
            total: plan.cases.len(),
            shrunk: &shrunk,
            seed: settings.seed,
            seed_from_manifest: settings.seed_from_manifest,
            replay: settings.replay.replace("{trial}", name),
        }
        .render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let error = plan(&manifest, &gateway, &settings(100)).err().unwrap();
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

//! A run's settings. Each comes from the first layer that gives it: the command line, then the
//! environment, then the `Harness` builder in `tests/holon.rs`, then its default. One rule for
//! every setting; under `cargo holon-test` the command line reaches the test target through the
//! same variables, so it wins there too.

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::defs::{
    BLESS_VAR, CONCURRENCY_VAR, DEFAULT_CONCURRENCY, EXPLORE_CASES_VAR, EXPLORE_SEED_VAR,
    FAULTS_VAR, FORCE_VAR, JUNIT_VAR, Layer, MAX_CALLS_VAR, MIN_STRICT_SUCCESS_RATE_VAR,
    MIN_SUCCESS_RATE_VAR, PARTITION_VAR, RECEIPTS_VAR, REPEAT_VAR, REPORT_VAR, SERVER_URL_VAR,
    STARTUP_VAR, parse_concurrency, parse_max_calls, parse_partition, parse_rate, parse_repeat,
    parse_seconds, parse_switch,
};
use crate::defs::{DEFS, def};
use crate::era::{PROTOCOL_VAR, Protocol};
use crate::error::SettingError;
use holon_config::partition::Partition;
pub use holon_core::message::shell_quote;
use holon_explore as explore;
use holon_upstream::Mode;
use holon_upstream::fault::Only;

/// Set by `cargo holon-test` for the test target it runs: the publish checks' warnings (and
/// `source-commit-stale`) were printed already, so the harness does not print them twice.
pub const CHECKS_SHOWN: &str = "HOLON_CHECKS_SHOWN";

/// The command that runs a Rust agent's test target, which a run with no command line of its
/// own (`tests/holon.rs` under `cargo test`) prints.
pub const RUST_COMMAND: &str = "cargo holon-test";

/// How long a server may take to answer its first `initialize` unless told otherwise.
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(30);

/// The settings a run goes by.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long the server may take to answer its first `initialize`.
    pub startup: Duration,
    /// Where to write the JUnit report, if anywhere.
    pub junit: Option<PathBuf>,
    /// Whether to bless after the run.
    pub bless: bool,
    /// Calls in flight at once.
    pub concurrency: usize,
    /// How to explore.
    pub explore: explore::Settings,
    /// Where the upstreams' answers come from, when `holon-test.toml` declares any.
    pub upstream: Mode,
    /// Whether the fault trials run (when upstreams are recorded and replayed).
    pub faults: bool,
    /// The one fault to play, when `HOLON_FAULT` names one.
    pub fault: Option<Only>,
    /// A server already running to test, instead of starting one.
    pub server_url: Option<String>,
    /// Which MCP eras the server is tested in: each it speaks, or the one named.
    pub protocol: Protocol,
    /// Whether a record run records over recordings that do not read (`--force`).
    pub force: bool,
    /// `--repeat`, when given: the run is measured, each example called that many times on
    /// the measured pass.
    pub repeat: Option<u32>,
    /// Where to write one JSON line per measured call.
    pub receipts: Option<PathBuf>,
    /// Where to write the run as one HTML page.
    pub report: Option<PathBuf>,
    /// The success rate below which the run fails.
    pub min_success_rate: Option<f64>,
    /// The strict success rate (declared failures that come and go for one input counted as
    /// failures) below which the run fails.
    pub min_strict_success_rate: Option<f64>,
    /// The most calls the run makes to the agent.
    pub max_calls: Option<u64>,
    /// The shard of the run this is: only its share of the work is done.
    pub partition: Option<Partition>,
}

impl Settings {
    /// Whether the run is measured (and the report printed): a setting of the measurement
    /// was given, or the upstreams are live (when `holon-test.toml` declares any: `live`).
    pub fn measures(&self, live: bool) -> bool {
        live || self.repeat.is_some()
            || self.receipts.is_some()
            || self.min_success_rate.is_some()
            || self.min_strict_success_rate.is_some()
            || self.max_calls.is_some()
    }

    /// Whether a call that timed out among others is tried again alone: not when the run
    /// repeats its calls or bounds them, where each call is one receipt, as at the gateway.
    pub fn retries(&self) -> bool {
        self.repeat.unwrap_or(1) == 1 && self.max_calls.is_none()
    }
}

/// Whether the run blesses, as [`resolve`] would say, read before the checks: a run that
/// blesses takes an example output the schema no longer admits as a difference to write. A
/// variable that does not parse is left for `resolve` to refuse.
pub fn blesses(command_line: &Layer, harness: &Layer) -> bool {
    (command_line.clone().over(&env_alone("bless").over(harness)))
        .bless
        .unwrap_or(false)
}

/// Where the JUnit report goes, when the run stops before its settings are resolved (the
/// checks refused the manifest, another setting does not parse): the same layers, read alone,
/// the variable as the environment's layer reads it (empty, it says nothing).
pub(crate) fn junit_of(command_line: &Layer, given: &Layer) -> Option<PathBuf> {
    (command_line.clone().over(&env_alone("junit").over(given))).junit
}

/// The environment's layer of the one setting `name`: nothing where its variable is unset or
/// does not parse (which `resolve` refuses).
fn env_alone(name: &str) -> Layer {
    let mut layer = Layer::default();
    if let Some(def) = def(name) {
        let _ = layer.read_var(def, |name| std::env::var(name));
    }
    layer
}

/// Each value the `Harness` builder gave, checked by its setting's own parser, as the command
/// line, the environment and the file are checked when they are read: a number past its
/// bounds stops the run, naming the call (`Harness::concurrency(0)`).
fn check_builder(harness: &Layer) -> Result<(), SettingError> {
    for def in &DEFS {
        let (Some(builder), Some(text)) = (def.builder, def.get(harness)) else {
            continue;
        };
        let method = builder.split('(').next().unwrap_or(builder);
        def.check(&text).map_err(|why| SettingError::Builder {
            call: format!("{method}({text})"),
            why: Box::new(why),
        })?;
    }
    Ok(())
}

/// The settings that cannot go together, however each was set (flag, variable, builder or
/// file): the one place they are checked, each a usage error (`RunError::exit_code`).
fn conflicts(given: &Layer) -> Result<(), SettingError> {
    if let Some(n) = given.repeat.filter(|n| *n > 1) {
        if given.bless == Some(true) {
            return Err(SettingError::RepeatBless(n));
        }
        if given.upstream == Some(Mode::Record) {
            return Err(SettingError::RepeatRecord(n));
        }
    }
    Ok(())
}

/// The settings of a run on the manifest at `path`: `command_line` over the environment over
/// `harness` over `file` (`holon-test.toml`), then the defaults. The builder is above the file:
/// it is code in one test target, the more specific of the two (a package's targets share one
/// file), and a setting a target asks for in code is never undone by a file beside it. `replay` is the command line that replays a `--server-cmd`
/// run (without its seed and trial); without one, the replay command is `cargo holon-test`.
pub fn resolve(
    command_line: &Layer,
    harness: &Layer,
    file: &Layer,
    path: &Path,
    replay: Option<&str>,
) -> Result<Settings, SettingError> {
    let below = harness.clone().over(file);
    resolve_layers(command_line, &Layer::from_env()?, &below, path, replay)
}

/// [`resolve`] with the environment's layer given.
fn resolve_layers(
    command_line: &Layer,
    env: &Layer,
    harness: &Layer,
    path: &Path,
    replay: Option<&str>,
) -> Result<Settings, SettingError> {
    // The command line, the environment and the file were checked as they were read; the
    // builder's values are checked here.
    check_builder(harness)?;
    let given = command_line.clone().over(&env.clone().over(harness));
    conflicts(&given)?;
    let cases = given.explore_cases.unwrap_or(explore::DEFAULT_CASES);
    let seed = match given.explore_seed {
        Some(seed) => seed,
        None => explore::manifest_seed(path)?,
    };
    // Explore runs in the newest era tested: one the run pinned is pinned again.
    let pinned = given.protocol.filter(|p| *p != Protocol::Auto);
    let replay_base = replay;
    let replay = match replay {
        Some(base) => {
            let mut line = format!("{base} --explore-seed {seed}");
            if cases != explore::DEFAULT_CASES {
                line.push_str(&format!(" --explore-cases {cases}"));
            }
            if let Some(protocol) = pinned {
                line.push_str(&format!(" --protocol {}", protocol.name()));
            }
            line.push_str(" -- --exact {trial}");
            line
        }
        None => {
            let mut line = format!("{EXPLORE_SEED_VAR}={seed}");
            if cases != explore::DEFAULT_CASES {
                line.push_str(&format!(" {EXPLORE_CASES_VAR}={cases}"));
            }
            if let Some(protocol) = pinned {
                line.push_str(&format!(" {PROTOCOL_VAR}={}", protocol.name()));
            }
            line.push_str(&format!(" {RUST_COMMAND} -- --exact {{trial}}"));
            line
        }
    };
    Ok(Settings {
        startup: given.startup.unwrap_or(DEFAULT_STARTUP),
        junit: given.junit,
        bless: given.bless.unwrap_or(false),
        concurrency: given.concurrency.unwrap_or(DEFAULT_CONCURRENCY),
        explore: explore::Settings {
            cases,
            seed,
            seed_from_manifest: given.explore_seed.is_none(),
            differential: given.explore_differential.unwrap_or(true),
            replay,
            command: replay_base.unwrap_or(RUST_COMMAND).to_string(),
            partition: given.partition,
        },
        upstream: given.upstream.unwrap_or(Mode::Replay),
        faults: given.faults.unwrap_or(true),
        fault: given.fault,
        server_url: given.server_url,
        protocol: given.protocol.unwrap_or_default(),
        force: given.force.unwrap_or(false),
        repeat: given.repeat,
        receipts: given.receipts,
        report: given.report,
        min_success_rate: given.min_success_rate,
        min_strict_success_rate: given.min_strict_success_rate,
        max_calls: given.max_calls,
        partition: given.partition,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::era;
    use holon_upstream::fault;

    #[test]
    fn concurrency_is_a_whole_number_of_calls() {
        assert_eq!(parse_concurrency("16").ok(), Some(16));
        assert_eq!(parse_concurrency(" 1 ").ok(), Some(1));
        assert_eq!(parse_concurrency("1024").ok(), Some(1024));
        for bad in ["0", "-1", "2.5", "", "many", "1025", "99999999999999999999"] {
            let e = parse_concurrency(bad).unwrap_err().to_string();
            assert!(e.contains("at least 1"), "{bad}: {e}");
        }
    }

    /// The layer these variables give.
    fn env(vars: &[(&str, &str)]) -> Result<Layer, SettingError> {
        let vars: Vec<(String, String)> = (vars.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Layer::from_vars(move |name| {
            (vars.iter().find(|(k, _)| k == name))
                .map(|(_, v)| v.clone())
                .ok_or(std::env::VarError::NotPresent)
        })
    }

    #[test]
    fn every_setting_goes_command_line_then_environment_then_harness() {
        // The default seed comes from the manifest's bytes.
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = &dir.path().join("holon.yaml");
        std::fs::write(path, "name: probe\n").expect("a manifest");
        let all = |n: usize, on: bool| Layer {
            startup: Some(Duration::from_secs(n as u64)),
            junit: Some(PathBuf::from(format!("{n}.xml"))),
            bless: Some(on),
            concurrency: Some(n),
            explore_cases: Some(n as u32),
            explore_seed: Some(n as u64),
            explore_differential: Some(on),
            upstream: Some([Mode::Replay, Mode::Record, Mode::Live][n - 1]),
            faults: Some(on),
            fault: Some(Only {
                exchange: n,
                fault: fault::Fault::Reset,
            }),
            server_url: Some(format!("http://127.0.0.1:{n}/mcp")),
            protocol: Some(
                [
                    Protocol::Only(era::Era::Modern),
                    Protocol::Only(era::Era::Legacy),
                    Protocol::Auto,
                ][n - 1],
            ),
            force: Some(on),
            repeat: Some(1),
            receipts: Some(PathBuf::from(format!("{n}.jsonl"))),
            report: Some(PathBuf::from(format!("{n}.html"))),
            min_success_rate: Some(n as f64 / 10.0),
            min_strict_success_rate: Some(n as f64 / 20.0),
            max_calls: Some(n as u64),
            partition: Some(Partition::parse(&format!("count:{n}/3")).expect("a partition")),
        };
        let (command_line, environment, harness) = (all(1, true), all(2, false), all(3, true));
        let settings = |c: &Layer, e: &Layer, h: &Layer| {
            resolve_layers(c, e, h, path, None).expect("settings")
        };
        let by_line = settings(&command_line, &environment, &harness);
        let by_env = settings(&Layer::default(), &environment, &harness);
        let by_harness = settings(&Layer::default(), &Layer::default(), &harness);
        for (s, n, on) in [
            (by_line, 1, true),
            (by_env, 2, false),
            (by_harness, 3, true),
        ] {
            assert_eq!(s.startup, Duration::from_secs(n as u64));
            assert_eq!(s.junit, Some(PathBuf::from(format!("{n}.xml"))));
            assert_eq!(s.bless, on);
            assert_eq!(s.concurrency, n);
            assert_eq!((s.explore.cases, s.explore.seed), (n as u32, n as u64));
            assert_eq!(s.upstream, [Mode::Replay, Mode::Record, Mode::Live][n - 1]);
            assert_eq!(s.faults, on);
            assert_eq!(s.fault.map(|f| f.exchange), Some(n));
            assert_eq!(s.server_url, Some(format!("http://127.0.0.1:{n}/mcp")));
            assert_eq!(
                s.protocol,
                [
                    Protocol::Only(era::Era::Modern),
                    Protocol::Only(era::Era::Legacy),
                    Protocol::Auto
                ][n - 1]
            );
            assert_eq!(s.force, on);
            assert_eq!(s.receipts, Some(PathBuf::from(format!("{n}.jsonl"))));
            assert_eq!(s.report, Some(PathBuf::from(format!("{n}.html"))));
            assert_eq!(s.min_success_rate, Some(n as f64 / 10.0));
            assert_eq!(s.min_strict_success_rate, Some(n as f64 / 20.0));
            assert_eq!(s.partition.map(|p| p.shard), Some(n as u64));
            assert_eq!(s.max_calls, Some(n as u64));
        }
        let defaults = settings(&Layer::default(), &Layer::default(), &Layer::default());
        assert_eq!(defaults.startup, DEFAULT_STARTUP);
        assert_eq!(defaults.concurrency, DEFAULT_CONCURRENCY);
        assert!(!defaults.bless && defaults.explore.differential);
        assert!(defaults.faults && defaults.fault.is_none() && !defaults.force);
        assert_eq!(defaults.protocol, Protocol::Auto);
    }

    #[test]
    fn the_environment_is_read_and_a_bad_value_named() {
        let layer = env(&[
            (CONCURRENCY_VAR, "4"),
            (BLESS_VAR, "1"),
            (STARTUP_VAR, "0.5"),
            (JUNIT_VAR, "out.xml"),
        ])
        .expect("a good environment");
        assert_eq!(layer.concurrency, Some(4));
        assert_eq!(layer.bless, Some(true));
        assert_eq!(layer.startup, Some(Duration::from_millis(500)));
        assert_eq!(layer.junit, Some(PathBuf::from("out.xml")));
        assert_eq!(env(&[(BLESS_VAR, "0")]).expect("off").bless, Some(false));
        assert_eq!(env(&[(FAULTS_VAR, "0")]).expect("off").faults, Some(false));
        assert_eq!(env(&[(FAULTS_VAR, "on")]).expect("on").faults, Some(true));
        assert_eq!(
            env(&[(PROTOCOL_VAR, "2025-11-25")])
                .expect("pinned")
                .protocol,
            Some(Protocol::Only(era::Era::Legacy))
        );
        assert_eq!(
            env(&[(CONCURRENCY_VAR, " ")]).expect("empty").concurrency,
            None
        );
        for (name, bad) in [
            (CONCURRENCY_VAR, "0"),
            (STARTUP_VAR, "soon"),
            (EXPLORE_CASES_VAR, "-1"),
            (EXPLORE_SEED_VAR, "x"),
            (FAULTS_VAR, "no"),
            (fault::ONE_VAR, "1:teapot"),
            (PROTOCOL_VAR, "2025-06-18"),
        ] {
            let e = env(&[(name, bad)]).expect_err(bad).to_string();
            assert!(e.starts_with(&format!("`{name}={bad}`")), "{e}");
        }
    }

    #[test]
    fn explore_cases_have_a_maximum_in_every_layer() {
        let max = explore::MAX_CASES;
        assert_eq!(explore::parse_cases(&max.to_string()).ok(), Some(max));
        for past in [max + 1, 4_000_000_000] {
            let e = explore::parse_cases(&past.to_string())
                .unwrap_err()
                .to_string();
            assert!(e.ends_with(&format!("to {max}")), "{e}");
            let named = env(&[(EXPLORE_CASES_VAR, &past.to_string())])
                .unwrap_err()
                .to_string();
            assert!(
                named.starts_with(&format!("`{EXPLORE_CASES_VAR}={past}`: ")),
                "{named}"
            );
        }
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = &dir.path().join("holon.yaml");
        std::fs::write(path, "name: probe\n").expect("a manifest");
        let harness = |cases: u32| Layer {
            explore_cases: Some(cases),
            ..Layer::default()
        };
        let none = Layer::default();
        let at = resolve_layers(&none, &none, &harness(max), path, None).expect("the edge");
        assert_eq!(at.explore.cases, max);
        let past = resolve_layers(&none, &none, &harness(max + 1), path, None)
            .unwrap_err()
            .to_string();
        assert!(
            past.starts_with(&format!("`Harness::explore_cases({})`: ", max + 1)),
            "{past}"
        );
    }

    #[test]
    fn the_defaults_the_reference_and_the_help_say_are_the_defaults_a_run_takes() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = &dir.path().join("holon.yaml");
        std::fs::write(path, "name: probe\n").expect("a manifest");
        let none = Layer::default();
        let s = resolve_layers(&none, &none, &none, path, None).expect("the defaults");
        let said = |name: &str| def(name).expect(name);
        for (name, default) in [
            ("concurrency", s.concurrency.to_string()),
            ("explore_cases", s.explore.cases.to_string()),
            ("startup", format!("{} s", s.startup.as_secs())),
            ("repeat", s.repeat.unwrap_or(1).to_string()),
            ("bless", ["off", "on"][usize::from(s.bless)].to_string()),
            (
                "explore_differential",
                ["off", "on"][usize::from(s.explore.differential)].into(),
            ),
            ("upstream", format!("`{}`", s.upstream.name())),
        ] {
            assert_eq!(said(name).default, default, "{name}");
            let help = said(name).help;
            let number = default.trim_end_matches(" s").trim_matches('`');
            assert!(
                help.is_empty()
                    || !help.contains("[default: ")
                    || help.contains(&format!("[default: {number}")),
                "{name}: {help}"
            );
        }
    }

    #[test]
    fn the_builder_is_held_to_the_bounds_every_other_layer_is() {
        // Once the builder kept a concurrency within bounds silently while it refused explore
        // cases past theirs: both now stop the run, naming the call.
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = &dir.path().join("holon.yaml");
        std::fs::write(path, "name: probe\n").expect("a manifest");
        let none = Layer::default();
        for (calls, ok) in [(0, false), (1, true), (1024, true), (1025, false)] {
            let harness = Layer {
                concurrency: Some(calls),
                ..Layer::default()
            };
            match resolve_layers(&none, &none, &harness, path, None) {
                Ok(s) => assert!(ok && s.concurrency == calls, "{calls}"),
                Err(e) => {
                    let e = e.to_string();
                    assert!(!ok, "{calls}: {e}");
                    assert!(
                        e.starts_with(&format!("`Harness::concurrency({calls})`: the concurrency")),
                        "{e}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_higher_layer_wins_field_by_field() {
        let command_line = Layer {
            concurrency: Some(2),
            ..Layer::default()
        };
        let harness = Layer {
            concurrency: Some(8),
            bless: Some(true),
            ..Layer::default()
        };
        let merged = command_line.over(&harness);
        assert_eq!(merged.concurrency, Some(2));
        assert_eq!(merged.bless, Some(true));
        assert_eq!(merged.junit, None);
    }

    #[test]
    fn the_measurement_settings_refuse_what_they_cannot_use() {
        assert_eq!(parse_repeat("20").ok(), Some(20));
        assert_eq!(parse_repeat("10000").ok(), Some(crate::parsers::MAX_REPEAT));
        for bad in ["0", "-1", "1e9", "10001", "2.5", "", "many"] {
            let e = parse_repeat(bad).unwrap_err().to_string();
            assert!(e.contains("from 1 to 10000"), "{bad}: {e}");
        }
        assert_eq!(parse_rate("0.95").ok(), Some(0.95));
        assert_eq!(parse_rate("0").ok(), Some(0.0));
        assert_eq!(parse_rate("1").ok(), Some(1.0));
        for bad in ["1.5", "-0.1", "95%", "NaN", "inf", ""] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_max_calls("50").ok(), Some(50));
        for bad in ["0", "-1", "1.5", "x"] {
            assert!(parse_max_calls(bad).is_err(), "{bad}");
        }
        for (name, bad) in [
            (REPEAT_VAR, "0"),
            (REPEAT_VAR, "1e9"),
            (MIN_SUCCESS_RATE_VAR, "1.5"),
            (MAX_CALLS_VAR, "-1"),
        ] {
            let e = env(&[(name, bad)]).expect_err(bad).to_string();
            assert!(e.starts_with(&format!("`{name}={bad}`")), "{e}");
        }
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = &dir.path().join("holon.yaml");
        std::fs::write(path, "name: probe\n").expect("a manifest");
        let none = Layer::default();
        let with = |bless: bool, upstream: Mode| Layer {
            repeat: Some(20),
            bless: Some(bless),
            upstream: Some(upstream),
            ..Layer::default()
        };
        let e = resolve_layers(&with(true, Mode::Live), &none, &none, path, None).unwrap_err();
        assert!(e.to_string().contains("`--bless`"), "{e}");
        let e = resolve_layers(&with(false, Mode::Record), &none, &none, path, None).unwrap_err();
        assert!(e.to_string().contains("`--upstream record`"), "{e}");
        let fine =
            resolve_layers(&with(false, Mode::Live), &none, &none, path, None).expect("live");
        assert!(fine.measures(false) && !fine.retries());
        let plain = resolve_layers(&none, &none, &none, path, None).expect("plain");
        assert!(!plain.measures(false) && plain.measures(true) && plain.retries());
    }

    #[test]
    fn seconds_are_positive_numbers() {
        assert_eq!(parse_seconds("0.5").ok(), Some(0.5));
        for bad in ["0", "-1", "soon", "", "inf", "NaN"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}

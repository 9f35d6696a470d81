//! A run's settings. Each comes from the first layer that gives it: the command line, then the
//! environment, then the `Harness` builder in `tests/holon.rs`, then its default. One rule for
//! every setting; under `cargo holon-test` the command line reaches the test target through the
//! same variables, so it wins there too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::era::{self, PROTOCOL_VAR, Protocol};
use crate::error::SettingError;
use holon_config::partition::Partition;
pub use holon_core::message::shell_quote;
use holon_explore as explore;
use holon_upstream::fault::{self, Only};
use holon_upstream::{self as upstream, Mode};

/// Set by `cargo holon-test` for the test target it runs: the publish checks' warnings (and
/// `source-commit-stale`) were printed already, so the harness does not print them twice.
pub const CHECKS_SHOWN: &str = "HOLON_CHECKS_SHOWN";

/// `--startup-timeout`.
pub const STARTUP_VAR: &str = "HOLON_STARTUP_TIMEOUT_S";
/// `--junit`.
pub const JUNIT_VAR: &str = "HOLON_JUNIT";
/// `--bless`.
pub const BLESS_VAR: &str = "HOLON_BLESS";
/// `--concurrency`.
pub const CONCURRENCY_VAR: &str = "HOLON_CONCURRENCY";
/// `--explore-cases`.
pub const EXPLORE_CASES_VAR: &str = "HOLON_EXPLORE_CASES";
/// `--explore-seed`.
pub const EXPLORE_SEED_VAR: &str = "HOLON_EXPLORE_SEED";
/// `--faults`: `0` turns the fault trials off.
pub const FAULTS_VAR: &str = "HOLON_FAULTS";
/// `--force`: `1` lets a record run record over recordings that do not read.
pub const FORCE_VAR: &str = "HOLON_FORCE";
/// `--url`: the MCP pass against a server already running, none started.
pub const SERVER_URL_VAR: &str = "HOLON_SERVER_URL";
/// `--repeat`: each example called N times on the measured pass.
pub const REPEAT_VAR: &str = "HOLON_REPEAT";
/// `--receipts`: one JSON line per measured call.
pub const RECEIPTS_VAR: &str = "HOLON_RECEIPTS";
/// `--report`: the run as one HTML page.
pub const REPORT_VAR: &str = "HOLON_REPORT";
/// `--min-success-rate`: the run fails below it.
pub const MIN_SUCCESS_RATE_VAR: &str = "HOLON_MIN_SUCCESS_RATE";
/// `--partition`: the shard of the run this is.
pub const PARTITION_VAR: &str = "HOLON_PARTITION";
/// `--min-strict-success-rate`: the run fails when the success rate, counting the declared
/// failures that come and go for one input as failures, is below it.
pub const MIN_STRICT_SUCCESS_RATE_VAR: &str = "HOLON_MIN_STRICT_SUCCESS_RATE";
/// `--max-calls`: the most calls a run makes to the agent.
pub const MAX_CALLS_VAR: &str = "HOLON_MAX_CALLS";

/// The command that runs a Rust agent's test target, which a run with no command line of its
/// own (`tests/holon.rs` under `cargo test`) prints.
pub const RUST_COMMAND: &str = "cargo holon-test";

/// The most calls of one example a run may ask for.
pub const MAX_REPEAT: u32 = 10_000;

/// `N` for `--repeat N` or `HOLON_REPEAT`: a whole number of calls, 1 to 10,000.
pub fn parse_repeat(text: &str) -> Result<u32, SettingError> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_REPEAT).contains(&n) => Ok(n),
        _ => Err(SettingError::Repeat {
            text: text.to_string(),
            max: MAX_REPEAT,
        }),
    }
}

/// `R` for `--min-success-rate R`: a fraction from 0 to 1.
pub fn parse_rate(text: &str) -> Result<f64, SettingError> {
    match text.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(SettingError::Rate(text.to_string())),
    }
}

/// `count:K/N` or `hash:K/N` for `--partition`, nextest's syntax.
pub fn parse_partition(text: &str) -> Result<Partition, SettingError> {
    Partition::parse(text).map_err(SettingError::Partition)
}

/// `N` for `--max-calls N`: a whole number of calls, at least 1.
pub fn parse_max_calls(text: &str) -> Result<u64, SettingError> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(SettingError::MaxCalls(text.to_string())),
    }
}

/// Calls in flight at once when nothing else is said.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// The most calls in flight a run may ask for.
pub const MAX_CONCURRENCY: usize = 1024;

/// `N` for `--concurrency N` or `HOLON_CONCURRENCY`: a whole number of calls, 1 to 1024.
pub fn parse_concurrency(text: &str) -> Result<usize, SettingError> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => Ok(n),
        _ => Err(SettingError::Concurrency {
            text: text.to_string(),
            max: MAX_CONCURRENCY,
        }),
    }
}

/// How long a server may take to answer its first `initialize` unless told otherwise.
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(30);

/// What one layer says; `None` where it says nothing.
#[derive(Debug, Clone, Default)]
pub struct Layer {
    /// How long the server may take to answer its first `initialize`.
    pub startup: Option<Duration>,
    /// Where to write the JUnit report.
    pub junit: Option<PathBuf>,
    /// Whether to write the agent's answers into the examples after the run.
    pub bless: Option<bool>,
    /// Calls in flight at once.
    pub concurrency: Option<usize>,
    /// Cases per explore trial.
    pub explore_cases: Option<u32>,
    /// The seed explore draws its inputs from.
    pub explore_seed: Option<u64>,
    /// Whether `explore::mcp` compares the server's answers with the function's.
    pub explore_differential: Option<bool>,
    /// Where the upstreams' answers come from.
    pub upstream: Option<Mode>,
    /// Whether the fault trials run.
    pub faults: Option<bool>,
    /// The one fault to play (`HOLON_FAULT`).
    pub fault: Option<Only>,
    /// The address of a server already running, to test instead of starting one.
    pub server_url: Option<String>,
    /// Which MCP eras to test the server in.
    pub protocol: Option<Protocol>,
    /// Whether a record run records over recordings that do not read.
    pub force: Option<bool>,
    /// Calls of each example on the measured pass.
    pub repeat: Option<u32>,
    /// Where to write one JSON line per measured call.
    pub receipts: Option<PathBuf>,
    /// Where to write the run as one HTML page.
    pub report: Option<PathBuf>,
    /// The success rate below which the run fails.
    pub min_success_rate: Option<f64>,
    /// The strict success rate below which the run fails.
    pub min_strict_success_rate: Option<f64>,
    /// The most calls the run makes to the agent.
    pub max_calls: Option<u64>,
    /// The shard of the run this is.
    pub partition: Option<Partition>,
}

impl Layer {
    /// The environment's layer; a value that does not parse is refused, naming its variable.
    pub fn from_env() -> Result<Layer, SettingError> {
        Layer::from_vars(|name| std::env::var(name))
    }

    /// The layer the variables `lookup` finds give.
    fn from_vars(
        lookup: impl Fn(&str) -> Result<String, std::env::VarError>,
    ) -> Result<Layer, SettingError> {
        let var = |name: &str| var(name, &lookup);
        Ok(Layer {
            startup: parsed(STARTUP_VAR, var(STARTUP_VAR)?, parse_seconds)?
                .map(Duration::from_secs_f64),
            junit: var(JUNIT_VAR)?.map(PathBuf::from),
            // Set to `1`, on; set to anything else, off.
            bless: var(BLESS_VAR)?.map(|v| v == "1"),
            concurrency: parsed(CONCURRENCY_VAR, var(CONCURRENCY_VAR)?, parse_concurrency)?,
            explore_cases: parsed(EXPLORE_CASES_VAR, var(EXPLORE_CASES_VAR)?, |t| {
                Ok(explore::parse_cases(t)?)
            })?,
            explore_seed: parsed(EXPLORE_SEED_VAR, var(EXPLORE_SEED_VAR)?, |t| {
                Ok(explore::parse_seed(t)?)
            })?,
            explore_differential: None,
            upstream: parsed(upstream::MODE_VAR, var(upstream::MODE_VAR)?, |t| {
                Ok(upstream::parse_mode(t)?)
            })?,
            faults: parsed(FAULTS_VAR, var(FAULTS_VAR)?, parse_switch)?,
            fault: parsed(fault::ONE_VAR, var(fault::ONE_VAR)?, |t| {
                Ok(fault::parse_only(t)?)
            })?,
            // Checked as a URL where the run builds its target (`lib`), naming the variable.
            server_url: var(SERVER_URL_VAR)?,
            protocol: parsed(PROTOCOL_VAR, var(PROTOCOL_VAR)?, era::parse_protocol)?,
            // Set to `1`, on; set to anything else, off.
            force: var(FORCE_VAR)?.map(|v| v == "1"),
            repeat: parsed(REPEAT_VAR, var(REPEAT_VAR)?, parse_repeat)?,
            receipts: var(RECEIPTS_VAR)?.map(PathBuf::from),
            report: var(REPORT_VAR)?.map(PathBuf::from),
            min_success_rate: parsed(MIN_SUCCESS_RATE_VAR, var(MIN_SUCCESS_RATE_VAR)?, parse_rate)?,
            min_strict_success_rate: parsed(
                MIN_STRICT_SUCCESS_RATE_VAR,
                var(MIN_STRICT_SUCCESS_RATE_VAR)?,
                parse_rate,
            )?,
            max_calls: parsed(MAX_CALLS_VAR, var(MAX_CALLS_VAR)?, parse_max_calls)?,
            partition: parsed(PARTITION_VAR, var(PARTITION_VAR)?, parse_partition)?,
        })
    }

    /// This layer, with `lower`'s values where it says nothing.
    fn over(self, lower: &Layer) -> Layer {
        Layer {
            startup: self.startup.or(lower.startup),
            junit: self.junit.or_else(|| lower.junit.clone()),
            bless: self.bless.or(lower.bless),
            concurrency: self.concurrency.or(lower.concurrency),
            explore_cases: self.explore_cases.or(lower.explore_cases),
            explore_seed: self.explore_seed.or(lower.explore_seed),
            explore_differential: self.explore_differential.or(lower.explore_differential),
            upstream: self.upstream.or(lower.upstream),
            faults: self.faults.or(lower.faults),
            fault: self.fault.or(lower.fault),
            server_url: self.server_url.or_else(|| lower.server_url.clone()),
            protocol: self.protocol.or(lower.protocol),
            force: self.force.or(lower.force),
            repeat: self.repeat.or(lower.repeat),
            receipts: self.receipts.or_else(|| lower.receipts.clone()),
            report: self.report.or_else(|| lower.report.clone()),
            min_success_rate: self.min_success_rate.or(lower.min_success_rate),
            min_strict_success_rate: self
                .min_strict_success_rate
                .or(lower.min_strict_success_rate),
            max_calls: self.max_calls.or(lower.max_calls),
            partition: self.partition.or(lower.partition),
        }
    }
}

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
    let env = var(BLESS_VAR, |name| std::env::var(name)).ok().flatten();
    (command_line.bless)
        .or(env.map(|v| v == "1"))
        .or(harness.bless)
        .unwrap_or(false)
}

/// Where the JUnit report goes, when the run stops before its settings are resolved (the
/// checks refused the manifest, another setting does not parse): the same layers, read alone.
pub(crate) fn junit_of(command_line: &Layer, given: &Layer) -> Option<PathBuf> {
    (command_line.junit.clone())
        .or_else(|| std::env::var_os(JUNIT_VAR).map(PathBuf::from))
        .or_else(|| given.junit.clone())
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
    let given = command_line.clone().over(&env.clone().over(harness));
    let cases = given.explore_cases.unwrap_or(explore::DEFAULT_CASES);
    // The command line and the environment were checked as they were read; the builder's
    // number is checked here.
    let cases =
        explore::check_cases(cases).map_err(|why| SettingError::HarnessCases { cases, why })?;
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
    let repeat = given.repeat.filter(|n| *n > 1);
    if let Some(n) = repeat {
        if given.bless == Some(true) {
            return Err(SettingError::RepeatBless(n));
        }
        if given.upstream == Some(Mode::Record) {
            return Err(SettingError::RepeatRecord(n));
        }
    }
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

/// `on` or `off` (`1` or `0`).
pub fn parse_switch(text: &str) -> Result<bool, SettingError> {
    match text.trim() {
        "on" | "1" => Ok(true),
        "off" | "0" => Ok(false),
        other => Err(SettingError::Switch(other.to_string())),
    }
}

/// Seconds above 0, fractions allowed.
pub fn parse_seconds(text: &str) -> Result<f64, SettingError> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(SettingError::Seconds(text.to_string())),
    }
}

/// A variable's value; `None` when it is unset or empty.
fn var(
    name: &str,
    lookup: impl Fn(&str) -> Result<String, std::env::VarError>,
) -> Result<Option<String>, SettingError> {
    match lookup(name) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => Ok(Some(text)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(SettingError::NotUnicode {
            name: name.to_string(),
        }),
    }
}

/// A variable's value parsed, or why it does not parse, naming the variable.
fn parsed<T>(
    name: &str,
    text: Option<String>,
    parse: impl Fn(&str) -> Result<T, SettingError>,
) -> Result<Option<T>, SettingError> {
    match text {
        None => Ok(None),
        Some(text) => parse(text.trim())
            .map(Some)
            .map_err(|why| SettingError::Variable {
                name: name.to_string(),
                text,
                why: Box::new(why),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse_repeat("10000").ok(), Some(MAX_REPEAT));
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

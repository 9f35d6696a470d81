//! Every setting of a run, defined once, as ripgrep defines its flags: one [`Def`] a setting
//! gives its flag, its variable, its `holon-test.toml` key, its `Harness` method, its parser,
//! its help and its default; the command line (`holon-cli`), the environment's layer, the
//! file's layer, what `cargo holon-test` forwards to the test target and the reference page's
//! table are all read from [`DEFS`]. A new setting is one entry of the `settings!` list, which
//! gives both its [`Def`] and its field of [`Layer`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::era::{self, PROTOCOL_VAR, Protocol};
use crate::error::SettingError;
pub use crate::parsers::{
    DEFAULT_CONCURRENCY, parse_concurrency, parse_max_calls, parse_partition, parse_rate,
    parse_repeat, parse_seconds, parse_switch,
};
use crate::parsers::{parse_one, parse_path};
use holon_config::partition::Partition;
use holon_config::settings::{Key, Kind};
use holon_explore as explore;
use holon_upstream::fault::{self, Only};
use holon_upstream::{self as upstream, Mode};

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

/// One setting, every surface of it.
#[derive(Debug)]
pub struct Def {
    /// Its field of `Layer`, the name the table's tests and the reference go by.
    pub name: &'static str,
    /// Its long flag of the run command, without `--`.
    pub flag: Option<&'static str>,
    /// What the flag's value is called in the help (`N`); `None` for a flag that takes no
    /// value and turns the setting on.
    pub value: Option<&'static str>,
    /// The variable the test target reads it from, which `cargo holon-test` forwards it as.
    pub var: Option<&'static str>,
    /// Its table and key in `holon-test.toml`, and the TOML value it takes there.
    pub key: Option<Key>,
    /// The `Harness` method that gives it, as the reference shows a call (`concurrency(n)`).
    pub builder: Option<&'static str>,
    /// The flag's help, as `--help` prints it.
    pub help: &'static str,
    /// What it is, for the reference's table.
    pub about: &'static str,
    /// Its default, as the reference says it.
    pub default: &'static str,
    /// A value every one of its layers takes (the table's tests set it through each).
    pub example: &'static str,
    /// Whether the value is a path (its parser is `path`): relative to the folder of the file
    /// that gives it, and made absolute before it is forwarded to a test target run in another
    /// folder.
    pub path: bool,
    field: Field,
}

/// How a [`Def`] reads into, writes out of and merges its field of [`Layer`].
#[derive(Debug)]
struct Field {
    set: fn(&mut Layer, &str, &Path) -> Result<(), SettingError>,
    get: fn(&Layer) -> Option<String>,
    merge: fn(&mut Layer, &Layer),
}

impl Def {
    /// Parses `text` into its field of `layer`, a relative path taken as under `base`, with
    /// the one error wording of the setting.
    pub fn set(&self, layer: &mut Layer, text: &str, base: &Path) -> Result<(), SettingError> {
        (self.field.set)(layer, text, base)
    }

    /// The value `layer` gives, as its variable would take it; `None` where it says nothing.
    pub fn get(&self, layer: &Layer) -> Option<String> {
        (self.field.get)(layer)
    }

    /// `text` as this setting's parser takes it, or the parser's reason, for a command line
    /// that checks each value as it reads it.
    pub fn check(&self, text: &str) -> Result<(), SettingError> {
        self.set(&mut Layer::default(), text, Path::new(""))
    }
}

/// A typed value as its variable takes it.
trait Text {
    fn text(&self) -> String;
}

macro_rules! text_by_display {
    ($($t:ty),*) => {$(impl Text for $t { fn text(&self) -> String { self.to_string() } })*};
}
text_by_display!(usize, u32, u64, f64, String);

impl Text for bool {
    fn text(&self) -> String {
        if *self { "1" } else { "0" }.to_string()
    }
}

impl Text for Duration {
    fn text(&self) -> String {
        self.as_secs_f64().to_string()
    }
}

impl Text for PathBuf {
    fn text(&self) -> String {
        self.display().to_string()
    }
}

impl Text for Mode {
    fn text(&self) -> String {
        self.name().to_string()
    }
}

impl Text for Protocol {
    fn text(&self) -> String {
        self.name().to_string()
    }
}

impl Text for Only {
    fn text(&self) -> String {
        format!("{}:{}", self.exchange, self.fault.name())
    }
}

impl Text for Partition {
    fn text(&self) -> String {
        self.name()
    }
}

/// [`Layer`] and [`DEFS`] from one list: each setting is its doc, its field's name and type,
/// its parser (`path` for a path, taken as under the folder of what gives it) and the rest of
/// its [`Def`]. A new setting is one entry of this list.
macro_rules! settings {
    ($($(#[doc = $doc:literal])* $name:ident: $ty:ty = $parse:tt { $($part:ident: $value:expr),* $(,)? })*) => {
        /// What one layer says; `None` where it says nothing.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Layer {
            $($(#[doc = $doc])* pub $name: Option<$ty>,)*
        }

        /// How many settings there are.
        const COUNT: usize = [$(stringify!($name)),*].len();

        /// Every setting, in the order the run command's help lists them.
        pub static DEFS: [Def; COUNT] = [$(Def {
            name: stringify!($name),
            path: is_path!($parse),
            field: field!($name, $parse),
            $($part: $value),*
        }),*];
    };
}

/// Whether a setting's parser is `path`.
macro_rules! is_path {
    (path) => {
        true
    };
    ($parse:tt) => {
        false
    };
}

/// The [`Field`] of `Layer::$name`, read by `$parse` (text to the typed value).
macro_rules! field {
    ($name:ident, path) => {
        field!(path $name)
    };
    ($name:ident, $parse:expr) => {
        Field {
            set: |layer, text, _| {
                layer.$name = Some(($parse)(text)?);
                Ok(())
            },
            get: |layer| layer.$name.as_ref().map(Text::text),
            merge: |layer, lower| {
                if layer.$name.is_none() {
                    layer.$name = lower.$name.clone();
                }
            },
        }
    };
    (path $name:ident) => {
        Field {
            set: |layer, text, base| {
                layer.$name = Some(parse_path(text, base)?);
                Ok(())
            },
            get: |layer| layer.$name.as_ref().map(Text::text),
            merge: |layer, lower| {
                if layer.$name.is_none() {
                    layer.$name = lower.$name.clone();
                }
            },
        }
    };
}

settings! {
    /// The address of a server already running, to test instead of starting one.
    server_url: String = (|t: &str| Ok::<_, SettingError>(t.to_string())) {
        flag: Some("url"),
        value: Some("URL"),
        var: Some(SERVER_URL_VAR),
        key: None,
        builder: None,
        help: "Test a server already running (a deployed agent): the publish checks and the MCP pass against this URL, nothing started or stopped; explore only with `--explore-cases N`",
        about: "a server already running to test instead of starting one",
        default: "none: the pass starts its server",
        example: "http://127.0.0.1:1/mcp",
        // Checked as a URL where the run builds its target (`lib`, `--url`'s parser), naming
        // where it came from.
    }
    /// Whether to write the agent's answers into the examples after the run.
    bless: bool = parse_one {
        flag: Some("bless"),
        value: None,
        var: Some(BLESS_VAR),
        key: None,
        builder: Some("bless(true)"),
        help: "After the run, write the agent's actual answers into the examples that differ, in place (a crash, a timeout or an answer the gateway refuses is never written)",
        about: "write the answers into the examples",
        default: "off",
        example: "1",
    }
    /// How long the server may take to answer its first `initialize`.
    startup: Duration = (|t| parse_seconds(t).map(Duration::from_secs_f64)) {
        flag: Some("startup-timeout"),
        value: Some("SECONDS"),
        var: Some(STARTUP_VAR),
        key: Some(file("server", "startup_timeout_s", Kind::Seconds)),
        builder: Some("startup_timeout(d)"),
        help: "Seconds the server may take to answer its first `initialize` [default: 30, or `HOLON_STARTUP_TIMEOUT_S`]",
        about: "time the server has to answer its first request (`server/discover`)",
        default: "30 s",
        example: "2.5",
    }
    /// Where to write the JUnit report.
    junit: PathBuf = path {
        flag: Some("junit"),
        value: Some("PATH"),
        var: Some(JUNIT_VAR),
        key: Some(file("run", "junit", Kind::Text)),
        builder: Some("junit(path)"),
        help: "Also write the run as a JUnit XML report (one `testcase` per trial); its folder is created if missing",
        about: "a JUnit report",
        default: "none",
        example: "out.xml",
    }
    /// Cases per explore trial.
    explore_cases: u32 = (explore::parse_cases) {
        flag: Some("explore-cases"),
        value: Some("N"),
        var: Some(EXPLORE_CASES_VAR),
        key: Some(file("explore", "cases", Kind::Whole)),
        builder: Some("explore_cases(n)"),
        help: "Cases per explore trial (`explore::function`, `explore::mcp`): inputs generated from `interface.input` between the examples; 0 turns explore off, at most 100000 [default: 100, or `HOLON_EXPLORE_CASES`]",
        about: "explore cases per trial (0: off, at most 100,000)",
        default: "100",
        example: "7",
    }
    /// The seed explore draws its inputs from.
    explore_seed: u64 = (explore::parse_seed) {
        flag: Some("explore-seed"),
        value: Some("SEED"),
        var: Some(EXPLORE_SEED_VAR),
        key: Some(file("explore", "seed", Kind::Seed)),
        builder: Some("explore_seed(s)"),
        help: "The explore seed, decimal or 0x hexadecimal [default: from the manifest's bytes, or `HOLON_EXPLORE_SEED`]",
        about: "explore seed",
        default: "from the manifest's bytes",
        example: "0x2a",
    }
    /// Whether `explore::mcp` compares the server's answers with the function's.
    explore_differential: bool = parse_switch {
        flag: None,
        value: None,
        var: None,
        key: Some(file("explore", "differential", Kind::Switch)),
        builder: Some("explore_differential(false)"),
        help: "",
        about: "server must answer as the function does (explore)",
        default: "on",
        example: "off",
    }
    /// Calls in flight at once.
    concurrency: usize = parse_concurrency {
        flag: Some("concurrency"),
        value: Some("N"),
        var: Some(CONCURRENCY_VAR),
        key: Some(file("run", "concurrency", Kind::Whole)),
        builder: Some("concurrency(n)"),
        help: "Calls in flight at once, whatever the core count and `--test-threads` [default: 16, or `HOLON_CONCURRENCY`]; 1 sends one call at a time, for an agent behind a strict rate limit",
        about: "calls in flight at once (1 to 1024)",
        default: "16",
        example: "4",
    }
    /// Where the upstreams' answers come from.
    upstream: Mode = (upstream::parse_mode) {
        flag: Some("upstream"),
        value: Some("MODE"),
        var: Some(upstream::MODE_VAR),
        key: None,
        builder: None,
        help: "Where the upstreams `holon-test.toml` declares answer from: `replay` the recordings (no network, no key), `record` the real services and write what they answered, or `live` the real services, writing nothing [default: replay, or `HOLON_UPSTREAM`]",
        about: "where the upstreams answer from ([Model-backed agents](../model-backed.md))",
        default: "`replay`",
        example: "live",
    }
    /// Whether the fault trials run.
    faults: bool = parse_switch {
        flag: Some("faults"),
        value: Some("on|off"),
        var: Some(FAULTS_VAR),
        key: Some(file("run", "faults", Kind::Switch)),
        builder: Some("faults(false)"),
        help: "Whether the fault trials run: every success example replayed with each recorded upstream exchange failing in turn (429, 500, 503, a reset, a cut body, HTML, no answer) [default: on when upstreams are recorded, or `HOLON_FAULTS`]; `HOLON_FAULT=1:429` plays one fault only",
        about: "the fault trials ([Upstream faults](../model-backed.md#upstream-faults))",
        default: "on (replay, with recordings)",
        example: "off",
    }
    /// The one fault to play (`HOLON_FAULT`).
    fault: Only = (fault::parse_only) {
        flag: None,
        value: None,
        var: Some(fault::ONE_VAR),
        key: None,
        builder: None,
        help: "",
        about: "one fault only",
        default: "every fault",
        example: "1:429",
    }
    /// Which MCP eras to test the server in.
    protocol: Protocol = (era::parse_protocol) {
        flag: Some("protocol"),
        value: Some("auto|2026-07-28|2025-11-25"),
        var: Some(PROTOCOL_VAR),
        key: Some(file("server", "protocol", Kind::Text)),
        builder: None,
        help: "Which MCP protocol eras to test the server in: `auto`, each era it speaks (2026-07-28, with `server/discover` and the `_meta` envelope, and 2025-11-25, with `initialize`), or `2026-07-28` or `2025-11-25` alone [default: auto, or `HOLON_PROTOCOL`]",
        about: "the MCP protocol eras to test ([Both protocol eras](../protocol-eras.md))",
        default: "`auto`: each era the server speaks",
        example: "2025-11-25",
    }
    /// Whether a record run records over recordings that do not read.
    force: bool = parse_one {
        flag: Some("force"),
        value: None,
        var: Some(FORCE_VAR),
        key: None,
        builder: None,
        help: "With `--upstream record`: record over recordings that do not read (edited by hand into invalid JSON, say), which a record run otherwise refuses to start over [or `HOLON_FORCE=1`]",
        about: "record over recordings that do not read",
        default: "off: a record run refuses to start",
        example: "1",
    }
    /// Calls of each example on the measured pass.
    repeat: u32 = parse_repeat {
        flag: Some("repeat"),
        value: Some("N"),
        var: Some(REPEAT_VAR),
        key: None,
        builder: None,
        help: "Call each example N times (1 to 10000), as the gateway would, up to `--concurrency` at once, and print the measurement: the success rate (declared failures apart) with its interval, latency, cost per success, upstream tokens and spend [default: 1, or `HOLON_REPEAT`]. With `--upstream live` it measures the agent against the real upstream; under replay it shows whether the agent is deterministic",
        about: "calls of each example on the measured pass, 1 to 10,000 ([Measuring the live agent](../measuring.md))",
        default: "1",
        example: "3",
    }
    /// Where to write one JSON line per measured call.
    receipts: PathBuf = path {
        flag: Some("receipts"),
        value: Some("PATH"),
        var: Some(RECEIPTS_VAR),
        key: None,
        builder: None,
        help: "Write one JSON line per measured call as it ends: example, run, status, billed, ms and each upstream request's status and tokens [or `HOLON_RECEIPTS`]",
        about: "one JSON line per measured call",
        default: "none",
        example: "receipts.jsonl",
    }
    /// Where to write the run as one HTML page.
    report: PathBuf = path {
        flag: Some("report"),
        value: Some("PATH.html"),
        var: Some(REPORT_VAR),
        key: None,
        builder: None,
        help: "Also write the run as one HTML page to look at: the trials and their diffs, explore, the fault trials, the measurement drawn [or `HOLON_REPORT`]",
        about: "the run as one HTML page",
        default: "none",
        example: "run.html",
    }
    /// The success rate below which the run fails.
    min_success_rate: f64 = parse_rate {
        flag: Some("min-success-rate"),
        value: Some("R"),
        var: Some(MIN_SUCCESS_RATE_VAR),
        key: None,
        builder: None,
        help: "Fail the run (exit 101) when the measured success rate is below R, 0 to 1; without it, every call must end in a success or a declared failure [or `HOLON_MIN_SUCCESS_RATE`]",
        about: "the success rate the run may not fall below, 0 to 1",
        default: "none",
        example: "0.95",
    }
    /// The strict success rate below which the run fails.
    min_strict_success_rate: f64 = parse_rate {
        flag: Some("min-strict-success-rate"),
        value: Some("R"),
        var: Some(MIN_STRICT_SUCCESS_RATE_VAR),
        key: None,
        builder: None,
        help: "Fail the run (exit 101) when the strict success rate is below R, 0 to 1: the measured rate with the declared failures that come and go for one input (a declared code on some of its calls, a success on others) counted as failures, which the gateway counts apart [or `HOLON_MIN_STRICT_SUCCESS_RATE`]",
        about: "the strict success rate (declared failures that come and go counted as failures) the run may not fall below",
        default: "none",
        example: "0.9",
    }
    /// The most calls the run makes to the agent.
    max_calls: u64 = parse_max_calls {
        flag: Some("max-calls"),
        value: Some("N"),
        var: Some(MAX_CALLS_VAR),
        key: None,
        builder: None,
        help: "Make at most N calls to the agent (its upstreams may be paid): the examples' first, then explore's; what is left out is said [or `HOLON_MAX_CALLS`]",
        about: "the most calls a run makes to the agent",
        default: "no limit",
        example: "50",
    }
    /// The shard of the run this is.
    partition: Partition = parse_partition {
        flag: Some("partition"),
        value: Some("count:K/N|hash:K/N"),
        var: Some(PARTITION_VAR),
        key: None,
        builder: None,
        help: "Run one shard of N, nextest's syntax: `count:K/N` deals the examples' calls (and explore's cases, and the fault trials) round-robin, `hash:K/N` by a hash of their names; N shards, each with its own server, together make the whole run [or `HOLON_PARTITION`]",
        about: "the shard of the run this is ([CI](../ci.md#sharding))",
        default: "the whole run",
        example: "count:1/2",
    }
}

/// A key of `holon-test.toml`: `key` of `[table]`, taking a TOML value of `kind`.
const fn file(table: &'static str, key: &'static str, kind: Kind) -> Key {
    Key { table, key, kind }
}

/// The keys of `holon-test.toml` that give settings, each its entry's: what the file is read
/// with, so a key is known to the file exactly when the table gives it.
pub fn file_keys() -> &'static [Key] {
    static KEYS: std::sync::LazyLock<Vec<Key>> =
        std::sync::LazyLock::new(|| DEFS.iter().filter_map(|d| d.key).collect());
    &KEYS
}

/// The setting whose [`Layer`] field is `name`.
pub fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name == name)
}

impl Layer {
    /// The environment's layer; a value that does not parse is refused, naming its variable.
    pub fn from_env() -> Result<Layer, SettingError> {
        Layer::from_vars(|name| std::env::var(name))
    }

    /// The layer the variables `lookup` finds give: each setting's variable, parsed by its
    /// parser.
    pub(crate) fn from_vars(
        lookup: impl Fn(&str) -> Result<String, std::env::VarError>,
    ) -> Result<Layer, SettingError> {
        let mut layer = Layer::default();
        for def in &DEFS {
            layer.read_var(def, &lookup)?;
        }
        Ok(layer)
    }

    /// `def`'s variable into this layer, when `lookup` finds it set; unset or empty says
    /// nothing, on every path that reads it.
    pub(crate) fn read_var(
        &mut self,
        def: &Def,
        lookup: impl Fn(&str) -> Result<String, std::env::VarError>,
    ) -> Result<(), SettingError> {
        let Some(name) = def.var else {
            return Ok(());
        };
        let Some(text) = var(name, lookup)? else {
            return Ok(());
        };
        def.set(self, text.trim(), Path::new(""))
            .map_err(|why| SettingError::Variable {
                name: name.to_string(),
                text,
                why: Box::new(why),
            })
    }

    /// This layer, with `lower`'s values where it says nothing.
    pub fn over(mut self, lower: &Layer) -> Layer {
        for def in &DEFS {
            (def.field.merge)(&mut self, lower);
        }
        self
    }
}

/// A variable's value; `None` when it is unset or empty.
pub(crate) fn var(
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

/// The settings table of the reference page (`docs/src/reference/settings.md`), one row a
/// setting, in the order of [`DEFS`].
pub fn reference_table() -> String {
    let code = |text: String| format!("`{}`", text.replace('|', "\\|"));
    let mut table = String::from(
        "| Setting | Command line | Environment | `Harness` | `holon-test.toml` | Default |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for def in &DEFS {
        let flag = def.flag.map_or(String::new(), |flag| match def.value {
            Some(value) => code(format!("--{flag} {value}")),
            None => code(format!("--{flag}")),
        });
        let var = def.var.map_or(String::new(), |var| match def.value {
            // A flag's variable is on when it is `1`.
            None if def.flag.is_some() => code(format!("{var}=1")),
            // A setting the environment alone gives, with a value it takes.
            _ if def.flag.is_none() && def.key.is_none() => code(format!("{var}={}", def.example)),
            _ => code(var.to_string()),
        });
        let builder = def.builder.map_or(String::new(), |b| code(format!(".{b}")));
        let key = def
            .key
            .map_or(String::new(), |k| code(format!("[{}] {}", k.table, k.key)));
        table.push_str(&format!(
            "| {} | {flag} | {var} | {builder} | {key} | {} |\n",
            def.about, def.default
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

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
    fn every_setting_is_one_whole_entry_and_each_name_is_unique() {
        let (mut names, mut flags, mut vars, mut keys) = (
            BTreeSet::new(),
            BTreeSet::new(),
            BTreeSet::new(),
            BTreeSet::new(),
        );
        for def in &DEFS {
            assert!(names.insert(def.name), "`{}` twice", def.name);
            assert!(
                def.flag.is_some() || def.var.is_some() || def.key.is_some(),
                "`{}` has no flag, variable or key",
                def.name
            );
            assert!(
                !def.about.is_empty() && !def.default.is_empty(),
                "{}",
                def.name
            );
            if let Some(flag) = def.flag {
                assert!(flags.insert(flag), "`--{flag}` twice");
                assert!(!def.help.is_empty(), "`--{flag}` has no help");
                assert!(!def.help.ends_with('.'), "`--{flag}`: clap's style");
            }
            if let Some(var) = def.var {
                assert!(vars.insert(var), "`{var}` twice");
                assert!(var.starts_with("HOLON_"), "{var}");
            }
            if let Some(key) = def.key {
                assert!(keys.insert((key.table, key.key)), "`{key:?}` twice");
            }
            // Its parser takes its example into its own field, and what it writes out reads
            // back as the same value.
            let mut layer = Layer::default();
            def.set(&mut layer, def.example, Path::new(""))
                .unwrap_or_else(|e| panic!("{}: {e}", def.name));
            assert_ne!(layer, Layer::default(), "{} sets nothing", def.name);
            let text = def.get(&layer).expect("the value written out");
            let mut again = Layer::default();
            def.set(&mut again, &text, Path::new(""))
                .expect("read back");
            assert_eq!(again, layer, "{}: `{text}`", def.name);
            // The merge takes this field from below, and keeps it above.
            assert_eq!(Layer::default().over(&layer), layer, "{}", def.name);
            assert_eq!(layer.clone().over(&Layer::default()), layer, "{}", def.name);
            // The environment's layer reads it from its variable.
            if let Some(var) = def.var {
                assert_eq!(env(&[(var, def.example)]).expect(var), layer, "{var}");
                let e = env(&[(var, "\u{1}bad\u{1}")]);
                if let Err(e) = e {
                    assert!(e.to_string().starts_with(&format!("`{var}=")), "{e}");
                }
            }
        }
    }

    #[test]
    fn an_empty_path_is_refused_and_an_empty_variable_says_nothing() {
        let junit = def("junit").expect("junit");
        assert!(junit.check("").is_err());
        assert_eq!(env(&[(JUNIT_VAR, "")]).expect("unset").junit, None);
        assert_eq!(env(&[(JUNIT_VAR, "  ")]).expect("unset").junit, None);
    }
}

//! `holon-test.toml`, beside the manifest: what the tests of an agent need that the registry
//! never sees: the command that starts its server (an agent in any language), and the upstreams
//! the agent calls (a model, a paid API), each with the variable the agent reads its base URL
//! from, and what its tokens cost:
//!
//! ```toml
//! [server]
//! command = "node holon.ts"   # run in this folder with `PORT` set
//! function = "node holon.ts --function"   # optional: the adapter's function mode
//!
//! [upstreams.model]            # a name of the author's choosing
//! env = "OPENAI_BASE_URL"      # the variable the agent reads the service's base URL from
//! url = "https://api.openai.com/v1"   # optional: the real URL when the variable is unset
//! secrets = ["OPENAI_API_KEY"] # optional: variables holding credentials
//!
//! [upstreams.model.price]      # optional: in the manifest's currency, per million tokens
//! input_per_million = 0.15
//! output_per_million = 0.60
//! ```
//!
//! Every problem is reported at once, located (line, column, pointer), as the publish checks
//! report a manifest's. Which of the secrets' values a run must have, and what it scrubs of them,
//! is `secrets`.

use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::settings::{self as run_settings, Key, Setting};
use crate::tables::{find_table, loc, not_one, unknown, wrong_type};
use holon_core::check::{self, Problem, Report};
use holon_core::ids;
use holon_core::manifest::yaml::Loc;

/// The file's name, beside `holon.yaml`.
pub const FILE: &str = "holon-test.toml";

/// What `holon-test.toml` declares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestConfig {
    /// The file it was read from.
    pub path: PathBuf,
    /// How to start the agent's server, when the file says.
    pub server: Option<ServerCommand>,
    /// Its text, for the reports of problems found after it was read (a secret's value).
    pub source: String,
    /// The upstreams, in file order.
    pub upstreams: Vec<Upstream>,
    /// The run's settings the file gives (`[explore] cases = 7`), in file order: below the
    /// command line and the environment (`settings`).
    pub settings: Vec<Setting>,
}

/// `[server]`: how `holon-test` starts an agent's MCP server when no `--server-cmd` is given
/// and the agent is not a Cargo package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The command, run with `sh -c` in the manifest's folder with `PORT` set.
    pub command: String,
    /// The command that starts the adapter's function mode (the agent function alone, for the
    /// function pass), run the same way, when the file names one.
    pub function: Option<String>,
}

/// One service the agent calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Upstream {
    /// The author's name for it (`model`), which recordings are filed under.
    pub name: String,
    /// The variable the agent reads the service's base URL from (`OPENAI_BASE_URL`).
    pub env: String,
    /// The service's real URL, used when the variable is unset.
    pub url: Option<String>,
    /// Variables holding credentials: never written into a recording.
    pub secrets: Vec<Secret>,
    /// What its tokens cost (`[upstreams.NAME.price]`), when declared.
    pub price: Option<TokenPrice>,
}

/// A variable that holds a credential, and where `secrets` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The variable (`OPENAI_API_KEY`).
    pub name: String,
    /// Where its name is in `holon-test.toml`.
    pub at: Loc,
}

/// `[upstreams.NAME.price]`: what a model's tokens cost, per million, in the manifest's
/// currency (the registry's `pricing.currency`), so that a measured run can say what a call
/// spends upstream and what the author keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenPrice {
    /// The price of a million input (prompt) tokens.
    pub input_per_million: f64,
    /// The price of a million output (completion) tokens.
    pub output_per_million: f64,
}

impl TokenPrice {
    /// What `input` and `output` tokens cost at this price.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_per_million + output as f64 * self.output_per_million)
            / 1_000_000.0
    }
}

/// The fields of an upstream, for the "did you mean" of an unknown one.
const FIELDS: [&str; 4] = ["env", "url", "secrets", "price"];

/// The fields of an upstream's price.
const PRICE_FIELDS: [&str; 2] = ["input_per_million", "output_per_million"];

/// The tables of the file.
const TABLES: [&str; 4] = ["server", "upstreams", "explore", "run"];

/// `holon-test.toml` in `dir`: `Ok(None)` when there is none, the report of its problems when it
/// is refused. `keys` are the settings it may give, which the harness's table of settings names
/// (`holon_harness::command::file_keys()`); any other key of their tables is refused.
pub fn read(dir: &Path, keys: &[Key]) -> Result<Option<TestConfig>, Report> {
    let path = dir.join(FILE);
    if !path.exists() {
        return Ok(None);
    }
    let shown = if dir == Path::new(".") {
        PathBuf::from(FILE)
    } else {
        path.clone()
    };
    let bytes = check::read_manifest(&path).map_err(|e| check::unreadable(&shown, e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        check::unreadable(&shown, format!("`{}` is not UTF-8 text", shown.display()))
    })?;
    parse(&text, &shown, keys).map(Some)
}

/// Reads the text of a `holon-test.toml`; `path` names it in messages, `keys` are the settings
/// it may give (see [`read`]).
pub fn parse(text: &str, path: &Path, keys: &[Key]) -> Result<TestConfig, Report> {
    let mut problems = Vec::new();
    let mut settings = Vec::new();
    let (server, upstreams) = match DeTable::parse(text) {
        Ok(root) => read_root(text, root.get_ref(), keys, &mut problems, &mut settings),
        Err(e) => {
            let loc = e
                .span()
                .map_or(Loc { line: 1, column: 1 }, |s| loc(text, s.start));
            let message = holon_core::message::sentence(e.message());
            problems.push(Problem::new(ids::TOML_SYNTAX, "", loc, message));
            (None, Vec::new())
        }
    };
    settings.sort_by_key(|s| (s.at.line, s.at.column));
    if problems.is_empty() {
        Ok(TestConfig {
            path: path.to_path_buf(),
            server,
            source: text.to_string(),
            upstreams,
            settings,
        })
    } else {
        Err(check::file_report(path, text, problems))
    }
}

fn read_root(
    text: &str,
    root: &DeTable<'_>,
    keys: &[Key],
    problems: &mut Vec<Problem>,
    settings: &mut Vec<Setting>,
) -> (Option<ServerCommand>, Vec<Upstream>) {
    let mut upstreams = Vec::new();
    let mut server = None;
    for (key, value) in root.iter() {
        let name = key.get_ref().as_ref();
        if name == "server" {
            server = read_server(text, value, keys, problems, settings);
            continue;
        }
        if run_settings::TABLES.contains(&name) {
            run_settings::read_table(text, name, value, keys, problems, settings);
            continue;
        }
        if name != "upstreams" {
            problems.push(unknown(
                name,
                format!("/{}", holon_core::pointer::escape(name)),
                loc(text, key.span().start),
                "`holon-test.toml`",
                &TABLES,
                "the file declares `[server]`, `[upstreams.NAME]`, `[explore]` and `[run]` tables",
            ));
            continue;
        }
        let Some(table) = value.get_ref().as_table() else {
            problems.push(wrong_type(
                text,
                "/upstreams",
                value,
                "a table of upstreams",
            ));
            continue;
        };
        for (key, value) in table.iter() {
            if let Some(upstream) = read_upstream(text, key, value, problems) {
                upstreams.push(upstream);
            }
        }
    }
    let mut seen: Vec<&Upstream> = Vec::new();
    for upstream in &upstreams {
        if let Some(first) = seen.iter().find(|u| u.env == upstream.env) {
            let at = format!(
                "/upstreams/{}/env",
                holon_core::pointer::escape(&upstream.name)
            );
            problems.push(Problem::new(
                ids::INVALID_VALUE,
                at,
                find(text, &upstream.name),
                format!(
                    "upstreams `{}` and `{}` read the same variable `{}`",
                    first.name, upstream.name, upstream.env
                ),
            ));
        }
        seen.push(upstream);
    }
    (server, upstreams)
}

/// `[server]`: `command` and `function`, command lines that are not blank (`function` with a
/// `command` beside it), and the settings of the server (`startup_timeout_s`, `protocol`).
fn read_server(
    text: &str,
    value: &Spanned<DeValue<'_>>,
    keys: &[Key],
    problems: &mut Vec<Problem>,
    settings: &mut Vec<Setting>,
) -> Option<ServerCommand> {
    let Some(table) = value.get_ref().as_table() else {
        problems.push(wrong_type(
            text,
            "/server",
            value,
            "a table (`[server]` with `command = \"...\"`)",
        ));
        return None;
    };
    let before = problems.len();
    let (mut command, mut function) = (None, None);
    for (field, v) in table.iter() {
        if run_settings::read_key(text, "server", field, v, keys, problems, settings) {
            continue;
        }
        let field_name = field.get_ref().as_ref();
        let here = format!("/server/{}", holon_core::pointer::escape(field_name));
        let slot = match field_name {
            "command" => &mut command,
            "function" => &mut function,
            other => {
                let known: Vec<&str> = ["command", "function"]
                    .into_iter()
                    .chain(run_settings::keys(keys, "server"))
                    .collect();
                let has = format!("`[server]` has {}", run_settings::listed(&known));
                problems.push(unknown(
                    other,
                    here,
                    loc(text, field.span().start),
                    "`[server]`",
                    &known,
                    &has,
                ));
                continue;
            }
        };
        match v.get_ref().as_str() {
            Some(c) if !c.trim().is_empty() => *slot = Some(c.to_string()),
            Some(_) => problems.push(Problem::new(
                ids::INVALID_VALUE,
                here,
                loc(text, v.span().start),
                format!("the server's `{field_name}` is empty"),
            )),
            None => problems.push(wrong_type(text, &here, v, "a string")),
        }
    }
    if command.is_none() && problems.len() == before && (table.is_empty() || function.is_some()) {
        problems.push(
            Problem::new(
                ids::MISSING_FIELD,
                "/server",
                find_table(text, "[server]"),
                "`[server]` has no `command`",
            )
            .hint("name the command that starts the agent's MCP server, e.g. `command = \"node holon.ts\"`"),
        );
    }
    if problems.len() > before {
        return None;
    }
    command.map(|command| ServerCommand { command, function })
}

fn read_upstream(
    text: &str,
    key: &Spanned<std::borrow::Cow<'_, str>>,
    value: &Spanned<DeValue<'_>>,
    problems: &mut Vec<Problem>,
) -> Option<Upstream> {
    let name = key.get_ref().to_string();
    let at = format!("/upstreams/{}", holon_core::pointer::escape(&name));
    let before = problems.len();
    if !valid_name(&name) {
        problems.push(Problem::new(
            ids::INVALID_VALUE,
            &at,
            loc(text, key.span().start),
            format!("`{name}` is not an upstream name (letters, digits, `-` and `_`)"),
        ));
    }
    let Some(table) = value.get_ref().as_table() else {
        problems.push(wrong_type(text, &at, value, "a table (`[upstreams.NAME]`)"));
        return None;
    };
    let (mut env, mut url, mut secrets, mut price) = (None, None, Vec::new(), None);
    for (field, v) in table.iter() {
        let field_name = field.get_ref().as_ref();
        let here = format!("{at}/{}", holon_core::pointer::escape(field_name));
        match field_name {
            "env" => match v.get_ref().as_str() {
                Some(var) if valid_var(var) => env = Some(var.to_string()),
                Some(var) => problems.push(Problem::new(
                    ids::INVALID_VALUE,
                    here,
                    loc(text, v.span().start),
                    format!("`{var}` is not an environment variable's name"),
                )),
                None => problems.push(wrong_type(text, &here, v, "a string")),
            },
            "url" => match v.get_ref().as_str() {
                Some(u) => match url::Url::parse(u) {
                    Ok(parsed)
                        if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() =>
                    {
                        url = Some(u.to_string());
                    }
                    Ok(parsed) => problems.push(Problem::new(
                        ids::INVALID_VALUE,
                        here,
                        loc(text, v.span().start),
                        format!(
                            "`{u}` is not an http or https URL (scheme `{}`)",
                            parsed.scheme()
                        ),
                    )),
                    Err(e) => problems.push(Problem::new(
                        ids::INVALID_VALUE,
                        here,
                        loc(text, v.span().start),
                        format!("`{u}` does not parse as a URL: {e}"),
                    )),
                },
                None => problems.push(wrong_type(text, &here, v, "a string")),
            },
            "secrets" => match v.get_ref().as_array() {
                Some(items) => {
                    for (i, item) in items.iter().enumerate() {
                        match item.get_ref().as_str() {
                            Some(var) if valid_var(var) => secrets.push(Secret {
                                name: var.to_string(),
                                at: loc(text, item.span().start),
                            }),
                            Some(var) => problems.push(Problem::new(
                                ids::INVALID_VALUE,
                                format!("{here}/{i}"),
                                loc(text, item.span().start),
                                format!("`{var}` is not an environment variable's name"),
                            )),
                            None => problems.push(wrong_type(
                                text,
                                &format!("{here}/{i}"),
                                item,
                                "a string",
                            )),
                        }
                    }
                }
                None => problems.push(wrong_type(text, &here, v, "an array of variable names")),
            },
            "price" => price = read_price(text, &here, v, problems),
            other => {
                problems.push(unknown(
                    other,
                    here,
                    loc(text, field.span().start),
                    &format!("upstream `{name}`"),
                    &FIELDS,
                    "an upstream has `env`, and optionally `url`, `secrets` and `price`",
                ));
            }
        }
    }
    if env.is_none() && !table.iter().any(|(f, _)| f.get_ref() == "env") {
        problems.push(
            Problem::new(
                ids::MISSING_FIELD,
                &at,
                loc(text, key.span().start),
                format!("upstream `{name}` has no `env`"),
            )
            .hint("name the variable the agent reads the service's base URL from, e.g. `env = \"OPENAI_BASE_URL\"`"),
        );
    }
    if problems.len() > before {
        return None;
    }
    Some(Upstream {
        name,
        env: env?,
        url,
        secrets,
        price,
    })
}

/// `[upstreams.NAME.price]`: both prices, each a number of at least 0; every problem located.
fn read_price(
    text: &str,
    at: &str,
    value: &Spanned<DeValue<'_>>,
    problems: &mut Vec<Problem>,
) -> Option<TokenPrice> {
    let Some(table) = value.get_ref().as_table() else {
        problems.push(wrong_type(
            text,
            at,
            value,
            "a table (`[upstreams.NAME.price]`)",
        ));
        return None;
    };
    let before = problems.len();
    let (mut input, mut output) = (None, None);
    for (field, v) in table.iter() {
        let name = field.get_ref().as_ref();
        let here = format!("{at}/{}", holon_core::pointer::escape(name));
        let slot = match name {
            "input_per_million" => &mut input,
            "output_per_million" => &mut output,
            other => {
                problems.push(unknown(
                    other,
                    here,
                    loc(text, field.span().start),
                    "a price",
                    &PRICE_FIELDS,
                    "a price has `input_per_million` and `output_per_million`, in the manifest's currency",
                ));
                continue;
            }
        };
        let number = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .map(|n| n as f64),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            _ => {
                problems.push(wrong_type(text, &here, v, "a number"));
                continue;
            }
        };
        match number {
            Some(n) if n.is_finite() && n >= 0.0 => *slot = Some(n),
            _ => problems.push(
                not_one(text, here, name, v, "a price, a number of at least 0")
                    .hint("in the manifest's currency, per million tokens"),
            ),
        }
    }
    for (name, slot) in PRICE_FIELDS.iter().zip([&input, &output]) {
        let named = table.iter().any(|(f, _)| f.get_ref() == *name);
        if slot.is_none() && !named {
            problems.push(
                Problem::new(
                    ids::MISSING_FIELD,
                    at,
                    loc(text, value.span().start),
                    format!("the price has no `{name}`"),
                )
                .hint("give both `input_per_million` and `output_per_million` (0 when free)"),
            );
        }
    }
    if problems.len() > before {
        return None;
    }
    Some(TokenPrice {
        input_per_million: input?,
        output_per_million: output?,
    })
}

/// An upstream's name: letters, digits, `-` and `_` (it names recordings).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// An environment variable's name as shells write it.
fn valid_var(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Where an upstream's table starts, for a problem of the whole upstream.
fn find(text: &str, name: &str) -> Loc {
    find_table(text, &format!("[upstreams.{name}]"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::tests::parse;

    fn problems(text: &str) -> Vec<(String, String, u64, u64, String)> {
        match parse(text, Path::new("holon-test.toml")) {
            Ok(_) => Vec::new(),
            Err(report) => report
                .diagnostics
                .iter()
                .map(|d| {
                    (
                        d.check.to_string(),
                        d.pointer.clone(),
                        d.line,
                        d.column,
                        d.message.clone(),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_declared_upstream_reads_back() {
        let config = parse(
            "[upstreams.model]\nenv = \"OPENAI_BASE_URL\"\nurl = \"https://api.openai.com/v1\"\nsecrets = [\"OPENAI_API_KEY\"]\n",
            Path::new("holon-test.toml"),
        )
        .expect("accepted");
        assert_eq!(
            config.upstreams,
            [Upstream {
                name: "model".into(),
                env: "OPENAI_BASE_URL".into(),
                url: Some("https://api.openai.com/v1".into()),
                secrets: vec![Secret {
                    name: "OPENAI_API_KEY".into(),
                    at: Loc {
                        line: 4,
                        column: 12
                    },
                }],
                price: None,
            }]
        );
    }

    #[test]
    fn a_price_reads_back_in_either_form_of_table() {
        for text in [
            "[upstreams.model]\nenv = \"X\"\n[upstreams.model.price]\ninput_per_million = 0.15\noutput_per_million = 6\n",
            "[upstreams.model]\nenv = \"X\"\nprice = { input_per_million = 0.15, output_per_million = 6.0 }\n",
        ] {
            let config = parse(text, Path::new("holon-test.toml")).expect(text);
            let price = config.upstreams[0].price.expect("a price");
            assert_eq!(price.input_per_million, 0.15);
            assert_eq!(price.output_per_million, 6.0);
            assert!((price.cost(1_000_000, 500_000) - 3.15).abs() < 1e-12);
        }
    }

    #[test]
    fn a_price_with_an_unknown_field_or_a_negative_number_is_refused_where_it_is() {
        let found = problems(
            "[upstreams.model]\nenv = \"X\"\n\n[upstreams.model.price]\ninput_per_milion = 0.15\noutput_per_million = -1\n",
        );
        let ids: Vec<(&str, &str, u64, u64)> = found
            .iter()
            .map(|(c, p, l, col, _)| (c.as_str(), p.as_str(), *l, *col))
            .collect();
        assert_eq!(
            ids,
            [
                (
                    "unknown-field",
                    "/upstreams/model/price/input_per_milion",
                    5,
                    1
                ),
                (
                    "invalid-value",
                    "/upstreams/model/price/output_per_million",
                    6,
                    22
                ),
                ("missing-field", "/upstreams/model/price", 4, 1),
            ],
            "{found:?}"
        );
        assert!(found[1].4.contains("not `-1`"), "{found:?}");
        for bad in ["\"cheap\"", "nan", "inf", "-0.5", "[1]"] {
            let text = format!(
                "[upstreams.model]\nenv = \"X\"\nprice = {{ input_per_million = {bad}, output_per_million = 1 }}\n"
            );
            let found = problems(&text);
            assert_eq!(found.len(), 1, "{bad}: {found:?}");
            assert_eq!(
                found[0].1, "/upstreams/model/price/input_per_million",
                "{bad}"
            );
            assert_eq!(found[0].2, 3, "{bad}");
        }
        let found = problems("[upstreams.model]\nenv = \"X\"\nprice = 3\n");
        assert_eq!(found[0].0, "wrong-type", "{found:?}");
    }

    #[test]
    fn every_problem_is_located() {
        let found = problems(
            "[upstreams.model]\nenvv = \"OPENAI_BASE_URL\"\nurl = \"not a url\"\n\n[upstreams.other]\nenv = 3\nsecrets = [\"A-B\"]\n",
        );
        let ids: Vec<(&str, &str, u64, u64)> = found
            .iter()
            .map(|(c, p, l, col, _)| (c.as_str(), p.as_str(), *l, *col))
            .collect();
        assert_eq!(
            ids,
            [
                ("unknown-field", "/upstreams/model/envv", 2, 1),
                ("invalid-value", "/upstreams/model/url", 3, 7),
                ("missing-field", "/upstreams/model", 1, 12),
                ("wrong-type", "/upstreams/other/env", 6, 7),
                ("invalid-value", "/upstreams/other/secrets/0", 7, 12),
            ],
            "{found:?}"
        );
        assert!(found[0].4.contains("`envv`"), "{found:?}");
    }

    #[test]
    fn a_syntax_error_is_located_and_nothing_panics() {
        let found = problems("[upstreams.model\nenv = \"X\"\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "toml-syntax");
        assert_eq!(found[0].2, 1);
        for text in [
            "",
            "x",
            "[[upstreams]]",
            "upstreams = 1",
            "[upstreams]\nmodel = 1",
        ] {
            let _ = parse(text, Path::new("holon-test.toml"));
        }
    }

    #[test]
    fn a_server_command_reads_back_beside_the_upstreams() {
        let config = parse(
            "[server]\ncommand = \"node holon.ts\"\nfunction = \"node holon.ts --function\"\n\n[upstreams.model]\nenv = \"OPENAI_BASE_URL\"\n",
            Path::new("holon-test.toml"),
        )
        .expect("accepted");
        assert_eq!(
            config.server,
            Some(ServerCommand {
                command: "node holon.ts".into(),
                function: Some("node holon.ts --function".into()),
            })
        );
        // A function mode with no server beside it: the MCP pass needs one.
        let found = problems("[server]\nfunction = \"node holon.ts --function\"\n");
        assert_eq!(found[0].0, "missing-field", "{found:?}");
        assert_eq!(config.upstreams.len(), 1);
        let none = parse(
            "[upstreams.model]\nenv = \"X\"\n",
            Path::new("holon-test.toml"),
        )
        .expect("accepted");
        assert_eq!(none.server, None);
    }

    #[test]
    fn every_problem_of_the_server_table_is_located() {
        let found = problems("[server]\ncommand = \"node a.js\"\ncomand = \"x\"\nport = 3\n");
        let ids: Vec<(&str, &str, u64, u64)> = found
            .iter()
            .map(|(c, p, l, col, _)| (c.as_str(), p.as_str(), *l, *col))
            .collect();
        assert_eq!(
            ids,
            [
                ("unknown-field", "/server/comand", 3, 1),
                ("unknown-field", "/server/port", 4, 1),
            ],
            "{found:?}"
        );
        assert!(found[0].4.contains("`comand`"), "{found:?}");
        let report = parse("[server]\ncomand = \"x\"\n", Path::new("holon-test.toml")).unwrap_err();
        assert_eq!(
            report.diagnostics[0].hint.as_deref(),
            Some("did you mean `command`?")
        );

        for (text, check, pointer, line) in [
            (
                "[server]\ncommand = 3\n",
                "wrong-type",
                "/server/command",
                2,
            ),
            (
                "[server]\ncommand = \"  \"\n",
                "invalid-value",
                "/server/command",
                2,
            ),
            ("\n[server]\n", "missing-field", "/server", 2),
            ("server = \"node a.js\"\n", "wrong-type", "/server", 1),
            ("[serve]\ncommand = \"x\"\n", "unknown-field", "/serve", 1),
        ] {
            let found = problems(text);
            assert_eq!(found.len(), 1, "{text}: {found:?}");
            assert_eq!(
                (found[0].0.as_str(), found[0].1.as_str(), found[0].2),
                (check, pointer, line),
                "{text}: {found:?}"
            );
        }
        let report = parse("[serve]\ncommand = \"x\"\n", Path::new("holon-test.toml")).unwrap_err();
        assert_eq!(
            report.diagnostics[0].hint.as_deref(),
            Some("did you mean `server`?")
        );
    }

    #[test]
    fn two_upstreams_may_not_read_one_variable() {
        let found = problems("[upstreams.a]\nenv = \"X\"\n[upstreams.b]\nenv = \"X\"\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].4.contains("the same variable `X`"), "{found:?}");
    }
}

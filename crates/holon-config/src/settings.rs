//! The settings of a run that `holon-test.toml` carries: every one the Rust `Harness` builder
//! has, so an agent in any language keeps them beside its manifest:
//!
//! ```toml
//! [server]
//! startup_timeout_s = 60        # --startup-timeout
//! protocol = "2025-11-25"       # --protocol: auto, 2026-07-28 or 2025-11-25
//!
//! [explore]
//! cases = 7                     # --explore-cases
//! seed = 42                     # --explore-seed (an integer, or "0x2a")
//! differential = false          # whether explore::mcp must answer as the function does
//!
//! [run]
//! concurrency = 4               # --concurrency
//! faults = false                # --faults
//! junit = "holon-junit.xml"     # --junit, beside this file
//! ```
//!
//! Here each value is read for its TOML type and kept as the text its flag would take, with
//! where it is; the harness parses it with the parser of that flag (and of its variable), so a
//! value means one thing in every layer, and a value out of bounds is refused at its line.

use std::borrow::Cow;

use toml::Spanned;
use toml::de::DeValue;

use crate::tables::{loc, not_one, wrong_type};
use holon_core::check::Problem;
use holon_core::manifest::yaml::Loc;

/// What TOML value a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer of at least 0.
    Whole,
    /// An integer of at least 0, or a string (`"0x2a"`).
    Seed,
    /// A number of seconds, integer or float.
    Seconds,
    /// `true` or `false`.
    Switch,
    /// A string.
    Text,
}

/// One setting the file may give: the harness's table of settings gives each (its entry's
/// `key`), and the file is read with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// Its table (`explore`).
    pub table: &'static str,
    /// Its key in the table (`cases`).
    pub key: &'static str,
    /// The TOML value it takes.
    pub kind: Kind,
}

/// The tables that hold settings only.
pub const TABLES: [&str; 2] = ["explore", "run"];

/// A setting the file gives: which, its value as its flag would take it (`on` and `off` for a
/// switch), and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// Which setting.
    pub key: Key,
    /// The value, as text.
    pub text: String,
    /// Its JSON pointer in the file (`/explore/cases`).
    pub pointer: String,
    /// Where the value is.
    pub at: Loc,
}

/// The keys of `table` among `keys`.
pub(crate) fn keys<'k>(keys: &'k [Key], table: &'k str) -> impl Iterator<Item = &'static str> + 'k {
    keys.iter().filter(move |k| k.table == table).map(|k| k.key)
}

/// A table that holds settings only (`[explore]`, `[run]`): each key known, each value of its
/// kind.
pub(crate) fn read_table(
    text: &str,
    table: &str,
    value: &Spanned<DeValue<'_>>,
    known_keys: &[Key],
    problems: &mut Vec<Problem>,
    into: &mut Vec<Setting>,
) {
    let at = format!("/{table}");
    let Some(fields) = value.get_ref().as_table() else {
        problems.push(wrong_type(
            text,
            &at,
            value,
            &format!("a table (`[{table}]`)"),
        ));
        return;
    };
    for (field, v) in fields.iter() {
        if !read_key(text, table, field, v, known_keys, problems, into) {
            let name = field.get_ref().as_ref();
            let known: Vec<&str> = keys(known_keys, table).collect();
            problems.push(crate::tables::unknown(
                name,
                format!("{at}/{}", holon_core::pointer::escape(name)),
                loc(text, field.span().start),
                &format!("`[{table}]`"),
                &known,
                &format!("`[{table}]` has {}", listed(&known)),
            ));
        }
    }
}

/// `field` of `table`, when it is a setting: its value read into `into`, or its problem said;
/// `false` when the field is no setting (for the table to say what else it is).
pub(crate) fn read_key(
    text: &str,
    table: &str,
    field: &Spanned<Cow<'_, str>>,
    value: &Spanned<DeValue<'_>>,
    keys: &[Key],
    problems: &mut Vec<Problem>,
    into: &mut Vec<Setting>,
) -> bool {
    let name = field.get_ref().as_ref();
    let Some(key) = keys.iter().find(|k| k.table == table && k.key == name) else {
        return false;
    };
    let pointer = format!("/{table}/{}", holon_core::pointer::escape(name));
    let whole = |v: &DeValue<'_>| match v {
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .ok()
            .filter(|n| *n >= 0)
            .map(|n| n.to_string()),
        _ => None,
    };
    let read = match (key.kind, value.get_ref()) {
        (Kind::Whole | Kind::Seed, v @ DeValue::Integer(_)) => whole(v),
        (Kind::Seed | Kind::Text, DeValue::String(s)) => Some(s.to_string()),
        (Kind::Seconds, DeValue::Integer(i)) => Some(i.as_str().to_string()),
        (Kind::Seconds, DeValue::Float(f)) => Some(f.as_str().to_string()),
        (Kind::Switch, DeValue::Boolean(on)) => Some(if *on { "on" } else { "off" }.to_string()),
        _ => {
            let want = match key.kind {
                Kind::Whole => "a whole number",
                Kind::Seed => "a whole number, or a string (`\"0x2a\"`)",
                Kind::Seconds => "a number of seconds",
                Kind::Switch => "`true` or `false`",
                Kind::Text => "a string",
            };
            problems.push(wrong_type(text, &pointer, value, want));
            return true;
        }
    };
    match read {
        Some(text_value) => into.push(Setting {
            key: *key,
            text: text_value,
            pointer,
            at: loc(text, value.span().start),
        }),
        None => problems.push(not_one(
            text,
            pointer,
            name,
            value,
            "a whole number of at least 0",
        )),
    }
    true
}

/// `` `a`, `b` and `c` ``.
pub(crate) fn listed(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{Key, Kind};
    use crate::file::TestConfig;
    use holon_core::check::Report;
    use std::path::Path;

    /// The keys the harness's table of settings gives the file, as this crate's tests take them
    /// (the harness's own test reads the real ones through its table).
    const KEYS: [Key; 8] = [
        Key {
            table: "server",
            key: "startup_timeout_s",
            kind: Kind::Seconds,
        },
        Key {
            table: "server",
            key: "protocol",
            kind: Kind::Text,
        },
        Key {
            table: "explore",
            key: "cases",
            kind: Kind::Whole,
        },
        Key {
            table: "explore",
            key: "seed",
            kind: Kind::Seed,
        },
        Key {
            table: "explore",
            key: "differential",
            kind: Kind::Switch,
        },
        Key {
            table: "run",
            key: "concurrency",
            kind: Kind::Whole,
        },
        Key {
            table: "run",
            key: "faults",
            kind: Kind::Switch,
        },
        Key {
            table: "run",
            key: "junit",
            kind: Kind::Text,
        },
    ];

    /// `text` read with those keys.
    pub(crate) fn parse(text: &str, path: &Path) -> Result<TestConfig, Report> {
        crate::file::parse(text, path, &KEYS)
    }

    fn problems(text: &str) -> Vec<(String, String, u64, Option<String>)> {
        match parse(text, Path::new("holon-test.toml")) {
            Ok(_) => Vec::new(),
            Err(report) => (report.diagnostics.iter())
                .map(|d| {
                    (
                        d.check.to_string(),
                        d.pointer.clone(),
                        d.line,
                        d.hint.clone(),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn each_setting_reads_back_as_its_flag_would_take_it() {
        let config = parse(
            "[server]\nstartup_timeout_s = 1.5\n\n[explore]\ncases = 7\nseed = 0x2a\ndifferential = false\n\n[run]\njunit = \"j.xml\"\n",
            Path::new("holon-test.toml"),
        )
        .expect("accepted");
        let read: Vec<(&str, &str, u64)> = (config.settings.iter())
            .map(|s| (s.key.key, s.text.as_str(), s.at.line))
            .collect();
        assert_eq!(
            read,
            [
                ("startup_timeout_s", "1.5", 2),
                ("cases", "7", 5),
                ("seed", "42", 6),
                ("differential", "off", 7),
                ("junit", "j.xml", 10),
            ]
        );
        // Settings alone in `[server]`: no command, and none missing.
        assert_eq!(config.server, None);
    }

    #[test]
    fn a_wrong_type_a_negative_number_and_an_unknown_key_are_located() {
        let found = problems(
            "[explore]\ncases = \"7\"\nseeds = 1\n\n[run]\nconcurrency = -2\nfaults = \"off\"\n\n[server]\ncommand = \"x\"\nprotocl = \"auto\"\n",
        );
        let at: Vec<(&str, &str, u64)> = (found.iter())
            .map(|(c, p, l, _)| (c.as_str(), p.as_str(), *l))
            .collect();
        assert_eq!(
            at,
            [
                ("wrong-type", "/explore/cases", 2),
                ("unknown-field", "/explore/seeds", 3),
                ("invalid-value", "/run/concurrency", 6),
                ("wrong-type", "/run/faults", 7),
                ("unknown-field", "/server/protocl", 11),
            ],
            "{found:?}"
        );
        assert_eq!(found[1].3.as_deref(), Some("did you mean `seed`?"));
        assert_eq!(found[4].3.as_deref(), Some("did you mean `protocol`?"));
        let table = problems("explore = 3\n");
        assert_eq!(table[0].0, "wrong-type", "{table:?}");
        let unknown = problems("[run]\nzzz = 1\n");
        assert_eq!(
            unknown[0].3.as_deref(),
            Some("`[run]` has `concurrency`, `faults` and `junit`"),
            "{unknown:?}"
        );
    }
}

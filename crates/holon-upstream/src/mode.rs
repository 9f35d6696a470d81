//! Where the upstreams' answers come from: the recordings, the real services recorded, or the
//! real services alone; the variable and the words that choose it; and the whole command that
//! records them again, as the reports print it.

use crate::error::SettingError;
use holon_config::TestConfig;
use holon_core::message::shell_quote;

/// The variable that sets the mode (`--upstream`).
pub const MODE_VAR: &str = "HOLON_UPSTREAM";

/// What an unset secret holds in `replay`, so that SDK constructors that insist on a key start
/// without one.
pub const PLACEHOLDER: &str = "holon-test-replay-no-key";

/// Where the upstreams' answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The recordings; no network.
    Replay,
    /// The real services, whose answers are written down.
    Record,
    /// The real services; nothing is written, and examples are judged as a paying caller would
    /// see them.
    Live,
}

impl Mode {
    /// How the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Replay => "replay",
            Mode::Record => "record",
            Mode::Live => "live",
        }
    }
}

/// `--upstream MODE` or `HOLON_UPSTREAM`: `replay`, `record` or `live`.
pub fn parse_mode(text: &str) -> Result<Mode, SettingError> {
    match text.trim() {
        "replay" => Ok(Mode::Replay),
        "record" => Ok(Mode::Record),
        "live" => Ok(Mode::Live),
        other => Err(SettingError::Mode(other.to_string())),
    }
}

/// The command that records the upstreams again, whole, as a report prints it: the variables it
/// needs first (each secret, and the base URL of an upstream `holon-test.toml` gives no `url`
/// for) as `NAME=...`, then the run's command with `--upstream record --bless`.
#[derive(Debug, Clone)]
pub struct Refresh {
    line: String,
}

impl Refresh {
    /// The refresh of `command` (`cargo holon-test`, or a `--server-cmd` line), whose upstreams
    /// `config` declares.
    pub fn new(command: &str, config: &TestConfig) -> Refresh {
        let mut vars: Vec<&str> = Vec::new();
        for u in &config.upstreams {
            if u.url.is_none() && !vars.contains(&u.env.as_str()) {
                vars.push(&u.env);
            }
        }
        for u in &config.upstreams {
            for s in &u.secrets {
                if !vars.contains(&s.name.as_str()) {
                    vars.push(&s.name);
                }
            }
        }
        let mut line: String = vars.iter().map(|v| format!("{v}=... ")).collect();
        // The mode right after the command's name, so the line reads the same for a Rust agent
        // and for `--server-cmd`.
        match command.strip_prefix("cargo holon-test") {
            Some(rest) => {
                line.push_str(&format!("cargo holon-test --upstream record --bless{rest}"))
            }
            None => line.push_str(&format!("{command} --upstream record --bless")),
        }
        Refresh { line }
    }

    /// The command that records every example and explore again.
    pub fn whole(&self) -> &str {
        &self.line
    }

    /// The command that records one example again (libtest's filter after `--`).
    pub fn one(&self, example: &str) -> String {
        format!("{} -- {}", self.line, shell_quote(example))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refresh_names_the_variables_and_the_mode_first() {
        let config = holon_config::parse(
            "[upstreams.model]\nenv = \"OPENAI_BASE_URL\"\nurl = \"https://api.openai.com/v1\"\nsecrets = [\"OPENAI_API_KEY\"]\n\n[upstreams.search]\nenv = \"SEARCH_URL\"\nsecrets = [\"SEARCH_KEY\", \"OPENAI_API_KEY\"]\n",
            std::path::Path::new("holon-test.toml"),
            &[],
        )
        .unwrap();
        let refresh = Refresh::new("cargo holon-test", &config);
        assert_eq!(
            refresh.whole(),
            "SEARCH_URL=... OPENAI_API_KEY=... SEARCH_KEY=... cargo holon-test --upstream record --bless"
        );
        assert_eq!(
            refresh.one("it's an outage"),
            format!("{} -- 'it'\\''s an outage'", refresh.whole())
        );
        let python = Refresh::new(
            "cargo holon-test --manifest holon.yaml --server-cmd 'python3 a.py'",
            &config,
        );
        assert!(python.whole().ends_with(
            "cargo holon-test --upstream record --bless --manifest holon.yaml --server-cmd 'python3 a.py'"
        ));
    }

    #[test]
    fn modes_parse() {
        assert_eq!(parse_mode("record"), Ok(Mode::Record));
        assert!(
            parse_mode("recrod")
                .unwrap_err()
                .to_string()
                .contains("`recrod`")
        );
    }
}

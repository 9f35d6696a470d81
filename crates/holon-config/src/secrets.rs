//! The secrets of a run: the variables `holon-test.toml` names under an upstream's `secrets`,
//! which values a run must have (`Need`), which are too short to scrub safely
//! (`SHORTEST_SECRET`), and [`Secrets`], the values of a run, which every output of the kit is
//! scrubbed of: recordings, `holon.yaml` under `--bless`, reports, JUnit and annotations.

use crate::file::TestConfig;
use holon_core::check::{self, Problem, Report};
use holon_core::ids;

/// The fewest characters a secret's value may have. A shorter value is found in ordinary text
/// (a word, a number): scrubbing it would rewrite what is no secret, and not scrubbing it would
/// leave the secret wherever it appears.
pub const SHORTEST_SECRET: usize = 8;

/// What a run needs of the secrets' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Every declared secret set and long enough to scrub: `--upstream record` calls the real
    /// services with them and writes what they answer.
    Every,
    /// Those that are set long enough to scrub: `--upstream live` calls the real services and
    /// prints what the agent answers.
    Set,
    /// Nothing: a value set and long enough is scrubbed from what the run prints; a shorter one
    /// is no key the run uses (replay answers without one).
    Nothing,
}

/// The values of a run's secrets, each with the marker that takes its place
/// (`<secret:NAME>`), longest first, so that a secret holding another is scrubbed whole. It
/// never shows a value: `Debug` names the variables only.
#[derive(Clone, Default)]
pub struct Secrets(Vec<Held>);

#[derive(Clone)]
struct Held {
    name: String,
    value: String,
    marker: String,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Secrets")
            .field(&self.0.iter().map(|h| h.name.as_str()).collect::<Vec<_>>())
            .finish()
    }
}

impl Secrets {
    /// The secrets `config` declares, each value looked up with `lookup` (the environment), or
    /// the report of every problem `need` finds, located where `secrets` names the variable.
    /// A report names a variable, never its value; `record` is the command that records, for
    /// the hint of a secret that is unset.
    pub fn read(
        config: &TestConfig,
        need: Need,
        record: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Secrets, Report> {
        let mut held: Vec<Held> = Vec::new();
        let mut problems = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for upstream in &config.upstreams {
            for (i, secret) in upstream.secrets.iter().enumerate() {
                if !seen.insert(secret.name.as_str()) {
                    continue;
                }
                let at = format!(
                    "/upstreams/{}/secrets/{i}",
                    holon_core::pointer::escape(&upstream.name)
                );
                let value = lookup(&secret.name).filter(|v| !v.is_empty());
                let Some(value) = value else {
                    if need == Need::Every {
                        problems.push(
                            Problem::new(
                                ids::SECRET_UNSET,
                                at,
                                secret.at,
                                format!(
                                    "`{}` is unset or empty: `--upstream record` calls upstream `{}` with it, and records nothing without it",
                                    secret.name, upstream.name
                                ),
                            )
                            .hint(format!("set it for the run: `{record}`")),
                        );
                    }
                    continue;
                };
                let length = value.chars().count();
                if length < SHORTEST_SECRET {
                    if need != Need::Nothing {
                        problems.push(
                            Problem::new(
                                ids::SECRET_TOO_SHORT,
                                at,
                                secret.at,
                                format!(
                                    "the value of `{}` is {length} character{} long: too short to scrub safely (a secret has at least {SHORTEST_SECRET}: a shorter value is found in ordinary text)",
                                    secret.name,
                                    if length == 1 { "" } else { "s" }
                                ),
                            )
                            .hint("set the real credential; a service that takes any key takes a longer one too"),
                        );
                    }
                    continue;
                }
                held.push(Held {
                    marker: format!("<secret:{}>", secret.name),
                    name: secret.name.clone(),
                    value,
                });
            }
        }
        if !problems.is_empty() {
            return Err(check::file_report(&config.path, &config.source, problems));
        }
        Ok(Secrets::sorted(held))
    }

    /// Secrets with these names and values, taken as they are (no rule applied): for tests, and
    /// for a tool that checked them itself.
    pub fn given<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Secrets {
        let held = pairs
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| Held {
                name: name.to_string(),
                value: value.to_string(),
                marker: format!("<secret:{name}>"),
            })
            .collect();
        Secrets::sorted(held)
    }

    fn sorted(mut held: Vec<Held>) -> Secrets {
        held.sort_by_key(|h| std::cmp::Reverse(h.value.len()));
        Secrets(held)
    }

    /// Whether there is no secret to scrub.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the variable `name` has a value here.
    pub fn holds(&self, name: &str) -> bool {
        self.0.iter().any(|h| h.name == name)
    }

    /// Each value and its marker, longest first: for the scrubbers of structured data.
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|h| (h.value.as_str(), h.marker.as_str()))
    }

    /// The variable whose value `text` holds, if any.
    pub fn name_in(&self, text: &str) -> Option<&str> {
        (self.0.iter())
            .find(|h| text.contains(h.value.as_str()))
            .map(|h| h.name.as_str())
    }

    /// `text` with every secret's value replaced by its marker (borrowed when it holds none).
    pub fn scrub<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for h in &self.0 {
            if out.contains(h.value.as_str()) {
                out = std::borrow::Cow::Owned(out.replace(h.value.as_str(), &h.marker));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::tests::parse;
    use std::path::Path;

    fn config(text: &str) -> TestConfig {
        parse(text, Path::new("holon-test.toml")).expect("accepted")
    }

    #[test]
    fn a_record_run_needs_every_secret_and_each_long_enough_never_showing_a_value() {
        let config = config(
            "[upstreams.model]\nenv = \"BASE\"\nsecrets = [\"KEY\", \"ORG\"]\n\n[upstreams.other]\nenv = \"OTHER\"\nsecrets = [\"TOKEN\"]\n",
        );
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                (pairs.iter())
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let refused = Secrets::read(
            &config,
            Need::Every,
            "KEY=... ORG=... TOKEN=... cargo holon-test --upstream record --bless",
            env(&[("KEY", "x"), ("ORG", "")]),
        )
        .expect_err("refused");
        let found: Vec<(&str, &str, u64, u64)> = (refused.diagnostics.iter())
            .map(|d| (d.check, d.pointer.as_str(), d.line, d.column))
            .collect();
        assert_eq!(
            found,
            [
                ("secret-too-short", "/upstreams/model/secrets/0", 3, 12),
                ("secret-unset", "/upstreams/model/secrets/1", 3, 19),
                ("secret-unset", "/upstreams/other/secrets/0", 7, 12),
            ]
        );
        let text = holon_core::check::render_human(&refused, false);
        assert!(text.contains("is 1 character long: too short"), "{text}");
        assert!(
            text.contains("set it for the run: `KEY=... ORG=... TOKEN=... cargo holon-test --upstream record --bless`"),
            "{text}"
        );
        // Live needs only what is set to be long enough; replay needs nothing.
        let live = Secrets::read(&config, Need::Set, "", env(&[("KEY", "short")]));
        assert_eq!(live.expect_err("refused").diagnostics.len(), 1);
        let replay = Secrets::read(&config, Need::Nothing, "", env(&[("KEY", "short")]))
            .expect("replay takes anything");
        assert!(replay.is_empty() && !replay.holds("KEY"));
        let fine = Secrets::read(
            &config,
            Need::Every,
            "",
            env(&[
                ("KEY", "sk-a-long-key"),
                ("ORG", "org-12345678"),
                ("TOKEN", "tok-12345678"),
            ]),
        )
        .expect("every secret set");
        assert_eq!(
            format!("{fine:?}"),
            "Secrets([\"KEY\", \"ORG\", \"TOKEN\"])"
        );
        assert_eq!(fine.name_in("a sk-a-long-key b"), Some("KEY"));
        assert_eq!(fine.name_in("org-12345678"), Some("ORG"));
    }

    #[test]
    fn each_value_is_scrubbed_whole_and_a_text_without_one_is_left_as_it_is() {
        let two = Secrets::given([("KEY", "sk-a-long-key"), ("ORG", "org-12345678")]);
        let nested = Secrets::given([("SHORT", "abcdefgh"), ("LONG", "xx-abcdefgh-yy")]);
        for (secrets, text, want) in [
            (
                &two,
                "sk-a-long-key and org-12345678",
                "<secret:KEY> and <secret:ORG>",
            ),
            // A secret that holds another is scrubbed whole.
            (
                &nested,
                "1 xx-abcdefgh-yy 2 abcdefgh",
                "1 <secret:LONG> 2 <secret:SHORT>",
            ),
            (&nested, "nothing", "nothing"),
            (&Secrets::default(), "sk-a-long-key", "sk-a-long-key"),
        ] {
            let got = secrets.scrub(text);
            assert_eq!(got, want);
            // Text with no secret is not copied.
            assert_eq!(matches!(got, std::borrow::Cow::Borrowed(_)), text == want);
        }
    }
}

//! The layer of settings `holon-test.toml` gives (`[explore] cases = 7`), below the command line,
//! the environment and the `Harness` builder: each value parsed by the parser of the flag it
//! stands for, so it means what the flag means, and a value the flag would refuse is refused at
//! its line of the file.

use std::path::Path;

use crate::defs::{DEFS, Layer};
use crate::error::SettingError;
use holon_config::TestConfig;
use holon_config::settings::Setting;
use holon_core::check::{Problem, Report, file_report};
use holon_core::ids;

/// The layer of the file beside `manifest`, empty when there is none or it does not read (the
/// run itself says why, at its start).
pub fn beside(manifest: &Path) -> Layer {
    let config = holon_config::read(
        &holon_core::manifest::folder_of(manifest),
        crate::defs::file_keys(),
    );
    layer(config.ok().flatten().as_ref()).unwrap_or_default()
}

/// The file's layer: empty when there is no file; the report of every value that does not
/// parse, each at its line, when one does not.
pub fn layer(config: Option<&TestConfig>) -> Result<Layer, Report> {
    let mut layer = Layer::default();
    let Some(config) = config else {
        return Ok(layer);
    };
    // A relative path is beside the file, wherever the command was run from.
    let dir = config.path.parent().unwrap_or(Path::new(""));
    let mut problems = Vec::new();
    for setting in &config.settings {
        if let Err(why) = set(&mut layer, setting, dir) {
            problems.push(Problem::new(
                ids::INVALID_VALUE,
                setting.pointer.clone(),
                setting.at,
                format!(
                    "`{} = {}` in `[{}]`: {why}",
                    setting.key.key, setting.text, setting.key.table
                ),
            ));
        }
    }
    match problems.is_empty() {
        true => Ok(layer),
        false => Err(file_report(&config.path, &config.source, problems)),
    }
}

/// One setting into the layer, parsed by the parser of its entry, as its flag is.
fn set(layer: &mut Layer, setting: &Setting, dir: &Path) -> Result<(), SettingError> {
    let (table, key) = (setting.key.table, setting.key.key);
    match DEFS.iter().find(|d| d.key == Some(setting.key)) {
        Some(def) => def.set(layer, &setting.text, dir),
        None => Err(SettingError::Unread(format!("{table}.{key}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::era;
    use std::path::PathBuf;

    fn read(text: &str) -> Result<Layer, Vec<(String, u64, String)>> {
        let config = holon_config::parse(
            text,
            Path::new("dir/holon-test.toml"),
            crate::defs::file_keys(),
        )
        .map_err(|r| vec![(r.diagnostics[0].pointer.clone(), 0, String::new())])?;
        layer(Some(&config)).map_err(|r| {
            (r.diagnostics.iter())
                .map(|d| (d.pointer.clone(), d.line, d.message.clone()))
                .collect()
        })
    }

    #[test]
    fn every_setting_the_file_may_give_reaches_the_layer() {
        let text = "[server]\nstartup_timeout_s = 2.5\nprotocol = \"2025-11-25\"\n\n[explore]\ncases = 7\nseed = \"0x2a\"\ndifferential = false\n\n[run]\nconcurrency = 3\nfaults = false\njunit = \"out/j.xml\"\n";
        let layer = read(text).expect("accepted");
        assert_eq!(layer.startup, Some(std::time::Duration::from_millis(2500)));
        assert_eq!(layer.protocol, Some(era::Protocol::Only(era::Era::Legacy)));
        assert_eq!(layer.explore_cases, Some(7));
        assert_eq!(layer.explore_seed, Some(42));
        assert_eq!(layer.explore_differential, Some(false));
        assert_eq!(layer.concurrency, Some(3));
        assert_eq!(layer.faults, Some(false));
        assert_eq!(layer.junit, Some(PathBuf::from("dir/out/j.xml")));
        // Every key the file reads is one this layer sets.
        for key in crate::defs::file_keys() {
            let value = match key.key {
                "protocol" => "\"auto\"",
                "junit" => "\"j.xml\"",
                "seed" | "cases" | "concurrency" | "startup_timeout_s" => "1",
                _ => "true",
            };
            let text = format!("[{}]\n{} = {value}\n", key.table, key.key);
            assert!(read(&text).is_ok(), "{text}: {:?}", read(&text).err());
        }
    }

    #[test]
    fn a_value_its_flag_refuses_is_refused_at_its_line() {
        let found = read("[explore]\ncases = 100001\n\n[run]\nconcurrency = 0\n\n[server]\nprotocol = \"2024\"\nstartup_timeout_s = 0\n")
            .expect_err("refused");
        let at: Vec<(&str, u64)> = found.iter().map(|(p, l, _)| (p.as_str(), *l)).collect();
        assert_eq!(
            at,
            [
                ("/explore/cases", 2),
                ("/run/concurrency", 5),
                ("/server/protocol", 8),
                ("/server/startup_timeout_s", 9),
            ],
            "{found:?}"
        );
        assert!(
            found[0].2.starts_with("`cases = 100001` in `[explore]`: "),
            "{found:?}"
        );
    }
}

//! The run command's settings as flags, built from the harness's table of settings
//! (`command::DEFS`): each entry's long flag, value name, help and parser, so a setting is
//! declared once for the command line, the environment, `holon-test.toml` and the reference.

use std::path::Path;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use holon_harness::command::{CommandLine, DEFS, Def};

/// The settings the run command's flags give, and `--watch`.
#[derive(Debug, Default)]
pub(crate) struct RunFlags {
    /// What the flags say, above the environment's layer.
    pub(crate) layer: CommandLine,
    /// `--watch`: run again after each change.
    pub(crate) watch: bool,
}

/// The help of a setting's flag that the command line declares itself, beside the flags it
/// goes with (`--url`, beside `--server-cmd`).
pub(crate) fn help(name: &str) -> &'static str {
    DEFS.iter().find(|d| d.name == name).map_or("", |d| d.help)
}

/// The flag of `def`, checked by its parser as clap reads it: a value it refuses is a usage
/// error (2) in the parser's words.
fn arg(def: &'static Def, flag: &'static str) -> Arg {
    let arg = Arg::new(def.name).long(flag).help(def.help);
    match def.value {
        None => arg.action(ArgAction::SetTrue),
        Some(value) => arg
            .value_name(value)
            .allow_negative_numbers(true)
            .value_parser(move |text: &str| def.check(text).map(|()| text.to_string())),
    }
}

/// `--watch`, which is no setting: how the run is repeated.
fn watch() -> Arg {
    Arg::new("watch")
        .long("watch")
        .action(ArgAction::SetTrue)
        .help("Run, then run again after each change to the agent's folder (`holon.yaml`, `holon-test.toml`, the recordings, the source); `q` then Enter, or Ctrl-C, to stop")
        .conflicts_with_all(["bless", "force"])
}

impl Args for RunFlags {
    fn augment_args(mut cmd: Command) -> Command {
        for def in &DEFS {
            let Some(flag) = def.flag else { continue };
            // A flag the command declares beside the flags it goes with.
            if cmd.get_arguments().any(|a| a.get_long() == Some(flag)) {
                continue;
            }
            // `--watch` sits before the last setting, where the help has always listed it.
            if flag == "partition" {
                cmd = cmd.arg(watch());
            }
            cmd = cmd.arg(arg(def, flag));
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for RunFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = RunFlags {
            layer: CommandLine::default(),
            watch: matches.try_get_one::<bool>("watch").ok().flatten() == Some(&true),
        };
        for def in &DEFS {
            // A flag that takes no value turns its setting on, as its variable's `1` does.
            let text = match def.value {
                None => (matches.try_get_one::<bool>(def.name).ok().flatten() == Some(&true))
                    .then(|| "1".to_string()),
                Some(_) => matches
                    .try_get_one::<String>(def.name)
                    .ok()
                    .flatten()
                    .cloned(),
            };
            if let Some(text) = text {
                def.set(&mut flags.layer, &text, Path::new(""))
                    .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?;
            }
        }
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = RunFlags::from_arg_matches(matches)?;
        Ok(())
    }
}

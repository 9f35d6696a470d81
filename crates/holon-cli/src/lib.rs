//! The command line of holon-kit, `cargo holon-test` and `holon-test`: parsing, printing to the
//! user, and the exit code of each subcommand (the harness's `exit` codes), plus the templates
//! of `new` (`scaffold`). Only this crate and the test target it runs decide how the process
//! ends.
//!
//! An implementation crate of holon-kit: the binaries `cargo-holon-test` and `holon-test` (in
//! `holon-kit`, so `cargo install holon-kit` installs both; the wheel and the npm packages carry
//! `holon-test`) are each one call to [`main`]. Its items follow holon-kit's version and make no
//! promise of their own.

mod against;
mod call;
mod explain;
mod flags;
mod invocation;
mod report;
mod scaffold;
mod types;
mod watch;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use holon_core::check;
use holon_core::manifest::folder_of;
use holon_harness::command::{self, CommandLine};
use holon_harness::exit::{self, FAILED, OK, REFUSED, USAGE};
use invocation::Invocation;

#[derive(Parser, Debug)]
#[command(
    name = "cargo holon-test",
    bin_name = "cargo holon-test",
    version,
    about = "Check a Holon agent's manifest as the registry would, then test every example",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The manifest (default: the nearest holon.yaml from the current folder upward).
    #[arg(long, value_name = "PATH")]
    manifest: Option<PathBuf>,
    /// Test any MCP server, in any language: the command runs in the manifest's folder with
    /// `PORT` set; only the publish checks and the MCP pass run, no cargo. Without it, outside
    /// a Cargo package, `[server] command` in `holon-test.toml` names the command.
    #[arg(long, value_name = "CMD")]
    server_cmd: Option<String>,
    #[arg(long, value_name = "URL", value_parser = command::parse_url, conflicts_with = "server_cmd", help = flags::help("server_url"))]
    url: Option<String>,
    #[command(flatten)]
    reach: call::Reach,
    /// Every setting of the run (`--bless`, `--concurrency N`, ...) and `--watch`, from the
    /// harness's table of settings.
    #[command(flatten)]
    run: flags::RunFlags,
    /// Arguments for the test harness (libtest's: filters, `--exact`, `--list`, `--format json`,
    /// `--test-threads`).
    #[arg(last = true, value_name = "LIBTEST ARGS")]
    libtest: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the publish checks only.
    Check {
        /// A holon.yaml, or a folder holding one (default: the current folder, then upward).
        path: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Compare with the published manifest and say which version the changes need: a path
        /// to its holon.yaml, or a git revision (`v1.2.0`, `HEAD~1`, `origin/main`, or
        /// `REV:path/holon.yaml`; a revision alone reads the manifest at the same path in it).
        #[arg(long, value_name = "OLD")]
        against: Option<String>,
    },
    /// Print a JSON Schema (2020-12) of `holon.yaml` itself, for editors.
    Schema,
    /// Write the types of the manifest's `interface` for the agent's language, beside it:
    /// `holon.types.ts` (`Input`, `Output`, `ErrorCode`, `Ctx`) or `holon_types.py`
    /// (`TypedDict`s, a `Literal` of the codes, `Ctx`).
    Types {
        /// A holon.yaml, or a folder holding one (default: the current folder, then upward).
        path: Option<PathBuf>,
        /// The language [default: by the package file beside the manifest: `package.json`
        /// TypeScript, `pyproject.toml` Python].
        #[arg(long, value_enum)]
        lang: Option<types::Language>,
    },
    /// Explain a diagnostic id: what the registry or the gateway does, an example, the fix
    ///
    /// The id as a report prints it (`unknown-field`, `warning[string-unbounded]`), in any
    /// case. With no id, or `--list`, every id, one a line.
    Explain {
        /// The id, in any case; a report's `error[ID]` or `warning[ID]` is taken as it is.
        id: Option<String>,
        /// List every id, one a line: the id, its severity, what it means.
        #[arg(long)]
        list: bool,
    },
    /// Call the agent once with one input, judged as the gateway would judge it.
    ///
    /// The gate first (`rejected_input`: nothing is sent), then one call: its status, `billed`,
    /// the time and the upstream requests; `--save NAME` makes it an example.
    Call(call::Call),
    /// Read saved receipts as one run: their measurement, or with `--out` the page.
    ///
    /// Several files (the shards of a run) are read as one run; `--out` writes the page
    /// `--report` writes, without it the `measure:` lines are printed.
    Report(report::Report),
    /// Scaffold an agent that passes its own tests.
    New {
        /// The agent's name: the package, the manifest `name` and (snake_case) the tool.
        name: String,
        /// The language of the agent: TypeScript and Python serve it with the official MCP
        /// SDK, Rust with holon-kit's runtime.
        #[arg(long, value_enum, default_value_t = Lang::Rust)]
        lang: Lang,
        /// Where to create it (default: `./NAME`).
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
        /// A Rust agent depends on a local checkout of holon-kit instead of the published crate
        /// [or `HOLON_KIT_PATH`].
        #[arg(long, value_name = "PATH")]
        kit_path: Option<PathBuf>,
        /// An agent with a model behind it (in any language: Rust on `reqwest`, TypeScript and
        /// Python on the official `openai` SDK): an OpenAI-compatible chat API declared in
        /// `holon-test.toml`, its answers recorded in `recordings/`, so its tests run offline
        /// and without a key.
        #[arg(long)]
        model: bool,
    },
}

/// The languages `new` writes an agent in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Lang {
    Typescript,
    Python,
    Rust,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Lang::Typescript => "typescript",
            Lang::Python => "python",
            Lang::Rust => "rust",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
    /// GitHub Actions workflow commands, one line a diagnostic.
    Github,
}

/// Runs the command line and returns the process's exit code.
pub fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let argv = args.clone();
    let invocation = Invocation::detect(&args, |name| std::env::var_os(name));
    // `cargo holon-test ...` runs us as `cargo-holon-test holon-test ...`.
    if invocation == Invocation::Cargo && args.get(1).is_some_and(|a| a == "holon-test") {
        args.remove(1);
    }
    // `--version` says the program; the usage lines, the command as the author typed it.
    let command = Cli::command()
        .name(invocation.program())
        .bin_name(invocation.name());
    let cli = match command
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { USAGE } else { OK });
        }
    };
    ExitCode::from(match &cli.command {
        Some(Command::Check {
            path,
            format,
            against,
        }) => run_check(invocation, path.as_deref(), *format, against.as_deref()),
        Some(Command::Types { path, lang }) => match find_manifest(path.as_deref()) {
            Ok(manifest) => types::run(&manifest, *lang, invocation.name(), &|report| {
                print_report(invocation, report)
            }),
            Err(message) => {
                eprintln!("error: {message}");
                REFUSED
            }
        },
        Some(Command::Call(call)) => {
            call.run(invocation.name(), find_manifest(call.manifest.as_deref()))
        }
        Some(Command::Report(report)) => {
            report.run(invocation.name(), find_manifest(report.manifest.as_deref()))
        }
        Some(Command::Schema) => {
            stdout(&format!("{}\n", scaffold::manifest_schema()));
            OK
        }
        Some(Command::Explain { id, list }) => {
            match explain::answer(id.as_deref(), *list, invocation.name()) {
                Ok(text) => {
                    stdout(&text);
                    OK
                }
                Err(error) => {
                    eprintln!("{error}");
                    USAGE
                }
            }
        }
        Some(Command::New {
            name,
            lang,
            path,
            kit_path,
            model,
        }) => run_new(
            invocation,
            name,
            *lang,
            path.as_deref(),
            kit_path.as_deref(),
            *model,
        ),
        None if cli.run.watch => watch::watch(
            find_manifest(cli.manifest.as_deref()),
            [
                &cli.run.layer.junit,
                &cli.run.layer.receipts,
                &cli.run.layer.report,
            ],
            &argv,
            cli.run.layer.upstream,
        ),
        None => run_and_bless(invocation, &cli),
    })
}

fn run_new(
    invocation: Invocation,
    name: &str,
    lang: Lang,
    path: Option<&Path>,
    kit_path: Option<&Path>,
    model: bool,
) -> u8 {
    use scaffold::{Kind, KitSource, create, names};
    // What the Rust template reads, refused rather than ignored.
    if lang != Lang::Rust && kit_path.is_some() {
        eprintln!(
            "error: `--kit-path` is for a Rust agent, not with `--lang {}`",
            lang.name()
        );
        return USAGE;
    }
    let names = match names(name, lang == Lang::Rust) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return REFUSED;
        }
    };
    let dir = path.map_or_else(|| PathBuf::from(name), Path::to_path_buf);
    let version = env!("CARGO_PKG_VERSION").to_string();
    let kit_path = kit_path
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("HOLON_KIT_PATH").map(PathBuf::from))
        .filter(|_| lang == Lang::Rust);
    let kit = match kit_path {
        Some(p) => match std::fs::canonicalize(&p) {
            Ok(abs) if abs.join("Cargo.toml").is_file() => KitSource::Path(abs),
            _ => {
                eprintln!(
                    "error: `--kit-path {}` is not a holon-kit checkout (no Cargo.toml there)",
                    p.display()
                );
                return REFUSED;
            }
        },
        None => KitSource::Version(version),
    };
    let kind = match (lang, model) {
        (Lang::Typescript, false) => Kind::TypeScript,
        (Lang::Typescript, true) => Kind::TypeScriptModel,
        (Lang::Python, false) => Kind::Python,
        (Lang::Python, true) => Kind::PythonModel,
        (Lang::Rust, true) => Kind::Model,
        (Lang::Rust, false) => Kind::Plain,
    };
    match create(&dir, &names, &kit, kind) {
        Ok(_) => {
            eprintln!("created agent `{}` in `{}`", names.name, dir.display());
            eprintln!("next:");
            eprintln!("  cd {}", dir.display());
            match lang {
                Lang::Typescript => eprintln!("  npm install && npm test"),
                Lang::Python => eprintln!("  uv run holon-test"),
                Lang::Rust => eprintln!("  {}", invocation.name()),
            }
            OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            REFUSED
        }
    }
}

/// A test run; one that blesses ends by saying again which types files the manifest left
/// out of date (a blessed interface change needs `types` run again too).
fn run_and_bless(invocation: Invocation, cli: &Cli) -> u8 {
    let code = run_tests(invocation, cli);
    if blesses(cli)
        && let Ok(manifest) = find_manifest(cli.manifest.as_deref())
    {
        types::warn_stale(&manifest, invocation.name());
    }
    code
}

fn run_tests(invocation: Invocation, cli: &Cli) -> u8 {
    // Settings that cannot go together (`--repeat 3 --bless`) are refused where every
    // setting is resolved, flag, variable or file alike, with one exit code.
    let manifest = match find_manifest(cli.manifest.as_deref()) {
        Ok(p) => p,
        Err(message) => {
            eprintln!("error: {message}");
            return REFUSED;
        }
    };
    let report = command::checks(&manifest, blesses(cli));
    if !report.accepted() || report.warnings() > 0 {
        print_report(invocation, &report);
    }
    // A CI job's report says why nothing ran: one failing `testcase` per error.
    let junit = || command::junit_path(cli.run.layer.junit.as_deref());
    if !report.accepted() {
        if let Some(path) = junit()
            && let Err(code) = command::junit_refused(&path, &manifest, &report, invocation.name())
        {
            return code.max(REFUSED);
        }
        return REFUSED;
    }
    types::warn_stale(&manifest, invocation.name());
    let config = match command::read_config(&folder_of(&manifest)) {
        Ok(config) => config,
        Err(config) => {
            print_report(invocation, &config);
            if let Some(path) = junit()
                && let Err(code) =
                    command::junit_refused(&path, &manifest, &config, invocation.name())
            {
                return code.max(REFUSED);
            }
            return REFUSED;
        }
    };
    if let Some(url) = &cli.url {
        return run_url(invocation, &manifest, url, cli);
    }
    let (server, replay) = match &cli.server_cmd {
        Some(server) => {
            let replay = format!(
                "{} --manifest {} --server-cmd {}",
                invocation.name(),
                command::shell_quote(&manifest.display().to_string()),
                command::shell_quote(server)
            );
            ((server.clone(), None), replay)
        }
        // A Cargo package is tested by its test target, both passes; any other agent by the
        // server command its `holon-test.toml` names.
        None if folder_of(&manifest).join("Cargo.toml").is_file() => {
            return cargo_test(&manifest, cli);
        }
        None => match config.and_then(|c| c.server) {
            Some(server) => {
                let mut replay = invocation.name().to_string();
                if cli.manifest.is_some() {
                    replay.push_str(" --manifest ");
                    replay.push_str(&command::shell_quote(&manifest.display().to_string()));
                }
                ((server.command, server.function), replay)
            }
            None => {
                eprintln!(
                    "error: no server to test: `{}` is not in a Cargo package and `{}` names no server command\n  = hint: add to `{}`:\n\n    [server]\n    command = \"node agent.ts\"   # what starts the agent's MCP server, run with `PORT` set\n\n  or pass `--server-cmd \"CMD\"`",
                    manifest.display(),
                    holon_config::FILE,
                    folder_of(&manifest).join(holon_config::FILE).display(),
                );
                return REFUSED;
            }
        },
    };
    let args = match libtest_arguments(cli) {
        Ok(args) => args,
        Err(code) => return code,
    };
    // The warnings were printed above.
    let words = command::Words {
        program: invocation.name().to_string(),
        replay,
    };
    command::run_server_command(&manifest, server, command_line(cli), words, &args)
}

/// A `--url` run: each header's `${VAR}`s read (an unset one named, before any call), then the
/// MCP pass against the server at `url`.
fn run_url(invocation: Invocation, manifest: &Path, url: &str, cli: &Cli) -> u8 {
    let (headers, ca_cert) = match cli.reach.read() {
        Ok(remote) => remote,
        Err(code) => return code,
    };
    let args = match libtest_arguments(cli) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let shown: String = (headers.iter())
        .map(|h| format!(" --header {}", command::shell_quote(&h.shown())))
        .collect();
    let replay = format!(
        "{} --manifest {} --url {}{shown}",
        invocation.name(),
        command::shell_quote(&manifest.display().to_string()),
        command::shell_quote(url)
    );
    command::run_url(
        manifest,
        url.to_string(),
        (headers, ca_cert),
        command_line(cli),
        command::Words {
            program: invocation.name().to_string(),
            replay,
        },
        &args,
    )
}

/// The libtest arguments after `--`, as the harness reads them; a usage error's code.
fn libtest_arguments(cli: &Cli) -> Result<libtest_mimic::Arguments, u8> {
    let mut args = vec!["cargo-holon-test".to_string()];
    args.extend(cli.libtest.iter().cloned());
    libtest_mimic::Arguments::try_parse_from(args).map_err(|e| {
        let _ = e.print();
        USAGE
    })
}

/// The settings the command line gives, above the environment's.
fn command_line(cli: &Cli) -> CommandLine {
    cli.run.layer.clone()
}

/// Whether the command line says `--bless`.
fn blesses(cli: &Cli) -> bool {
    cli.run.layer.bless == Some(true)
}

/// `cargo test --test holon` in the manifest's package: built first, so a build failure is
/// "could not run" (1) rather than a failed test (101).
fn cargo_test(manifest: &Path, cli: &Cli) -> u8 {
    let package = folder_of(manifest).join("Cargo.toml");
    let base = |c: &mut std::process::Command| {
        c.arg("test")
            .arg("--manifest-path")
            .arg(&package)
            .arg("--test")
            .arg("holon");
        // The command line reaches the test target through the variables the harness reads,
        // which win over its builder there as the command line does here; the harness in the
        // test binary does the rewrite of `--bless`, as under `cargo test` with `HOLON_BLESS=1`.
        c.env(command::CHECKS_SHOWN, "1");
        c.envs(forwarded(&cli.run.layer));
    };
    let mut build = invocation::cargo();
    base(&mut build);
    build.arg("--no-run");
    match command::supervised_status(&mut build) {
        Ok(s) if s.success() => {}
        Ok(_) => {
            eprintln!(
                "error: the agent's tests did not build (cargo holon-test runs `tests/holon.rs`, declared as `[[test]] name = \"holon\"` with `harness = false`)"
            );
            return REFUSED;
        }
        Err(e) => {
            eprintln!("error: cannot run cargo: {e}");
            return REFUSED;
        }
    }
    let mut test = invocation::cargo();
    base(&mut test);
    test.arg("--").args(&cli.libtest);
    match command::supervised_status(&mut test) {
        // The test target's own codes pass through; a crash or a signal is a refusal.
        Ok(s) => match s.code().and_then(|c| u8::try_from(c).ok()) {
            Some(code @ (OK | FAILED | USAGE)) => code,
            Some(_) | None => REFUSED,
        },
        Err(e) => {
            eprintln!("error: cannot run cargo: {e}");
            REFUSED
        }
    }
}

/// Each setting `layer` gives, as the variable the test target reads it from; a path made
/// absolute, since the test target runs in its package's folder.
fn forwarded(layer: &CommandLine) -> Vec<(&'static str, std::ffi::OsString)> {
    (command::DEFS.iter())
        .filter_map(|def| {
            let (var, text) = (def.var?, def.get(layer)?);
            let value = match def.path {
                true => std::path::absolute(&text).map_or_else(|_| text.into(), |p| p.into()),
                false => text.into(),
            };
            Some((var, value))
        })
        .collect()
}

fn run_check(
    invocation: Invocation,
    path: Option<&Path>,
    format: Format,
    against: Option<&str>,
) -> u8 {
    let program = invocation.name();
    let (report, config) = match find_manifest(path) {
        // `holon-test.toml` beside the manifest is checked too, when there is one.
        Ok(manifest) => (
            match against {
                Some(old) => {
                    check::against::check_against(&manifest, against::published(&manifest, old))
                }
                None => check::check_file(&manifest),
            },
            command::read_config(&folder_of(&manifest)).err(),
        ),
        // A tool that asked for JSON (or annotations) gets its output even when there is no
        // file to check.
        Err(message) if format != Format::Human => (
            check::unreadable(path.unwrap_or(Path::new(".")), message),
            None,
        ),
        Err(message) => {
            eprintln!("error: {message}");
            return REFUSED;
        }
    };
    match format {
        Format::Json => stdout(&format!("{}\n", json_document(&report, config.as_ref()))),
        Format::Github => {
            for r in std::iter::once(&report).chain(&config) {
                stdout(&invocation.reword(&command::github_render(r, program)));
            }
        }
        Format::Human => {
            for r in std::iter::once(&report).chain(&config) {
                print_report(invocation, r);
            }
        }
    }
    let accepted = report.accepted() && config.is_none();
    // The trees (200,000 values at the gateway's bound) are left to the operating system at
    // exit rather than freed node by node, as rustc leaves its own.
    std::mem::forget(report);
    if accepted { OK } else { REFUSED }
}

/// `check --format json`'s one document: the manifest's report, and under `test_config` the
/// report of a refused `holon-test.toml`.
fn json_document(report: &check::Report, config: Option<&check::Report>) -> String {
    let text = check::render_json(report);
    let Some(config) = config else {
        return text;
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(mut document)) => {
            let inner = serde_json::from_str(&check::render_json(config)).unwrap_or_default();
            document.insert("test_config".into(), inner);
            document.insert("accepted".into(), serde_json::Value::Bool(false));
            serde_json::Value::Object(document).to_string()
        }
        _ => text,
    }
}

/// The manifest a path names: the file itself, `holon.yaml` in a folder, or (with no path)
/// the nearest `holon.yaml` from the current folder upward.
pub fn find_manifest(path: Option<&Path>) -> Result<PathBuf, String> {
    match path {
        Some(p) if p.is_dir() => {
            let file = p.join("holon.yaml");
            // Anything by that name is the manifest: `check` says why a folder or a FIFO is not.
            if file.exists() {
                Ok(file)
            } else {
                Err(format!("no `holon.yaml` in `{}`", p.display()))
            }
        }
        Some(p) => {
            if p.exists() {
                Ok(p.to_path_buf())
            } else {
                Err(format!("`{}` does not exist", p.display()))
            }
        }
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| format!("cannot read the current folder: {e}"))?;
            cwd.ancestors()
                .map(|d| d.join("holon.yaml"))
                .find(|f| f.is_file())
                .map(|f| relative_to(&f, &cwd))
                .ok_or_else(|| {
                    format!(
                        "no `holon.yaml` in `{}` or any folder above it",
                        cwd.display()
                    )
                })
        }
    }
}

fn relative_to(file: &Path, base: &Path) -> PathBuf {
    file.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| file.to_path_buf())
}

/// A report of the checks on stderr, in the author's words, and as annotations on GitHub.
fn print_report(invocation: Invocation, report: &check::Report) {
    eprint!(
        "{}",
        invocation.reword(&check::render::human(
            report,
            exit::color(None),
            invocation.name()
        ))
    );
    if command::github_enabled() {
        stdout(&invocation.reword(&command::github_render(report, invocation.name())));
    }
}

/// Writes to standard output; a reader that went away (`| head`) is not an error of ours.
fn stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_with_a_flag_is_on_the_run_command_with_its_help_and_is_forwarded() {
        let run = Cli::command();
        let mut argv = vec!["holon-test".to_string()];
        let mut expected = Vec::new();
        for def in &command::DEFS {
            let Some(flag) = def.flag else { continue };
            let arg = (run.get_arguments())
                .find(|a| a.get_long() == Some(flag))
                .unwrap_or_else(|| panic!("`--{flag}` is not on the run command"));
            let help = arg.get_help().map(ToString::to_string);
            assert_eq!(help.as_deref(), Some(def.help), "--{flag}");
            // `--url` is a run of its own, against that server: nothing to forward.
            if flag == "url" {
                continue;
            }
            argv.push(format!("--{flag}"));
            if def.value.is_some() {
                argv.push(def.example.to_string());
            }
            expected.extend(def.var);
        }
        let cli = Cli::try_parse_from(&argv).expect("every example is taken");
        let vars: Vec<&str> = (forwarded(&cli.run.layer).into_iter())
            .map(|(var, _)| var)
            .collect();
        assert_eq!(vars, expected);
        // A path reaches the test target, in another folder, as the user meant it.
        let junit = forwarded(&cli.run.layer)
            .into_iter()
            .find(|(var, _)| *var == command::JUNIT_VAR)
            .map(|(_, value)| PathBuf::from(value));
        assert!(junit.is_some_and(|p| p.is_absolute()));
    }
}

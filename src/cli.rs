//! The command line: parsing, printing to the user, and exit codes. Only this module decides
//! how the process ends.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::check;

/// Everything passed (or the manifest was accepted).
pub const EXIT_OK: u8 = 0;
/// The manifest was refused, or the harness could not run.
pub const EXIT_REFUSED: u8 = 1;
/// Usage error.
pub const EXIT_USAGE: u8 = 2;
/// A test failed (libtest's own code).
pub const EXIT_TEST_FAILED: u8 = 101;

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
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
}

/// Runs the command line and returns the process's exit code.
pub fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `cargo holon-test ...` runs us as `cargo-holon-test holon-test ...`.
    if args.get(1).is_some_and(|a| a == "holon-test") {
        args.remove(1);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    ExitCode::from(match cli.command {
        Some(Command::Check { path, format }) => run_check(path.as_deref(), format),
        None => {
            eprintln!("error: running the examples is not available in this build; use `cargo holon-test check`");
            EXIT_REFUSED
        }
    })
}

fn run_check(path: Option<&Path>, format: Format) -> u8 {
    let report = match find_manifest(path) {
        Ok(manifest) => check::check_file(&manifest),
        // A tool that asked for JSON gets its one document even when there is no file to check.
        Err(message) if format == Format::Json => {
            check::Report::unreadable(path.unwrap_or(Path::new(".")), message)
        }
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_REFUSED;
        }
    };
    match format {
        Format::Json => println!("{}", check::render_json(&report)),
        Format::Human => eprint!("{}", check::render_human(&report, use_color())),
    }
    if report.accepted() { EXIT_OK } else { EXIT_REFUSED }
}

/// The manifest a path names: the file itself, `holon.yaml` in a folder, or (with no path)
/// the nearest `holon.yaml` from the current folder upward.
pub fn find_manifest(path: Option<&Path>) -> Result<PathBuf, String> {
    match path {
        Some(p) if p.is_dir() => {
            let file = p.join("holon.yaml");
            if file.is_file() { Ok(file) } else { Err(format!("no `holon.yaml` in `{}`", p.display())) }
        }
        Some(p) => {
            if p.exists() { Ok(p.to_path_buf()) } else { Err(format!("`{}` does not exist", p.display())) }
        }
        None => {
            let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
            cwd.ancestors()
                .map(|d| d.join("holon.yaml"))
                .find(|f| f.is_file())
                .map(|f| relative_to(&f, &cwd))
                .ok_or_else(|| format!("no `holon.yaml` in `{}` or any folder above it", cwd.display()))
        }
    }
}

fn relative_to(file: &Path, base: &Path) -> PathBuf {
    file.strip_prefix(base).map(Path::to_path_buf).unwrap_or_else(|_| file.to_path_buf())
}

fn use_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

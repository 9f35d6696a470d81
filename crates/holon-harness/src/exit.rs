//! How a run of the kit ends, for the command line, the test harness and `--bless` alike: its
//! exit codes, and whether what it prints to standard error is in colour.

use std::io::IsTerminal;

/// Everything passed, the manifest was accepted, or every difference was blessed.
pub const OK: u8 = 0;
/// The manifest was refused, or the harness could not run.
pub const REFUSED: u8 = 1;
/// The command line was wrong.
pub const USAGE: u8 = 2;
/// A trial failed (libtest's own code), or a difference was left unblessed.
pub const FAILED: u8 = 101;

/// Colour on standard error, unless `NO_COLOR` is set or it is not a terminal; `forced` (a
/// `--color always|never` argument) decides over both.
pub fn color(forced: Option<bool>) -> bool {
    forced.unwrap_or_else(|| {
        std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
    })
}

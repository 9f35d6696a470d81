//! `holon-test report RECEIPTS... [--out PATH.html]`: saved receipts (one file, or the shards
//! of a run) read back as one run of the manifest, measured as the run would have measured
//! them; the page a `--report` run writes, drawn from them.

use std::path::PathBuf;

use clap::Args;

use holon_harness::command;
use holon_harness::exit::REFUSED;

/// The arguments of `report`.
#[derive(Args, Debug)]
pub(crate) struct Report {
    /// Receipts files (`--receipts`), read as one run: the shards of a run, say.
    #[arg(required = true, value_name = "RECEIPTS")]
    files: Vec<PathBuf>,
    /// Write the page (one self-contained HTML file) here instead of printing the `measure:`
    /// lines.
    #[arg(long, value_name = "PATH.html")]
    out: Option<PathBuf>,
    /// The manifest the receipts were written for (default: the nearest holon.yaml from the
    /// current folder upward).
    #[arg(long, value_name = "PATH")]
    pub(crate) manifest: Option<PathBuf>,
}

impl Report {
    /// Reads the receipts as a run of `manifest` (found from `--manifest`, or why not) and
    /// prints or writes what they measure; the exit code.
    pub(crate) fn run(&self, program: &str, manifest: Result<PathBuf, String>) -> u8 {
        match manifest {
            Ok(manifest) => command::report(&manifest, &self.files, self.out.as_deref(), program),
            Err(message) => {
                eprintln!("error: {message}");
                REFUSED
            }
        }
    }
}

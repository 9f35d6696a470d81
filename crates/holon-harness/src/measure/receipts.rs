//! `--receipts PATH`: one JSON line per measured call, written as the call ends, so an author
//! can plot a run or diff two: `{"example", "run", "status", "billed", "ms", "upstream":
//! [{"name", "status", "input_tokens", "output_tokens"}], "pass", "manifest": {"name",
//! "version", "sha256"}, "planned", "partition"}`, `null` where a thing is unknown; `planned`
//! is the calls the run (its shard, under `--partition`) planned on the measured pass, and
//! `partition` the shard, when the run is one; `run_id`, the run's own, so that a receipt read
//! twice is counted once. An upstream answer that came after its call's receipt was written
//! (paid for all the same) gets a line of its own once the run has waited for it: `{"late":
//! true, "example", "run", "upstream", "pass", ...}`. The pass and the manifest's identity let
//! `holon-test report` read several files (a run's shards) as one run, and refuse a file of
//! another manifest; `planned` and `partition` let it say what is missing.
//! Each line goes out whole in one write under a lock, and a signal closes the file under that
//! lock: an interrupted run leaves whole lines. A line holds no value of the run's secrets.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::ended::{CallEnd, billed};
use crate::error::ReceiptsError;
use crate::reporter::Reporter;
use holon_config::partition::Partition;
use holon_core::gateway::Pass;
use holon_core::manifest::Manifest;
use holon_upstream::Used;

/// The receipts file of a run.
pub(crate) struct Receipts {
    path: PathBuf,
    /// `None` once closed: no line is written after a signal.
    file: Mutex<Option<File>>,
    /// The first write that failed, said after the run.
    failed: Mutex<Option<ReceiptsError>>,
    /// What every line says of the run: the calls it planned, and its shard.
    share: (usize, Option<Partition>),
    /// The run's own id on every line, so that a receipt read twice is counted once.
    run_id: String,
}

impl Receipts {
    /// Creates (or empties) the file at `path`, its folder made if missing: before any call, so
    /// a file that cannot be written stops the run with the reason.
    /// Every line says `share`: the calls the run planned on the measured pass, and its shard.
    pub(crate) fn create(
        path: &Path,
        share: (usize, Option<Partition>),
    ) -> Result<Receipts, ReceiptsError> {
        let refuse = |e: std::io::Error| ReceiptsError::Create {
            path: path.to_path_buf(),
            why: e.to_string(),
        };
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(refuse)?;
        }
        let file = File::create(path).map_err(refuse)?;
        Ok(Receipts {
            path: path.to_path_buf(),
            file: Mutex::new(Some(file)),
            failed: Mutex::new(None),
            share,
            run_id: run_id(),
        })
    }

    /// Writes the receipt of `end`, a call of example `name` on `pass`, cleaned by the run's `reporter`.
    pub(crate) fn write(
        &self,
        manifest: &Manifest,
        (pass, name): (Pass, &str),
        end: &CallEnd,
        reporter: &Reporter,
    ) {
        let line = receipt(manifest, (pass, name), end, reporter);
        self.put(line);
    }

    /// Writes a line for the late answers of a call of example `name` on `pass` (its `run`),
    /// whose receipt said them unanswered: `{"late": true, "example", "run", "upstream",
    /// "pass", ...}`, which `holon-test report` adds to that call's spend.
    pub(crate) fn write_late(
        &self,
        manifest: &Manifest,
        (pass, name, run): (Pass, &str, u32),
        answered: &[Used],
    ) {
        let mut line = json!({
            "late": true,
            "example": name,
            "run": run,
            "upstream": upstream_of(answered),
            "pass": pass.name(),
        });
        if let (Some(identity), Value::Object(map)) = (manifest.identity(), &mut line) {
            map.insert(
                "manifest".into(),
                json!({"name": identity.name, "version": identity.version, "sha256": identity.sha256}),
            );
        }
        self.put(line);
    }

    /// Writes `line` with what every line says of the run, whole, in one write.
    fn put(&self, mut line: Value) {
        if let Value::Object(map) = &mut line {
            let (planned, partition) = &self.share;
            map.insert("planned".into(), json!(planned));
            if let Some(partition) = partition {
                map.insert("partition".into(), json!(partition.name()));
            }
            map.insert("run_id".into(), json!(self.run_id));
        }
        let mut text = line.to_string();
        text.push('\n');
        let Ok(mut file) = self.file.lock() else {
            return;
        };
        let Some(open) = file.as_mut() else {
            return;
        };
        if let Err(e) = open.write_all(text.as_bytes()) {
            // One failure is said; the file is given up on, so no half line follows it.
            *file = None;
            if let Ok(mut failed) = self.failed.lock() {
                failed.get_or_insert(ReceiptsError::Write {
                    path: self.path.clone(),
                    why: e.to_string(),
                });
            }
        }
    }

    /// No line is written from now on (a signal is ending the run); a line being written is
    /// finished first.
    pub(crate) fn close(&self) {
        if let Ok(mut file) = self.file.lock() {
            *file = None;
        }
    }

    /// The first write that failed, if one did.
    pub(crate) fn failure(&self) -> Option<ReceiptsError> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }
}

/// The receipt of one call of example `name` on `pass`, as a JSON object in a fixed key order;
/// the one text in it that comes from the call (why it was not judged) cleaned by the run's `reporter`.
pub(crate) fn receipt(
    manifest: &Manifest,
    (pass, name): (Pass, &str),
    end: &CallEnd,
    reporter: &Reporter,
) -> Value {
    let status = end.status(manifest.gateway());
    let upstream = upstream_of(&end.upstream);
    let mut line = json!({
        "example": name,
        "run": end.run,
        "status": status.as_ref().map(|s| s.code().to_string()),
        "billed": status.as_ref().is_some_and(|s| billed(manifest, s)),
        "ms": end.took.as_millis() as u64,
        "upstream": upstream,
        "pass": pass.name(),
    });
    if let (Some(identity), Value::Object(map)) = (manifest.identity(), &mut line) {
        map.insert(
            "manifest".into(),
            json!({"name": identity.name, "version": identity.version, "sha256": identity.sha256}),
        );
    }
    if let (Err(why), Value::Object(map)) = (&end.answer, &mut line) {
        let why = why.to_string();
        let first = why.lines().next().unwrap_or_default();
        map.insert(
            "not_judged".into(),
            Value::String(reporter.clean(first).into_owned()),
        );
    }
    line
}

/// Upstream requests as a receipt lists them.
fn upstream_of(used: &[Used]) -> Vec<Value> {
    (used.iter())
        .map(|u| {
            json!({
                "name": u.upstream,
                "status": u.status,
                "input_tokens": u.tokens.input,
                "output_tokens": u.tokens.output,
            })
        })
        .collect()
}

/// An id of this run, unlike any other run's: the time and the process.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", nanos, std::process::id())
}

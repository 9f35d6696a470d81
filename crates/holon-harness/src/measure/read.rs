//! Receipts read back (`holon-test report RECEIPTS...`): one file or several (the shards of a
//! run), read as one run of the manifest they were written for. Each receipt is counted as the
//! run counted its call, into the same tally; each file must say it holds receipts of this
//! manifest (its name, version and hash) and of one pass, or it is refused by name. A line that
//! is not a whole receipt (a file cut short) ends the reading of its file, and is said.

use std::collections::{BTreeMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::tally::{Seen, Tally};
use holon_config::partition::{Deal, Partition};
use holon_core::gateway::{Pass, Status};
use holon_core::manifest::Manifest;
use holon_upstream::usage::Tokens;
use holon_upstream::{Purpose, Spend};

/// Why receipts cannot be read as one run of the manifest.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// A file could not be opened or read.
    #[error("cannot read the receipts `{}`: {why}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// A file's receipts were written for another manifest (or another version of it).
    #[error(
        "`{}` holds receipts of {theirs}, not of `{}` ({ours})\n  = hint: read receipts against the manifest they were written for: `--manifest PATH`",
        path.display(), manifest.display()
    )]
    OtherManifest {
        /// The receipts file.
        path: PathBuf,
        /// Which manifest its receipts name.
        theirs: String,
        /// The manifest they were read against.
        manifest: PathBuf,
        /// Which manifest that is.
        ours: String,
    },
    /// Two files measured different passes: they are not shards of one run.
    #[error(
        "`{}` holds calls of the `{theirs}` pass, `{}` of the `{first}` pass: the shards of one run measure one pass",
        path.display(), first_path.display()
    )]
    OtherPass {
        /// The file that differs.
        path: PathBuf,
        /// Its pass.
        theirs: &'static str,
        /// The first file read.
        first_path: PathBuf,
        /// Its pass.
        first: &'static str,
    },
    /// A receipt names an example the manifest does not have, or a code it does not declare.
    #[error("`{}`:{line}: {what}, which `{}` does not have: these receipts were written for another manifest", path.display(), manifest.display())]
    Unknown {
        /// The receipts file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What it names (`` example `x` ``, `` status `y` ``).
        what: String,
        /// The manifest read, which does not have it.
        manifest: PathBuf,
    },
    /// No receipt in any of the files.
    #[error("no receipt to read in {files}")]
    Empty {
        /// The files, named.
        files: String,
    },
}

/// One receipt as a file holds it; what the tally needs and what says whose it is.
#[derive(Debug, Deserialize)]
struct Line {
    example: String,
    status: Option<String>,
    /// Absent from a line of late answers only.
    #[serde(default)]
    billed: bool,
    #[serde(default)]
    ms: u64,
    #[serde(default)]
    upstream: Vec<Request>,
    #[serde(default)]
    not_judged: Option<String>,
    #[serde(default)]
    pass: Option<String>,
    #[serde(default)]
    manifest: Option<Whose>,
    #[serde(default)]
    planned: Option<usize>,
    #[serde(default)]
    partition: Option<String>,
    /// Which call of the example it was, from 1.
    #[serde(default)]
    run: Option<u32>,
    /// The run that wrote it (`None` from an earlier holon-test).
    #[serde(default)]
    run_id: Option<String>,
    /// A line of late answers to a call's requests, not a call.
    #[serde(default)]
    late: bool,
}

/// One upstream request on a receipt.
#[derive(Debug, Deserialize)]
struct Request {
    name: String,
    status: Option<u16>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

/// The manifest a receipt was written for.
#[derive(Debug, Deserialize, PartialEq, Eq)]
struct Whose {
    name: String,
    version: String,
    sha256: String,
}

impl Whose {
    fn describe(&self) -> String {
        let short: String = self.sha256.chars().take(12).collect();
        format!("`{} {}` (sha256 {short})", self.name, self.version)
    }
}

/// Receipts read as one run.
pub(crate) struct Reading {
    /// The calls, counted as the run counted them.
    pub tally: Tally,
    /// What each upstream's requests came to, as the receipts list them, under the measured
    /// pass's examples.
    pub spend: BTreeMap<String, Spend>,
    /// The pass the calls were made on (the MCP pass when the files do not say).
    pub pass: Pass,
    /// How many receipts were read, in all and from each file.
    pub calls: usize,
    /// What the reader has to say: a file cut short, a file that does not say whose it is, a
    /// request whose answer came after its call's receipt was written.
    pub notes: Vec<String>,
}

/// What makes a receipt line the same as another read already: the run, the pass, the example,
/// the call, the shard, and whether it is a late line.
type LineKey = (
    Option<String>,
    String,
    String,
    Option<u32>,
    Option<String>,
    bool,
);

/// Reads `files` as one run of `manifest`.
pub(crate) fn read(manifest: &Manifest, files: &[PathBuf]) -> Result<Reading, ReadError> {
    let ours = manifest.identity().map(|i| Whose {
        name: i.name,
        version: i.version,
        sha256: i.sha256,
    });
    let index: BTreeMap<&str, usize> = (manifest.examples.iter().enumerate())
        .map(|(i, e)| (e.name.as_str(), i))
        .collect();
    let mut reading = Reading {
        tally: Tally::new(manifest.examples.len()),
        spend: BTreeMap::new(),
        pass: Pass::Mcp,
        calls: 0,
        notes: Vec::new(),
    };
    let mut first_pass: Option<(PathBuf, Pass)> = None;
    let mut unanswered = 0usize;
    let mut shards: Vec<(PathBuf, Partition)> = Vec::new();
    // Each line once: the same file twice, or two files that share lines, count a call once.
    let mut seen: HashSet<LineKey> = HashSet::new();
    for path in files {
        let file = std::fs::File::open(path).map_err(|e| ReadError::Unreadable {
            path: path.clone(),
            why: e.to_string(),
        })?;
        let mut lines = std::io::BufReader::with_capacity(1 << 16, file);
        let mut text = String::new();
        let (mut number, mut read_here, mut unnamed) = (0usize, 0usize, false);
        let (mut repeated, mut orphans) = (0usize, 0usize);
        let mut share: Option<(Option<usize>, Option<String>)> = None;
        loop {
            text.clear();
            let n = lines
                .read_line(&mut text)
                .map_err(|e| ReadError::Unreadable {
                    path: path.clone(),
                    why: e.to_string(),
                })?;
            if n == 0 {
                break;
            }
            number += 1;
            if text.trim().is_empty() {
                continue;
            }
            let line = match serde_json::from_str::<Line>(&text) {
                Ok(line) => line,
                Err(e) => {
                    reading
                        .notes
                        .push(cut_short(path, number, read_here, &text, &e));
                    break;
                }
            };
            match (&line.manifest, &ours) {
                (Some(theirs), Some(ours)) if theirs != ours => {
                    return Err(ReadError::OtherManifest {
                        path: path.clone(),
                        theirs: theirs.describe(),
                        manifest: manifest.path.clone(),
                        ours: ours.describe(),
                    });
                }
                (None, _) => unnamed = true,
                _ => {}
            }
            let pass = match line.pass.as_deref() {
                Some("function") => Pass::Function,
                _ => Pass::Mcp,
            };
            match &first_pass {
                Some((first_path, first)) if *first != pass => {
                    return Err(ReadError::OtherPass {
                        path: path.clone(),
                        theirs: pass.name(),
                        first_path: first_path.clone(),
                        first: first.name(),
                    });
                }
                Some(_) => {}
                None => first_pass = Some((path.clone(), pass)),
            }
            let unknown = |what: String| ReadError::Unknown {
                path: path.clone(),
                line: number,
                what,
                manifest: manifest.path.clone(),
            };
            let Some(&at) = index.get(line.example.as_str()) else {
                return Err(unknown(format!("example `{}`", line.example)));
            };
            let key = (
                line.run_id.clone(),
                pass.name().to_string(),
                line.example.clone(),
                line.run,
                line.partition.clone(),
                line.late,
            );
            if line.late {
                // Its call's own line, read already: late answers add to that call's requests.
                let call = (
                    key.0.clone(),
                    key.1.clone(),
                    key.2.clone(),
                    key.3,
                    key.4.clone(),
                    false,
                );
                if !seen.contains(&call) {
                    orphans += 1;
                    continue;
                }
            }
            if !seen.insert(key) {
                repeated += 1;
                continue;
            }
            if line.late {
                // Answers that came after the call's receipt said them unanswered.
                for request in line.upstream.iter().filter(|r| r.status.is_some()) {
                    let tokens = Tokens {
                        input: request.input_tokens,
                        output: request.output_tokens,
                    };
                    unanswered = unanswered.saturating_sub(1);
                    let spend = reading.spend.entry(request.name.clone()).or_default();
                    spend.total.answered_late(tokens);
                    (spend.by.entry(Purpose::Examples(pass)).or_default()).answered_late(tokens);
                }
                continue;
            }
            let status = match &line.status {
                None => None,
                Some(code) => Some(
                    status_of(manifest, code).ok_or_else(|| unknown(format!("status `{code}`")))?,
                ),
            };
            for request in &line.upstream {
                let tokens = Tokens {
                    input: request.input_tokens,
                    output: request.output_tokens,
                };
                let answer = request.status.map(|s| (s, tokens, false));
                unanswered += usize::from(answer.is_none());
                let spend = reading.spend.entry(request.name.clone()).or_default();
                spend.total.add(answer);
                (spend.by.entry(Purpose::Examples(pass)).or_default()).add(answer);
            }
            reading.tally.add_seen(
                at,
                Seen {
                    not_judged: status.is_none().then(|| {
                        line.not_judged
                            .clone()
                            .unwrap_or_else(|| "not judged".into())
                    }),
                    billed: line.billed,
                    status,
                    took: Duration::from_millis(line.ms),
                },
            );
            read_here += 1;
            share.get_or_insert((line.planned, line.partition));
        }
        if orphans > 0 {
            reading.notes.push(format!(
                "`{}` holds {orphans} line{} of late answers whose call no receipt before {} holds: not counted",
                path.display(),
                if orphans == 1 { "" } else { "s" },
                if orphans == 1 { "it" } else { "them" }
            ));
        }
        if repeated > 0 {
            reading.notes.push(format!(
                "`{}` repeats {repeated} receipt{} already read (the same run's lines, from this file or another): each is counted once",
                path.display(),
                if repeated == 1 { "" } else { "s" }
            ));
        }
        let (planned, partition) = share.unwrap_or_default();
        let partition = partition.and_then(|p| Partition::parse(&p).ok());
        if let Some(planned) = planned.filter(|planned| read_here + repeated < *planned) {
            reading.notes.push(format!(
                "`{}` holds {read_here} of the {planned} calls its run{} planned: {} missing (the run ended before it made them)",
                path.display(),
                partition.map_or(String::new(), |p| format!(" (`--partition {}`)", p.name())),
                planned - read_here,
            ));
        }
        // A file whose every line was read already adds no shard of its own.
        if let Some(partition) = partition.filter(|_| read_here > 0) {
            shards.push((path.clone(), partition));
        }
        if unnamed && read_here > 0 {
            reading.notes.push(format!(
                "`{}` does not say which manifest its receipts were written for (an earlier holon-test wrote it): read as receipts of `{}`",
                path.display(),
                manifest.path.display()
            ));
        }
        reading.calls += read_here;
    }
    if reading.calls == 0 {
        let named: Vec<String> = files.iter().map(|f| format!("`{}`", f.display())).collect();
        return Err(ReadError::Empty {
            files: named.join(", "),
        });
    }
    if let Some((_, pass)) = first_pass {
        reading.pass = pass;
    }
    reading.notes.extend(missing_shards(&shards));
    if unanswered > 0 {
        reading.notes.push(format!(
            "{unanswered} upstream request{} had no answer when {} call's receipt was written: an answer that came later is paid for, but no receipt counts it (the run's own report does)",
            if unanswered == 1 { "" } else { "s" },
            if unanswered == 1 { "its" } else { "their" }
        ));
    }
    Ok(reading)
}

/// What the shards read say is missing from the run they are part of: a shard no file holds,
/// or one two files hold (its calls counted twice).
fn missing_shards(shards: &[(PathBuf, Partition)]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut seen: BTreeMap<(u8, u64), BTreeMap<u64, &Path>> = BTreeMap::new();
    for (path, partition) in shards {
        let kind = (partition.deal == Deal::Hash) as u8;
        let of = seen.entry((kind, partition.of)).or_default();
        if let Some(first) = of.insert(partition.shard, path) {
            notes.push(format!(
                "`{}` and `{}` both hold the receipts of `--partition {}`: its calls are counted twice",
                first.display(),
                path.display(),
                partition.name()
            ));
        }
    }
    for ((kind, of), present) in &seen {
        let deal = if *kind == 1 { Deal::Hash } else { Deal::Count };
        for shard in (1..=*of).filter(|k| !present.contains_key(k)) {
            let partition = Partition {
                deal,
                shard,
                of: *of,
            };
            notes.push(format!(
                "no file holds the receipts of `--partition {}`: its calls are missing from this report",
                partition.name()
            ));
        }
    }
    notes
}

/// The status a receipt's code stands for: `success`, a reserved code (`rejected_input` as
/// the gateway's receipt says `invalid_input`), or a code the manifest declares.
fn status_of(manifest: &Manifest, code: &str) -> Option<Status> {
    if code == Status::Success.code() {
        return Some(Status::Success);
    }
    if code == "rejected_input" {
        return Some(Status::InvalidInput);
    }
    if let Some(reserved) = Status::RESERVED.into_iter().find(|s| s.code() == code) {
        return Some(reserved);
    }
    manifest
        .error(code)
        .map(|_| Status::Declared(code.to_string()))
}

/// What is said of a line that is not a whole receipt: where, why, and what was read.
fn cut_short(
    path: &Path,
    number: usize,
    read: usize,
    text: &str,
    error: &serde_json::Error,
) -> String {
    let what = if !text.ends_with('\n') {
        "is cut short (the file ends in the middle of it)".to_string()
    } else {
        format!("is not a receipt ({error})")
    };
    format!(
        "`{}`:{number}: the line {what}: read the {read} receipt{} before it, and nothing after it",
        path.display(),
        if read == 1 { "" } else { "s" }
    )
}

/// Receipts measured: the `measure:` lines a run prints, what the page draws, and what the
/// reader has to say.
pub(crate) struct Measured {
    /// The `measure:` lines.
    pub lines: String,
    /// What the page draws.
    pub picture: super::picture::Picture,
    /// What the reader has to say (a file cut short, ...), a line each.
    pub notes: Vec<String>,
}

/// `files` read as one run of `manifest` and measured as the run would have: the same lines,
/// the same figures; each upstream priced by `prices` (`holon-test.toml`'s).
pub(crate) fn measured(
    manifest: &Manifest,
    files: &[PathBuf],
    prices: &[(String, Option<holon_config::TokenPrice>)],
) -> Result<Measured, ReadError> {
    let reading = read(manifest, files)?;
    let cx = super::tally::Context {
        manifest,
        prices,
        spend: Some(&reading.spend),
        purpose: Purpose::Examples(reading.pass),
    };
    let examples = (reading.tally.examples().iter())
        .filter(|s| !s.is_empty())
        .count() as u64;
    let named: Vec<String> = files.iter().map(|f| format!("`{}`", f.display())).collect();
    let head = format!(
        "the `{}` pass, {examples} example{}, {} call{}, read from {}",
        reading.pass.name(),
        super::tally::plural(examples),
        reading.calls,
        super::tally::plural(reading.calls as u64),
        named.join(", ")
    );
    let lines = reading.tally.report(&cx, &head);
    let picture = reading.tally.picture(&cx, lines.clone());
    Ok(Measured {
        lines,
        picture,
        notes: reading.notes,
    })
}

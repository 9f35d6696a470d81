//! The safe write: under a lock on the manifest's folder, the file is read again, each change
//! applied only if the example still says what this run judged against, the result checked as
//! the registry would, then written to a temporary file and renamed over the manifest.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use serde_json::Value;

use crate::error::BlessError;
use crate::rewrite::rewrite;
use holon_core::json::equal as json_eq;
use holon_core::manifest::Expect;

/// A change this run wants: the example said `old` when the run read it; the agent says `new`.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub example: String,
    pub old: Expect,
    pub new: Expect,
}

/// What became of one change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fate {
    /// Written into the file.
    Written,
    /// The file already said it (another process blessed it first).
    AlreadySaid,
    /// The example changed since this run read it, to something else: left alone.
    Moved,
}

/// The manifest under the lock on its folder: the file itself (not a link to it), read again
/// as text and as a document.
pub(crate) struct Locked {
    /// The file itself, not a link to it: the rename replaces the file the link points to.
    pub path: std::path::PathBuf,
    /// Its folder.
    pub dir: std::path::PathBuf,
    /// The lock, held until dropped.
    pub lock: File,
    /// Its text now.
    pub text: String,
    /// Its text as a JSON document.
    pub doc: Value,
}

impl Locked {
    /// Locks the folder of the manifest at `path` and reads it again.
    pub(crate) fn open(path: &Path) -> Result<Locked, BlessError> {
        let path = fs::canonicalize(path).map_err(|source| BlessError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
        let dir = holon_core::manifest::folder_of(&path);
        // One blessing process at a time per folder (nextest runs each trial in its own
        // process). The folder, unlike the manifest, keeps its inode across the rename.
        let lock = File::open(&dir)
            .and_then(|f| f.lock().map(|()| f))
            .map_err(|source| BlessError::Lock {
                dir: dir.clone(),
                source,
            })?;
        let text = fs::read_to_string(&path).map_err(|source| BlessError::Unreadable {
            path: path.clone(),
            source,
        })?;
        let doc = holon_core::manifest::yaml::parse(&text)
            .map_err(|e| BlessError::NotYaml {
                path: path.clone(),
                message: e.message.clone(),
            })?
            .to_json();
        Ok(Locked {
            path,
            dir,
            lock,
            text,
            doc,
        })
    }

    /// Puts `new` in place of the manifest once the publish checks accept it (written beside
    /// it and renamed over it), then lets the folder go.
    pub(crate) fn put(self, new: &str) -> Result<(), BlessError> {
        let report = holon_core::check::check_as_file(new, &self.path);
        if !report.accepted() {
            return Err(BlessError::Refused {
                report: holon_core::check::render_human(&report, false),
            });
        }
        replace(&self.path, &self.dir, new)?;
        drop(self.lock);
        Ok(())
    }
}

/// Applies the changes to the manifest at `path`: every one that still applies, or none.
pub(crate) fn bless_file(path: &Path, changes: &[Change]) -> Result<Vec<Fate>, BlessError> {
    let locked = Locked::open(path)?;
    let examples = (locked.doc)
        .get("examples")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut fates = Vec::with_capacity(changes.len());
    let mut edits = Vec::new();
    for change in changes {
        let found = examples
            .iter()
            .position(|e| e.get("name").and_then(Value::as_str) == Some(&change.example));
        let fate = match found.and_then(|i| Some((i, examples.get(i)?))) {
            None => Fate::Moved,
            Some((i, now)) => {
                if says(now, &change.new) {
                    Fate::AlreadySaid
                } else if says(now, &change.old) {
                    edits.push((i, change.new.clone()));
                    Fate::Written
                } else {
                    Fate::Moved
                }
            }
        };
        fates.push(fate);
    }
    if edits.is_empty() {
        return Ok(fates);
    }
    let new = rewrite(&locked.text, &edits)?.text;
    locked.put(&new)?;
    Ok(fates)
}

/// Whether `example` expects `answer`: the same output, or the same error code.
fn says(example: &Value, answer: &Expect) -> bool {
    match answer {
        Expect::Output(v) => example.get("output").is_some_and(|o| json_eq(o, v)),
        Expect::Error(c) => example.get("error").and_then(Value::as_str) == Some(c),
    }
}

/// Writes `text` beside `path`, with its permissions, and renames it over `path`.
fn replace(path: &Path, dir: &Path, text: &str) -> Result<(), BlessError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "holon.yaml".into());
    let temp = dir.join(format!(".{name}.bless-{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let permissions = fs::metadata(path)?.permissions();
        let mut file = File::options().write(true).create_new(true).open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.set_permissions(permissions)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        // The rename itself is durable once the folder is.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&temp);
        BlessError::Unwritten {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn manifest(dir: &Path) -> PathBuf {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/word-stats/holon.yaml");
        let path = dir.join("holon.yaml");
        fs::copy(fixture, &path).unwrap();
        path
    }

    fn first_output(path: &Path) -> (String, Value) {
        let doc = holon_core::manifest::yaml::parse(&fs::read_to_string(path).unwrap())
            .unwrap()
            .to_json();
        let example = &doc["examples"][0];
        (
            example["name"].as_str().unwrap().to_string(),
            example["output"].clone(),
        )
    }

    fn change(path: &Path, words: u64) -> Change {
        let (name, old) = first_output(path);
        let mut new = old.clone();
        new["words"] = json!(words);
        Change {
            example: name,
            old: Expect::Output(old),
            new: Expect::Output(new),
        }
    }

    #[test]
    fn concurrent_blesses_write_once_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = manifest(dir.path());
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let wanted = change(&path, 99);
        let fates: Vec<Fate> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| bless_file(&path, std::slice::from_ref(&wanted)).unwrap()))
                .collect();
            runs.into_iter().flat_map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(
            fates.iter().filter(|f| **f == Fate::Written).count(),
            1,
            "{fates:?}"
        );
        assert_eq!(fates.iter().filter(|f| **f == Fate::AlreadySaid).count(), 3);
        assert_eq!(first_output(&path).1["words"], json!(99));
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // No temporary file is left beside it.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_example_changed_since_the_run_read_it_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = manifest(dir.path());
        let stale = change(&path, 99);
        bless_file(&path, &[change(&path, 98)]).unwrap();
        let before = fs::read_to_string(&path).unwrap();
        assert_eq!(bless_file(&path, &[stale]).unwrap(), [Fate::Moved]);
        assert_eq!(fs::read_to_string(&path).unwrap(), before);
    }

    #[test]
    fn a_link_to_the_manifest_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        let path = manifest(&real);
        let link = dir.path().join("holon.yaml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        bless_file(&link, &[change(&link, 7)]).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(first_output(&path).1["words"], json!(7));
    }
}

//! The published manifest `check --against OLD` names: a file (or a folder holding one), else
//! the manifest at a git revision.

use std::path::Path;

use holon_core::check;
use holon_harness::command;

/// The published manifest `--against OLD` names: the file at `OLD` when there is one (or the
/// `holon.yaml` in the folder `OLD`), else the manifest at the git revision `OLD`.
pub fn published(manifest: &Path, old: &str) -> check::against::Published {
    use check::against::{Published, Unreadable};
    let given = Path::new(old);
    if given.exists() {
        let file = if given.is_dir() {
            given.join("holon.yaml")
        } else {
            given.to_path_buf()
        };
        let label = file.display().to_string();
        let bytes = check::read_manifest(&file).map_err(|message| Unreadable {
            message: format!("the published manifest cannot be read: {message}"),
            hint: None,
        });
        return Published { label, bytes };
    }
    // A name that can only be a file's (and not `REV:path`) is a file that is not there.
    if !old.contains(':') && (old.ends_with(".yaml") || old.ends_with(".yml")) {
        return Published {
            label: old.to_string(),
            bytes: Err(Unreadable {
                message: format!("the published manifest `{old}` does not exist"),
                hint: Some(
                    "name the published holon.yaml, or a git revision (`v1.2.0`, `HEAD~1`, `REV:path/holon.yaml`)"
                        .to_string(),
                ),
            }),
        };
    }
    // As messages name it: `REV:path` as given, else the revision and the manifest's path (its
    // file name when the path is absolute, which no revision holds).
    let label = match (old.contains(':'), manifest.file_name()) {
        (false, Some(name)) if manifest.is_absolute() => {
            format!("{old}:{}", Path::new(name).display())
        }
        (false, _) => format!("{old}:{}", manifest.display()),
        (true, _) => old.to_string(),
    };
    let bytes = command::read_revision(manifest, old).map_err(|e| Unreadable {
        message: e.to_string(),
        hint: e.hint(),
    });
    Published { label, bytes }
}

//! What `cargo publish` would upload: every file the build of a published crate reads (its
//! sources, and the templates and pages it takes in with `include_str!`) is in the crate's
//! package, as `cargo package --list` gives it. The compiler's own dep-info of this test build
//! names those files, so a file left out of a crate's `include` fails here, in seconds, where a
//! verification build of every package took minutes of CI.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::root;

fn cargo() -> Command {
    let mut c = crate::util::cargo();
    c.current_dir(root());
    c
}

/// The files `cargo package` would put in the crate, relative to its folder.
fn package_list(name: &str) -> BTreeSet<PathBuf> {
    let out = cargo()
        .args([
            "package",
            "--list",
            "--allow-dirty",
            "--offline",
            "-p",
            name,
        ])
        .output()
        .expect("cargo package --list");
    assert!(
        out.status.success(),
        "cargo package --list -p {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect()
}

/// `a/b/../c` as `a/c`, without touching the disk.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The files a dep-info file says its build read (make's syntax: `out: dep dep ...`, a space in
/// a name escaped by a backslash; `# env-dep:` lines are not files).
fn files_read(dep_info: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in dep_info.lines().filter(|l| !l.starts_with('#')) {
        let Some((_, deps)) = line.split_once(": ") else {
            continue;
        };
        let mut name = String::new();
        let mut escaped = false;
        for ch in deps.chars().chain([' ']) {
            match ch {
                '\\' if !escaped => escaped = true,
                ' ' if !escaped => {
                    if !name.is_empty() {
                        files.push(PathBuf::from(std::mem::take(&mut name)));
                    }
                }
                other => {
                    escaped = false;
                    name.push(other);
                }
            }
        }
    }
    files
}

fn folder_of(package: &Value) -> PathBuf {
    Path::new(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Whether a dep-info file is of a build that made a file of this extension (`None`: an
/// executable, which has none).
fn makes(dep_info: &str, extension: Option<&str>) -> bool {
    dep_info
        .lines()
        .filter_map(|l| l.split_once(": "))
        .any(|(out, _)| Path::new(out).extension().and_then(|e| e.to_str()) == extension)
}

#[test]
fn every_file_a_published_crate_compiles_is_in_its_package() {
    let meta = crate::util::paths::workspace_metadata();
    let deps = Path::new(meta["target_directory"].as_str().unwrap()).join("debug/deps");
    let folders: Vec<PathBuf> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(folder_of)
        .collect();
    let mut missing = BTreeSet::new();
    let mut checked = 0;
    for package in meta["packages"].as_array().unwrap() {
        if package["publish"] == serde_json::json!([]) {
            continue;
        }
        let name = package["name"].as_str().unwrap();
        let folder = folder_of(package);
        let listed = package_list(name);
        for target in package["targets"].as_array().unwrap() {
            let kinds = target["kind"].as_array().unwrap();
            if !kinds.iter().any(|k| k == "lib" || k == "bin") {
                continue;
            }
            // Each build of a target is in deps/, named by its crate and a hash, with its
            // dep-info: a library's are those that made an `.rlib` (not its unit tests, an
            // executable, nor a `cargo check` or clippy run, an `.rmeta` alone); a binary's,
            // those that made an executable.
            let target_name = target["name"].as_str().unwrap();
            let lib = kinds.iter().any(|k| k == "lib");
            let stem = format!("{}-", target_name.replace('-', "_"));
            let dep_infos: Vec<String> = std::fs::read_dir(&deps)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let file = p.file_name().unwrap().to_string_lossy();
                    file.strip_prefix(&stem)
                        .and_then(|rest| rest.strip_suffix(".d"))
                        .is_some_and(|hash| !hash.contains(['-', '.']))
                })
                .filter_map(|p| std::fs::read_to_string(p).ok())
                .filter(|text| makes(text, if lib { Some("rlib") } else { None }))
                .collect();
            assert!(
                !dep_infos.is_empty(),
                "no build of {name}'s target {target_name} in {} (this test reads what the test build compiled)",
                deps.display()
            );
            for dep_info in dep_infos {
                for file in files_read(&dep_info) {
                    let file = normal(&root().join(file));
                    // A file gone since an older build of this folder is read by no build now.
                    let owner = folders
                        .iter()
                        .filter(|f| file.starts_with(f))
                        .max_by_key(|f| f.components().count());
                    if !file.exists()
                        || file.starts_with(&deps)
                        || owner.is_some_and(|owner| *owner != folder)
                    {
                        continue;
                    }
                    checked += 1;
                    match file.strip_prefix(&folder) {
                        Ok(relative) if listed.contains(relative) => {}
                        Ok(relative) => {
                            missing.insert(format!(
                            "{name}: {} is compiled in but not in the package (its `include` in {})",
                            relative.display(),
                                folder.join("Cargo.toml").display()
                            ));
                        }
                        Err(_) => {
                            missing.insert(format!(
                            "{name}: {} is compiled in but outside the crate's folder {}, so no package can hold it",
                            file.display(),
                                folder.display()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", Vec::from_iter(missing).join("\n"));
    assert!(
        checked > 50,
        "only {checked} files read: the dep-info was not found"
    );
}

#[test]
fn dep_info_is_read_as_make_writes_it() {
    let text =
        "/t/deps/x.d: src/lib.rs src/a\\ b.rs ../templates/t.txt\n\nsrc/lib.rs:\n# env-dep:A=b\n";
    let files: Vec<PathBuf> = files_read(text);
    assert_eq!(
        files,
        ["src/lib.rs", "src/a b.rs", "../templates/t.txt"].map(PathBuf::from)
    );
    let rlib = "/t/deps/libx-1.rlib: src/lib.rs\n/t/deps/libx-1.rmeta: src/lib.rs\n";
    let unit_tests = "/t/deps/x-1: src/lib.rs tests/corpus.json\n/t/deps/x-1.d: src/lib.rs\n";
    let check = "/t/deps/libx-1.rmeta: src/lib.rs clippy.toml\n";
    assert!(makes(rlib, Some("rlib")) && !makes(rlib, None));
    assert!(makes(unit_tests, None) && !makes(unit_tests, Some("rlib")));
    assert!(!makes(check, Some("rlib")) && !makes(check, None));
    assert_eq!(
        normal(Path::new("/w/crates/c/src/../../t/x")),
        Path::new("/w/crates/t/x")
    );
}

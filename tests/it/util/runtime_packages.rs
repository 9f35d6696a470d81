//! The runtime packages (`holon-kit` on npm and on PyPI) as an author gets them: installed from
//! the `.tgz` and the wheel `bash .ci/dist` wrote into target/dist, once for each build of them,
//! into `target/it-runtime/HASH`: a `node_modules` holding the package beside what the templates
//! depend on (tests/interop/typescript's folders, linked), and a Python folder holding the
//! wheel's module (`pip install --no-deps --target`), put before target/interop/python.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{OutputWithin, RUN_LIMIT, root, text};

/// Where the packages are installed.
pub struct Installed {
    /// A `node_modules` folder: `holon-kit`, and the SDK, `yaml`, `openai`, `@types/node` and
    /// the compiler the templates pin.
    pub node_modules: PathBuf,
    /// A folder for `PYTHONPATH` holding `holon_kit`.
    pub python: PathBuf,
}

/// The packages of the last `.ci/dist`, installed (once: the folder is named for the sources
/// they were built from, and made whole before it takes its name, so tests in parallel
/// processes share it).
pub fn installed() -> Installed {
    let dist = super::dist::dist();
    let source = std::fs::read_to_string(dist.dir.join("SOURCE")).expect("target/dist/SOURCE");
    let short: String = source.trim().chars().take(16).collect();
    let base = root().join("target/it-runtime");
    let folder = base.join(&short);
    let found = Installed {
        node_modules: folder.join("node_modules"),
        python: folder.join("python"),
    };
    if folder.join("ready").is_file() {
        return found;
    }
    std::fs::create_dir_all(&base).expect("target/it-runtime");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let staging = base.join(format!(".staging-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(staging.join("node_modules")).expect("a staging folder");

    // The template's dependencies, linked; the package, unpacked as npm unpacks it.
    let interop = root().join("tests/interop/typescript/node_modules");
    assert!(
        interop.join(".bin/tsc").exists(),
        "no packages in `{}`: run `bash .ci/setup-interop` first",
        interop.display()
    );
    for entry in std::fs::read_dir(&interop)
        .expect("the interop folder")
        .flatten()
    {
        let name = entry.file_name();
        if name == "holon-kit" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), staging.join("node_modules").join(&name))
            .expect("a link");
    }
    let package = staging.join("node_modules/holon-kit");
    std::fs::create_dir(&package).expect("a folder");
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&dist.runtime_npm)
        .arg("-C")
        .arg(&package)
        .arg("--strip-components=1")
        .output_within(RUN_LIMIT);
    assert!(untar.status.success(), "tar: {}", text(&untar));

    let pip = Command::new(super::dist::interpreter())
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--root-user-action=ignore",
            "--target",
        ])
        .arg(staging.join("python"))
        .arg(&dist.runtime_wheel)
        .output_within(RUN_LIMIT);
    assert!(pip.status.success(), "pip: {}", text(&pip));
    std::fs::write(staging.join("ready"), &source).expect("the stamp");
    // Another process may have made it first: then its folder is the one used.
    if std::fs::rename(&staging, &folder).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        assert!(folder.join("ready").is_file(), "{}", folder.display());
    }
    found
}

/// `PYTHONPATH` for an agent on the runtime package: the package, then the interop folder (the
/// SDK, mypy, uv).
pub fn pythonpath(installed: &Installed) -> OsString {
    std::env::join_paths([
        installed.python.clone(),
        root().join("target/interop/python"),
    ])
    .expect("a PYTHONPATH")
}

/// `agent/node_modules`, a link to the installed packages.
pub fn link_node_modules(installed: &Installed, agent: &Path) {
    std::os::unix::fs::symlink(&installed.node_modules, agent.join("node_modules"))
        .expect("a link");
}

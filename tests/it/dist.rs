//! The kit without a Rust toolchain. `holon-test`, the same binary without the cargo word:
//! `--version`, and the server command `holon-test.toml` names (`[server] command`) outside a
//! Cargo package. The packages `bash .ci/dist` builds: one version everywhere (a package at
//! another version fails), the wheel and the npm packages installed from those files alone into
//! a fresh virtual environment and a fresh npm project on a machine with no `cargo` or `rustc`,
//! then run against a Python-SDK and a TypeScript-SDK server (pass, and fail on a drifted
//! output); the archive where `cargo binstall` looks; and the npm launcher's bad input.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::scaffold::{failed_trials, passed_trials};
use crate::util::dist::{Dist, Machine, dist, tarball_json};
use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, Running, root, text, wait_until};

/// Longest an install from files, or a run against a server in Python, may take.
const LIMIT: Duration = Duration::from_secs(180);

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The plain agent, rendered by `holon-test new` in `lang` into `dir/name`.
fn new_agent(holon_test: &Path, machine: &Machine, dir: &Path, name: &str, lang: &str) -> PathBuf {
    let new = machine
        .command(holon_test)
        .current_dir(dir)
        .args(["new", name, "--lang", lang])
        .output_within(RUN_LIMIT);
    assert!(new.status.success(), "{}", text(&new));
    dir.join(name)
}

/// `holon.yaml`'s first example, told to expect one word more than the agent counts.
fn drift(agent: &Path) {
    let manifest = agent.join("holon.yaml");
    let text = std::fs::read_to_string(&manifest).expect("the manifest");
    let drifted = text.replace(
        "output: { words: 8, longest: examples }",
        "output: { words: 9, longest: examples }",
    );
    assert_ne!(text, drifted, "the example to drift is not in the manifest");
    std::fs::write(&manifest, drifted).expect("write the manifest");
}

/// A run that passed every trial, the example and explore trials of the MCP pass among them, and
/// of the function pass with `function` (the template's function mode, which `[server] function`
/// names; a `--server-cmd` run has none).
fn assert_passed(run: &Output, function: bool) {
    let out = text(run);
    assert_eq!(run.status.code(), Some(0), "{out}");
    let functions = ["function::a sentence", "explore::function"];
    for trial in [
        "mcp::tools/list",
        "mcp::a sentence",
        "mcp::no word long enough",
        "explore::mcp",
    ]
    .iter()
    .chain(functions.iter().filter(|_| function))
    {
        assert!(
            passed_trials(run).contains(&trial.to_string()),
            "{trial}:\n{out}"
        );
    }
}

/// A run that failed the drifted example alone, naming it and the field that differs, in the
/// function pass too with `function`.
fn assert_drift_named(run: &Output, function: bool) {
    assert_eq!(run.status.code(), Some(101), "{}", text(run));
    // Both passes, and both eras the server speaks, see the drift; the others are said in one
    // line.
    let mut failed = failed_trials(run);
    failed.sort();
    let mut expected = vec!["mcp::2025-11-25::a sentence", "mcp::a sentence"];
    if function {
        expected.insert(0, "function::a sentence");
    }
    assert_eq!(failed, expected, "{}", text(run));
    // The first trial to fail is reported in full, each other one names it. The function pass
    // ends before the MCP pass; the two eras' trials run at once, so either may be first.
    let out = text(run);
    let named: Vec<&str> = (out.lines())
        .filter_map(|l| l.split_once("(the same cause as `"))
        .filter_map(|(_, rest)| rest.split_once("`, reported in full)"))
        .map(|(first, _)| first)
        .collect();
    assert_eq!(named.len(), expected.len() - 1, "{out}");
    assert!(named.iter().all(|n| *n == named[0]), "{out}");
    if function {
        assert_eq!(named[0], "function::a sentence", "{out}");
    } else {
        assert!(expected.contains(&named[0]), "{out}");
    }
    assert!(text(run).contains("`/words`"), "{}", text(run));
}

/// The version each package says it is, and every place where it is not `version`.
fn version_mismatches(wheel: &Path, npm: &[&Path], version: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    let name = wheel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.split('-').nth(1) != Some(version) {
        wrong.push(format!("the wheel's file name `{name}`"));
    }
    let metadata = Command::new(crate::util::dist::interpreter())
        .args([
            "-c",
            "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
             print(next(z.read(n).decode() for n in z.namelist() if n.endswith('.dist-info/METADATA')))",
        ])
        .arg(wheel)
        .output_within(RUN_LIMIT);
    assert!(metadata.status.success(), "{}", text(&metadata));
    let said = String::from_utf8_lossy(&metadata.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Version: ").map(str::to_string));
    if said.as_deref() != Some(version) {
        wrong.push(format!("the wheel's METADATA (Version: {said:?})"));
    }
    for tarball in npm {
        let manifest = tarball_json(tarball, "package.json");
        let shown = tarball.display();
        if manifest["version"] != version {
            wrong.push(format!("{shown}: version {}", manifest["version"]));
        }
        if let Some(platforms) = manifest["optionalDependencies"].as_object() {
            for (package, at) in platforms {
                if at != version {
                    wrong.push(format!("{shown}: optional dependency {package} at {at}"));
                }
            }
        }
    }
    wrong
}

#[test]
fn one_version_everywhere_and_a_package_at_another_fails() {
    // The sources: the launcher's package.json (the platform packages take its version; the
    // wheel takes the crate's itself), and every crate of the workspace.
    let launcher: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("dist/npm/holon-test/package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(launcher["version"], VERSION);
    let platforms = launcher["optionalDependencies"].as_object().unwrap();
    assert_eq!(platforms.len(), 4, "linux and macOS, x64 and arm64");
    assert!(platforms.values().all(|v| v == VERSION), "{platforms:?}");
    let metadata = crate::util::paths::workspace_metadata();
    for package in metadata["packages"].as_array().unwrap() {
        if package["publish"] != serde_json::json!([]) {
            assert_eq!(package["version"], VERSION, "{}", package["name"]);
        }
    }

    // The built packages, the runtime's among them.
    let dist = dist();
    let npm = [dist.launcher.as_path(), dist.platform.as_path()];
    assert_eq!(
        version_mismatches(&dist.wheel, &npm, VERSION),
        Vec::<String>::new()
    );
    assert_eq!(
        version_mismatches(&dist.runtime_wheel, &[dist.runtime_npm.as_path()], VERSION),
        Vec::<String>::new()
    );
    // ESM with its types; typed Python (`py.typed`).
    let listed = Command::new("tar")
        .arg("-tzf")
        .arg(&dist.runtime_npm)
        .output_within(RUN_LIMIT);
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    for file in [
        "package/dist/index.js",
        "package/dist/index.d.ts",
        "package/package.json",
    ] {
        assert!(listed.lines().any(|l| l == file), "{file} in {listed}");
    }
    assert_eq!(
        tarball_json(&dist.runtime_npm, "package.json")["type"],
        "module"
    );
    let wheel = Command::new(crate::util::dist::interpreter())
        .args([
            "-c",
            "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(&dist.runtime_wheel)
        .output_within(RUN_LIMIT);
    let wheel = String::from_utf8_lossy(&wheel.stdout).to_string();
    assert!(wheel.lines().any(|l| l == "holon_kit/py.typed"), "{wheel}");
    // And their sources: the version the Python package says of itself too.
    let init =
        std::fs::read_to_string(root().join("runtime/python/src/holon_kit/__init__.py")).unwrap();
    assert!(
        init.contains(&format!("__version__ = \"{VERSION}\"")),
        "{init}"
    );

    // The same check on a wheel and an npm package at another version names both.
    let other = tempfile::tempdir().unwrap();
    let wheel = other.path().join(
        dist.wheel
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace(VERSION, "9.9.9"),
    );
    let rewrite = Command::new(crate::util::dist::interpreter())
        .args([
            "-c",
            "import sys, zipfile\n\
             src, dst = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2], 'w')\n\
             for n in src.namelist():\n\
             \x20   data = src.read(n)\n\
             \x20   if n.endswith('METADATA'): data = data.replace(b'Version: ' + sys.argv[3].encode(), b'Version: 9.9.9')\n\
             \x20   dst.writestr(n, data)\n\
             dst.close()",
        ])
        .arg(&dist.wheel)
        .arg(&wheel)
        .arg(VERSION)
        .output_within(RUN_LIMIT);
    assert!(rewrite.status.success(), "{}", text(&rewrite));
    let staged = other.path().join("holon-test");
    copy_dir(&dist.dir.join("npm/holon-test"), &staged);
    let manifest = staged.join("package.json");
    let text_of = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text_of.replacen(
            &format!("\"version\": \"{VERSION}\""),
            "\"version\": \"9.9.9\"",
            1,
        ),
    )
    .unwrap();
    let pack = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(other.path())
        .arg(&staged)
        .output_within(RUN_LIMIT);
    assert!(pack.status.success(), "{}", text(&pack));
    let tampered = other.path().join("holon-test-9.9.9.tgz");
    let wrong = version_mismatches(&wheel, &[&tampered, &dist.platform], VERSION);
    assert_eq!(wrong.len(), 3, "{wrong:#?}");
    assert!(
        wrong[0].contains("file name") && wrong[1].contains("METADATA"),
        "{wrong:#?}"
    );
    assert!(
        wrong[2].contains("holon-test-9.9.9.tgz: version \"9.9.9\""),
        "{wrong:#?}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn installed_from_the_built_files_alone_it_tests_python_and_typescript_servers_with_no_rust() {
    let dist = dist();
    let machine = Machine::new();
    let home = machine.home().to_path_buf();

    // The wheel, into a fresh virtual environment, offline.
    let venv = home.join("venv");
    let made = machine
        .command("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output_within(LIMIT);
    assert!(made.status.success(), "{}", text(&made));
    let start = Instant::now();
    let pip = machine
        .command(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(&dist.wheel)
        .output_within(LIMIT);
    let pip_took = start.elapsed();
    assert!(pip.status.success(), "{}", text(&pip));
    let from_wheel = venv.join("bin/holon-test");

    // The npm launcher and this platform's package, into a fresh npm project, offline.
    let project = home.join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{ "name": "project", "private": true }"#,
    )
    .unwrap();
    let start = Instant::now();
    let npm = machine
        .command("npm")
        .current_dir(&project)
        .args(["install", "--offline", "--save-dev"])
        .arg(&dist.launcher)
        .arg(&dist.platform)
        .output_within(LIMIT);
    let npm_took = start.elapsed();
    assert!(npm.status.success(), "{}", text(&npm));
    let from_npm = project.join("node_modules/.bin/holon-test");
    eprintln!("installed from the files: pip {pip_took:.2?}, npm {npm_took:.2?}");

    // Both answer as `holon-test`, at the crate's version, and check a manifest.
    let manifest = root().join("examples/word-stats/holon.yaml");
    for holon_test in [&from_wheel, &from_npm] {
        let version = machine
            .command(holon_test)
            .arg("--version")
            .output_within(RUN_LIMIT);
        assert!(version.status.success(), "{}", text(&version));
        assert_eq!(
            String::from_utf8_lossy(&version.stdout),
            format!("holon-test {VERSION}\n")
        );
        let check = machine
            .command(holon_test)
            .arg("check")
            .arg(&manifest)
            .output_within(RUN_LIMIT);
        assert!(check.status.success(), "{}", text(&check));
        assert!(
            text(&check).contains("accepted with 0 warnings"),
            "{}",
            text(&check)
        );
    }

    // A server on the runtime package, from its built wheel (the template's, with the pinned
    // SDK).
    let agents = home.join("agents");
    std::fs::create_dir(&agents).unwrap();
    let python = new_agent(&from_wheel, &machine, &agents, "py-agent", "python");
    let packages = crate::util::runtime_packages::installed();
    let site = crate::util::runtime_packages::pythonpath(&packages);
    let run_python = || {
        machine
            .command(&from_wheel)
            .current_dir(&python)
            .args([
                "--manifest",
                "holon.yaml",
                "--server-cmd",
                "python3 agent.py",
            ])
            .env("PYTHONPATH", &site)
            .output_within(LIMIT)
    };
    assert_passed(&run_python(), false);
    drift(&python);
    assert_drift_named(&run_python(), false);

    // A server on the runtime package, from its built tarball (the template's, its types checked
    // with the pinned SDK and compiler, run by Node 22 as it is).
    let typescript = new_agent(&from_npm, &machine, &agents, "ts-agent", "typescript");
    crate::util::runtime_packages::link_node_modules(&packages, &typescript);
    let modules = typescript.join("node_modules");
    let build = machine
        .command(modules.join(".bin/tsc"))
        .current_dir(&typescript)
        .output_within(LIMIT);
    assert!(build.status.success(), "tsc: {}", text(&build));
    let run_typescript = || {
        machine
            .command(&from_npm)
            .current_dir(&typescript)
            .args(["--manifest", "holon.yaml", "--server-cmd", "node agent.ts"])
            .output_within(LIMIT)
    };
    assert_passed(&run_typescript(), false);
    drift(&typescript);
    assert_drift_named(&run_typescript(), false);
}

#[test]
fn the_release_archive_is_where_cargo_binstall_looks() {
    let dist = dist();
    let metadata = crate::util::paths::workspace_metadata();
    let kit = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "holon-kit")
        .unwrap();
    let binstall = &kit["metadata"]["binstall"];
    assert_eq!(binstall["pkg-fmt"], "tgz");
    let file = dist.archive.file_name().unwrap().to_str().unwrap();
    let target = file
        .strip_prefix("holon-kit-")
        .and_then(|f| f.strip_suffix(".tar.gz"))
        .unwrap();
    let fill = |template: &str, bin: &str| {
        template
            .replace("{ name }", "holon-kit")
            .replace("{ version }", VERSION)
            .replace("{ target }", target)
            .replace("{ bin }", bin)
            .replace("{ binary-ext }", "")
    };
    let url = fill(binstall["pkg-url"].as_str().unwrap(), "");
    assert!(
        url.ends_with(&format!("/releases/download/v{VERSION}/{file}")),
        "{url}"
    );
    let unpacked = tempfile::tempdir().unwrap();
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&dist.archive)
        .arg("-C")
        .arg(unpacked.path())
        .output_within(RUN_LIMIT);
    assert!(untar.status.success(), "{}", text(&untar));
    // Every binary the crate declares, at `bin-dir`, and each says its name and the version.
    for (bin, says) in [
        ("cargo-holon-test", "cargo holon-test"),
        ("holon-test", "holon-test"),
    ] {
        let path = unpacked
            .path()
            .join(fill(binstall["bin-dir"].as_str().unwrap(), bin));
        let version = Command::new(&path)
            .arg("--version")
            .output_within(RUN_LIMIT);
        assert!(
            version.status.success(),
            "{}: {}",
            path.display(),
            text(&version)
        );
        assert_eq!(
            String::from_utf8_lossy(&version.stdout),
            format!("{says} {VERSION}\n")
        );
    }
    let bins: Vec<&str> = kit["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == serde_json::json!(["bin"]))
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(bins, ["cargo-holon-test", "holon-test"]);
}

/// The launcher as the npm tarball holds it, unpacked into a folder with no platform package.
fn launcher(dist: &Dist) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&dist.launcher)
        .arg("-C")
        .arg(dir.path())
        .output_within(RUN_LIMIT);
    assert!(untar.status.success(), "{}", text(&untar));
    let script = dir.path().join("package/bin/holon-test.js");
    (dir, script)
}

/// One line on stderr, nothing on stdout, exit 1.
fn assert_one_line(out: &Output, says: &[&str]) {
    assert_eq!(out.status.code(), Some(1), "{}", text(out));
    assert!(out.stdout.is_empty(), "{}", text(out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for said in says {
        assert!(stderr.contains(said), "`{said}` in: {stderr}");
    }
}

#[test]
fn the_npm_launcher_says_in_one_line_why_it_cannot_run_and_passes_on_codes_and_signals() {
    let dist = dist();
    let (dir, script) = launcher(&dist);
    let node = |envs: &[(&str, &std::ffi::OsStr)], args: &[&str]| {
        let mut c = Command::new("node");
        c.env_remove("HOLON_TEST_BINARY").envs(envs.iter().copied());
        c.args(args).arg(&script).arg("--version");
        c.output_within(RUN_LIMIT)
    };
    let alternatives = ["pip install holon-test", "cargo install holon-kit"];

    // This platform, its package not installed.
    let platform = tarball_json(&dist.platform, "package.json");
    let name = platform["name"].as_str().unwrap();
    let out = node(&[], &[]);
    assert_one_line(&out, &[&[name][..], &alternatives[..]].concat());

    // A platform with no package at all.
    let preload = dir.path().join("elsewhere.cjs");
    std::fs::write(
        &preload,
        "Object.defineProperty(process, 'platform', { value: 'sunos' });\n",
    )
    .unwrap();
    let out = node(&[], &["--require", preload.to_str().unwrap()]);
    assert_one_line(
        &out,
        &[&["no prebuilt binary for sunos-"][..], &alternatives[..]].concat(),
    );

    // `HOLON_TEST_BINARY` naming nothing, or a folder.
    for nothing in [dir.path().join("missing"), dir.path().to_path_buf()] {
        let out = node(&[("HOLON_TEST_BINARY", nothing.as_os_str())], &[]);
        assert_one_line(&out, &["HOLON_TEST_BINARY", "not a file"]);
    }

    // Naming a binary: it runs with the arguments, and its exit code is the launcher's.
    let binary = std::ffi::OsStr::new(PLAIN_BIN);
    let out = node(&[("HOLON_TEST_BINARY", binary)], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("holon-test {VERSION}\n")
    );
    for (args, code) in [
        (&["check", "/nonexistent/holon.yaml"][..], 1),
        (&["--bogus"][..], 2),
    ] {
        let out = Command::new("node")
            .env("HOLON_TEST_BINARY", binary)
            .arg(&script)
            .args(args)
            .output_within(RUN_LIMIT);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
    }

    // A SIGTERM or SIGHUP sent to the launcher alone reaches the binary, and the launcher
    // ends as the binary did.
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let pid_file = dir.path().join(format!("child-{signal}.pid"));
        let child = dir.path().join(format!("child-{signal}.sh"));
        std::fs::write(
            &child,
            format!(
                "#!/bin/sh\necho $$ > {}\necho ready\nexec sleep 60\n",
                pid_file.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&child, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut running = Running::spawn(
            Command::new("node")
                .env("HOLON_TEST_BINARY", &child)
                .arg(&script)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped()),
        );
        // The binary runs: the launcher has set its handlers (right after the spawn).
        running.wait_for("the binary's start", RUN_LIMIT, |r| {
            r.stdout().contains("ready")
        });
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        running.signal(signal);
        let ended = running.finish(RUN_LIMIT);
        // SAFETY: kill(2) with signal 0 only asks whether the process exists.
        let alive = || unsafe { libc::kill(pid, 0) } == 0;
        let gone = wait_until(Instant::now() + Duration::from_secs(5), || !alive());
        if !gone {
            // SAFETY: as above; the test started this process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        assert!(gone, "the binary outlived its launcher's signal {signal}");
        assert_eq!(ended.status.signal(), Some(signal), "{ended}");
    }
}

#[test]
fn holon_test_is_the_same_command_without_the_cargo_word() {
    let out = Command::new(PLAIN_BIN)
        .arg("--version")
        .output_within(RUN_LIMIT);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("holon-test {VERSION}\n")
    );
    let help = Command::new(PLAIN_BIN)
        .arg("--help")
        .output_within(RUN_LIMIT);
    assert!(help.status.success(), "{}", text(&help));
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("Usage: holon-test [OPTIONS]"),
        "{}",
        text(&help)
    );
    // Under cargo, the binary keeps its name, called as cargo calls it or directly.
    for args in [&["holon-test", "--version"][..], &["--version"][..]] {
        let out = Command::new(crate::util::BIN)
            .args(args)
            .output_within(RUN_LIMIT);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("cargo holon-test {VERSION}\n"),
            "{args:?}"
        );
    }
}

#[test]
fn outside_a_cargo_package_holon_test_runs_the_server_its_config_names_or_says_what_to_add() {
    let machine = Machine::new();
    let agent = new_agent(
        Path::new(PLAIN_BIN),
        &machine,
        machine.home(),
        "py-agent",
        "python",
    );
    let site =
        crate::util::runtime_packages::pythonpath(&crate::util::runtime_packages::installed());
    // `holon-test` alone: `[server] command = "python agent.py"`, in the agent's folder.
    let run = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .env("PYTHONPATH", &site)
        .output_within(LIMIT);
    assert_passed(&run, true);

    // From a folder below, the nearest holon.yaml and its config; a failure's replay line is
    // `holon-test` itself, with no flag.
    drift(&agent);
    let below = agent.join("notes");
    std::fs::create_dir(&below).unwrap();
    let drifted = machine
        .command(PLAIN_BIN)
        .current_dir(&below)
        .env("PYTHONPATH", &site)
        .output_within(LIMIT);
    assert_drift_named(&drifted, true);

    // An unknown key in `[server]`: refused, located, before any server starts.
    let config = agent.join("holon-test.toml");
    std::fs::write(
        &config,
        "[server]\ncommand = \"python agent.py\"\ncomand = \"x\"\n",
    )
    .unwrap();
    let refused = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .output_within(RUN_LIMIT);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    for said in [
        "error[unknown-field]: unknown field `comand` in `[server]`",
        "holon-test.toml:3:1",
        "did you mean `command`?",
    ] {
        assert!(
            text(&refused).contains(said),
            "`{said}` in: {}",
            text(&refused)
        );
    }
    let check = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .arg("check")
        .output_within(RUN_LIMIT);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(
        text(&check).contains("holon-test.toml:3:1"),
        "{}",
        text(&check)
    );

    // No config, no flag, no Cargo.toml: says what to add, exit 1.
    std::fs::remove_file(&config).unwrap();
    let nothing = machine
        .command(PLAIN_BIN)
        .current_dir(&agent)
        .output_within(RUN_LIMIT);
    assert_eq!(nothing.status.code(), Some(1), "{}", text(&nothing));
    for said in ["[server]", "command = ", "--server-cmd"] {
        assert!(
            text(&nothing).contains(said),
            "`{said}` in: {}",
            text(&nothing)
        );
    }
}

#[test]
fn the_release_workflow_builds_every_platform_the_launcher_names() {
    let text =
        std::fs::read_to_string(root().join(".github/workflows/release.yml")).expect("release.yml");
    let workflow = holon_core::manifest::yaml::parse(&text)
        .expect("valid YAML")
        .to_json();
    assert!(workflow.pointer("/on/push/tags").is_some(), "{workflow}");
    let matrix = workflow
        .pointer("/jobs/build/strategy/matrix/include")
        .and_then(|m| m.as_array())
        .expect("a matrix");
    let mut built: Vec<String> = matrix
        .iter()
        .map(|m| format!("@holon-kit/holon-test-{}", m["npm"].as_str().unwrap()))
        .collect();
    built.sort();
    let launcher: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("dist/npm/holon-test/package.json")).unwrap(),
    )
    .unwrap();
    let named: Vec<&String> = launcher["optionalDependencies"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(built.iter().collect::<Vec<_>>(), named);
    for m in matrix {
        let target = m["target"].as_str().unwrap();
        let linux = target.contains("linux");
        // Linux builds run in the manylinux 2.17 container: glibc 2.17 or later.
        assert_eq!(
            m["manylinux"],
            if linux { "2_17" } else { "off" },
            "{target}"
        );
        assert_eq!(
            m["npm"].as_str().unwrap().starts_with("linux"),
            linux,
            "{target}"
        );
    }
    let steps = workflow
        .pointer("/jobs/build/steps")
        .and_then(|s| s.as_array())
        .unwrap();
    let maturin = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("PyO3/maturin-action"))
        })
        .expect("a maturin step");
    assert_eq!(maturin["with"]["working-directory"], "dist/python");
    // The npm package and the archive take the wheel's binary: one build a platform.
    assert!(text.contains(".data/scripts/holon-test"), "{text}");
}

#[test]
fn in_a_cargo_package_holon_test_runs_the_test_target_and_not_the_server_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("tests/fixtures/harness/word-stats.yaml"),
        dir.path().join("holon.yaml"),
    )
    .unwrap();
    // A package cargo cannot build, and a server command that would leave a mark.
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"not-built\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("holon-test.toml"),
        "[server]\ncommand = \"touch started\"\n",
    )
    .unwrap();
    let out = Command::new(PLAIN_BIN)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output_within(crate::util::CARGO_LIMIT);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("the agent's tests did not build"),
        "{}",
        text(&out)
    );
    assert!(
        !dir.path().join("started").exists(),
        "the server command ran"
    );
}

/// The wheel is the one README promises: built for glibc 2.17 (`manylinux2014`, linked by zig),
/// and the binary in it needs no GLIBC symbol past 2.17 (`.ci/dist` refuses one that does); the
/// release workflow checks the same of what it ships.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_wheel_is_for_glibc_2_17_and_its_binary_needs_nothing_past_it() {
    let dist = crate::util::dist::dist();
    let name = dist
        .wheel
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert!(name.contains("manylinux_2_17_"), "{name}");
    let out = std::process::Command::new("objdump")
        .arg("-T")
        .arg(dist.dir.join("bin/holon-test"))
        .output_within(RUN_LIMIT);
    assert!(out.status.success(), "{}", text(&out));
    let symbols = String::from_utf8_lossy(&out.stdout);
    let highest = (symbols.split("GLIBC_").skip(1))
        .filter_map(|s| {
            let version: String = s
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
        })
        .max()
        .expect("GLIBC symbols");
    assert!(highest <= (2, 17), "GLIBC_{}.{}", highest.0, highest.1);
    let release =
        std::fs::read_to_string(root().join(".github/workflows/release.yml")).expect("release.yml");
    assert!(
        release.contains("objdump -T target/bin/holon-test"),
        "{release}"
    );
}

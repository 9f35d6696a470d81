//! How the kit was started, and so the words every command it prints begins with: the form the
//! author typed, which they can paste back (`cargo holon-test`, `npx holon-test`, `uv run
//! holon-test`, ...). One function, [`Invocation::name`], says it; the help, `--version`, every
//! replay line and every hint take it from there.

use std::ffi::OsString;
use std::path::Path;

/// Set by the npm launcher (`bin/holon-test.js`) for the binary it runs: the kit came from an
/// npm project, where a bare `holon-test` is not on the author's PATH.
pub const LAUNCHER_VAR: &str = "HOLON_TEST_LAUNCHER";

/// How the binary was started.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// As cargo's subcommand (`cargo holon-test`, or the binary `cargo-holon-test` directly).
    Cargo,
    /// Through the npm launcher, by the package manager that ran it.
    Node(Runner),
    /// By `uv run`, in the project's environment.
    UvRun,
    /// By `uvx` (`uv tool run`), from uv's tool cache.
    Uvx,
    /// `holon-test` on the PATH (a virtual environment, `cargo install`, a release archive).
    Plain,
}

/// The package manager of an npm project, as `npm_config_user_agent` names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Runner {
    /// npm: `npx holon-test` (also for `npm test`, whose script may do more than run the kit).
    Npm,
    /// pnpm: `pnpm exec holon-test`.
    Pnpm,
    /// yarn: `yarn holon-test`.
    Yarn,
    /// bun: `bunx holon-test`.
    Bun,
}

impl Invocation {
    /// How the process was started: from its arguments (cargo runs its subcommand as
    /// `cargo-holon-test holon-test ...`) and the variables its starter set (`lookup`).
    pub fn detect(args: &[OsString], lookup: impl Fn(&str) -> Option<OsString>) -> Invocation {
        let stem = args
            .first()
            .and_then(|a| Path::new(a).file_stem())
            .and_then(|s| s.to_str());
        if stem == Some("cargo-holon-test") || args.get(1).is_some_and(|a| a == "holon-test") {
            return Invocation::Cargo;
        }
        let set = |name: &str| lookup(name).is_some_and(|v| !v.is_empty());
        // The launcher is the binary's own parent: it wins over a uv environment around it.
        if lookup(LAUNCHER_VAR).is_some_and(|v| v == "npm") {
            let agent = lookup("npm_config_user_agent").unwrap_or_default();
            let agent = agent.to_string_lossy();
            let runner = match agent.split('/').next().unwrap_or("") {
                "pnpm" => Runner::Pnpm,
                "yarn" => Runner::Yarn,
                "bun" => Runner::Bun,
                _ => Runner::Npm,
            };
            return Invocation::Node(runner);
        }
        // `uv run` sets `UV` and `UV_RUN_RECURSION_DEPTH`; `uvx` sets `UV` alone.
        match (set("UV"), set("UV_RUN_RECURSION_DEPTH")) {
            (true, true) => Invocation::UvRun,
            (true, false) => Invocation::Uvx,
            _ => Invocation::Plain,
        }
    }

    /// The command as the author would type it again, which every command the kit prints
    /// begins with.
    pub fn name(self) -> &'static str {
        match self {
            Invocation::Cargo => "cargo holon-test",
            Invocation::Node(Runner::Npm) => "npx holon-test",
            Invocation::Node(Runner::Pnpm) => "pnpm exec holon-test",
            Invocation::Node(Runner::Yarn) => "yarn holon-test",
            Invocation::Node(Runner::Bun) => "bunx holon-test",
            Invocation::UvRun => "uv run holon-test",
            Invocation::Uvx => "uvx holon-test",
            Invocation::Plain => "holon-test",
        }
    }

    /// The program's own name, which `--version` says (`holon-test 0.2.0`, `cargo holon-test
    /// 0.2.0`): the binary's, not the words that started it.
    pub fn program(self) -> &'static str {
        match self {
            Invocation::Cargo => "cargo holon-test",
            _ => "holon-test",
        }
    }

    /// A text of the layers below the command line, which name the command the way a Rust
    /// author types it (`cargo holon-test new NAME`), in this author's words.
    pub fn reword(self, text: &str) -> String {
        match self {
            Invocation::Cargo => text.to_string(),
            other => text.replace("`cargo holon-test", &format!("`{}", other.name())),
        }
    }
}

/// `cargo`, as a shell would start it: without the variables cargo sets for the package whose
/// build, test or run started this process (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, `OUT_DIR`...).
/// They describe that package, not the agent's; and a build script that reads one (ring's reads
/// `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`) runs again whenever one changes, and all that
/// depends on it is compiled again: ring, rustls, reqwest, rmcp and the kit, each time
/// `holon-test` is started from another package's test or build script rather than a shell.
pub(crate) fn cargo() -> std::process::Command {
    let mut c =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(of_a_package) {
            c.env_remove(name);
        }
    }
    c
}

/// Whether `name` is one of the variables cargo sets for one package's compile, build script,
/// test or run (the Cargo book, "Environment variables Cargo sets for crates" and "for build
/// scripts").
fn of_a_package(name: &str) -> bool {
    const PREFIXES: [&str; 5] = [
        "CARGO_PKG_",
        "CARGO_MANIFEST_",
        "CARGO_BIN_EXE_",
        "CARGO_CFG_",
        "DEP_",
    ];
    const NAMES: [&str; 6] = [
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(args: &[&str], vars: &[(&str, &str)]) -> &'static str {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        Invocation::detect(&args, |name| {
            (vars.iter().find(|(k, _)| *k == name)).map(|(_, v)| OsString::from(v))
        })
        .name()
    }

    #[test]
    fn each_starter_is_told_by_what_it_leaves() {
        assert_eq!(
            detect(&["cargo-holon-test", "holon-test"], &[]),
            "cargo holon-test"
        );
        assert_eq!(detect(&["/x/cargo-holon-test"], &[]), "cargo holon-test");
        assert_eq!(detect(&["holon-test"], &[]), "holon-test");
        let npm = "npm/10.8.2 node/v22.23.5 linux x64 workspaces/false";
        for (agent, form) in [
            (npm, "npx holon-test"),
            (
                "pnpm/9.1.0 npm/? node/v22.1.0 linux x64",
                "pnpm exec holon-test",
            ),
            (
                "yarn/1.22.22 npm/? node/v22.1.0 linux x64",
                "yarn holon-test",
            ),
            ("bun/1.1.0 npm/? node/v22.1.0 linux x64", "bunx holon-test"),
            ("", "npx holon-test"),
        ] {
            let vars = [(LAUNCHER_VAR, "npm"), ("npm_config_user_agent", agent)];
            assert_eq!(detect(&["holon-test"], &vars), form, "{agent}");
        }
        let uv = ("UV", "/usr/bin/uv");
        let depth = ("UV_RUN_RECURSION_DEPTH", "1");
        assert_eq!(detect(&["holon-test"], &[uv, depth]), "uv run holon-test");
        assert_eq!(detect(&["holon-test"], &[uv]), "uvx holon-test");
        // The npm launcher inside a uv environment: the launcher started the binary.
        assert_eq!(
            detect(&["holon-test"], &[uv, depth, (LAUNCHER_VAR, "npm")]),
            "npx holon-test"
        );
        assert_eq!(detect(&["holon-test"], &[("UV", "")]), "holon-test");
    }

    #[test]
    fn the_commands_below_are_reworded_for_the_author() {
        let hint = "run `cargo holon-test new NAME` to start from a template";
        assert_eq!(Invocation::Cargo.reword(hint), hint);
        assert_eq!(
            Invocation::UvRun.reword(hint),
            "run `uv run holon-test new NAME` to start from a template"
        );
    }

    /// This test runs as cargo runs a package's tests, with the package's variables set: the
    /// `cargo` the run starts has them removed, and keeps the rest of the environment.
    #[test]
    fn the_cargo_a_run_starts_has_none_of_the_variables_of_the_package_that_started_it() {
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
        let c = cargo();
        let removed: Vec<String> = (c.get_envs())
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        for name in [
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
        ] {
            assert!(
                removed.iter().any(|r| r == name),
                "{name} is kept: {removed:?}"
            );
        }
        assert!(
            !removed
                .iter()
                .any(|r| r == "PATH" || r == "CARGO" || r == "HOME")
        );
        for (name, keep) in [
            ("CARGO_PKG_VERSION_PRE", false),
            ("CARGO_BIN_EXE_holon-test", false),
            ("DEP_RING_CORE_0_17_14__INCLUDE", false),
            ("OUT_DIR", false),
            ("CARGO", true),
            ("CARGO_HOME", true),
            ("CARGO_TARGET_DIR", true),
            ("CARGO_PROFILE_DEV_DEBUG", true),
            ("RUSTFLAGS", true),
        ] {
            assert_eq!(of_a_package(name), !keep, "{name}");
        }
    }
}

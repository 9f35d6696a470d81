//! `holon-test types`: the types of a manifest's `interface` for the agent's own language,
//! written beside `holon.yaml` (`holon.types.ts`, `holon_types.py`): the input, the output, the
//! declared codes, and the `Ctx` whose `fail` takes only those. The agent imports them, so an
//! undeclared code or an answer without a required field fails the language's type check; a
//! test run says when a file written here no longer matches the manifest.

mod python;
mod schema;
mod typescript;

use std::path::{Path, PathBuf};

use holon_core::check::{self, Report};
use holon_core::manifest::{Manifest, folder_of};
use holon_harness::exit::{OK, REFUSED, USAGE};

/// A language `types` writes for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// `holon.types.ts`.
    #[value(name = "typescript")]
    TypeScript,
    /// `holon_types.py`.
    Python,
}

impl Language {
    /// Every language, in the order their files are looked for.
    pub const ALL: [Language; 2] = [Language::TypeScript, Language::Python];

    /// The file's name, beside `holon.yaml`.
    pub fn file(self) -> &'static str {
        match self {
            Language::TypeScript => typescript::FILE,
            Language::Python => python::FILE,
        }
    }

    /// The language of the agent in `dir`, by its package file: `package.json`, or
    /// `pyproject.toml`; `None` when it has neither (or both).
    pub fn of_folder(dir: &Path) -> Option<Language> {
        match (
            dir.join("package.json").is_file(),
            dir.join("pyproject.toml").is_file(),
        ) {
            (true, false) => Some(Language::TypeScript),
            (false, true) => Some(Language::Python),
            _ => None,
        }
    }

    /// Whether the agent in `dir` depends on the kit's runtime package (`holon-kit` in
    /// `package.json` or `pyproject.toml`): its `Ctx` is the package's, typed by the declared
    /// codes. An agent with an adapter of its own, written before the packages, gets the
    /// `Ctx` its adapter implements, declared in the file.
    fn uses_runtime(self, dir: &Path) -> bool {
        match self {
            Language::TypeScript => {
                let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
                    return false;
                };
                let Ok(package) = serde_json::from_str::<serde_json::Value>(&text) else {
                    return false;
                };
                ["dependencies", "devDependencies"].iter().any(|field| {
                    package
                        .get(field)
                        .and_then(|d| d.get("holon-kit"))
                        .is_some()
                })
            }
            Language::Python => {
                let Ok(text) = std::fs::read_to_string(dir.join("pyproject.toml")) else {
                    return false;
                };
                text.lines().map(str::trim).any(|line| {
                    let line = line.trim_start_matches(['"', '\'']);
                    let rest = line
                        .strip_prefix("holon-kit")
                        .or_else(|| line.strip_prefix("holon_kit"));
                    rest.is_some_and(|r| {
                        r.starts_with(['=', '>', '<', '~', '!', '"', '\'', ' ', '['])
                    })
                })
            }
        }
    }

    /// The file's text for `manifest`.
    pub fn render(self, manifest: &Manifest) -> String {
        let runtime = self.uses_runtime(&manifest.dir());
        let interface = schema::Interface {
            input: schema::read(&manifest.interface.input, "Input"),
            output: schema::read(&manifest.interface.output, "Output"),
            codes: (manifest.interface.errors.iter())
                .map(|e| e.code.clone())
                .collect(),
        };
        match self {
            Language::TypeScript => typescript::render(&interface, runtime),
            Language::Python => python::render(&interface, runtime),
        }
    }
}

/// The files written here for `manifest` that no longer say what it does: each path.
pub fn stale(manifest: &Manifest) -> Vec<PathBuf> {
    let dir = manifest.dir();
    (Language::ALL.into_iter())
        .filter_map(|language| {
            let path = dir.join(language.file());
            let written = std::fs::read_to_string(&path).ok()?;
            (written != language.render(manifest)).then_some(path)
        })
        .collect()
}

/// Writes the file of `language` for `manifest` beside it, whole (a temporary file renamed
/// over it): its path.
pub fn write(manifest: &Manifest, language: Language) -> std::io::Result<PathBuf> {
    let path = manifest.dir().join(language.file());
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, language.render(manifest))?;
    std::fs::rename(&temporary, &path)?;
    Ok(path)
}

/// `holon-test types` on the manifest at `path`: checked first (a refused one is said through
/// `say`, and nothing written), then the file of `language` (or of the package file beside it)
/// written. `kit` is the command as the author typed it.
pub fn run(path: &Path, language: Option<Language>, kit: &str, say: &dyn Fn(&Report)) -> u8 {
    let dir = folder_of(path);
    let Some(language) = language.or_else(|| Language::of_folder(&dir)) else {
        eprintln!(
            "error: which language? `{}` has no `package.json` or `pyproject.toml` to tell (pass `--lang typescript` or `--lang python`; a Rust agent's types are its own structs)",
            dir.display()
        );
        return USAGE;
    };
    let report = check::check_file(path);
    // Its warnings are `check`'s and the test run's to say.
    if !report.accepted() {
        say(&report);
    }
    let Ok(manifest) = check::into_manifest(report) else {
        eprintln!(
            "error: no types written: `{}` is refused, and its types would be of a manifest the registry does not take (fix it, then run `{kit} types`)",
            path.display()
        );
        return REFUSED;
    };
    match write(&manifest, language) {
        Ok(written) => {
            let codes = match manifest.interface.errors.len() {
                1 => "the 1 code".to_string(),
                n => format!("the {n} codes"),
            };
            eprintln!(
                "wrote `{}`: `Input`, `Output`, and `ErrorCode`, {codes} `interface.errors` declares",
                shown(&written).display()
            );
            OK
        }
        Err(e) => {
            eprintln!(
                "error: cannot write `{}`: {e}",
                shown(&dir.join(language.file())).display()
            );
            REFUSED
        }
    }
}

/// A warning for each file beside the manifest at `path` that `types` wrote and that no longer
/// says what the manifest does, naming the command (`kit types`) that writes it again.
pub fn warn_stale(path: &Path, kit: &str) {
    let dir = folder_of(path);
    if !(Language::ALL.iter()).any(|l| dir.join(l.file()).is_file()) {
        return;
    }
    let Ok(manifest) = check::into_manifest(check::check_file(path)) else {
        return;
    };
    for file in stale(&manifest) {
        eprintln!(
            "warning: `{}` is out of date with `{}`: its types are not the manifest's `interface` any more (run `{kit} types`)",
            shown(&file).display(),
            path.display(),
        );
    }
}

/// A path as the author reads it: without a leading `./`.
fn shown(path: &Path) -> &Path {
    path.strip_prefix(".").unwrap_or(path)
}

//! The manifest a server runs on: embedded at build time by `manifest!`, or replaced by the file
//! `HOLON_MANIFEST` names, and checked as the registry would before the server binds.

use super::ServeError;
use holon_core::check;
use holon_core::manifest::Manifest;

/// A manifest compiled into the binary; build it with [`crate::manifest!`].
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedManifest {
    /// The path it was read from at build time (messages only).
    path: &'static str,
    /// The manifest file's contents, as `include_str!` read them.
    text: &'static str,
}

impl EmbeddedManifest {
    // What `manifest!` expands to; not API.
    #[doc(hidden)]
    pub const fn __new(path: &'static str, text: &'static str) -> EmbeddedManifest {
        EmbeddedManifest { path, text }
    }
}

/// Embeds the package's `holon.yaml` in the binary:
/// `holon_kit::serve(holon_kit::manifest!(), ...)`. `manifest!("other.yaml")` takes another
/// file, relative to the package root.
#[macro_export]
macro_rules! manifest {
    () => {
        $crate::manifest!("holon.yaml")
    };
    ($file:literal) => {
        $crate::EmbeddedManifest::__new(
            concat!(env!("CARGO_MANIFEST_DIR"), "/", $file),
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $file)),
        )
    };
}

/// The manifest to serve, checked as the registry would; `blessing`, as a run that blesses
/// checks it (`check::for_bless`: an example output the schema no longer admits is not a
/// refusal, since the run is writing the agent's answer over it).
pub(crate) fn load(
    embedded: EmbeddedManifest,
    replacement: Option<&std::path::Path>,
    blessing: bool,
) -> Result<Manifest, ServeError> {
    // Both are checked as text: a deployed server has no `files/` folder for example handles.
    let report = match replacement {
        Some(path) => {
            let bytes = check::read_manifest(path).map_err(|message| {
                ServeError::Config(format!("cannot use `HOLON_MANIFEST`: {message}"))
            })?;
            let text = String::from_utf8(bytes).map_err(|_| {
                ServeError::Config(format!(
                    "cannot use `HOLON_MANIFEST`: `{}` is not UTF-8 text",
                    path.display()
                ))
            })?;
            check::check_str(&text, path)
        }
        None => check::check_str(embedded.text, std::path::Path::new(embedded.path)),
    };
    let report = if blessing {
        check::for_bless(report)
    } else {
        report
    };
    check::into_manifest(report).map_err(|r| ServeError::Refused(check::render_human(&r, false)))
}

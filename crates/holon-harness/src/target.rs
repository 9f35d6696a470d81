//! Which server a run's MCP pass calls: one already running (`--url`, `HOLON_SERVER_URL`),
//! reached with the run's headers and TLS roots, or one the run starts (a binary or a command),
//! with the variables it is started with. Shared by the trials and a call by hand.

use std::path::PathBuf;
use std::sync::Arc;

use crate::context::Run;
use crate::error::RunError;
use crate::mcp::{McpPass, Server, ServerAt};
use crate::process::ServerSpec;
use crate::remote::{self, Header};
use crate::settings;

/// What a harness says of its server.
pub(crate) struct Target<'a> {
    /// The server to start, when the run starts one.
    pub server: Option<&'a ServerSpec>,
    /// The headers and the extra TLS roots of a server already running.
    pub remote: &'a (Vec<Header>, Option<PathBuf>),
    /// Whether the command line gave the address (else `HOLON_SERVER_URL` did).
    pub url_given: bool,
    /// Variables for the server process, beside `PORT`.
    pub env: &'a [(String, String)],
}

/// The server of `run`'s MCP pass, started when a call first needs it; `None` when the run has
/// none; `Err` when the address or a header is not usable.
pub(crate) fn server(run: &Run, target: Target<'_>) -> Result<Option<Arc<Server>>, RunError> {
    let at = match (&run.settings.server_url, target.server) {
        (Some(url), _) => {
            let (headers, ca_cert) = target.remote.clone();
            let remote = remote::Remote::new(url, headers, ca_cert).map_err(|why| {
                // The command line checked its `--url`; only the variable can be wrong here.
                match target.url_given {
                    true => RunError::Remote(why),
                    false => RunError::ServerUrlVar {
                        var: settings::SERVER_URL_VAR,
                        why,
                    },
                }
            })?;
            ServerAt::Running(Arc::new(remote))
        }
        (None, Some(spec)) => ServerAt::Start(spec.clone()),
        (None, None) => return Ok(None),
    };
    let mut env = target.env.to_vec();
    if let Some(u) = &run.upstreams {
        env.extend(u.server_env().iter().cloned());
    }
    if run.settings.bless {
        // A Rust server checks its manifest as the run does: an example output the schema
        // no longer admits is what this run rewrites.
        env.push((settings::BLESS_VAR.to_string(), "1".to_string()));
    }
    Ok(Some(McpPass::server(run, at, env)))
}

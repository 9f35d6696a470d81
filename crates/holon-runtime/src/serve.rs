//! `serve`: one agent function as an MCP server over Streamable HTTP, until a signal. The
//! pieces are in `embed` (the manifest), `config` (the environment), `server` (the accept loop)
//! and `tool` (the one tool and its results).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::config::ServeOptions;
use super::embed::{EmbeddedManifest, load};
use super::server::Server;
use super::{Agent, ServeError};

/// Serves `agent` as an MCP server until SIGTERM or Ctrl-C, on its own tokio runtime. On the
/// signal it stops accepting, closes idle and half-sent connections at once, lets calls in
/// flight finish and answer (for `timeout_s` plus the shutdown grace at most), then returns
/// `Ok`. `HOST`, `PORT`, `HOLON_MANIFEST` and the limits' `HOLON_*` variables (the guide's
/// table, `docs/src/reference/runtime.md`) configure it.
///
/// ```no_run
/// # async fn run(input: serde_json::Value, _ctx: holon_runtime::Ctx) -> Result<serde_json::Value, holon_runtime::Failure> { Ok(input) }
/// # // In an agent, `manifest!()` embeds the package's own `holon.yaml`.
/// # macro_rules! manifest { () => { holon_runtime::manifest!("../../examples/word-stats/holon.yaml") } }
/// fn main() -> Result<(), holon_runtime::ServeError> {
///     holon_runtime::serve(manifest!(), holon_runtime::agent(run))
/// }
/// ```
pub fn serve(manifest: EmbeddedManifest, agent: Arc<dyn Agent>) -> Result<(), ServeError> {
    // Under `tls`, reqwest has rustls with no provider of its own: one for the process, before
    // the agent or `ctx.download` builds a client.
    #[cfg(feature = "tls")]
    crate::files::install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().map_err(|source| ServeError::Io {
        addr: "a tokio runtime".into(),
        source,
    })?;
    let served = runtime.block_on(serve_async(manifest, agent, ServeOptions::from_env()?));
    // A function still blocking a worker thread past the drain must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

/// [`serve`] inside a tokio runtime, with the options read from the environment.
async fn serve_async(
    manifest: EmbeddedManifest,
    agent: Arc<dyn Agent>,
    options: ServeOptions,
) -> Result<(), ServeError> {
    let manifest = load(manifest, options.manifest_path.as_deref(), options.blessing)?;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        stop.cancel();
    });
    let server = Server::bind(manifest, agent, options.addr, shutdown)
        .await?
        .with_limits(options.limits);
    let m = server.manifest();
    eprintln!(
        "{} {}: listening on http://{}/mcp (tool `{}`)",
        m.name,
        m.version,
        server.addr(),
        m.runtime.tool
    );
    server.run().await;
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

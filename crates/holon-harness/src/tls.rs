//! The TLS provider of a process that links the harness. reqwest is built with rustls and no
//! provider of its own (ring builds in seconds where aws-lc takes minutes of an agent's first
//! build), so one is installed before any client is built: the harness's, the runtime's
//! (`ctx.download`), and an agent's own in the function pass.

/// Installs ring as the process's provider, unless one is installed already.
pub fn install_provider() {
    holon_runtime::files::install_tls_provider();
}

//! The TLS provider of a process that links the harness. reqwest is built with rustls and no
//! provider of its own (ring builds in seconds where aws-lc takes minutes of an agent's first
//! build), so one is installed before any client is built: the harness's, the runtime's
//! (`ctx.download`), and an agent's own in the function pass.

/// Installs ring as the process's provider, unless one is installed already.
pub fn install_provider() {
    // rustls deprecates ring's provider (0.23.48) for its lack of post-quantum key exchange;
    // aws-lc-rs, which has it, compiles C for minutes of every agent's first build.
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
}

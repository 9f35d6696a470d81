//! What the harness benchmarks share: one binary in three roles, the harness run as
//! `--server-cmd` runs it with this binary again as the server.

/// Runs the role `HOLON_BENCH_ROLE` names: `harness`, `server`, or (unset) the benchmark.
pub fn dispatch(harness: fn() -> i32, server: fn(), bench: fn()) {
    match std::env::var("HOLON_BENCH_ROLE").as_deref() {
        Ok("harness") => std::process::exit(harness()),
        Ok("server") => server(),
        _ => bench(),
    }
}

/// The harness on `HOLON_BENCH_MANIFEST`, its server this binary in the `server` role, with
/// libtest's arguments from the command line; `configure` adds the rest (the function pass).
pub fn run_harness(
    configure: impl FnOnce(holon_kit::harness::Harness) -> holon_kit::harness::Harness,
) -> i32 {
    let manifest = std::env::var("HOLON_BENCH_MANIFEST").expect("HOLON_BENCH_MANIFEST");
    let exe = std::env::current_exe().expect("current_exe");
    let server = format!(
        "HOLON_BENCH_ROLE=server HOLON_MANIFEST='{manifest}' exec '{}'",
        exe.display()
    );
    let harness = holon_kit::harness::Harness::new(&manifest).server_command(server);
    let args = libtest_mimic::Arguments::from_args();
    i32::from(holon_harness::command::run_with_arguments(
        configure(harness),
        &args,
    ))
}

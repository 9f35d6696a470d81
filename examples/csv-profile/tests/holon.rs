//! Every example of holon.yaml, against the function and through the MCP server; the files
//! come from `files/`, through signed links in the MCP pass.

fn main() -> std::process::ExitCode {
    holon_kit::harness::Harness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/holon.yaml"))
        .function(holon_kit::agent(csv_profile::run))
        .server_binary(env!("CARGO_BIN_EXE_csv-profile"))
        .run()
}

//! Every example in holon.yaml, run against the function and through the MCP server.

fn main() -> std::process::ExitCode {
    holon_kit::harness::Harness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/holon.yaml"))
        .function(holon_kit::agent({{crate_name}}::run))
        .server_binary(env!("CARGO_BIN_EXE_{{name}}"))
        .run()
}

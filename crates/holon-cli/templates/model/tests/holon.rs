//! Every example of holon.yaml, against the function and through the MCP server, with the model
//! replayed from `recordings/` (see `holon-test.toml`).

fn main() -> std::process::ExitCode {
    holon_kit::harness::Harness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/holon.yaml"))
        .function(holon_kit::agent({{crate_name}}::run))
        .server_binary(env!("CARGO_BIN_EXE_{{name}}"))
        // Every case is a model call when recording: a few are enough to find what the
        // examples miss (an empty ticket, a huge one, control characters).
        .explore_cases(12)
        .run()
}

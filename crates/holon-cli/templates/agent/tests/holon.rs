//! Every example in holon.yaml, run against the function and through the MCP server.

fn main() -> std::process::ExitCode {
    holon_kit::harness::Harness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/holon.yaml"))
        .function(holon_kit::agent({{crate_name}}::run))
        .server_binary(env!("CARGO_BIN_EXE_{{name}}"))
        // Explore: inputs generated from `interface.input` between the examples, through both
        // passes. If every call costs money (a model behind the agent), lower it or set 0 (off),
        // and add `.explore_differential(false)` when answers vary from call to call.
        // `--explore-cases N` and `HOLON_EXPLORE_CASES` override it.
        .explore_cases(100)
        .run()
}

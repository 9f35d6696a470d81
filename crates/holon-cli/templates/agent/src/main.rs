//! The MCP server: `PORT=8080 cargo run --release`.

fn main() -> Result<(), holon_kit::ServeError> {
    holon_kit::serve(holon_kit::manifest!(), holon_kit::agent({{crate_name}}::run))
}

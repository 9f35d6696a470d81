//! The csv-profile MCP server: `PORT=8080 cargo run -p csv-profile`.

fn main() -> Result<(), holon_kit::ServeError> {
    holon_kit::serve(holon_kit::manifest!(), holon_kit::agent(csv_profile::run))
}

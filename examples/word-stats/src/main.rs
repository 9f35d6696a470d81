//! The word-stats MCP server: `PORT=8080 cargo run -p word-stats`.

fn main() -> Result<(), holon_kit::ServeError> {
    holon_kit::serve(holon_kit::manifest!(), holon_kit::agent(word_stats::run))
}

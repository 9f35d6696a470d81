//! The ticket-triage MCP server: `PORT=8080 OPENAI_API_KEY=... cargo run -p ticket-triage`.

fn main() -> Result<(), holon_kit::ServeError> {
    holon_kit::serve(holon_kit::manifest!(), holon_kit::agent(ticket_triage::run))
}

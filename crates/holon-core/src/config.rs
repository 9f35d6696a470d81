//! `holon-test.toml`, beside the manifest: what the tests of an agent need that the registry
//! never sees: the command that starts its server (an agent in any language), and the upstreams
//! the agent calls (a model, a paid API), each with the variable the agent reads its base URL
//! from, and what its tokens cost:
//!
//! ```toml
//! [server]
//! command = "node dist/holon.js"   # run in this folder with `PORT` set
//!
//! [upstreams.model]            # a name of the author's choosing
//! env = "OPENAI_BASE_URL"      # the variable the agent reads the service's base URL from
//! url = "https://api.openai.com/v1"   # optional: the real URL when the variable is unset
//! secrets = ["OPENAI_API_KEY"] # optional: variables holding credentials
//!
//! [upstreams.model.price]      # optional: in the manifest's currency, per million tokens
//! input_per_million = 0.15
//! output_per_million = 0.60
//! ```
//!
//! Every problem is reported at once, located (line, column, pointer), as the publish checks
//! report a manifest's. The secrets' rules live here too: which values a run must have, which
//! are too short to scrub safely, and [`Secrets`], the values of a run, which every output of
//! the kit is scrubbed of.

mod file;
mod secrets;

pub use file::{FILE, Secret, ServerCommand, TestConfig, TokenPrice, Upstream, parse, read};
pub use secrets::{Need, SHORTEST_SECRET, Secrets};

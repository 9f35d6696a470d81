//! The gateway's rules: payload bounds, the two schemas, the declared failures, the status a
//! call ends in, and what an agent's answer settles as. Below the manifest: nothing here reads
//! one; the checks compile a [`Gateway`] and the checked manifest carries it.

mod answer;
pub mod bounds;
mod gate;
pub mod handles;
pub mod integers;
pub mod schema;
mod status;

pub use answer::{Answer, Pass, Reply, Trouble};
pub use gate::{ErrorDecl, Gateway, Rejection};
pub use status::{Ended, Status};

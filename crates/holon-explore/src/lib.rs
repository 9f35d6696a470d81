//! Explore: inputs generated from `interface.input` between the examples (edge cases first,
//! then random ones), each admitted by the gateway's gate before it is sent, each answer judged
//! as the gateway would settle it, a failure shrunk and printed as a ready-to-paste example.
//!
//! The whole plan (every input) is drawn once per run, before the first call, and shared by
//! both trials, so a sender may take the inputs as one batch. Explore calls the agent only
//! through the [`Call`] and [`Batch`] it is given, and knows nothing of the harness that drives
//! it.
//!
//! An implementation crate of holon-kit: its items follow holon-kit's version and make no
//! promise of their own.
//!
//! The modules, lowest first: `error`; `schema` (local `$ref`s followed, `allOf` merged, types
//! and bounds); `generate` (a proptest strategy per keyword) and `edges` (the fixed edge cases);
//! `settings` and `plan` (every input of a run); `judge` (what a paying caller would get),
//! `shrink` and `report`; `explorer` (the trials' engine).

mod edges;
mod error;
mod explorer;
mod generate;
mod judge;
mod plan;
mod report;
mod schema;
mod settings;
mod shrink;

pub use error::{ExploreError, SettingError};
pub use explorer::{Batch, Call, Explored, Explorer};
pub use judge::Outcome;
pub use plan::{Case, Origin, Plan, plan};
pub use settings::{
    DEFAULT_CASES, MAX_CASES, Settings, check_cases, manifest_seed, parse_cases, parse_seed,
};

//! The `holon.yaml` file format: its located YAML tree and the checked model.

pub mod identity;
mod model;
pub(crate) mod reuse;
pub mod yaml;

pub use model::{
    ChargeOn, ErrorDecl, Example, Expect, Interface, Limits, Manifest, Pricing, Runtime, Source,
    folder_of,
};

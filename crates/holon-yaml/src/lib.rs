//! JSON values written as YAML the way an author writes `holon.yaml`: scalars quoted only where
//! YAML needs it, flow collections in the author's style, block collections at a given
//! indentation. What `--bless` writes into the examples and what explore prints as a
//! paste-ready example both come from here, so the two cannot disagree on what YAML reads back.
//!
//! An implementation crate of holon-kit: its items follow holon-kit's version and make no
//! promise of their own.

mod emit;

pub use emit::{Flow, block, flow, json, plain_ok, quoted, scalar, string};

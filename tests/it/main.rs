//! The one integration test binary: each module tests one part of the kit at its boundary.

mod harness;

//! `--bless`: the agent's actual answers written into the examples of `holon.yaml`, in place.
//! The passes report what they saw (`collect`); after the run, every example whose answer
//! differs is rewritten (`rewrite`, over the node spans of `layout`, values written by
//! `holon-yaml`) and the file replaced safely (`write`). A crash, a timeout, an answer the gateway
//! refuses, an undeclared code or two passes that disagree are never written; nor is a
//! transient failure: a code marked `retryable: true`, or an error where the example has an
//! output while an upstream of the call failed.
//!
//! An implementation crate of holon-kit: the harness gives it what each pass saw and calls
//! [`finish`] after the run; it knows nothing of the harness. Its items follow holon-kit's
//! version and make no promise of their own.
//!
//! The modules, lowest first: `error`; `collect` (what each pass saw, per run); `layout` (the
//! byte span and style of every node, from granit-parser, the parser the manifest reader uses);
//! `rewrite` (the surgical edit, read back against the intended document, values written by
//! `holon-yaml`); `write` (lock, re-read, publish checks, temporary file and rename); `finish`
//! (what to write, written, and what to say of it, which the harness says); `append` (`call --save`: a call appended as an example).

mod append;
mod collect;
mod error;
mod finish;
mod layout;
mod rewrite;
mod write;

pub use append::append;
pub use collect::{Collector, Seen};
pub use error::{BlessError, LayoutError, RewriteError};
pub use finish::{Finished, Outcome, finish};

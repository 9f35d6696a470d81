//! RE2's verdict on a pattern: what the registry's regex engine accepts.
//!
//! The registry compiles JSON Schema `pattern` and `patternProperties` keys
//! with RE2 under its default options (UTF-8, Perl-like syntax, `max_mem` of
//! 8 MiB). The `regex` crate disagrees with RE2 in both directions (`a++`,
//! `\u0041`, `(?x)` and `\p{Letter}` are fine for `regex` but not for RE2;
//! `\C`, `\Q..\E`, `(?P<1>x)` and `x{,3}` as a literal are fine for RE2 but not
//! all for `regex`), so this module follows RE2's own parser (`re2/parse.cc`)
//! decision by decision instead of translating another parser's verdict:
//!
//! * the same lexer: escapes, classes, POSIX and Unicode group names, flag
//!   groups, the three named-group syntaxes, `\Q..\E`, stacked-operator and
//!   repeat-count rules, in the same order, so the first error is RE2's;
//! * the same repeat limits: every `{n,m}` count is at most 1000, and so is
//!   the product of counts nested inside each other (RE2's
//!   `RepetitionWalker`);
//! * an upper bound of the compiled program size, checked against the
//!   instruction budget RE2 derives from the default `max_mem`. Character
//!   classes are sized by replaying RE2's UTF-8 suffix-sharing compiler, so
//!   the bound stays tight.
//!
//! `regex-syntax` supplies the Unicode tables (scripts, general categories,
//! simple case folding), cut to the Unicode 15.1 repertoire RE2 ships with.
//! Parsing is iterative: no recursion grows with the input, so deep nesting
//! is fine (RE2 itself accepts 10,000 nested groups).

use std::fmt;

mod class;
mod parser;
mod program;
mod rules;
#[cfg(test)]
mod tests;
mod tree;

/// Why RE2 refuses a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Re2Error {
    /// What RE2 objects to: lowercase, no trailing period, pattern pieces in
    /// backticks, e.g. "backreference `\1` is not supported by RE2".
    pub reason: String,
}

impl fmt::Display for Re2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Re2Error {}

/// Checks `pattern` as RE2 would compile it.
///
/// Returns `Ok(())` exactly when `RE2 re(pattern)` would be `ok()` under
/// RE2's default options. The one approximation is the program-size limit:
/// the size used is a safe upper bound (exact for classes, literals, captures
/// and repeats; generous for some alternations), so a pattern very close to
/// RE2's budget may be refused although RE2 would just accept it.
pub fn check(pattern: &str) -> Result<(), Re2Error> {
    parser::parse(pattern).map_err(|failure| Re2Error {
        reason: failure.reason(pattern),
    })
}

//! RE2's verdict on a pattern (interim: backreferences and lookaround only).
use std::fmt;
/// Why RE2 refuses a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Re2Error {
    /// The reason.
    pub reason: String,
}
impl fmt::Display for Re2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}
impl std::error::Error for Re2Error {}
/// Checks `pattern` as RE2 would compile it.
pub fn check(pattern: &str) -> Result<(), Re2Error> {
    if pattern.contains("(?=")
        || pattern.contains("(?!")
        || pattern.contains("(?<=")
        || pattern.contains("(?<!")
    {
        return Err(Re2Error {
            reason: "lookaround is not supported by RE2".into(),
        });
    }
    regex_syntax::Parser::new()
        .parse(pattern)
        .map(|_| ())
        .map_err(|e| Re2Error {
            reason: e.to_string(),
        })
}

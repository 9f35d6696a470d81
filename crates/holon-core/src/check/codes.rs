//! Declared error codes: format, unique, described, not reserved.

use std::collections::HashMap;

use super::collect::Diagnostics;
use crate::gateway::Status;
use crate::ids;
use crate::manifest::ErrorDecl;

/// `^[a-z][a-z0-9_]*$`
pub fn valid_code(code: &str) -> bool {
    let b = code.as_bytes();
    b.first().is_some_and(u8::is_ascii_lowercase)
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// Checks every declared error.
pub fn check(errors: &[(usize, ErrorDecl)], out: &mut Diagnostics) {
    // Where each code is first declared: one lookup a code, however many there are.
    let mut first_at: HashMap<&str, usize> = HashMap::with_capacity(errors.len());
    for (i, decl) in errors {
        let ptr = format!("/interface/errors/{i}");
        let code_ptr = format!("{ptr}/code");
        let code = &decl.code;
        if !valid_code(code) {
            out.error(
                ids::ERROR_CODE_FORMAT,
                &code_ptr,
                format!("error code `{code}` does not match `^[a-z][a-z0-9_]*$`"),
            )
            .hint(format!(
                "use lowercase letters, digits and `_`, e.g. `{}`",
                suggest_code(code)
            ));
        }
        if Status::is_reserved(code) {
            out.error(ids::ERROR_CODE_RESERVED, &code_ptr, format!("error code `{code}` is reserved by the gateway"))
                .hint("the gateway reports it itself; name your own failure, e.g. `upstream_unavailable` or `document_too_slow`");
        }
        if let Some(first) = first_at.get(code.as_str()) {
            out.error(
                ids::ERROR_CODE_DUPLICATE,
                &code_ptr,
                format!(
                    "error code `{code}` is declared twice (first at `interface.errors[{first}]`)"
                ),
            );
        } else {
            first_at.insert(code, *i);
        }
        if decl.description.trim().is_empty() {
            out.error(
                ids::ERROR_DESCRIPTION_MISSING,
                format!("{ptr}/description"),
                format!("error code `{code}` has no description"),
            )
            .hint("say when it happens, for the human deciding whether to call you");
        }
    }
}

fn suggest_code(code: &str) -> String {
    let mut s: String = code
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_matches('_')
        .to_string();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s.insert_str(0, "error_");
    }
    s
}

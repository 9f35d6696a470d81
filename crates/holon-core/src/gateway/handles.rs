//! `holon://files/NAME` handles in payloads: what they name, and that the name stays inside
//! the `files/` folder.

use std::path::{Component, Path};

use serde_json::Value;

/// The prefix of every file handle.
pub const HANDLE_PREFIX: &str = "holon://files/";

/// The file name a handle names, when it is a plain relative path that stays inside `files/`.
pub fn handle_name(handle: &str) -> Result<&str, String> {
    let name = handle
        .strip_prefix(HANDLE_PREFIX)
        .ok_or_else(|| format!("`{handle}` does not start with `{HANDLE_PREFIX}`"))?;
    if name.is_empty() {
        return Err("the handle names no file".into());
    }
    if name.contains('\\') || name.contains('\0') {
        return Err("a file name may not contain `\\` or NUL".into());
    }
    let path = Path::new(name);
    if !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err("the name leaves the `files/` folder".into());
    }
    Ok(name)
}

/// Every `holon://files/` handle among the strings of a payload.
pub fn handles_in(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.starts_with(HANDLE_PREFIX) && !found.contains(s) => {
                found.push(s.clone());
            }
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_names_stay_inside_the_folder() {
        assert_eq!(handle_name("holon://files/a.csv"), Ok("a.csv"));
        assert_eq!(handle_name("holon://files/sub/a.csv"), Ok("sub/a.csv"));
        for bad in [
            "holon://files/../secret",
            "holon://files//etc/passwd",
            "holon://files/a/../../x",
            "holon://files/",
            "holon://files/./a",
            "file:///etc/passwd",
            "holon://files/a\\..\\b",
        ] {
            assert!(handle_name(bad).is_err(), "{bad}");
        }
    }
}

//! Message helpers in house style: a library's sentence recased, a value cut short, a JSON
//! type named as JSON Schema names it, a word quoted for `sh` (the commands a report prints).

use serde_json::Value;

/// The JSON type of a value, as JSON Schema names it.
pub fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value cut short for a message (the harness prints answers with it).
pub fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Two values that differ, each cut short as [`short`] cuts it; two long strings that [`short`]
/// would cut to the same text are shown around their first difference instead
/// (`...to measure, in words.` and `...to measure, in characters.`), so the change shows.
pub fn pair(old: &Value, new: &Value) -> (String, String) {
    let (a, b) = (short(old), short(new));
    let (Value::String(x), Value::String(y)) = (old, new) else {
        return (a, b);
    };
    if a != b {
        return (a, b);
    }
    let at = x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count();
    let window = |s: &str| {
        let start = at.saturating_sub(20);
        let total = s.chars().count();
        let shown: String = s.chars().skip(start).take(50).collect();
        let before = if start > 0 { "..." } else { "" };
        let after = if start + 50 < total { "..." } else { "" };
        Value::String(format!("{before}{shown}{after}")).to_string()
    };
    (window(x), window(y))
}

/// A path as a message names it: relative to the current folder when it is inside it (a test
/// target's absolute manifest path reads `holon.yaml`), else as given.
pub fn path_shown(path: &std::path::Path) -> String {
    let relative = (std::env::current_dir().ok()).and_then(|cwd| {
        path.strip_prefix(cwd)
            .ok()
            .map(std::path::Path::to_path_buf)
    });
    relative.as_deref().unwrap_or(path).display().to_string()
}

/// A library message in house style: first letter lowercase, no trailing period.
pub fn sentence(text: &str) -> String {
    let text = text.trim().trim_end_matches('.');
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if !chars.clone().next().is_some_and(char::is_uppercase) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => text.to_string(),
    }
}

/// A word for `sh`, quoted only when it needs to be.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sentences_start_lowercase_and_end_without_a_period() {
        assert_eq!(sentence("Value is too long."), "value is too long");
        assert_eq!(sentence("  \"x\" is not valid  "), "\"x\" is not valid");
        // An acronym keeps its capitals.
        assert_eq!(sentence("RE2 refuses it."), "RE2 refuses it");
        assert_eq!(sentence(""), "");
    }

    #[test]
    fn long_values_are_cut_at_sixty_characters() {
        let fits = json!("a".repeat(58));
        assert_eq!(short(&fits), fits.to_string());
        let long = short(&json!("a".repeat(59)));
        assert_eq!(long.chars().count(), 60);
        assert!(long.ends_with("..."), "{long}");
    }

    #[test]
    fn types_are_named_as_json_schema_names_them() {
        assert_eq!(type_of(&json!(1)), "an integer");
        assert_eq!(type_of(&json!(-1)), "an integer");
        assert_eq!(type_of(&json!(1.5)), "a number");
        assert_eq!(type_of(&json!(null)), "null");
        assert_eq!(type_of(&json!({})), "an object");
    }
}

//! RFC 6901 JSON pointers, built a token at a time and read back token by token.

use std::borrow::Cow;

/// One reference token escaped: `~` as `~0`, then `/` as `~1`.
pub fn escape(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// One reference token read back: `~1` as `/`, then `~0` as `~` (in that order, so `~01` is
/// `~1`).
pub fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// Appends one token to `pointer`, escaped.
pub fn push(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&escape(token));
}

/// The pointer to the member `token` of the value at `pointer`.
pub fn child(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    push(&mut out, token);
    out
}

/// The tokens of `pointer`, unescaped; the root `""` has none.
pub fn tokens(pointer: &str) -> impl Iterator<Item = Cow<'_, str>> {
    pointer.split('/').skip(1).map(unescape)
}

/// A pointer as a reader writes it: `/examples/2/output/top_words/0` becomes
/// `examples[2].output.top_words[0]`.
pub fn dotted(pointer: &str) -> String {
    let mut out = String::new();
    for segment in tokens(pointer) {
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&segment);
            out.push(']');
        } else if !segment.is_empty()
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$')
        {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        } else {
            out.push_str(&format!(
                "[{}]",
                serde_json::Value::String(segment.into_owned())
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_paths_read_like_code() {
        assert_eq!(
            dotted("/examples/2/output/top_words/0/count"),
            "examples[2].output.top_words[0].count"
        );
        assert_eq!(dotted("/a/b c"), "a[\"b c\"]");
        assert_eq!(dotted(""), "");
    }

    fn all(pointer: &str) -> Vec<Cow<'_, str>> {
        tokens(pointer).collect()
    }

    #[test]
    fn escapes_tilde_before_slash() {
        assert_eq!(escape("a/b"), "a~1b");
        assert_eq!(escape("a~b"), "a~0b");
        assert_eq!(escape("~/"), "~0~1");
        assert_eq!(escape("~1"), "~01");
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn unescapes_slash_before_tilde() {
        assert_eq!(unescape("a~1b"), "a/b");
        assert_eq!(unescape("a~0b"), "a~b");
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(unescape("~0~1"), "~/");
    }

    #[test]
    fn tokens_round_trip_through_child() {
        let mut pointer = String::new();
        let names = ["a/b", "~", "", "~1", "0", "plain"];
        for name in names {
            pointer = child(&pointer, name);
        }
        assert_eq!(pointer, "/a~1b/~0//~01/0/plain");
        assert_eq!(all(&pointer), names);
    }

    #[test]
    fn the_root_has_no_tokens_and_an_empty_token_is_one() {
        assert!(all("").is_empty());
        assert_eq!(all("/"), [""]);
        assert_eq!(all("//"), ["", ""]);
        assert_eq!(child("", ""), "/");
        assert_eq!(child("", "x"), "/x");
    }

    #[test]
    fn push_appends_in_place() {
        let mut pointer = String::from("/interface/input");
        push(&mut pointer, "$defs");
        push(&mut pointer, "a/b");
        assert_eq!(pointer, "/interface/input/$defs/a~1b");
    }
}

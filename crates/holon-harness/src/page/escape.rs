//! Every text the page shows goes through here: escaped for HTML and SVG (a name with
//! `<script>` in it is shown, never run), terminal colours taken out, and cut short past a
//! length a page can hold.

use std::fmt::Write as _;

/// `text` escaped for an HTML or SVG text node or a quoted attribute value.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // A control character (but tab and line breaks) is shown by its code point.
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` without the terminal's colour sequences (`ESC [ ... m`) a message may carry.
pub(super) fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` cut to at most `max` bytes (on a character boundary), saying how much was left out.
pub(super) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[... {} more bytes, not shown]",
        &text[..end],
        text.len() - end
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_and_colours_are_taken_out() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(esc("a\u{0}b"), "a\\u{0}b");
        assert_eq!(plain("\u{1b}[31mred\u{1b}[0m plain"), "red plain");
        assert_eq!(cut("abcdef", 3), "abc\n[... 3 more bytes, not shown]");
        assert_eq!(cut("é", 1), "\n[... 2 more bytes, not shown]");
    }
}

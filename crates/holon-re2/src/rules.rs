//! RE2's limits, its parse flags, its error codes and the reasons given for them: what every
//! stage of the check shares.

/// Largest repeat count RE2 accepts, alone or as a product of nested counts.
pub(crate) const MAX_REPEAT: u64 = 1000;
/// Instructions RE2 may allocate for the forward program under the default
/// `max_mem` of 8 MiB: `(8 MiB * 2 / 3 - sizeof(Prog)) / sizeof(Prog::Inst)`,
/// measured against RE2 2025-11-05.
pub(crate) const MAX_INST: u64 = 698_996;
/// Instructions every program has besides the pattern: the fail instruction,
/// the match instruction and the unanchored `.*?` loop (two).
pub(crate) const PROGRAM_OVERHEAD: u64 = 4;
/// RE2 stops compiling after visiting `2 * max_inst` nodes.
pub(crate) const MAX_COMPILE_VISITS: u64 = 2 * MAX_INST;
/// RE2's tree walkers give up (and fail the pattern) after a million nodes.
pub(crate) const MAX_WALK_NODES: u64 = 1_000_000;
pub(crate) const RUNE_MAX: u32 = 0x10_FFFF;

// Parse flags that vary inside a pattern (RE2 `Regexp::ParseFlags`).
pub(crate) const FOLD_CASE: u8 = 1;
pub(crate) const ONE_LINE: u8 = 2;
pub(crate) const DOT_NL: u8 = 4;
pub(crate) const NON_GREEDY: u8 = 8;
/// RE2's defaults: `LikePerl` includes `OneLine`; no other varying flag.
pub(crate) const DEFAULT_FLAGS: u8 = ONE_LINE;

/// RE2's error codes (`RegexpStatusCode`), plus the compile failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    BadEscape,
    BadCharRange,
    MissingBracket,
    MissingParen,
    UnexpectedParen,
    TrailingBackslash,
    RepeatArgument,
    RepeatSize,
    RepeatOp,
    BadPerlOp,
    BadUtf8,
    BadNamedCapture,
    TooLarge,
}

/// A refusal: RE2's error code and the byte span of its error argument.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Failure {
    pub(crate) code: Code,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Whether the error arose inside a bracketed class.
    pub(crate) in_class: bool,
}

pub(crate) fn fail<T>(code: Code, start: usize, end: usize) -> Result<T, Failure> {
    Err(Failure {
        code,
        start,
        end,
        in_class: false,
    })
}

impl Failure {
    pub(crate) fn arg<'p>(&self, pattern: &'p str) -> &'p str {
        pattern.get(self.start..self.end).unwrap_or("")
    }

    /// The message RE2 itself reports (`RE2::error()`).
    #[cfg(test)]
    pub(crate) fn re2_message(&self, pattern: &str) -> String {
        let text = match self.code {
            Code::BadEscape => "invalid escape sequence",
            Code::BadCharRange => "invalid character class range",
            Code::MissingBracket => "missing ]",
            Code::MissingParen => "missing )",
            Code::UnexpectedParen => "unexpected )",
            Code::TrailingBackslash => "trailing \\",
            Code::RepeatArgument => "no argument for repetition operator",
            Code::RepeatSize => "invalid repetition size",
            Code::RepeatOp => "bad repetition operator",
            Code::BadPerlOp => "invalid perl operator",
            Code::BadUtf8 => "invalid UTF-8",
            Code::BadNamedCapture => "invalid named capture group",
            Code::TooLarge => return "pattern too large - compile failed".to_string(),
        };
        let arg = self.arg(pattern);
        if arg.is_empty() {
            text.to_string()
        } else {
            format!("{text}: {arg}")
        }
    }

    /// A friendlier wording of RE2's refusal.
    pub(crate) fn reason(&self, pattern: &str) -> String {
        let arg = self.arg(pattern);
        let shown = clip(arg);
        let rest = pattern.get(self.start..).unwrap_or("");
        let at_end = self.end >= pattern.len();
        match self.code {
            Code::BadEscape => {
                let letter = arg.chars().nth(1);
                if self.in_class {
                    match letter {
                        Some('d' | 'D' | 's' | 'S' | 'w' | 'W' | 'p' | 'P') => {
                            return format!(
                                "class escape `{shown}` cannot be the end of a range in a character class"
                            );
                        }
                        Some('b' | 'B' | 'A' | 'z' | 'C' | 'Q' | 'E') => {
                            return format!(
                                "escape `{shown}` is not supported inside a character class by RE2"
                            );
                        }
                        _ => {}
                    }
                }
                match letter {
                    Some('1'..='9') => {
                        format!("backreference `{shown}` is not supported by RE2")
                    }
                    Some('k' | 'g') => format!(
                        "backreference `{}` is not supported by RE2",
                        clip(named_reference(rest))
                    ),
                    Some('u' | 'U') => format!(
                        "escape `{shown}` is not supported by RE2 (write code points as `\\x{{...}}`)"
                    ),
                    Some('Z') => {
                        "`\\Z` is not supported by RE2 (use `\\z` or `$` for the end of text)"
                            .to_string()
                    }
                    Some('x') => format!(
                        "invalid hex escape `{shown}` (RE2 accepts `\\xHH` and `\\x{{H...}}` up to `\\x{{10FFFF}}`)"
                    ),
                    _ => format!("escape `{shown}` is not supported by RE2"),
                }
            }
            Code::BadPerlOp if at_end && arg.ends_with(['i', 'm', 's', 'U', '-', '?']) => {
                format!("unterminated group `{shown}`")
            }
            Code::BadPerlOp => perl_op_reason(rest, shown),
            Code::BadNamedCapture if rest.starts_with("(?<=") || rest.starts_with("(?<!") => {
                perl_op_reason(rest, shown)
            }
            Code::RepeatOp => {
                let op = arg.strip_suffix('+').unwrap_or("");
                let single = matches!(op, "*" | "+" | "?")
                    || (op.starts_with('{') && op.ends_with('}') && !op.contains('?'));
                if single {
                    format!("possessive quantifier `{shown}` is not supported by RE2")
                } else {
                    format!("stacked quantifiers `{shown}` are not supported by RE2")
                }
            }
            Code::RepeatSize => {
                let (min, max) = repeat_bounds(arg);
                if max.is_some_and(|max| max < min) {
                    format!("invalid repeat `{shown}`: the minimum exceeds the maximum")
                } else if min > MAX_REPEAT || max.is_some_and(|max| max > MAX_REPEAT) {
                    format!("repeat count `{shown}` exceeds RE2's maximum of 1000")
                } else {
                    format!(
                        "nested repeat `{shown}` multiplies repeat counts past RE2's maximum of 1000"
                    )
                }
            }
            Code::RepeatArgument => {
                format!("missing argument to repetition operator `{shown}`")
            }
            Code::MissingBracket => format!("missing closing `]` for class `{shown}`"),
            Code::MissingParen => "missing closing `)`".to_string(),
            Code::UnexpectedParen => "unexpected `)` without an opening `(`".to_string(),
            Code::TrailingBackslash => "trailing backslash at the end of the pattern".to_string(),
            Code::BadCharRange => {
                if arg.starts_with("\\p") || arg.starts_with("\\P") {
                    if arg.as_bytes().get(2) == Some(&b'{') && !arg.ends_with('}') {
                        format!("unterminated Unicode class `{shown}`")
                    } else {
                        format!(
                            "unknown Unicode class `{shown}` (RE2 knows scripts and general categories, e.g. `\\p{{Greek}}`, `\\p{{L}}`)"
                        )
                    }
                } else if arg.starts_with("[:") {
                    format!("unknown POSIX class `{shown}`")
                } else {
                    format!("invalid character class range `{shown}`")
                }
            }
            Code::BadUtf8 => "incomplete escape `\\x{` at the end of the pattern".to_string(),
            Code::BadNamedCapture => {
                if arg.ends_with('>') {
                    format!("invalid capture group name in `{shown}`")
                } else {
                    format!("unterminated capture group name `{shown}`")
                }
            }
            Code::TooLarge => {
                "pattern too large: RE2's compiled program would exceed its default 8 MB memory budget"
                    .to_string()
            }
        }
    }
}

/// The text of a `\k<name>`, `\k{name}`, `\k'name'`, `\g1` or `\g{-1}`
/// reference at the start of `rest`.
pub(crate) fn named_reference(rest: &str) -> &str {
    let body = rest.get(2..).unwrap_or("");
    let len = match body.chars().next() {
        Some(open @ ('<' | '{' | '\'')) => {
            let close = match open {
                '<' => '>',
                '{' => '}',
                _ => '\'',
            };
            body[1..].find(close).map_or(0, |i| i + 2)
        }
        _ => body
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(body.len()),
    };
    rest.get(..2 + len).unwrap_or(rest)
}

/// Shortens an error argument for display.
pub(crate) fn clip(s: &str) -> String {
    pub(crate) const MAX: usize = 48;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

/// Reason for an invalid `(?...)` construct; `rest` starts at its `(`.
pub(crate) fn perl_op_reason(rest: &str, shown: String) -> String {
    let unsupported = |what: &str, text: &str| format!("{what} `{text}` is not supported by RE2");
    let lookaround = |what: &str, text: &str| {
        format!("{what} `{text}` is not supported by RE2, which has no lookaround")
    };
    if rest.starts_with("(?=") {
        lookaround("lookahead", "(?=")
    } else if rest.starts_with("(?!") {
        lookaround("negative lookahead", "(?!")
    } else if rest.starts_with("(?<=") {
        lookaround("lookbehind", "(?<=")
    } else if rest.starts_with("(?<!") {
        lookaround("negative lookbehind", "(?<!")
    } else if rest.starts_with("(?P=") {
        unsupported("backreference", &clip(group_text(rest)))
    } else if rest.starts_with("(?P>") || rest.starts_with("(?&") {
        unsupported("subroutine call", &clip(group_text(rest)))
    } else if rest.starts_with("(?R") || is_group_number(rest.get(2..).unwrap_or("")) {
        unsupported("recursion", &clip(group_text(rest)))
    } else if rest.starts_with("(?>") {
        unsupported("atomic group", "(?>")
    } else if rest.starts_with("(?#") {
        unsupported("comment group", "(?#")
    } else if rest.starts_with("(?(") {
        unsupported("conditional", "(?(")
    } else if rest.starts_with("(?|") {
        unsupported("branch reset group", "(?|")
    } else if rest.starts_with("(?'") {
        "named group syntax `(?'name'...)` is not supported by RE2 (use `(?P<name>...)`)"
            .to_string()
    } else if shown.starts_with("(?P") {
        format!("invalid named group syntax `{shown}`")
    } else {
        match shown.chars().last() {
            Some(c) if c.is_alphabetic() => format!(
                "flag `{c}` in `{shown}` is not supported by RE2 (only `i`, `m`, `s` and `U`)"
            ),
            _ => format!("invalid group syntax `{shown}`"),
        }
    }
}

/// The `(?...)` group at the start of `rest`, up to its first `)`.
pub(crate) fn group_text(rest: &str) -> &str {
    rest.find(')').map_or(rest, |i| &rest[..=i])
}

/// Whether `s` starts like the group number of `(?1)`, `(?+1)`, `(?-1)`.
pub(crate) fn is_group_number(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    digits.starts_with(|c: char| c.is_ascii_digit())
}

/// The bounds written in a `{n}`, `{n,}` or `{n,m}` operator (saturated).
pub(crate) fn repeat_bounds(op: &str) -> (u64, Option<u64>) {
    let body = op.trim_start_matches('{');
    let body = body.split('}').next().unwrap_or("");
    let number = |s: &str| {
        s.bytes()
            .take(12)
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))
    };
    match body.split_once(',') {
        Some((lo, "")) => (number(lo), None),
        Some((lo, hi)) => (number(lo), Some(number(hi))),
        None => (number(body), Some(number(body))),
    }
}

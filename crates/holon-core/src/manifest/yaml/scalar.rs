//! What a YAML scalar means: null, a boolean, a number or a string, by YAML 1.2's core schema
//! with strict booleans, and what its tag asks for.

use std::borrow::Cow;

use granit_parser::{ScalarStyle, Tag};
use serde_json::Number;

use super::tree::Kind;

const CORE: &str = "tag:yaml.org,2002:";

/// What a node's tag asks for. Tags the reader does not know read as if untagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tagged {
    /// No tag, or one that does not change how the node reads (`!custom`).
    Untyped,
    /// The non-specific `!`: a scalar is a string, whatever it looks like.
    NonSpecific,
    /// `!!str`: a string, whatever it looks like.
    Str,
    /// `!!merge`: a `<<` key with it merges, as a plain `<<` does.
    Merge,
    /// `!!null`: null, whatever the text.
    Null,
    /// `!!bool`: the text must be a boolean.
    Bool,
    /// `!!int`: the text must be an integer.
    Int,
    /// `!!float`: the text must be a number.
    Float,
    /// `!!seq`: stands only on a sequence.
    Seq,
    /// `!!map`: stands only on a mapping.
    Map,
    /// `!!binary`: base64.
    Binary,
    /// `!!timestamp` and the like: types JSON has no place for.
    Unsupported,
}

/// The kind of node a tag belongs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Scalar,
    Seq,
    Map,
}

impl Tagged {
    /// What `tag` asks for; spellings follow the YAML core schema and its usual local forms
    /// (`!!int`, `!int`, `tag:yaml.org,2002:int`).
    pub(super) fn of(tag: Option<&Tag>) -> Tagged {
        let Some(tag) = tag else {
            return Tagged::Untyped;
        };
        if let Some(core) = tag.core_suffix() {
            return by_name(core);
        }
        if let Some(name) = tag.suffix_in_namespace(CORE) {
            if name == "merge" {
                return Tagged::Merge;
            }
            return untyped_merge(by_name(name.strip_prefix('!').unwrap_or(&name)));
        }
        let Some(name) = tag.suffix_in_namespace("!") else {
            return Tagged::Untyped;
        };
        match name.as_ref() {
            "" | "!" => Tagged::NonSpecific,
            "!timestamp" => Tagged::Unsupported,
            "!binary" => Tagged::Binary,
            name => match name.strip_prefix('!') {
                Some(core) => match by_name(core) {
                    Tagged::Unsupported | Tagged::Binary | Tagged::Merge => Tagged::Untyped,
                    known => known,
                },
                None => untyped_merge(by_name(name)),
            },
        }
    }

    /// The kind of node the tag may stand on, when it is only one.
    pub(super) fn requires(self) -> Option<Shape> {
        match self {
            Tagged::Untyped | Tagged::NonSpecific => None,
            Tagged::Seq => Some(Shape::Seq),
            Tagged::Map => Some(Shape::Map),
            _ => Some(Shape::Scalar),
        }
    }
}

/// `merge` names the merge tag only in the core namespace, spelled exactly.
fn untyped_merge(tagged: Tagged) -> Tagged {
    match tagged {
        Tagged::Merge => Tagged::Untyped,
        other => other,
    }
}

fn by_name(name: &str) -> Tagged {
    match name {
        "null" => Tagged::Null,
        "bool" => Tagged::Bool,
        "int" => Tagged::Int,
        "float" => Tagged::Float,
        "str" => Tagged::Str,
        "seq" => Tagged::Seq,
        "map" => Tagged::Map,
        "merge" => Tagged::Merge,
        "binary" => Tagged::Binary,
        "timestamp" | "time" | "degrees" | "radians" => Tagged::Unsupported,
        _ => Tagged::Untyped,
    }
}

/// Why a scalar has no value in JSON's terms; the messages are the ones authors have seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unreadable {
    /// A tag asked for a type the text is not.
    NotA(&'static str),
    /// `.inf`, `.nan`, or a number too large for a double.
    NonFinite(String),
    /// A tag whose type JSON has no place for.
    Unsupported,
    /// `!!binary` that is not base64.
    NotBase64,
    /// `!!binary` whose bytes are not UTF-8 text.
    NotText,
}

impl Unreadable {
    pub(super) fn message(&self) -> String {
        match self {
            Unreadable::NotA("boolean") => {
                "invalid boolean (strict mode expects true/false)".to_string()
            }
            Unreadable::NotA(ty) => format!("invalid {ty}"),
            Unreadable::NonFinite(text) => {
                format!("non-finite float `{text}` rejected by the configured policy")
            }
            Unreadable::Unsupported => "cannot deserialize tagged scalar into string".to_string(),
            Unreadable::NotBase64 => "invalid !!binary base64".to_string(),
            Unreadable::NotText => {
                "!!binary scalar is not valid UTF-8 so cannot be stored into string".to_string()
            }
        }
    }
}

/// What the scalar `text`, written in `style` with the tag `tagged`, holds.
pub(super) fn resolve(
    text: Cow<'_, str>,
    style: ScalarStyle,
    tagged: Tagged,
) -> Result<Kind, Unreadable> {
    Ok(match typed(&text, style, tagged)? {
        Some(kind) => kind,
        None => Kind::String(text.into_owned()),
    })
}

/// What a scalar holds when it is not a string (`None`: it is the string it is written as).
fn typed(text: &str, style: ScalarStyle, tagged: Tagged) -> Result<Option<Kind>, Unreadable> {
    let plain = style == ScalarStyle::Plain;
    match tagged {
        Tagged::Null => return Ok(Some(Kind::Null)),
        Tagged::Bool => {
            return yaml12_bool(text)
                .map(|b| Some(Kind::Bool(b)))
                .ok_or(Unreadable::NotA("boolean"));
        }
        Tagged::Int => return tagged_int(text).map(Some),
        Tagged::Float => {
            return match float(text, true) {
                Some(f) => finite(f, text).map(Some),
                None => Err(Unreadable::NotA("floating point")),
            };
        }
        Tagged::Unsupported => return Err(Unreadable::Unsupported),
        Tagged::Binary => return binary(text).map(|s| Some(Kind::String(s))),
        Tagged::Str | Tagged::NonSpecific => return Ok(None),
        // A collection's tag on a scalar is refused before it is read.
        Tagged::Untyped | Tagged::Merge | Tagged::Seq | Tagged::Map => {}
    }
    if !plain {
        return Ok(None);
    }
    plain_scalar(text)
}

/// An untagged plain scalar: null, a strict boolean, an integer (to 64 bits, signed or not), a
/// float, or else the string it is written as.
fn plain_scalar(text: &str) -> Result<Option<Kind>, Unreadable> {
    if let Some(n) = small_integer(text) {
        return Ok(Some(Kind::Number(n)));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Some(Kind::Null));
    }
    if let Some(b) = yaml12_bool(text) {
        return Ok(Some(Kind::Bool(b)));
    }
    let t = trim(text);
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    // Upper-case radix prefixes and signed NaNs stay strings.
    if matches!(unsigned.as_bytes(), [b'0', b'X' | b'O' | b'B', ..]) || is_signed_nan(t) {
        return Ok(None);
    }
    if t.starts_with('-') {
        // `-07` is not an integer here (no octal by a leading zero); it may be a float.
        if !leading_zero_decimal(t)
            && let Some(v) = int_signed(t)
            && let Ok(v) = i64::try_from(v)
        {
            return Ok(Some(Kind::Number(v.into())));
        }
    } else if let Some(v) = int_unsigned(t)
        && let Ok(v) = u64::try_from(v)
    {
        return Ok(Some(Kind::Number(v.into())));
    }
    match float(text, false) {
        Some(f) => finite(f, text).map(Some),
        None => Ok(None),
    }
}

/// The common case first: a plain decimal of up to 19 digits, no sign, no leading zero.
fn small_integer(text: &str) -> Option<Number> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() > 19 || (bytes.len() > 1 && bytes.first() == Some(&b'0')) {
        return None;
    }
    let mut v: u64 = 0;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    Some(v.into())
}

/// `!!binary`: base64 (whitespace ignored, as YAML folds it over lines), decoded to UTF-8 text.
fn binary(text: &str) -> Result<String, Unreadable> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    // Padding is optional in YAML's `!!binary`, as in the reader before.
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let bytes = LENIENT.decode(compact).map_err(|_| Unreadable::NotBase64)?;
    String::from_utf8(bytes).map_err(|_| Unreadable::NotText)
}

fn finite(f: f64, text: &str) -> Result<Kind, Unreadable> {
    Number::from_f64(f)
        .map(Kind::Number)
        .ok_or_else(|| Unreadable::NonFinite(text.to_owned()))
}

fn tagged_int(text: &str) -> Result<Kind, Unreadable> {
    let t = trim(text);
    if t.starts_with('-') {
        int_signed(t)
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| Kind::Number(v.into()))
            .ok_or(Unreadable::NotA("i64"))
    } else {
        int_unsigned(t)
            .and_then(|v| u64::try_from(v).ok())
            .map(|v| Kind::Number(v.into()))
            .ok_or(Unreadable::NotA("u64"))
    }
}

fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

fn yaml12_bool(s: &str) -> Option<bool> {
    match trim(s) {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

fn is_signed_nan(t: &str) -> bool {
    t.strip_prefix(['+', '-'])
        .is_some_and(|u| matches!(u, ".nan" | ".NaN" | ".NAN"))
}

fn leading_zero_decimal(t: &str) -> bool {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A trimmed integer with an optional `+` and a `0x`, `0o` or `0b` prefix; a decimal never
/// starts with `0` unless it is `0`. Single underscores between digits are allowed.
fn int_unsigned(t: &str) -> Option<u128> {
    if t.starts_with('-') {
        return None;
    }
    let rest = t.strip_prefix('+').unwrap_or(t);
    let (radix, digits) = radix_and_digits(rest);
    if radix == 10 && digits.starts_with('0') && digits != "0" {
        return None;
    }
    digits_u128(digits, radix)
}

/// As `int_unsigned`, with an optional `-`.
fn int_signed(t: &str) -> Option<i128> {
    let (neg, rest) = match t.strip_prefix('+') {
        Some(r) => (false, r),
        None => match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t),
        },
    };
    let (radix, digits) = radix_and_digits(rest);
    if radix == 10 && digits.starts_with('0') && digits != "0" {
        return None;
    }
    let magnitude = digits_u128(digits, radix)?;
    if neg {
        if magnitude == i128::MAX.unsigned_abs() + 1 {
            return Some(i128::MIN);
        }
        i128::try_from(magnitude).ok()?.checked_neg()
    } else {
        i128::try_from(magnitude).ok()
    }
}

fn radix_and_digits(rest: &str) -> (u32, &str) {
    if let Some(r) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        (16, r)
    } else if let Some(r) = rest.strip_prefix("0o").or_else(|| rest.strip_prefix("0O")) {
        (8, r)
    } else if let Some(r) = rest.strip_prefix("0b").or_else(|| rest.strip_prefix("0B")) {
        (2, r)
    } else {
        (10, rest)
    }
}

fn digits_u128(digits: &str, radix: u32) -> Option<u128> {
    let bytes = digits.as_bytes();
    let mut value: u128 = 0;
    let mut saw = false;
    let mut previous = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            // An underscore stands between two digits.
            if previous.is_none_or(|p| p == b'_') || bytes.get(i + 1).is_none_or(|&n| n == b'_') {
                return None;
            }
        } else {
            let d = char::from(b).to_digit(radix)?;
            value = value
                .checked_mul(u128::from(radix))?
                .checked_add(u128::from(d))?;
            saw = true;
        }
        previous = Some(b);
    }
    saw.then_some(value)
}

/// A YAML 1.2 float (`1.5`, `-2e3`, `.inf`, `-.Inf`, `.nan`), or a decimal too large for a
/// double (infinite). `tagged`: under `!!float`, `+.nan` and `-.nan` are NaN too.
fn float(text: &str, tagged: bool) -> Option<f64> {
    let t = trim(text);
    if tagged && is_signed_nan(t) {
        return Some(f64::NAN);
    }
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    match unsigned {
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        ".inf" | ".Inf" | ".INF" if negative => return Some(f64::NEG_INFINITY),
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        _ => {}
    }
    // Rust also reads `inf` and `nan`; those stay strings, but `1e999` is a number, too large.
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Some(v),
        Ok(v) if v.is_infinite() && unsigned.as_bytes().first().is_some_and(u8::is_ascii_digit) => {
            Some(v)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Result<Kind, Unreadable> {
        resolve(text.into(), ScalarStyle::Plain, Tagged::Untyped)
    }

    fn number(text: &str) -> String {
        match plain(text) {
            Ok(Kind::Number(n)) => n.to_string(),
            other => format!("{other:?}"),
        }
    }

    fn string(text: &str) -> bool {
        plain(text) == Ok(Kind::String(text.to_owned()))
    }

    #[test]
    fn null_is_written_four_ways_and_empty() {
        for text in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(plain(text), Ok(Kind::Null), "{text}");
        }
        assert!(string("nULL"));
        // Quoted, it is a string.
        let quoted = resolve("null".into(), ScalarStyle::DoubleQuoted, Tagged::Untyped);
        assert_eq!(quoted, Ok(Kind::String("null".into())));
    }

    #[test]
    fn binary_is_base64_over_lines_and_must_be_text() {
        let binary = |text: &str| resolve(text.into(), ScalarStyle::Plain, Tagged::Binary);
        assert_eq!(binary("aGVs\n  bG8="), Ok(Kind::String("hello".into())));
        assert_eq!(binary("aGVsbG8"), Ok(Kind::String("hello".into())));
        assert_eq!(binary("aGV*"), Err(Unreadable::NotBase64));
        assert_eq!(binary("//79"), Err(Unreadable::NotText));
    }

    #[test]
    fn booleans_are_strict() {
        assert_eq!(plain("true"), Ok(Kind::Bool(true)));
        assert_eq!(plain("FALSE"), Ok(Kind::Bool(false)));
        for text in ["yes", "no", "on", "off", "y", "tRUE"] {
            assert!(string(text), "{text}");
        }
    }

    #[test]
    fn integers_are_64_bits_decimal_hex_octal_binary() {
        assert_eq!(number("0"), "0");
        assert_eq!(number("42"), "42");
        assert_eq!(number("+42"), "42");
        assert_eq!(number("-42"), "-42");
        assert_eq!(number("1_000"), "1000");
        assert_eq!(number("0x1f"), "31");
        assert_eq!(number("-0x10"), "-16");
        assert_eq!(number("0o17"), "15");
        assert_eq!(number("0b101"), "5");
        assert_eq!(number("18446744073709551615"), "18446744073709551615");
        assert_eq!(number("-9223372036854775808"), "-9223372036854775808");
        // Upper-case prefixes stay strings.
        assert!(string("0X1F"));
        assert!(string("0O17"));
        assert!(string("0B1"));
        // Misplaced underscores are not numbers.
        assert!(string("1__0"));
        assert!(string("_1"));
        assert!(string("1_"));
    }

    #[test]
    fn beyond_64_bits_and_leading_zeros_read_as_floats() {
        assert_eq!(number("18446744073709551616"), "1.8446744073709552e+19");
        assert_eq!(number("-9223372036854775809"), "-9.223372036854776e+18");
        assert_eq!(number("007"), "7.0");
        assert_eq!(number("-007"), "-7.0");
    }

    #[test]
    fn floats_and_what_is_not_one() {
        assert_eq!(number("1.5"), "1.5");
        assert_eq!(number("-2e3"), "-2000.0");
        assert_eq!(number(".5"), "0.5");
        assert_eq!(number("1."), "1.0");
        for text in [
            "inf", "nan", "infinity", "1.0.0", "1_000.5", "+.nan", "-.NaN", "0x",
        ] {
            assert!(string(text), "{text}");
        }
        for text in [".inf", "-.Inf", ".NAN", "1e999"] {
            assert!(
                matches!(plain(text), Err(Unreadable::NonFinite(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn tags_decide_the_type() {
        let tagged = |text: &str, tag| resolve(text.into(), ScalarStyle::Plain, tag);
        assert_eq!(tagged("1.0", Tagged::Str), Ok(Kind::String("1.0".into())));
        assert_eq!(tagged("~", Tagged::Str), Ok(Kind::String("~".into())));
        assert_eq!(tagged("anything", Tagged::Null), Ok(Kind::Null));
        assert_eq!(
            tagged("yes", Tagged::Bool),
            Err(Unreadable::NotA("boolean"))
        );
        assert_eq!(tagged("007", Tagged::Int), Err(Unreadable::NotA("u64")));
        assert_eq!(tagged("0X1F", Tagged::Int), Ok(Kind::Number(31.into())));
        assert!(
            matches!(tagged("1", Tagged::Float), Ok(Kind::Number(n)) if n.to_string() == "1.0")
        );
        assert_eq!(
            tagged("x", Tagged::Unsupported),
            Err(Unreadable::Unsupported)
        );
        assert_eq!(
            tagged("aGVsbG8=", Tagged::Binary),
            Ok(Kind::String("hello".into()))
        );
        // A quoted scalar reads as its tag says too.
        let quoted = resolve("12".into(), ScalarStyle::SingleQuoted, Tagged::Int);
        assert_eq!(quoted, Ok(Kind::Number(12.into())));
    }
}

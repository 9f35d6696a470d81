//! JSON values as the gateway and the harness compare and measure them: deep equality with
//! numbers by value, the size of a value as compact JSON, its canonical form (RFC 8785) and the
//! first place two values differ.

use serde_json::{Number, Value};

/// Deep equality: same shape, same keys (in any order), same strings and booleans, numbers
/// equal by value (`1` equals `1.0`, `"1"` does not). Iterative, so no payload overflows it.
pub fn equal(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if number_equal(x, y) => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y))
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                // Both sides usually list their keys in the same order (the manifest's, the
                // output type's): pair them without hashing, looking up only where orders part.
                for ((kx, xv), (ky, yv)) in x.iter().zip(y) {
                    if kx == ky {
                        stack.push((xv, yv));
                    } else {
                        match y.get(kx) {
                            Some(yv) => stack.push((xv, yv)),
                            None => return false,
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Two JSON numbers by value: integers exactly (at any size `serde_json` holds), a float and an
/// integer by the float's value.
pub fn number_equal(x: &Number, y: &Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The first pointer where two JSON values differ, with both sides there.
pub fn first_difference<'a>(
    a: &'a Value,
    b: &'a Value,
) -> Option<(String, Option<&'a Value>, Option<&'a Value>)> {
    let mut stack = vec![(String::new(), Some(a), Some(b))];
    while let Some((at, x, y)) = stack.pop() {
        match (x, y) {
            (Some(Value::Object(p)), Some(Value::Object(q))) => {
                let mut keys: Vec<&String> = p
                    .keys()
                    .chain(q.keys().filter(|k| !p.contains_key(*k)))
                    .collect();
                keys.reverse();
                for k in keys {
                    let here = crate::pointer::child(&at, k);
                    stack.push((here, p.get(k), q.get(k)));
                }
            }
            (Some(Value::Array(p)), Some(Value::Array(q))) => {
                for i in (0..p.len().max(q.len())).rev() {
                    stack.push((format!("{at}/{i}"), p.get(i), q.get(i)));
                }
            }
            (Some(x), Some(y)) if equal(x, y) => {}
            _ => return Some((at, x, y)),
        }
    }
    None
}

/// Size of a value as compact JSON, without building the text.
pub fn size(value: &Value) -> u64 {
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter(0);
    // Writing into a counter cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

/// The value in the JSON Canonicalization Scheme (RFC 8785): no whitespace, the members of
/// every object sorted by their names' UTF-16 code units, strings escaped as ECMAScript's
/// `JSON.stringify` escapes them, and numbers as IEEE 754 doubles written as ECMAScript writes
/// them (`1.0` is `1`, `1e21` is `1e+21`). The same document reads the same way whatever its
/// key order, layout or quoting, so its hash names it. Recursive: its callers hand it documents
/// a YAML reader's depth budget (160 levels) bounded.
pub fn canonical(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // Only whole UTF-8 texts were written: the escaped strings and ASCII.
    String::from_utf8(out).unwrap_or_default()
}

/// A document the canonical writer walks: a JSON value, or a tree that reads as one (the
/// manifest's located tree, whose identity is hashed without building the value first).
pub trait Document: Sized {
    /// What this node is, in JSON's terms.
    fn shape(&self) -> Shape<'_, Self>;
}

/// One node of a [`Document`].
pub enum Shape<'a, D> {
    /// `null` (YAML's `~`, or nothing).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, written as the double it reads as.
    Number(&'a Number),
    /// A string, escaped as `JSON.stringify` escapes it.
    String(&'a str),
    /// An array's items, in order.
    Array(&'a [D]),
    /// An object's members, in any order.
    Object(Vec<(&'a str, &'a D)>),
}

impl Document for Value {
    fn shape(&self) -> Shape<'_, Value> {
        match self {
            Value::Null => Shape::Null,
            Value::Bool(b) => Shape::Bool(*b),
            Value::Number(n) => Shape::Number(n),
            Value::String(s) => Shape::String(s),
            Value::Array(items) => Shape::Array(items),
            Value::Object(members) => {
                Shape::Object(members.iter().map(|(k, v)| (k.as_str(), v)).collect())
            }
        }
    }
}

/// `document` written in the JSON Canonicalization Scheme ([`canonical`]), as UTF-8 bytes.
pub fn write_canonical<D: Document>(document: &D, out: &mut Vec<u8>) {
    use std::io::Write;
    match document.shape() {
        Shape::Null => out.extend_from_slice(b"null"),
        Shape::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        // An integer a double holds exactly is its own shortest digits (up to 2^53 doubles are
        // at most 1 apart), so it skips `canonical_number`'s exact expansion: a manifest's
        // numbers are almost all integers, and that expansion was most of a digest's time.
        // (Writing into a Vec cannot fail.)
        Shape::Number(n) => match n.as_i64().filter(|i| i.unsigned_abs() <= 1 << 53) {
            Some(i) => {
                let _ = write!(out, "{i}");
            }
            None => out.extend_from_slice(canonical_number(n.as_f64().unwrap_or(0.0)).as_bytes()),
        },
        // serde_json escapes exactly what JSON.stringify does: `"`, `\`, and the control
        // characters (as `\b \t \n \f \r` or lowercase `\u00xx`), nothing else.
        Shape::String(s) => {
            let _ = serde_json::to_writer(&mut *out, s);
        }
        Shape::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Shape::Object(mut members) => {
            // Between ASCII names, UTF-16 order is byte order.
            members.sort_by(|(a, _), (b, _)| {
                if a.is_ascii() && b.is_ascii() {
                    a.cmp(b)
                } else {
                    a.encode_utf16().cmp(b.encode_utf16())
                }
            });
            out.push(b'{');
            for (i, (name, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let _ = serde_json::to_writer(&mut *out, name);
                out.push(b':');
                write_canonical(member, out);
            }
            out.push(b'}');
        }
    }
}

/// A double as ECMAScript's `Number.prototype.toString` writes it (RFC 8785, 3.2.2.3): the
/// shortest digits that read back as the same double, in plain notation for exponents from -6
/// to 20, in exponent notation with a sign (`1e+21`, `5e-324`) outside it; `-0` is `0`.
fn canonical_number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".to_string();
    }
    let (digits, n) = shortest_digits(x.abs());
    let k = digits.len() as i32;
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(n as usize);
        out.push_str(whole);
        out.push('.');
        out.push_str(fraction);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// The shortest digits that read back as `x` (positive, finite), and `n` such that `x` is
/// `0.DIGITS x 10^n`. Rust's `{:e}` gives shortest digits too, but where two are equally
/// close to `x` it may take the odd one; ECMAScript takes the even one (`1424953923781206.25`
/// is written `...206.2`), so a tie is settled again from the exact value.
fn shortest_digits(x: f64) -> (String, i32) {
    let split = |text: &str| -> (String, i32) {
        let (mantissa, exponent) = text.split_once('e').unwrap_or((text, "0"));
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let digits = digits.trim_end_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        (digits.to_string(), exponent.parse::<i32>().unwrap_or(0) + 1)
    };
    let (digits, n) = split(&format!("{x:e}"));
    // A double's exact decimal expansion has at most 767 significant digits.
    let (exact, exact_n) = split(&format!("{x:.800e}"));
    let tie = exact.len() == digits.len() + 1 && exact.ends_with('5') && exact_n == n;
    let lower = exact
        .get(..digits.len())
        .and_then(|d| d.parse::<u64>().ok());
    if let (true, Some(lower)) = (tie, lower) {
        let even = if lower % 2 == 0 { lower } else { lower + 1 };
        // `lower + 1` may carry into one more digit: 99.95 between 99.9 and 100.0.
        let text = even.to_string();
        let m = if text.len() > digits.len() { n + 1 } else { n };
        let candidate = text.trim_end_matches('0').to_string();
        let reads_back = format!("0.{candidate}e{m}").parse::<f64>().ok() == Some(x);
        if reads_back && candidate.len() <= digits.len() {
            return (candidate, m);
        }
    }
    (digits, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_nothing_else_is_loose() {
        assert!(equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!equal(&json!({"a": 1}), &json!({"a": "1"})));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!equal(&json!({"a": 0.33}), &json!({"a": 0.3})));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(equal(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
        assert!(equal(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"a": 1, "c": 3, "b": 2})
        ));
        assert!(!equal(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"a": 1, "c": 2, "b": 3})
        ));
        assert!(!equal(&json!({"a": 1, "b": 2}), &json!({"a": 1, "c": 2})));
    }

    #[test]
    fn the_first_difference_is_found_in_document_order() {
        let a = json!({"a": 1, "b": {"c": [1, 2]}, "d": 4});
        let b = json!({"a": 1.0, "b": {"c": [1, 3]}, "d": 5});
        let (at, x, y) = first_difference(&a, &b).expect("they differ");
        assert_eq!(
            (at.as_str(), x, y),
            ("/b/c/1", Some(&json!(2)), Some(&json!(3)))
        );
        assert!(first_difference(&a, &a).is_none());
        let (one, none) = (json!({"a": 1}), json!({}));
        let (at, x, y) = first_difference(&one, &none).expect("they differ");
        assert_eq!((at.as_str(), x, y), ("/a", Some(&json!(1)), None));
    }

    #[test]
    fn the_size_is_that_of_compact_json() {
        let v = json!({"text": "héllo", "n": [1, 2.5, null]});
        assert_eq!(size(&v), serde_json::to_string(&v).unwrap().len() as u64);
    }

    #[test]
    fn canonical_json_is_rfc_8785() {
        // RFC 8785, appendix B: doubles as ECMAScript writes them.
        for (bits, text) in [
            (0x0000000000000000_u64, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ] {
            assert_eq!(canonical_number(f64::from_bits(bits)), text, "{bits:#x}");
        }
        // RFC 8785, 3.2.3: members sorted by UTF-16 code units (U+1F600 before U+FB33).
        let sorted = json!({"\u{20ac}": "Euro Sign", "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh", "1": "One",
            "\u{1f600}": "Emoji: Grinning Face", "\u{80}": "Control", "\u{f6}": "Latin Small Letter O With Diaeresis"});
        assert_eq!(
            canonical(&sorted),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
        // RFC 8785, 3.2.2: literals, escapes and numbers in one document.
        let value: Value = serde_json::from_str(
            r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
                "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#,
        )
        .unwrap();
        assert_eq!(
            canonical(&value),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
        // An integer is written as the double it reads as: its digits up to 2^53, the double's
        // shortest digits past it.
        let safe = 1_i64 << 53;
        let integers = [0, 1, -1, 100, 123_456_789_012, safe - 1, safe, -safe];
        for i in integers {
            assert_eq!(canonical(&json!(i)), canonical_number(i as f64), "{i}");
        }
        assert_eq!(canonical(&json!(safe + 1)), "9007199254740992");
        assert_eq!(canonical(&json!(u64::MAX)), "18446744073709552000");
        assert_eq!(canonical(&json!(i64::MIN)), "-9223372036854776000");
        // The same document whatever its order or its integers' spelling.
        assert_eq!(
            canonical(&json!({"b": 1.0, "a": [2]})),
            canonical(&json!({"a": [2.0], "b": 1}))
        );
    }

    #[test]
    fn the_first_difference_is_named_by_its_pointer() {
        let at = |a: &Value, b: &Value| first_difference(a, b).map(|(at, _, _)| at);
        let a =
            json!({"name": "x", "examples": [{"input": {"text": "a"}, "output": {"words": 1}}]});
        assert_eq!(at(&a, &a.clone()), None);
        let mut b = a.clone();
        b["examples"][0]["output"]["words"] = json!(2);
        assert_eq!(at(&a, &b).as_deref(), Some("/examples/0/output/words"));
        let mut c = a.clone();
        c["examples"].as_array_mut().unwrap().push(json!({}));
        assert_eq!(at(&a, &c).as_deref(), Some("/examples/1"));
        let mut d = a.clone();
        d["a/b"] = json!(true);
        assert_eq!(at(&a, &d).as_deref(), Some("/a~1b"));
        assert_eq!(at(&json!({"n": 1}), &json!({"n": 1.0})), None);
        assert_eq!(at(&json!(1), &json!("1")).as_deref(), Some(""));
    }
}

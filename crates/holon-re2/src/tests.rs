//! RE2's verdicts, proven against a corpus of real RE2's.

use crate::check;
use crate::class::*;
use crate::parser::*;
use crate::program::*;
use crate::rules::*;

/// The corpus: patterns with the verdict of real RE2 (google-re2 from
/// PyPI, `RE2(pattern)` with default options).
const CORPUS: &str = include_str!("../tests/corpus.json");

/// Patterns of the corpus that RE2 accepts but we refuse: none. The only
/// kind possible is a program just under RE2's size budget whose size we
/// overestimate, e.g. ~18,000 copies of `(?:\W|\W)` (RE2 factors it into
/// `\W(?:|)`, we count both branches); no such pattern is in the corpus.
const KNOWN_FALSE_REFUSALS: &[&str] = &[];

fn reason(pattern: &str) -> String {
    match check(pattern) {
        Ok(()) => panic!("{pattern:?} should be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn corpus_matches_re2() {
    let corpus: Vec<serde_json::Value> = serde_json::from_str(CORPUS).expect("corpus json");
    assert!(corpus.len() >= 200, "corpus too small");
    let mut false_accepts = Vec::new();
    let mut false_refusals = Vec::new();
    let mut other_messages = Vec::new();
    for entry in &corpus {
        let pattern = entry["pattern"].as_str().expect("pattern");
        let re2_ok = entry["re2"].as_str() == Some("ok");
        match (parse(pattern), re2_ok) {
            (Ok(()), false) => false_accepts.push(pattern),
            (Err(f), true) => false_refusals.push((pattern, f.reason(pattern))),
            (Err(f), false) => {
                let expected = entry["re2_error"].as_str().unwrap_or("");
                if f.re2_message(pattern) != expected {
                    other_messages.push((pattern, f.re2_message(pattern), expected));
                }
            }
            (Ok(()), true) => {}
        }
    }
    assert!(
        false_accepts.is_empty(),
        "we accept patterns RE2 refuses: {false_accepts:#?}"
    );
    let unexpected: Vec<_> = false_refusals
        .iter()
        .filter(|(p, _)| !KNOWN_FALSE_REFUSALS.contains(p))
        .collect();
    assert!(
        unexpected.is_empty(),
        "we refuse patterns RE2 accepts: {unexpected:#?}"
    );
    assert!(
        other_messages.is_empty(),
        "refused for another reason than RE2: {other_messages:#?}"
    );
}

#[test]
fn reason_backreference() {
    assert_eq!(
        reason(r"^(a)\1$"),
        r"backreference `\1` is not supported by RE2"
    );
    assert_eq!(
        reason(r"(?P<n>a)(?P=n)"),
        "backreference `(?P=n)` is not supported by RE2"
    );
    assert_eq!(
        reason(r"(?<name>a)\k<name>"),
        r"backreference `\k<name>` is not supported by RE2"
    );
}

#[test]
fn reason_lookaround() {
    assert_eq!(
        reason("(?=a)"),
        "lookahead `(?=` is not supported by RE2, which has no lookaround"
    );
    assert_eq!(
        reason("a(?!b)"),
        "negative lookahead `(?!` is not supported by RE2, which has no lookaround"
    );
    assert_eq!(
        reason("(?<=a)b"),
        "lookbehind `(?<=` is not supported by RE2, which has no lookaround"
    );
    assert_eq!(
        reason("(?<!a)b"),
        "negative lookbehind `(?<!` is not supported by RE2, which has no lookaround"
    );
    // At the very end of a pattern RE2 reports a bad capture name instead.
    assert_eq!(
        reason("a(?<="),
        "lookbehind `(?<=` is not supported by RE2, which has no lookaround"
    );
}

#[test]
fn reason_possessive_and_stacked() {
    assert_eq!(
        reason("a++"),
        "possessive quantifier `++` is not supported by RE2"
    );
    assert_eq!(
        reason("a{2}+"),
        "possessive quantifier `{2}+` is not supported by RE2"
    );
    assert_eq!(
        reason("a{2}{3}"),
        "stacked quantifiers `{2}{3}` are not supported by RE2"
    );
}

#[test]
fn reason_repeat_limits() {
    assert!(check("a{1000}").is_ok());
    assert_eq!(
        reason("a{1001}"),
        "repeat count `{1001}` exceeds RE2's maximum of 1000"
    );
    assert_eq!(
        reason("(a{100}){100}"),
        "nested repeat `{100}` multiplies repeat counts past RE2's maximum of 1000"
    );
    assert_eq!(
        reason("a{3,2}"),
        "invalid repeat `{3,2}`: the minimum exceeds the maximum"
    );
    assert!(reason(r"\pL{500}").starts_with("pattern too large"));
}

#[test]
fn reason_other() {
    assert_eq!(
        reason(r"\p{Letter}"),
        "unknown Unicode class `\\p{Letter}` (RE2 knows scripts and general categories, e.g. `\\p{Greek}`, `\\p{L}`)"
    );
    assert_eq!(
        reason("(?x)a b"),
        "flag `x` in `(?x` is not supported by RE2 (only `i`, `m`, `s` and `U`)"
    );
    assert_eq!(
        reason(r"\u0041"),
        "escape `\\u` is not supported by RE2 (write code points as `\\x{...}`)"
    );
    assert_eq!(
        reason("(?>a)"),
        "atomic group `(?>` is not supported by RE2"
    );
}

#[test]
fn quick_class_bound_is_an_upper_bound() {
    // A small deterministic generator of random classes.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |limit: u32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % u64::from(limit)) as u32
    };
    for _ in 0..3000 {
        let mut set = RangeSet::default();
        for _ in 0..=next(12) {
            let scale = [0x80, 0x800, 0x1_0000, RUNE_MAX + 1][next(4) as usize];
            let lo = next(scale);
            set.add(lo, (lo + next(0x3000)).min(RUNE_MAX));
        }
        let ranges = set.norm();
        assert!(
            class_cost(ranges) <= class_cost_bound(ranges),
            "{ranges:x?}"
        );
    }
    for name in RE2_CATEGORIES.iter().chain(RE2_SCRIPTS) {
        for fold in [false, true] {
            let ranges = unicode_group(name, fold).expect("known group");
            assert!(class_cost(&ranges) <= class_cost_bound(&ranges), "{name}");
            let negated = complement(&ranges);
            assert!(
                class_cost(&negated) <= class_cost_bound(&negated),
                "^{name}"
            );
        }
    }
}

#[test]
fn deep_nesting_and_odd_input() {
    let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(check(&deep).is_ok());
    assert!(check(&"(".repeat(10_000)).is_err());
    assert!(check(&"[".repeat(10_000)).is_err());
    for p in [
        "",
        "\\",
        "(?",
        "(?P<",
        "\\x{",
        "\\p",
        "[[:",
        "a{",
        "{",
        "\u{10FFFF}",
    ] {
        let _ = check(p);
    }
}

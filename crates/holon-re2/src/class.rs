//! Character class contents: POSIX, Perl and Unicode groups, case folding.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

use crate::rules::*;
use crate::tree::*;

/// A set of code points (surrogates included, as in RE2).
#[derive(Debug, Default, Clone)]
pub(crate) struct RangeSet {
    pub(crate) ranges: Vec<(u32, u32)>,
    pub(crate) dirty: bool,
}

impl RangeSet {
    pub(crate) fn add(&mut self, lo: u32, hi: u32) {
        if lo <= hi {
            self.ranges.push((lo, hi));
            self.dirty = true;
        }
    }

    pub(crate) fn add_all(&mut self, ranges: &[(u32, u32)]) {
        for &(lo, hi) in ranges {
            self.add(lo, hi);
        }
    }

    /// Sorted, disjoint, non-adjacent ranges.
    pub(crate) fn norm(&mut self) -> &[(u32, u32)] {
        if self.dirty {
            self.ranges = normalize(std::mem::take(&mut self.ranges));
            self.dirty = false;
        }
        &self.ranges
    }

    pub(crate) fn negate(&mut self) {
        let ranges = complement(self.norm());
        self.ranges = ranges;
        self.dirty = false;
    }
}

pub(crate) fn normalize(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// The complement of normalized `ranges` within `0..=RUNE_MAX`.
pub(crate) fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    let mut next = 0;
    for &(lo, hi) in ranges {
        if next < lo {
            out.push((next, lo - 1));
        }
        next = hi + 1;
    }
    if next <= RUNE_MAX {
        out.push((next, RUNE_MAX));
    }
    out
}

pub(crate) fn contains(ranges: &[(u32, u32)], r: u32) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < r {
                std::cmp::Ordering::Less
            } else if lo > r {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Adds a range, with its case variants under `(?i)` (RE2 `AddRangeFlags`).
pub(crate) fn add_range_flags(set: &mut RangeSet, lo: u32, hi: u32, fold: bool) {
    if fold {
        set.add_all(&fold_closure(&[(lo, hi)]));
    } else {
        set.add(lo, hi);
    }
}

/// Adds a group or its negation (RE2 `AddUGroup`).
pub(crate) fn add_group(set: &mut RangeSet, ranges: &[(u32, u32)], sign: i8, flags: u8) {
    let fold = flags & FOLD_CASE != 0;
    let positive = if fold {
        fold_closure(ranges)
    } else {
        normalize(ranges.to_vec())
    };
    if sign > 0 {
        set.add_all(&positive);
    } else {
        set.add_all(&complement(&positive));
    }
}

pub(crate) const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
pub(crate) const SPACE: &[(u32, u32)] = &[(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)];
pub(crate) const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];

/// `\d`, `\s`, `\w` and negations: ASCII only in RE2.
pub(crate) fn perl_group(c: u8) -> Option<(i8, &'static [(u32, u32)])> {
    match c {
        b'd' => Some((1, DIGIT)),
        b'D' => Some((-1, DIGIT)),
        b's' => Some((1, SPACE)),
        b'S' => Some((-1, SPACE)),
        b'w' => Some((1, WORD)),
        b'W' => Some((-1, WORD)),
        _ => None,
    }
}

pub(crate) type PosixGroup = (&'static str, i8, &'static [(u32, u32)]);

pub(crate) const ALNUM: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)];
pub(crate) const ALPHA: &[(u32, u32)] = &[(0x41, 0x5A), (0x61, 0x7A)];
pub(crate) const ASCII: &[(u32, u32)] = &[(0x00, 0x7F)];
pub(crate) const BLANK: &[(u32, u32)] = &[(0x09, 0x09), (0x20, 0x20)];
pub(crate) const CNTRL: &[(u32, u32)] = &[(0x00, 0x1F), (0x7F, 0x7F)];
pub(crate) const GRAPH: &[(u32, u32)] = &[(0x21, 0x7E)];
pub(crate) const LOWER: &[(u32, u32)] = &[(0x61, 0x7A)];
pub(crate) const PRINT: &[(u32, u32)] = &[(0x20, 0x7E)];
pub(crate) const PUNCT: &[(u32, u32)] = &[(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)];
pub(crate) const POSIX_SPACE: &[(u32, u32)] = &[(0x09, 0x0D), (0x20, 0x20)];
pub(crate) const UPPER: &[(u32, u32)] = &[(0x41, 0x5A)];
pub(crate) const XDIGIT: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)];

/// RE2's POSIX classes (ASCII only).
pub(crate) const POSIX_GROUPS: &[PosixGroup] = &[
    ("[:alnum:]", 1, ALNUM),
    ("[:^alnum:]", -1, ALNUM),
    ("[:alpha:]", 1, ALPHA),
    ("[:^alpha:]", -1, ALPHA),
    ("[:ascii:]", 1, ASCII),
    ("[:^ascii:]", -1, ASCII),
    ("[:blank:]", 1, BLANK),
    ("[:^blank:]", -1, BLANK),
    ("[:cntrl:]", 1, CNTRL),
    ("[:^cntrl:]", -1, CNTRL),
    ("[:digit:]", 1, DIGIT),
    ("[:^digit:]", -1, DIGIT),
    ("[:graph:]", 1, GRAPH),
    ("[:^graph:]", -1, GRAPH),
    ("[:lower:]", 1, LOWER),
    ("[:^lower:]", -1, LOWER),
    ("[:print:]", 1, PRINT),
    ("[:^print:]", -1, PRINT),
    ("[:punct:]", 1, PUNCT),
    ("[:^punct:]", -1, PUNCT),
    ("[:space:]", 1, POSIX_SPACE),
    ("[:^space:]", -1, POSIX_SPACE),
    ("[:upper:]", 1, UPPER),
    ("[:^upper:]", -1, UPPER),
    ("[:word:]", 1, WORD),
    ("[:^word:]", -1, WORD),
    ("[:xdigit:]", 1, XDIGIT),
    ("[:^xdigit:]", -1, XDIGIT),
];

/// General categories RE2 knows (`\p{L}`, `\pN`, `\p{Lu}`...).
#[rustfmt::skip]
pub(crate) const RE2_CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

/// Scripts RE2 knows (Unicode 15.1), by their exact, case-sensitive names.
#[rustfmt::skip]
pub(crate) const RE2_SCRIPTS: &[&str] = &[
    "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum",
    "Bassa_Vah", "Batak", "Bengali", "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese",
    "Buhid", "Canadian_Aboriginal", "Carian", "Caucasian_Albanian", "Chakma", "Cham", "Cherokee",
    "Chorasmian", "Common", "Coptic", "Cuneiform", "Cypriot", "Cypro_Minoan", "Cyrillic", "Deseret",
    "Devanagari", "Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs", "Elbasan", "Elymaic",
    "Ethiopic", "Georgian", "Glagolitic", "Gothic", "Grantha", "Greek", "Gujarati", "Gunjala_Gondi",
    "Gurmukhi", "Han", "Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran", "Hebrew", "Hiragana",
    "Imperial_Aramaic", "Inherited", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese",
    "Kaithi", "Kannada", "Katakana", "Kawi", "Kayah_Li", "Kharoshthi", "Khitan_Small_Script",
    "Khmer", "Khojki", "Khudawadi", "Lao", "Latin", "Lepcha", "Limbu", "Linear_A", "Linear_B",
    "Lisu", "Lycian", "Lydian", "Mahajani", "Makasar", "Malayalam", "Mandaic", "Manichaean",
    "Marchen", "Masaram_Gondi", "Medefaidrin", "Meetei_Mayek", "Mende_Kikakui", "Meroitic_Cursive",
    "Meroitic_Hieroglyphs", "Miao", "Modi", "Mongolian", "Mro", "Multani", "Myanmar", "Nabataean",
    "Nag_Mundari", "Nandinagari", "New_Tai_Lue", "Newa", "Nko", "Nushu", "Nyiakeng_Puachue_Hmong",
    "Ogham", "Ol_Chiki", "Old_Hungarian", "Old_Italic", "Old_North_Arabian", "Old_Permic",
    "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Old_Uyghur", "Oriya", "Osage",
    "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician",
    "Psalter_Pahlavi", "Rejang", "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian",
    "Siddham", "SignWriting", "Sinhala", "Sogdian", "Sora_Sompeng", "Soyombo", "Sundanese",
    "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa", "Tai_Le", "Tai_Tham", "Tai_Viet", "Takri",
    "Tamil", "Tangsa", "Tangut", "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta",
    "Toto", "Ugaritic", "Vai", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi", "Yi",
    "Zanabazar_Square",
];

/// The code points of an RE2 Unicode group (with their case variants if
/// `fold`), or `None` if RE2 lacks the group.
pub(crate) fn unicode_group(name: &str, fold: bool) -> Option<SharedRanges> {
    type Cache = Mutex<HashMap<(&'static str, bool), SharedRanges>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = *RE2_CATEGORIES
        .iter()
        .chain(RE2_SCRIPTS)
        .chain(&["Any"])
        .find(|&&known| known == name)?;
    let cache = CACHE.get_or_init(Cache::default);
    let cached = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&(key, fold))
        .cloned();
    if let Some(ranges) = cached {
        return Some(ranges);
    }
    let ranges = load_group(key);
    let ranges: SharedRanges = if fold {
        fold_closure(&ranges).into()
    } else {
        ranges.into()
    };
    cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert((key, fold), ranges.clone());
    Some(ranges)
}

/// Builds an RE2 group (known to exist) from the `regex-syntax` tables.
pub(crate) fn load_group(name: &str) -> Vec<(u32, u32)> {
    match name {
        "Any" => return vec![(0, RUNE_MAX)],
        "Cs" => return vec![(0xD800, 0xDFFF)],
        "C" => {
            let mut all = vec![(0xD800, 0xDFFF)];
            for part in ["Cc", "Cf", "Co"] {
                all.extend(load_group(part));
            }
            return normalize(all);
        }
        _ => {}
    }
    let property = if RE2_CATEGORIES.contains(&name) {
        "gc"
    } else {
        "sc"
    };
    let Some(mut class) = hir_class(&format!(r"\p{{{property}={name}}}")) else {
        // Should the Unicode tables be compiled out, count the group as huge.
        return vec![(0, RUNE_MAX)];
    };
    class.intersect(unicode_15_1());
    let mut ranges = class_ranges(&class);
    // Unicode 16 moved U+1171E AHOM SIGN RINGAM from Mn to Mc.
    match name {
        "Mn" => ranges.push((0x1171E, 0x1171E)),
        "Mc" => ranges.retain(|&r| r != (0x1171E, 0x1171E)),
        _ => {}
    }
    normalize(ranges)
}

/// A Unicode class from `regex-syntax`.
pub(crate) fn hir_class(pattern: &str) -> Option<ClassUnicode> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class.clone()),
        HirKind::Literal(lit) => {
            let c = std::str::from_utf8(&lit.0).ok()?.chars().next()?;
            Some(ClassUnicode::new([ClassUnicodeRange::new(c, c)]))
        }
        _ => None,
    }
}

pub(crate) fn class_ranges(class: &ClassUnicode) -> Vec<(u32, u32)> {
    class
        .ranges()
        .iter()
        .map(|r| (u32::from(r.start()), u32::from(r.end())))
        .collect()
}

/// Code points assigned by Unicode 15.1, the tables RE2 2025 ships.
pub(crate) fn unicode_15_1() -> &'static ClassUnicode {
    static AGE: OnceLock<ClassUnicode> = OnceLock::new();
    AGE.get_or_init(|| hir_class(r"\p{age=15.1}").unwrap_or_else(|| ClassUnicode::new([])))
}

/// Characters RE2 allows in capture names (beyond ASCII).
pub(crate) fn capture_name_chars() -> &'static [(u32, u32)] {
    static CHARS: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    CHARS.get_or_init(|| {
        let mut all = Vec::new();
        for cat in ["Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Mn", "Mc", "Nd", "Pc"] {
            all.extend(load_group(cat));
        }
        normalize(all)
    })
}

/// `ranges` plus their simple case variants known to Unicode 15.1 (RE2
/// `AddFoldedRange`).
pub(crate) fn fold_closure(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    if ranges.iter().all(|&(_, hi)| hi < 0x80) {
        let mut all = ranges.to_vec();
        for c in ranges.iter().flat_map(|&(lo, hi)| lo..=hi) {
            match c {
                0x4B | 0x6B => all.push((0x212A, 0x212A)),
                0x53 | 0x73 => all.push((0x17F, 0x17F)),
                _ => {}
            }
            if (0x41..=0x5A).contains(&(c & !0x20)) {
                all.push((c ^ 0x20, c ^ 0x20));
            }
        }
        return normalize(all);
    }
    let chars = ranges.iter().flat_map(|&(lo, hi)| {
        let below = (lo <= 0xD7FF).then(|| (lo, hi.min(0xD7FF)));
        let above = (hi >= 0xE000).then(|| (lo.max(0xE000), hi));
        below.into_iter().chain(above).filter_map(|(a, b)| {
            Some(ClassUnicodeRange::new(
                char::from_u32(a)?,
                char::from_u32(b)?,
            ))
        })
    });
    let original = ClassUnicode::new(chars);
    // Only code points RE2's tables know fold, and only to such points.
    let mut extra = original.clone();
    extra.intersect(unicode_15_1());
    // Without the `unicode-case` tables of regex-syntax, no folding is added.
    let _ = extra.try_case_fold_simple();
    extra.difference(&original);
    extra.intersect(unicode_15_1());
    let mut all = ranges.to_vec();
    all.extend(class_ranges(&extra));
    normalize(all)
}

/// The case-folding orbit of `r` (RE2 `CycleFoldRune`), as ranges.
pub(crate) fn fold_orbit(r: u32) -> Vec<(u32, u32)> {
    let lower = r | 0x20;
    match r {
        0x4B | 0x6B => vec![(0x4B, 0x4B), (0x6B, 0x6B), (0x212A, 0x212A)],
        0x53 | 0x73 => vec![(0x53, 0x53), (0x73, 0x73), (0x17F, 0x17F)],
        0x41..=0x5A | 0x61..=0x7A => vec![(lower - 0x20, lower - 0x20), (lower, lower)],
        0..=0x7F => vec![(r, r)],
        _ => fold_closure(&[(r, r)]),
    }
}

//! Program size of a character class: RE2's UTF-8 range compiler, replayed.

use std::collections::HashMap;

use crate::rules::*;

pub(crate) fn utf8_len(r: u32) -> u64 {
    match r {
        0..=0x7F => 1,
        0x80..=0x7FF => 2,
        0x800..=0xFFFF => 3,
        _ => 4,
    }
}

/// UTF-8 bytes of `r`; surrogates are encoded like any other code point.
pub(crate) fn utf8_bytes(r: u32) -> ([u8; 4], usize) {
    let mut out = [0u8; 4];
    let n = utf8_len(r) as usize;
    match n {
        1 => out[0] = r as u8,
        2 => {
            out[0] = 0xC0 | (r >> 6) as u8;
            out[1] = 0x80 | (r & 0x3F) as u8;
        }
        3 => {
            out[0] = 0xE0 | (r >> 12) as u8;
            out[1] = 0x80 | ((r >> 6) & 0x3F) as u8;
            out[2] = 0x80 | (r & 0x3F) as u8;
        }
        _ => {
            out[0] = 0xF0 | (r >> 18) as u8;
            out[1] = 0x80 | ((r >> 12) & 0x3F) as u8;
            out[2] = 0x80 | ((r >> 6) & 0x3F) as u8;
            out[3] = 0x80 | (r & 0x3F) as u8;
        }
    }
    (out, n)
}

/// An upper bound of `class_cost`, without replaying the compiler. Each
/// range splits into at most 1, 3, 5 and 7 byte sequences of length 1 to 4;
/// a sequence of n bytes costs at most n instructions, n clones of shared
/// suffixes and one `Alt`.
pub(crate) fn class_cost_bound(ranges: &[(u32, u32)]) -> u64 {
    ranges
        .iter()
        .map(|&(lo, hi)| {
            [
                (0, 0x7F, 1),
                (0x80, 0x7FF, 2),
                (0x800, 0xFFFF, 3),
                (0x1_0000, RUNE_MAX, 4),
            ]
            .iter()
            .filter(|&&(a, b, _)| lo <= b && a <= hi)
            .map(|&(_, _, n)| (2 * n - 1) * (2 * n + 1))
            .sum::<u64>()
        })
        .sum()
}

/// Instructions RE2 compiles for a (normalized, non-empty) class.
pub(crate) fn class_cost(ranges: &[(u32, u32)]) -> u64 {
    pub(crate) const A: u32 = b'A' as u32;
    pub(crate) const Z: u32 = b'Z' as u32;
    pub(crate) const LA: u32 = b'a' as u32;
    pub(crate) const LZ: u32 = b'z' as u32;
    // CharClass::FoldsASCII: same membership on A-Z as on a-z.
    let (mut upper, mut lower) = (0u32, 0u32);
    for &(lo, hi) in ranges {
        let (l, h) = (lo.max(A), hi.min(Z));
        if l <= h {
            upper |= ((1u32 << (h - l + 1)) - 1) << (l - A);
        }
        let (l, h) = (lo.max(LA), hi.min(LZ));
        if l <= h {
            lower |= ((1u32 << (h - l + 1)) - 1) << (l - LA);
        }
    }
    let folds_ascii = upper == lower;
    let mut c = RuneCompiler::default();
    for &(lo, hi) in ranges {
        if folds_ascii && A <= lo && hi <= Z {
            continue;
        }
        let fold =
            folds_ascii && !((lo <= A && LZ <= hi) || hi < A || LZ < lo || (Z < lo && hi < LA));
        c.add_rune_range(lo, hi, fold);
    }
    c.count()
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Inst {
    Byte {
        lo: u8,
        hi: u8,
        fold: bool,
        out: u32,
    },
    Alt {
        out1: u32,
    },
}

/// RE2's `Compiler` rune-range machinery (forward, UTF-8), counting only.
#[derive(Default)]
pub(crate) struct RuneCompiler {
    /// Instruction 0 stands for "none", as in RE2.
    pub(crate) inst: Vec<Inst>,
    pub(crate) cache: HashMap<u64, u32>,
    pub(crate) begin: u32,
}

impl RuneCompiler {
    pub(crate) fn count(&self) -> u64 {
        self.inst.len().saturating_sub(1) as u64
    }

    pub(crate) fn alloc(&mut self, inst: Inst) -> u32 {
        if self.inst.is_empty() {
            self.inst.push(Inst::Alt { out1: 0 });
        }
        self.inst.push(inst);
        (self.inst.len() - 1) as u32
    }

    pub(crate) fn key(lo: u8, hi: u8, fold: bool, next: u32) -> u64 {
        (u64::from(next) << 17) | (u64::from(lo) << 9) | (u64::from(hi) << 1) | u64::from(fold)
    }

    pub(crate) fn uncached(&mut self, lo: u8, hi: u8, fold: bool, next: u32) -> u32 {
        self.alloc(Inst::Byte {
            lo,
            hi,
            fold,
            out: next,
        })
    }

    pub(crate) fn cached(&mut self, lo: u8, hi: u8, fold: bool, next: u32) -> u32 {
        let key = Self::key(lo, hi, fold, next);
        if let Some(&id) = self.cache.get(&key) {
            return id;
        }
        let id = self.uncached(lo, hi, fold, next);
        self.cache.insert(key, id);
        id
    }

    pub(crate) fn get(&self, id: u32) -> Option<Inst> {
        self.inst.get(id as usize).copied()
    }

    pub(crate) fn is_cached(&self, id: u32) -> bool {
        match self.get(id) {
            Some(Inst::Byte { lo, hi, fold, out }) => {
                self.cache.contains_key(&Self::key(lo, hi, fold, out))
            }
            _ => false,
        }
    }

    pub(crate) fn byte_out(&self, id: u32) -> u32 {
        match self.get(id) {
            Some(Inst::Byte { out, .. }) => out,
            _ => 0,
        }
    }

    pub(crate) fn set_byte_out(&mut self, id: u32, next: u32) {
        if let Some(Inst::Byte { out, .. }) = self.inst.get_mut(id as usize) {
            *out = next;
        }
    }

    pub(crate) fn same_bytes(&self, a: u32, b: u32) -> bool {
        match (self.get(a), self.get(b)) {
            (
                Some(Inst::Byte {
                    lo: l1,
                    hi: h1,
                    fold: f1,
                    ..
                }),
                Some(Inst::Byte {
                    lo: l2,
                    hi: h2,
                    fold: f2,
                    ..
                }),
            ) => l1 == l2 && h1 == h2 && f1 == f2,
            _ => false,
        }
    }

    pub(crate) fn add_suffix(&mut self, id: u32) {
        if self.begin == 0 {
            self.begin = id;
        } else {
            self.begin = self.add_suffix_recursive(self.begin, id);
        }
    }

    /// RE2 `AddSuffixRecursive`: merges suffix `id` into the trie at `root`.
    /// Its depth is bounded by the four bytes of a UTF-8 sequence.
    pub(crate) fn add_suffix_recursive(&mut self, mut root: u32, id: u32) -> u32 {
        // FindByteRange (forward mode only looks at the newest branch).
        let found_in_alt = match self.get(root) {
            Some(Inst::Byte { .. }) if self.same_bytes(root, id) => None,
            Some(Inst::Alt { out1, .. }) if self.same_bytes(out1, id) => Some(root),
            _ => {
                return self.alloc(Inst::Alt { out1: id });
            }
        };
        let mut br = match found_in_alt {
            None => root,
            Some(alt) => match self.get(alt) {
                Some(Inst::Alt { out1, .. }) => out1,
                _ => root,
            },
        };
        if self.is_cached(br) {
            // Cached suffixes are shared: clone the head before editing it.
            let Some(copy) = self.get(br) else {
                return root;
            };
            let clone = self.alloc(copy);
            br = clone;
            match found_in_alt {
                None => root = br,
                Some(alt) => {
                    if let Some(Inst::Alt { out1, .. }) = self.inst.get_mut(alt as usize) {
                        *out1 = br;
                    }
                }
            }
        }
        let out = self.byte_out(id);
        if !self.is_cached(id) && id as usize + 1 == self.inst.len() {
            self.inst.pop();
        }
        let next = self.byte_out(br);
        let merged = if next == 0 {
            out
        } else {
            self.add_suffix_recursive(next, out)
        };
        self.set_byte_out(br, merged);
        root
    }

    /// RE2 `AddRuneRangeUTF8`; recursion depth is bounded by a constant.
    pub(crate) fn add_rune_range(&mut self, lo: u32, hi: u32, fold: bool) {
        if lo > hi {
            return;
        }
        if lo == 0x80 && hi == RUNE_MAX {
            // Add_80_10ffff, forward mode.
            let cont1 = self.uncached(0x80, 0xBF, false, 0);
            let id = self.uncached(0xC2, 0xDF, false, cont1);
            self.add_suffix(id);
            let cont2 = self.uncached(0x80, 0xBF, false, cont1);
            let id = self.uncached(0xE0, 0xEF, false, cont2);
            self.add_suffix(id);
            let cont3 = self.uncached(0x80, 0xBF, false, cont2);
            let id = self.uncached(0xF0, 0xF4, false, cont3);
            self.add_suffix(id);
            return;
        }
        // Split into ranges of equal UTF-8 length.
        for max in [0x7F, 0x7FF, 0xFFFF] {
            if lo <= max && max < hi {
                self.add_rune_range(lo, max, fold);
                self.add_rune_range(max + 1, hi, fold);
                return;
            }
        }
        if hi < 0x80 {
            let id = self.uncached(lo as u8, hi as u8, fold, 0);
            self.add_suffix(id);
            return;
        }
        // Split into ranges that agree on the leading bytes.
        for i in 1..4 {
            let m = (1u32 << (6 * i)) - 1;
            if lo & !m != hi & !m {
                if lo & m != 0 {
                    self.add_rune_range(lo, lo | m, fold);
                    self.add_rune_range((lo | m) + 1, hi, fold);
                    return;
                }
                if hi & m != m {
                    self.add_rune_range(lo, (hi & !m) - 1, fold);
                    self.add_rune_range(hi & !m, hi, fold);
                    return;
                }
            }
        }
        let (ulo, n) = utf8_bytes(lo);
        let (uhi, _) = utf8_bytes(hi);
        let mut id = 0;
        let bytes = ulo.iter().zip(&uhi).take(n).enumerate().rev();
        for (i, (&lo_byte, &hi_byte)) in bytes {
            // Cache the last byte and inner byte ranges, not the lead byte.
            id = if i == n - 1 || (lo_byte < hi_byte && i != 0) {
                self.cached(lo_byte, hi_byte, false, id)
            } else {
                self.uncached(lo_byte, hi_byte, false, id)
            };
        }
        self.add_suffix(id);
    }
}

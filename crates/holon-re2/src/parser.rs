//! The parser, decision by decision as RE2's `Regexp::Parse` and `ParseState`.

use std::collections::HashMap;

use crate::class::*;
use crate::program::*;
use crate::rules::*;
use crate::tree::*;

pub(crate) struct Parser<'p> {
    pub(crate) pat: &'p str,
    pub(crate) flags: u8,
    pub(crate) base: Frame,
    pub(crate) open: Vec<Frame>,
    /// Code points of the class nodes (index 0 is unused).
    pub(crate) sets: Vec<Vec<(u32, u32)>>,
    /// Whether classes are sized exactly (slow) or by a quick upper bound.
    pub(crate) exact: bool,
    /// Exact sizes of the larger classes already seen.
    pub(crate) costs: HashMap<Vec<(u32, u32)>, u64>,
    /// Case variants of the non-ASCII class ranges already seen.
    pub(crate) folds: HashMap<(u32, u32), SharedRanges>,
}

pub(crate) fn parse(pattern: &str) -> Result<(), Failure> {
    // Classes are first sized by a quick upper bound; only a pattern that
    // this bound puts over RE2's budget is sized again, exactly.
    match Parser::new(pattern, false).run() {
        Err(Failure {
            code: Code::TooLarge,
            ..
        }) => Parser::new(pattern, true).run(),
        verdict => verdict,
    }
}

/// The character at byte `i` of `s` (callers keep `i` on a boundary).
pub(crate) fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|t| t.chars().next())
}

impl<'p> Parser<'p> {
    pub(crate) fn new(pat: &'p str, exact: bool) -> Parser<'p> {
        Parser {
            pat,
            flags: DEFAULT_FLAGS,
            base: Frame::new(DEFAULT_FLAGS, false),
            open: Vec::new(),
            sets: vec![Vec::new()],
            exact,
            costs: HashMap::new(),
            folds: HashMap::new(),
        }
    }

    /// Instructions for a class: exact, or a quick upper bound.
    pub(crate) fn class_cost(&mut self, ranges: &[(u32, u32)]) -> u64 {
        if !self.exact {
            return class_cost_bound(ranges);
        }
        if ranges.len() < 16 {
            return class_cost(ranges);
        }
        if let Some(&cost) = self.costs.get(ranges) {
            return cost;
        }
        let cost = class_cost(ranges);
        self.costs.insert(ranges.to_vec(), cost);
        cost
    }

    pub(crate) fn cur(&mut self) -> &mut Frame {
        match self.open.last_mut() {
            Some(frame) => frame,
            None => &mut self.base,
        }
    }

    pub(crate) fn push(&mut self, node: Node) {
        let items = &mut self.cur().items;
        // Like RE2's MaybeConcatString: fold the literal below the top into
        // the run of literals before it (the top one may still be repeated).
        let literal = |n: &Node| matches!(n.op, Op::Literal | Op::LiteralString);
        let merge = literal(&node)
            && matches!(items.as_slice(), [.., below, top] if literal(below) && top.op == Op::Literal);
        // Pops the top literal, then the one below it.
        let pair = if merge {
            items.pop().zip(items.pop())
        } else {
            None
        };
        if let Some((top, below)) = pair {
            items.push(Node {
                op: Op::LiteralString,
                ..below.absorb(&[top])
            });
        }
        items.push(node);
    }

    pub(crate) fn run(&mut self) -> Result<(), Failure> {
        let pat = self.pat;
        let b = pat.as_bytes();
        let len = b.len();
        let mut i = 0;
        let mut lastunary: Option<usize> = None;
        while let Some(&c) = b.get(i) {
            let mut isunary = None;
            match c {
                b'(' => {
                    if i + 1 < len && b.get(i + 1) == Some(&b'?') {
                        i = self.parse_perl_flags(i)?;
                    } else {
                        let flags = self.flags;
                        self.open.push(Frame::new(flags, true));
                        i += 1;
                    }
                }
                b'|' => {
                    self.vertical_bar();
                    i += 1;
                }
                b')' => {
                    self.right_paren()?;
                    i += 1;
                }
                b'^' | b'$' => {
                    self.push(Node::leaf(Op::EmptyWidth, self.flags, 1, true));
                    i += 1;
                }
                b'.' => {
                    if self.flags & DOT_NL != 0 {
                        let cost = self.class_cost(&[(0, RUNE_MAX)]);
                        self.push(Node::leaf(Op::AnyChar, self.flags, cost, false));
                    } else {
                        let mut set = RangeSet::default();
                        set.add(0, 9);
                        set.add(11, RUNE_MAX);
                        self.push_class(set);
                    }
                    i += 1;
                }
                b'[' => {
                    let (set, next) = self.parse_char_class(i)?;
                    self.push_class(set);
                    i = next;
                }
                b'*' | b'+' | b'?' => {
                    let op = match c {
                        b'*' => Op::Star,
                        b'+' => Op::Plus,
                        _ => Op::Quest,
                    };
                    let start = i;
                    let nongreedy;
                    (i, nongreedy) = repeat_suffix(b, i + 1, lastunary)?;
                    self.push_repeat_op(op, start, i, nongreedy)?;
                    isunary = Some(start);
                }
                b'{' => match maybe_parse_repetition(b, i) {
                    None => {
                        self.push_literal(u32::from(b'{'));
                        i += 1;
                    }
                    Some((min, max, next)) => {
                        let start = i;
                        let nongreedy;
                        (i, nongreedy) = repeat_suffix(b, next, lastunary)?;
                        self.push_repetition(min, max, start, i, nongreedy)?;
                        isunary = Some(start);
                    }
                },
                b'\\' => i = self.parse_backslash(i)?,
                _ => {
                    let c = char_at(pat, i).unwrap_or('\u{FFFD}');
                    self.push_literal(u32::from(c));
                    i += c.len_utf8().max(1);
                }
            }
            lastunary = isunary;
        }
        self.finish()
    }

    /// A backslash sequence outside a class; returns the next position.
    pub(crate) fn parse_backslash(&mut self, i: usize) -> Result<usize, Failure> {
        let pat = self.pat;
        let b = pat.as_bytes();
        let len = b.len();
        if let Some(&next) = b.get(i + 1) {
            match next {
                b'b' | b'B' | b'A' | b'z' => {
                    self.push(Node::leaf(Op::EmptyWidth, self.flags, 1, true));
                    return Ok(i + 2);
                }
                b'C' => {
                    self.push(Node::leaf(Op::AnyByte, self.flags, 1, false));
                    return Ok(i + 2);
                }
                b'Q' => {
                    let mut j = i + 2;
                    while j < len {
                        if j + 1 < len && b.get(j) == Some(&b'\\') && b.get(j + 1) == Some(&b'E') {
                            j += 2;
                            break;
                        }
                        let c = char_at(pat, j).unwrap_or('\u{FFFD}');
                        self.push_literal(u32::from(c));
                        j += c.len_utf8().max(1);
                    }
                    return Ok(j);
                }
                b'p' | b'P' => {
                    let mut set = RangeSet::default();
                    let next = self.parse_unicode_group(i, &mut set)?;
                    self.push_class(set);
                    return Ok(next);
                }
                c => {
                    if let Some((sign, ranges)) = perl_group(c) {
                        let mut set = RangeSet::default();
                        add_group(&mut set, ranges, sign, self.flags);
                        self.push_class(set);
                        return Ok(i + 2);
                    }
                }
            }
        }
        let (r, next) = parse_escape(pat, i)?;
        self.push_literal(r);
        Ok(next)
    }

    /// Pushes a literal rune, case-folded if `(?i)` is on (RE2 `PushLiteral`).
    pub(crate) fn push_literal(&mut self, r: u32) {
        if self.flags & FOLD_CASE != 0 {
            let orbit = fold_orbit(r);
            if orbit.len() > 1 {
                let mut set = RangeSet::default();
                set.add_all(&orbit);
                self.push_class(set);
                return;
            }
        }
        self.push(Node {
            rune: r,
            ..Node::leaf(Op::Literal, self.flags, utf8_len(r), false)
        });
    }

    /// Pushes a character class (RE2 `PushRegexp` + `SimplifyCharClass`).
    pub(crate) fn push_class(&mut self, mut set: RangeSet) {
        let flags = self.flags;
        let ranges = set.norm();
        let nrunes: u64 = ranges.iter().map(|&(lo, hi)| u64::from(hi - lo) + 1).sum();
        let first = ranges.first().map_or(0, |&(lo, _)| lo);
        let node = if nrunes == 1 {
            Node {
                rune: first,
                ..Node::leaf(Op::Literal, flags, utf8_len(first), false)
            }
        } else if nrunes == 2
            && (u32::from(b'A')..=u32::from(b'Z')).contains(&first)
            && contains(ranges, first + 32)
        {
            // [Aa] is the literal `a` under case folding.
            Node {
                rune: first + 32,
                ..Node::leaf(Op::Literal, flags | FOLD_CASE, 1, false)
            }
        } else {
            let ranges = ranges.to_vec();
            let node = if ranges.is_empty() {
                Node::leaf(Op::NoMatch, flags, 0, false)
            } else {
                Node::leaf(Op::Class, flags, self.class_cost(&ranges), false)
            };
            self.with_set(node, ranges)
        };
        self.push(node);
    }

    /// `*`, `+` or `?` (RE2 `PushRepeatOp`).
    pub(crate) fn push_repeat_op(
        &mut self,
        op: Op,
        start: usize,
        end: usize,
        nongreedy: bool,
    ) -> Result<(), Failure> {
        let flags = self.flags ^ if nongreedy { NON_GREEDY } else { 0 };
        let Some(top) = self.cur().items.last_mut() else {
            return fail(Code::RepeatArgument, start, end);
        };
        if top.op == op && top.flags == flags {
            return Ok(());
        }
        if matches!(top.op, Op::Star | Op::Plus | Op::Quest) && top.flags == flags {
            top.op = Op::Star;
            top.cost = top.cost.saturating_add(1);
            top.nullable = true;
            return Ok(());
        }
        let child = *top;
        if child.simplified == Simplified::EmptyMatch {
            // Simplify: repeating the empty string gives the empty string.
            *top = Node {
                nodes: child.nodes.saturating_add(1),
                prod: child.prod,
                has_empty_class: child.has_empty_class,
                ..Node::leaf(op, flags, 1, true)
            };
            top.simplified = Simplified::EmptyMatch;
            return Ok(());
        }
        let extra = if op == Op::Star && child.nullable {
            2
        } else {
            1
        };
        *top = Node {
            cost: child.cost.saturating_add(extra),
            visits: child.visits.saturating_add(1),
            nodes: child.nodes.saturating_add(1),
            prod: child.prod,
            has_empty_class: child.has_empty_class,
            ..Node::leaf(op, flags, 0, op != Op::Plus || child.nullable)
        };
        Ok(())
    }

    /// `{n}`, `{n,}` or `{n,m}` (RE2 `PushRepetition` + `SimplifyRepeat`).
    pub(crate) fn push_repetition(
        &mut self,
        min: u64,
        max: Option<u64>,
        start: usize,
        end: usize,
        nongreedy: bool,
    ) -> Result<(), Failure> {
        if max.is_some_and(|max| max < min)
            || min > MAX_REPEAT
            || max.is_some_and(|max| max > MAX_REPEAT)
        {
            return fail(Code::RepeatSize, start, end);
        }
        let flags = self.flags ^ if nongreedy { NON_GREEDY } else { 0 };
        let Some(top) = self.cur().items.last_mut() else {
            return fail(Code::RepeatArgument, start, end);
        };
        let child = *top;
        // SimplifyRepeat: x{n,m} becomes n copies of x, then m-n nested
        // (x(x)?)? copies; x{n,} becomes n-1 copies and x+. Repeats of
        // empty-width assertions are capped at one copy, and repeats of the
        // empty string are the empty string.
        let (c, v) = (child.cost, child.visits);
        let (min_c, max_c) = match child.simplified {
            Simplified::EmptyWidth | Simplified::EmptyWidths => (min.min(1), max.map(|m| m.min(1))),
            _ => (min, max),
        };
        let mut simplified = Simplified::Other;
        let (cost, visits) = match max_c {
            _ if child.simplified == Simplified::EmptyMatch => {
                simplified = Simplified::EmptyMatch;
                (1, 1)
            }
            Some(0) => {
                simplified = Simplified::EmptyMatch;
                (1, 1)
            }
            Some(1) if min_c == 1 => {
                simplified = child.simplified;
                (c, v)
            }
            None if min_c <= 1 => (
                c.saturating_add(if min_c == 0 && child.nullable { 2 } else { 1 }),
                v.saturating_add(1),
            ),
            None => (
                c.saturating_mul(min_c).saturating_add(1),
                v.saturating_mul(min_c).saturating_add(2),
            ),
            Some(max_c) => {
                let copies = match min_c {
                    0 => 0,
                    1 => v,
                    n => v.saturating_mul(n).saturating_add(1),
                };
                let optional = max_c - min_c;
                let nested = if optional == 0 {
                    0
                } else {
                    v.saturating_add(2)
                        .saturating_mul(optional)
                        .saturating_sub(1)
                        .saturating_add(u64::from(min_c > 0))
                };
                (
                    c.saturating_mul(max_c).saturating_add(optional),
                    copies.saturating_add(nested),
                )
            }
        };
        // RepetitionWalker: counts multiply along nested repeats; a count of
        // zero is skipped; `{n,}` counts as n.
        let m = max.unwrap_or(min);
        let prod = child.prod.saturating_mul(m.max(1)).min(u64::MAX / 2);
        let node = Node {
            cost,
            visits,
            nodes: child.nodes.saturating_add(1),
            prod,
            simplified,
            has_empty_class: child.has_empty_class,
            ..Node::leaf(Op::Repeat, flags, 0, min == 0 || child.nullable)
        };
        *top = node;
        if (min >= 2 || max.is_some_and(|max| max >= 2))
            && (prod > MAX_REPEAT || node.nodes >= MAX_WALK_NODES)
        {
            return fail(Code::RepeatSize, start, end);
        }
        Ok(())
    }

    /// `|` (RE2 `DoVerticalBar`).
    pub(crate) fn vertical_bar(&mut self) {
        let flags = self.flags;
        let frame = self.cur();
        let items = std::mem::take(&mut frame.items);
        push_alternative(&mut frame.alts, concat(items, flags));
    }

    /// Collapses the current frame into one node (RE2 `DoAlternation`).
    pub(crate) fn collapse(&mut self, frame: Frame, flags: u8) -> Node {
        let mut alts = frame.alts;
        push_alternative(&mut alts, concat(frame.items, flags));
        self.alternate(alts, flags)
    }

    /// Alternation of `alts` (RE2 `DoAlternation`, `FactorAlternation`).
    ///
    /// RE2 factors common prefixes out of alternatives (`ab|ac` becomes
    /// `a(?:b|c)`) and merges runs of single characters and classes into one
    /// class (`a|b|[cd]` becomes `[a-d]`). Prefix factoring usually saves
    /// instructions, but an alternative that *is* the prefix turns into an
    /// empty match costing one instruction: `a|a` compiles like `a(?:|)`, 4
    /// instructions instead of 3. Each factored run of such identical simple
    /// alternatives costs at most one extra instruction (nested runs are paid
    /// for by the prefix their parent saves), so ⌊factorable alternatives /
    /// 2⌋ covers it; a prefix that compiles to nothing (an empty class) saves
    /// nothing, and then every alternative may cost one more.
    pub(crate) fn alternate(&mut self, alts: Vec<Node>, flags: u8) -> Node {
        if alts.len() <= 1 {
            return alts
                .first()
                .copied()
                .unwrap_or_else(|| Node::leaf(Op::EmptyMatch, flags, 1, true));
        }
        if let Some(merged) = self.merge_classes(&alts, flags) {
            return merged;
        }
        // Alternations directly inside alternations are flattened by RE2 and
        // factored together.
        let n: u64 = alts.iter().map(|a| a.alts).sum();
        let factorable: u64 = alts
            .iter()
            .map(|a| match a.op {
                Op::Alternate => a.factorable_alts,
                _ => u64::from(a.factorable()),
            })
            .sum();
        let has_empty_class = alts.iter().any(|a| a.has_empty_class);
        let slack = if has_empty_class { n } else { factorable / 2 };
        let len = alts.len() as u64;
        Node {
            cost: len - 1 + slack,
            visits: 1 + 2 * len,
            nodes: 1 + len,
            nullable: alts.iter().any(|a| a.nullable),
            alts: n,
            factorable_alts: factorable,
            ..Node::leaf(Op::Alternate, flags, 0, false)
        }
        .absorb(&alts)
    }

    /// RE2's round 3 of alternation factoring, when it is the only round
    /// that applies: every alternative is a single literal or class and no
    /// two neighbours are equal (equal neighbours would be prefix-factored
    /// first). The alternation becomes one class.
    pub(crate) fn merge_classes(&mut self, alts: &[Node], flags: u8) -> Option<Node> {
        if !alts
            .iter()
            .all(|a| matches!(a.op, Op::Literal | Op::Class | Op::NoMatch))
        {
            return None;
        }
        let same = |a: &Node, b: &Node| match (a.op, b.op) {
            (Op::Literal, Op::Literal) => a.rune == b.rune && (a.flags ^ b.flags) & FOLD_CASE == 0,
            (Op::Literal, _) | (_, Op::Literal) => false,
            _ => self.sets.get(a.set) == self.sets.get(b.set),
        };
        if alts
            .iter()
            .zip(alts.iter().skip(1))
            .any(|(x, y)| same(x, y))
        {
            return None;
        }
        let mut set = RangeSet::default();
        for a in alts {
            if a.op == Op::Literal {
                if a.flags & FOLD_CASE != 0 {
                    set.add_all(&fold_orbit(a.rune));
                } else {
                    set.add(a.rune, a.rune);
                }
            } else {
                set.add_all(self.sets.get(a.set).map_or(&[][..], Vec::as_slice));
            }
        }
        let ranges = set.norm().to_vec();
        let node = if ranges.is_empty() {
            Node::leaf(Op::NoMatch, flags, 0, false)
        } else {
            Node::leaf(Op::Class, flags, self.class_cost(&ranges), false)
        };
        Some(self.with_set(node, ranges))
    }

    /// Records the code points of a class node.
    pub(crate) fn with_set(&mut self, node: Node, ranges: Vec<(u32, u32)>) -> Node {
        self.sets.push(ranges);
        Node {
            set: self.sets.len() - 1,
            ..node
        }
    }

    /// `)` (RE2 `DoRightParen`).
    pub(crate) fn right_paren(&mut self) -> Result<(), Failure> {
        let Some(frame) = self.open.pop() else {
            return fail(Code::UnexpectedParen, 0, self.pat.len());
        };
        let flags = self.flags;
        let capture = frame.capture;
        self.flags = frame.open_flags;
        let inner = self.collapse(frame, flags);
        let node = if capture {
            Node {
                cost: inner.cost.saturating_add(2),
                visits: inner.visits.saturating_add(1),
                nodes: inner.nodes.saturating_add(1),
                prod: inner.prod,
                has_empty_class: inner.has_empty_class,
                ..Node::leaf(Op::Capture, self.flags, 0, inner.nullable)
            }
        } else {
            inner
        };
        self.push(node);
        Ok(())
    }

    /// End of pattern (RE2 `DoFinish`), then the compile-size check.
    pub(crate) fn finish(&mut self) -> Result<(), Failure> {
        if !self.open.is_empty() {
            return fail(Code::MissingParen, 0, self.pat.len());
        }
        let frame = std::mem::replace(&mut self.base, Frame::new(DEFAULT_FLAGS, false));
        let flags = self.flags;
        let root = self.collapse(frame, flags);
        if root.cost.saturating_add(PROGRAM_OVERHEAD) > MAX_INST
            || root.visits > MAX_COMPILE_VISITS
            || root.nodes >= MAX_WALK_NODES
        {
            return fail(Code::TooLarge, 0, 0);
        }
        Ok(())
    }

    /// `(?` constructs (RE2 `ParsePerlFlags`); returns the next position.
    pub(crate) fn parse_perl_flags(&mut self, i: usize) -> Result<usize, Failure> {
        let pat = self.pat;
        let t = pat.as_bytes().get(i..).unwrap_or_default();
        let n = t.len();
        // Lookarounds are refused as bad Perl operators.
        if (n > 3 && (t.get(2) == Some(&b'=') || t.get(2) == Some(&b'!')))
            || (n > 4
                && t.get(2) == Some(&b'<')
                && (t.get(3) == Some(&b'=') || t.get(3) == Some(&b'!')))
        {
            let len = if t.get(2) == Some(&b'<') { 4 } else { 3 };
            return fail(Code::BadPerlOp, i, i + len);
        }
        // Named captures: (?P<name>re) and (?<name>re).
        if (n > 4 && t.get(2) == Some(&b'P') && t.get(3) == Some(&b'<'))
            || (n > 3 && t.get(2) == Some(&b'<'))
        {
            let begin = if t.get(2) == Some(&b'P') { 4 } else { 3 };
            let after = t.get(begin..).unwrap_or_default();
            let Some(pos) = after.iter().position(|&c| c == b'>') else {
                return fail(Code::BadNamedCapture, i, pat.len());
            };
            let end = begin + pos;
            let name = pat.get(i + begin..i + end).unwrap_or("");
            if !valid_capture_name(name) {
                return fail(Code::BadNamedCapture, i, i + end + 1);
            }
            let flags = self.flags;
            self.open.push(Frame::new(flags, true));
            return Ok(i + end + 1);
        }
        let mut j = i + 2;
        let mut negated = false;
        let mut sawflags = false;
        let mut nflags = self.flags;
        loop {
            let Some(c) = char_at(pat, j) else {
                return fail(Code::BadPerlOp, i, j);
            };
            j += c.len_utf8();
            let bit = match c {
                'i' => FOLD_CASE,
                's' => DOT_NL,
                'U' => NON_GREEDY,
                'm' => {
                    // (?m) is the opposite of OneLine.
                    sawflags = true;
                    if negated {
                        nflags |= ONE_LINE;
                    } else {
                        nflags &= !ONE_LINE;
                    }
                    continue;
                }
                '-' => {
                    if negated {
                        return fail(Code::BadPerlOp, i, j);
                    }
                    negated = true;
                    sawflags = false;
                    continue;
                }
                ':' => {
                    let flags = self.flags;
                    self.open.push(Frame::new(flags, false));
                    break;
                }
                ')' => break,
                _ => return fail(Code::BadPerlOp, i, j),
            };
            sawflags = true;
            if negated {
                nflags &= !bit;
            } else {
                nflags |= bit;
            }
        }
        if negated && !sawflags {
            return fail(Code::BadPerlOp, i, j);
        }
        self.flags = nflags;
        Ok(j)
    }

    /// `\p{Name}`, `\pN`, `\P{^Name}`... at byte `i` (RE2 `ParseUnicodeGroup`).
    pub(crate) fn parse_unicode_group(
        &mut self,
        i: usize,
        set: &mut RangeSet,
    ) -> Result<usize, Failure> {
        let pat = self.pat;
        let b = pat.as_bytes();
        let mut negate = b.get(i + 1) == Some(&b'P');
        let j = i + 2;
        let (c, after) = match char_at(pat, j) {
            Some(c) => (c, j + c.len_utf8()),
            None => ('p', j),
        };
        let (mut name, end) = if c != '{' {
            (pat.get(j..after).unwrap_or(""), after)
        } else {
            let Some(pos) = pat.get(after..).and_then(|s| s.find('}')) else {
                return fail(Code::BadCharRange, i, pat.len());
            };
            (pat.get(after..after + pos).unwrap_or(""), after + pos + 1)
        };
        if let Some(stripped) = name.strip_prefix('^') {
            negate = !negate;
            name = stripped;
        }
        let fold = self.flags & FOLD_CASE != 0;
        let Some(ranges) = unicode_group(name, fold) else {
            return fail(Code::BadCharRange, i, end);
        };
        if negate {
            set.add_all(&complement(&ranges));
        } else {
            set.add_all(&ranges);
        }
        Ok(end)
    }

    /// A bracketed class starting at `[` (RE2 `ParseCharClass`).
    pub(crate) fn parse_char_class(&mut self, start: usize) -> Result<(RangeSet, usize), Failure> {
        let pat = self.pat;
        let b = pat.as_bytes();
        let len = b.len();
        let fold = self.flags & FOLD_CASE != 0;
        let mut set = RangeSet::default();
        let mut i = start + 1;
        let mut negated = false;
        if i < len && b.get(i) == Some(&b'^') {
            negated = true;
            i += 1;
        }
        let mut first = true;
        while i < len && (b.get(i) != Some(&b']') || first) {
            // With Perl syntax RE2 allows `-` anywhere in a class.
            first = false;
            let posix = if len - i > 2 && b.get(i) == Some(&b'[') && b.get(i + 1) == Some(&b':') {
                parse_cc_name(pat, i, &mut set, self.flags)?
            } else {
                None
            };
            if let Some(next) = posix {
                i = next;
                continue;
            }
            if len - i > 2
                && b.get(i) == Some(&b'\\')
                && (b.get(i + 1) == Some(&b'p') || b.get(i + 1) == Some(&b'P'))
            {
                i = self.parse_unicode_group(i, &mut set)?;
                continue;
            }
            let perl = if len - i >= 2 && b.get(i) == Some(&b'\\') {
                b.get(i + 1).copied().and_then(perl_group)
            } else {
                None
            };
            if let Some((sign, ranges)) = perl {
                add_group(&mut set, ranges, sign, self.flags);
                i += 2;
                continue;
            }
            // A single character or a range.
            let in_class = |f: Failure| Failure {
                in_class: true,
                ..f
            };
            let lo_start = i;
            let (lo, next) = parse_cc_char(pat, i, start).map_err(in_class)?;
            i = next;
            let mut hi = lo;
            if len - i >= 2 && b.get(i) == Some(&b'-') && b.get(i + 1) != Some(&b']') {
                let (h, next) = parse_cc_char(pat, i + 1, start).map_err(in_class)?;
                if h < lo {
                    return fail(Code::BadCharRange, lo_start, next);
                }
                hi = h;
                i = next;
            }
            if fold && hi >= 0x80 {
                let folded = self
                    .folds
                    .entry((lo, hi))
                    .or_insert_with(|| fold_closure(&[(lo, hi)]).into());
                set.add_all(folded);
            } else {
                add_range_flags(&mut set, lo, hi, fold);
            }
        }
        if i >= len {
            return fail(Code::MissingBracket, start, len);
        }
        if negated {
            set.negate();
        }
        Ok((set, i + 1))
    }
}

/// One character inside a class (RE2 `ParseCCCharacter`).
pub(crate) fn parse_cc_char(
    pat: &str,
    i: usize,
    class_start: usize,
) -> Result<(u32, usize), Failure> {
    match pat.as_bytes().get(i) {
        None => fail(Code::MissingBracket, class_start, pat.len()),
        Some(b'\\') => parse_escape(pat, i),
        Some(_) => {
            let c = char_at(pat, i).unwrap_or('\u{FFFD}');
            Ok((u32::from(c), i + c.len_utf8().max(1)))
        }
    }
}

/// `[:alpha:]` and friends at byte `i` (RE2 `ParseCCName`); `None` when the
/// text is not a POSIX class name at all.
pub(crate) fn parse_cc_name(
    pat: &str,
    i: usize,
    set: &mut RangeSet,
    flags: u8,
) -> Result<Option<usize>, Failure> {
    let b = pat.as_bytes();
    let mut q = i + 2;
    while q + 2 <= b.len() && !(b.get(q) == Some(&b':') && b.get(q + 1) == Some(&b']')) {
        q += 1;
    }
    if q + 2 > b.len() {
        return Ok(None);
    }
    let end = q + 2;
    let name = pat.get(i..end).unwrap_or("");
    let Some(&(_, sign, ranges)) = POSIX_GROUPS.iter().find(|g| g.0 == name) else {
        return fail(Code::BadCharRange, i, end);
    };
    add_group(set, ranges, sign, flags);
    Ok(Some(end))
}

/// `{n}`, `{n,}`, `{n,m}` at byte `i` (RE2 `MaybeParseRepetition`); `None`
/// means the `{` is a literal.
pub(crate) fn maybe_parse_repetition(b: &[u8], i: usize) -> Option<(u64, Option<u64>, usize)> {
    pub(crate) fn integer(b: &[u8], i: &mut usize) -> Option<u64> {
        if !b.get(*i)?.is_ascii_digit() {
            return None;
        }
        if b.get(*i) == Some(&b'0') && b.get(*i + 1).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        let mut n: u64 = 0;
        while let Some(&d) = b.get(*i).filter(|d| d.is_ascii_digit()) {
            if n >= 100_000_000 {
                return None;
            }
            n = n * 10 + u64::from(d - b'0');
            *i += 1;
        }
        Some(n)
    }
    let mut j = i + 1;
    let min = integer(b, &mut j)?;
    let max = match b.get(j)? {
        b',' => {
            j += 1;
            if *b.get(j)? == b'}' {
                None
            } else {
                Some(integer(b, &mut j)?)
            }
        }
        _ => Some(min),
    };
    if b.get(j) != Some(&b'}') {
        return None;
    }
    Some((min, max, j + 1))
}

/// An escape sequence at byte `i` (RE2 `ParseEscape`).
pub(crate) fn parse_escape(pat: &str, i: usize) -> Result<(u32, usize), Failure> {
    let b = pat.as_bytes();
    let len = b.len();
    if i + 1 >= len {
        return fail(Code::TrailingBackslash, 0, 0);
    }
    let bad = |end: usize| fail(Code::BadEscape, i, end);
    let Some(c) = char_at(pat, i + 1) else {
        return bad(len);
    };
    let mut j = i + 1 + c.len_utf8();
    let octal = |j: usize| b.get(j).filter(|d| (b'0'..=b'7').contains(d)).copied();
    match c {
        '1'..='7' | '0' => {
            // A lone non-zero digit is a backreference.
            if c != '0' && octal(j).is_none() {
                return bad(j);
            }
            let mut code = u32::from(c) - u32::from('0');
            for _ in 0..2 {
                match octal(j) {
                    Some(d) => {
                        code = code * 8 + u32::from(d - b'0');
                        j += 1;
                    }
                    None => break,
                }
            }
            Ok((code, j))
        }
        'x' => {
            let Some(c) = char_at(pat, j) else {
                return bad(j);
            };
            j += c.len_utf8();
            if c == '{' {
                let Some(mut c) = char_at(pat, j) else {
                    return fail(Code::BadUtf8, 0, 0);
                };
                j += c.len_utf8();
                let mut nhex = 0;
                let mut code: u32 = 0;
                while let Some(d) = c.to_digit(16) {
                    nhex += 1;
                    code = code * 16 + d;
                    if code > RUNE_MAX {
                        return bad(j);
                    }
                    let Some(next) = char_at(pat, j) else {
                        return bad(j);
                    };
                    c = next;
                    j += c.len_utf8();
                }
                if c != '}' || nhex == 0 {
                    return bad(j);
                }
                return Ok((code, j));
            }
            let Some(c1) = char_at(pat, j) else {
                return bad(j);
            };
            j += c1.len_utf8();
            match (c.to_digit(16), c1.to_digit(16)) {
                (Some(h), Some(l)) => Ok((h * 16 + l, j)),
                _ => bad(j),
            }
        }
        'n' => Ok((u32::from('\n'), j)),
        'r' => Ok((u32::from('\r'), j)),
        't' => Ok((u32::from('\t'), j)),
        'a' => Ok((7, j)),
        'f' => Ok((12, j)),
        'v' => Ok((11, j)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((u32::from(c), j)),
        _ => bad(j),
    }
}

/// Whether RE2 accepts `name` as a capture name: letters, marks, digits and
/// connector punctuation (Lu, Ll, Lt, Lm, Lo, Nl, Mn, Mc, Nd, Pc).
pub(crate) fn valid_capture_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| {
            if c.is_ascii() {
                c.is_ascii_alphanumeric() || c == '_'
            } else {
                contains(capture_name_chars(), u32::from(c))
            }
        })
}

/// The end of a repetition operator whose text runs to `i`: a `?` after it makes it
/// non-greedy; a repetition of a repetition (`a**`, RE2's `bad repetition operator`) is refused
/// from the first operator's start.
fn repeat_suffix(b: &[u8], i: usize, lastunary: Option<usize>) -> Result<(usize, bool), Failure> {
    let nongreedy = b.get(i) == Some(&b'?');
    let end = if nongreedy { i + 1 } else { i };
    if let Some(last) = lastunary {
        return fail(Code::RepeatOp, last, end);
    }
    Ok((end, nongreedy))
}

//! Reading a text that differs from one already read in a run of lines: the published manifest
//! `--against` compares with is most often the manifest itself with an example or a bound
//! changed, and reading all of it again costs as much as reading the manifest did.
//!
//! A reader goes from the start, so the lines both texts share before the run that differs are
//! read in the same state, into the same nodes; the lines they share after it are the same
//! nodes too once the run is shown to end where a child of a block collection ends, moved by
//! the difference in length. Only the children of the one block collection the run touches are
//! read again, on their own. Whatever cannot be shown to read the same way (an anchor, a
//! directive or document marker, a block scalar or tab in the run, a collection in flow style,
//! lines that do not read as that collection's children alone, a key written twice, a tree near
//! the reader's budgets) is read whole, so the result is always what [`yaml::parse`] gives.

use super::yaml::{self, Key, Kind, Loc, MAX_YAML_DEPTH, MAX_YAML_NODES, Node, YamlError};

/// Where two texts differ, by whole lines: the runs of lines that differ, top to bottom.
#[derive(Debug, Clone)]
pub struct Plan {
    hunks: Vec<Hunk>,
}

/// A run of lines that differs: `[new_from, new_to)` in the text known, `[old_from, old_to)`
/// in the text to read.
#[derive(Debug, Clone, Copy)]
struct Hunk {
    new_from: usize,
    new_to: usize,
    old_from: usize,
    old_to: usize,
}

/// The longest run of differing lines side by side taken for one run: past it, the two texts
/// are taken to have moved apart (lines added or removed) there.
const RUN: usize = 64;

/// Whether `text` may be read through the tree of `known`, judged from the two texts alone
/// (`None`: read it whole): neither has an anchor (an alias read again could name one outside
/// the run), a directive or a document marker.
pub fn plan(text: &str, known: &str) -> Option<Plan> {
    if !plain(text) || !plain(known) {
        return None;
    }
    Some(Plan {
        hunks: hunks(&lines(text), &lines(known)),
    })
}

/// The runs of lines where `old` and `new` differ: side by side from the start while they keep
/// in step, side by side from the end likewise, and one run between where they do not.
fn hunks(old: &[&str], new: &[&str]) -> Vec<Hunk> {
    let prefix = old.iter().zip(new).take_while(|(x, y)| x == y).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = (old.iter().rev().zip(new.iter().rev()))
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    let same = |a: usize, b: usize| old.get(a).is_some_and(|x| new.get(b) == Some(x));
    let mut out = Vec::new();
    // From the start, line for line.
    let mut i = prefix;
    let mut front = prefix;
    while i < old_end && i < new_end {
        if same(i, i) {
            i += 1;
            front = i;
            continue;
        }
        let start = i;
        while i < old_end && i < new_end && !same(i, i) && i - start < RUN {
            i += 1;
        }
        if i - start >= RUN {
            front = start;
            break;
        }
        out.push(Hunk {
            new_from: start,
            new_to: i,
            old_from: start,
            old_to: i,
        });
        front = i;
    }
    // From the end, line for line.
    let (mut a, mut b) = (old_end, new_end);
    let mut back = Vec::new();
    while a > front && b > front {
        if same(a - 1, b - 1) {
            a -= 1;
            b -= 1;
            continue;
        }
        let (a_end, b_end) = (a, b);
        while a > front && b > front && !same(a - 1, b - 1) && a_end - a < RUN {
            a -= 1;
            b -= 1;
        }
        if a_end - a >= RUN {
            (a, b) = (a_end, b_end);
            break;
        }
        back.push(Hunk {
            new_from: b,
            new_to: b_end,
            old_from: a,
            old_to: a_end,
        });
    }
    // Between: where lines were added or removed.
    if front < a || front < b {
        out.push(Hunk {
            new_from: front,
            new_to: b,
            old_from: front,
            old_to: a,
        });
    }
    out.extend(back.into_iter().rev());
    out
}

/// `text` read as [`yaml::parse`] reads it, through the tree of `known` where `plan` allows:
/// each run that differs replaced in turn, from the bottom up (each step from a text to the
/// same text with one more run as `text` has it, so the runs above keep their lines).
pub fn parse(text: &str, plan: Option<&Plan>, known: &str, tree: &Node) -> Result<Node, YamlError> {
    match plan.and_then(|plan| through(text, plan, known, tree)) {
        Some(node) => Ok(node),
        None => yaml::parse(text),
    }
}

fn through(text: &str, plan: &Plan, known: &str, tree: &Node) -> Option<Node> {
    let old = lines(text);
    let mut now: Vec<&str> = lines(known);
    let mut read: Option<Node> = None;
    for hunk in plan.hunks.iter().rev() {
        let next: Vec<&str> = (now.get(..hunk.new_from)?.iter())
            .chain(old.get(hunk.old_from..hunk.old_to)?)
            .chain(now.get(hunk.new_to..)?)
            .copied()
            .collect();
        let step = Step {
            prefix: hunk.new_from,
            suffix: now.len() - hunk.new_to,
        };
        // The first step copies the known tree; the next ones change the copy in place.
        let from = match read.take() {
            Some(node) => Tree::Read(node),
            None => Tree::Known(tree),
        };
        read = Some(reuse(&next, step, &now, from)?);
        now = next;
    }
    // Every run replaced, the text is `text`, line for line.
    (now == old).then_some(())?;
    match read {
        Some(read) => Some(read),
        None => Some(copy(tree, &Shift::lines(0, 0))),
    }
}

/// The tree a step starts from: the known one, which it copies, or one an earlier step read,
/// which it changes in place.
enum Tree<'a> {
    Known(&'a Node),
    Read(Node),
}

impl Tree<'_> {
    fn node(&self) -> &Node {
        match self {
            Tree::Known(node) => node,
            Tree::Read(node) => node,
        }
    }
}

/// One step: the lines two texts share at the start and at the end.
#[derive(Clone, Copy)]
struct Step {
    prefix: usize,
    suffix: usize,
}

/// A text's lines, each with its end of line.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn plain(text: &str) -> bool {
    !text.contains('&')
        && !(lines(text).iter())
            .any(|l| l.starts_with("---") || l.starts_with("...") || l.starts_with('%'))
}

/// A collection in block style whose children each start a line at one column: where each
/// starts (a line, from 0), and that column (from 0: a sequence's dash, a mapping's key).
struct Block {
    starts: Vec<usize>,
    column: usize,
    is_seq: bool,
}

impl Block {
    /// `node`'s children as a block, when they are one in `text` (the text `node` was read
    /// from).
    fn of(node: &Node, text: &[&str]) -> Option<Block> {
        let mut starts = Vec::new();
        let mut column = None;
        let mut add = |loc: Loc, at: usize, head: &str| -> Option<()> {
            let line = usize::try_from(loc.line).ok()?.checked_sub(1)?;
            let before = text.get(line)?.get(..at + head.len())?;
            if !before.get(..at)?.bytes().all(|b| b == b' ') || !before.ends_with(head) {
                return None;
            }
            if *column.get_or_insert(at) != at || starts.last().is_some_and(|&l| l >= line) {
                return None;
            }
            starts.push(line);
            Some(())
        };
        let column_of = |loc: Loc| usize::try_from(loc.column).ok()?.checked_sub(1);
        let is_seq = match &node.kind {
            Kind::Seq(items) => {
                for item in items {
                    // `- x`: the dash two columns before the item, only blanks before it.
                    add(item.loc, column_of(item.loc)?.checked_sub(2)?, "- ")?;
                }
                true
            }
            Kind::Map(entries) => {
                for (key, _) in entries {
                    add(key.loc, column_of(key.loc)?, "")?;
                }
                false
            }
            _ => return None,
        };
        Some(Block {
            starts,
            column: column?,
            is_seq,
        })
    }

    /// The children a run of lines `[from, to)` touches, inside a collection that ends before
    /// line `end`: the first whose lines reach `from` (or end right before it: lines added
    /// there may continue it), and the first after it that starts at or after `to`.
    fn touched(&self, from: usize, to: usize, end: usize) -> (usize, usize) {
        let span_end = |i: usize| self.starts.get(i + 1).copied().unwrap_or(end);
        let n = self.starts.len();
        let first = (0..n).find(|&i| span_end(i) >= from).unwrap_or(n);
        let last = (first..n)
            .find(|&i| self.starts.get(i).is_some_and(|&s| s >= to))
            .unwrap_or(n);
        (first, last)
    }

    /// Where child `i` starts, or `end` past the last.
    fn start(&self, i: usize, end: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(end)
    }
}

/// The tree of the lines `old` built from `tree`, the tree of the lines `new`, which share
/// `step`'s lines at the start and the end; `None` where that cannot be shown to be what reading
/// `old` gives.
fn reuse(old: &[&str], step: Step, new: &[&str], from_tree: Tree) -> Option<Node> {
    let tree = from_tree.node();
    // The run that differs: [from, new_to) in `new`, [from, old_to) in `old`.
    let from = step.prefix;
    let new_to = new.len() - step.suffix;
    let delta = old.len() as i64 - new.len() as i64;
    // Down the tree while one child's children hold the whole run.
    let mut path = Vec::new();
    let mut node = tree;
    let mut end = new.len();
    let (block, first, last) = loop {
        let block = Block::of(node, new)?;
        if from < *block.starts.first()? || new_to > end {
            return None;
        }
        let (first, last) = block.touched(from, new_to, end);
        let child = match &node.kind {
            Kind::Seq(items) => items.get(first),
            Kind::Map(entries) => entries.get(first).map(|(_, v)| v),
            _ => None,
        };
        let child_end = block.start(first + 1, end);
        let inner = child.and_then(|c| Some((c, Block::of(c, new)?)));
        match inner {
            Some((child, inner))
                if last == first + 1
                    && inner.starts.first().is_some_and(|&s| s <= from)
                    && new_to <= child_end =>
            {
                path.push(first);
                end = child_end;
                node = child;
            }
            _ => break (block, first, last),
        }
    };
    // The children [first, last) are read again from `text`: its lines from where the first
    // starts to where the one after the last starts (moved by the difference in length).
    let start = block.start(first, end);
    let stop = block.start(last, end);
    let old_stop = usize::try_from(stop as i64 + delta).ok()?;
    if start > from || stop < new_to {
        return None;
    }
    let run = old.get(start..old_stop)?;
    if !readable_alone(run, block.column, block.is_seq) {
        return None;
    }
    let fresh = if run.iter().all(|l| blank(l)) {
        Vec::new()
    } else {
        let read = yaml::parse(&run.concat()).ok()?;
        let read = copy(&read, &Shift::lines(0, start as i64));
        children(read, block.is_seq, old, block.column)?
    };
    let shift = Shift::lines(stop as u64 + 1, delta);
    let spliced = match from_tree {
        Tree::Known(tree) => splice(tree, &path, (first, last), fresh, &shift)?,
        Tree::Read(tree) => splice_in_place(tree, &path, (first, last), fresh, &shift)?,
    };
    // What the reader refuses of a whole text, which a run read alone cannot see.
    (within_budgets(&spliced) && yaml::first_duplicate(&spliced).is_none()).then_some(spliced)
}

/// The children of a run read alone, when they are children of the collection it was cut from:
/// of its kind, each starting a line of `text` at its column.
fn children(mut read: Node, is_seq: bool, text: &[&str], column: usize) -> Option<Vec<Child>> {
    let block = Block::of(&read, text)?;
    if block.is_seq != is_seq || block.column != column {
        return None;
    }
    Some(match std::mem::replace(&mut read.kind, Kind::Null) {
        Kind::Seq(items) => items.into_iter().map(Child::Item).collect(),
        Kind::Map(entries) => entries
            .into_iter()
            .map(|(k, v)| Child::Entry(k, v))
            .collect(),
        _ => return None,
    })
}

/// Whether lines read alone read as they do in place: no block scalar (where one ends depends
/// on what follows), no tab, no complex key, nothing left of the collection's column, and in a
/// sequence nothing at the dash's column but a dash.
fn readable_alone(run: &[&str], column: usize, is_seq: bool) -> bool {
    run.iter().all(|line| {
        if blank(line) {
            return true;
        }
        let rest = line.trim_start_matches(' ');
        let indent = line.len() - rest.len();
        !line.contains(['|', '>', '\t'])
            && !rest.starts_with(['?', ':'])
            && indent >= column
            && (!is_seq || indent > column || rest.starts_with("- ") || rest.trim_end() == "-")
    })
}

/// A line with nothing but blanks or a comment.
fn blank(line: &str) -> bool {
    let rest = line.trim_start();
    rest.is_empty() || rest.starts_with('#')
}

/// Whether a tree read in parts is surely within what the reader takes whole: half its node
/// and depth budgets (it counts more than nodes: events, aliases), or it is read whole.
fn within_budgets(root: &Node) -> bool {
    let mut stack = vec![(root, 1usize)];
    let mut nodes = 0usize;
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_YAML_NODES / 2 || depth > MAX_YAML_DEPTH / 2 {
            return false;
        }
        match &node.kind {
            Kind::Seq(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Kind::Map(entries) => stack.extend(entries.iter().map(|(_, v)| (v, depth + 1))),
            _ => {}
        }
    }
    true
}

/// A child read again: a sequence's item or a mapping's entry.
enum Child {
    Item(Node),
    Entry(Key, Node),
}

/// Lines from `from` on (counted from 1) move by `delta`.
struct Shift {
    from: u64,
    delta: i64,
}

impl Shift {
    fn lines(from: u64, delta: i64) -> Shift {
        Shift { from, delta }
    }

    fn loc(&self, loc: Loc) -> Loc {
        if loc.line >= self.from {
            Loc {
                line: loc.line.saturating_add_signed(self.delta),
                column: loc.column,
            }
        } else {
            loc
        }
    }

    fn key(&self, key: &Key) -> Key {
        Key {
            name: key.name.clone(),
            loc: self.loc(key.loc),
        }
    }
}

/// A copy of `node`, its lines moved by `shift`. Recursive: its trees are a reader's, whose
/// depth budget (160 levels) bounds it.
fn copy(node: &Node, shift: &Shift) -> Node {
    let kind = match &node.kind {
        Kind::Seq(items) => Kind::Seq(items.iter().map(|n| copy(n, shift)).collect()),
        Kind::Map(entries) => Kind::Map(
            (entries.iter())
                .map(|(k, v)| (shift.key(k), copy(v, shift)))
                .collect(),
        ),
        other => other.clone(),
    };
    Node {
        kind,
        loc: shift.loc(node.loc),
    }
}

/// A copy of `tree`, its lines moved by `shift`, in which the collection at `path` (child
/// indices from the root) has its children `[first, last)` replaced by `fresh`.
fn splice(
    tree: &Node,
    path: &[usize],
    (first, last): (usize, usize),
    fresh: Vec<Child>,
    shift: &Shift,
) -> Option<Node> {
    let mut loc = shift.loc(tree.loc);
    let kind = match (path.split_first(), &tree.kind) {
        (None, Kind::Seq(items)) => {
            let mut out = Vec::with_capacity(items.len() + fresh.len());
            out.extend(items.iter().take(first).map(|n| copy(n, shift)));
            for child in fresh {
                let Child::Item(item) = child else {
                    return None;
                };
                out.push(item);
            }
            out.extend(items.iter().skip(last).map(|n| copy(n, shift)));
            // A block sequence starts at its first dash: with no item, it is no sequence.
            let head = out.first()?.loc;
            if first == 0 {
                loc = Loc {
                    line: head.line,
                    column: head.column.checked_sub(2)?,
                };
            }
            Kind::Seq(out)
        }
        (None, Kind::Map(entries)) => {
            let mut out = Vec::with_capacity(entries.len() + fresh.len());
            let moved = |(k, v): &(Key, Node)| (shift.key(k), copy(v, shift));
            out.extend(entries.iter().take(first).map(moved));
            for child in fresh {
                let Child::Entry(key, value) = child else {
                    return None;
                };
                out.push((key, value));
            }
            out.extend(entries.iter().skip(last).map(moved));
            // A block mapping starts at its first key: with no key, it is no mapping.
            let (head, _) = out.first()?;
            if first == 0 {
                loc = head.loc;
            }
            Kind::Map(out)
        }
        (Some((&at, rest)), Kind::Seq(items)) => {
            let mut out = Vec::with_capacity(items.len());
            let mut fresh = Some(fresh);
            for (i, n) in items.iter().enumerate() {
                match fresh.take_if(|_| i == at) {
                    Some(fresh) => out.push(splice(n, rest, (first, last), fresh, shift)?),
                    None => out.push(copy(n, shift)),
                }
            }
            Kind::Seq(out)
        }
        (Some((&at, rest)), Kind::Map(entries)) => {
            let mut out = Vec::with_capacity(entries.len());
            let mut fresh = Some(fresh);
            for (i, (k, v)) in entries.iter().enumerate() {
                let value = match fresh.take_if(|_| i == at) {
                    Some(fresh) => splice(v, rest, (first, last), fresh, shift)?,
                    None => copy(v, shift),
                };
                out.push((shift.key(k), value));
            }
            Kind::Map(out)
        }
        _ => return None,
    };
    Some(Node { kind, loc })
}

/// [`splice`] on a tree of its own: its lines moved where they are, the collection at `path`
/// changed in place.
fn splice_in_place(
    mut tree: Node,
    path: &[usize],
    (first, last): (usize, usize),
    fresh: Vec<Child>,
    shift: &Shift,
) -> Option<Node> {
    if shift.delta != 0 {
        let mut stack = vec![&mut tree];
        while let Some(node) = stack.pop() {
            node.loc = shift.loc(node.loc);
            match &mut node.kind {
                Kind::Seq(items) => stack.extend(items.iter_mut()),
                Kind::Map(entries) => {
                    for (key, value) in entries.iter_mut() {
                        key.loc = shift.loc(key.loc);
                        stack.push(value);
                    }
                }
                _ => {}
            }
        }
    }
    let mut node = &mut tree;
    for &at in path {
        node = match &mut node.kind {
            Kind::Seq(items) => items.get_mut(at)?,
            Kind::Map(entries) => &mut entries.get_mut(at)?.1,
            _ => return None,
        };
    }
    match &mut node.kind {
        Kind::Seq(items) if last <= items.len() => {
            let mut added = Vec::with_capacity(fresh.len());
            for child in fresh {
                let Child::Item(item) = child else {
                    return None;
                };
                added.push(item);
            }
            drop(items.splice(first..last, added));
            let head = items.first()?.loc;
            if first == 0 {
                node.loc = Loc {
                    line: head.line,
                    column: head.column.checked_sub(2)?,
                };
            }
        }
        Kind::Map(entries) if last <= entries.len() => {
            let mut added = Vec::with_capacity(fresh.len());
            for child in fresh {
                let Child::Entry(key, value) = child else {
                    return None;
                };
                added.push((key, value));
            }
            drop(entries.splice(first..last, added));
            let head = entries.first()?.0.loc;
            if first == 0 {
                node.loc = head;
            }
        }
        _ => return None,
    }
    Some(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading `text` through `known`'s tree gives exactly what reading it whole gives, every
    /// location included; and says whether the tree was used.
    #[track_caller]
    fn reads_the_same(text: &str, known: &str) -> bool {
        let tree = yaml::parse(known).unwrap();
        let whole = yaml::parse(text);
        let plan = plan(text, known);
        let reused = plan.as_ref().and_then(|p| through(text, p, known, &tree));
        let read = parse(text, plan.as_ref(), known, &tree);
        match (&whole, &read) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "read differently:\n{text}"),
            (Err(a), Err(b)) => assert_eq!((a.check, &a.message), (b.check, &b.message)),
            _ => panic!("{whole:?} against {read:?}"),
        }
        if let (Some(reused), Ok(whole)) = (&reused, &whole) {
            assert_eq!(reused, whole);
        }
        reused.is_some()
    }

    const KNOWN: &str = "\
name: a
# a comment
interface:
  input: { type: object }
  output:
    type: object
examples:
  - name: one
    input: { text: a }
    output: { words: 1 }

  - name: two
    input:
      text: b b
    output: { words: 2 }
  - name: three
    input: { text: c c c }
    output: { words: 3 }
pricing: { price: 1 }
";

    #[test]
    fn an_example_changed_added_or_removed_is_read_through_the_tree() {
        let cases = [
            KNOWN.replace("words: 2 }", "words: 5 }"),
            KNOWN.replace(
                "  - name: two\n",
                "  - name: two and a half\n    input: {}\n    output: {}\n  - name: two\n",
            ),
            KNOWN.replace(
                "  - name: three\n    input: { text: c c c }\n    output: { words: 3 }\n",
                "",
            ),
            KNOWN.replace(
                "  - name: one\n    input: { text: a }\n    output: { words: 1 }\n\n",
                "",
            ),
            KNOWN.replace(
                "pricing:",
                "  - name: four\n    input: { text: d }\n    output: { words: 1 }\npricing:",
            ),
            KNOWN.replace("      text: b b\n", "      text: b b\n      more: yes\n"),
            KNOWN.replace("    type: object\nexamples", "    type: array\nexamples"),
            KNOWN.replace("name: a\n", "name: b\n"),
            // Two runs: the second read in place on the tree the first step made.
            KNOWN
                .replace("name: a\n", "name: b\n")
                .replace("words: 2 }", "words: 5 }"),
            KNOWN
                .replace("type: object\nexamples", "type: array\nexamples")
                .replace(
                    "  - name: three\n",
                    "  - name: two and a half\n    input: {}\n  - name: three\n",
                ),
        ];
        for text in &cases {
            assert!(reads_the_same(text, KNOWN), "read whole:\n{text}");
        }
        assert!(reads_the_same(KNOWN, KNOWN));
    }

    #[test]
    fn what_cannot_be_shown_to_read_the_same_is_read_whole() {
        let cases = [
            // An anchor anywhere, a directive, a block scalar or a tab in the run.
            KNOWN.replace("words: 2 }", "words: &n 2 }"),
            format!("%YAML 1.2\n---\n{KNOWN}"),
            KNOWN.replace("      text: b b\n", "      text: |\n        b b\n"),
            KNOWN.replace("words: 2 }", "words:\t2 }"),
            // A run that does not read alone: an open flow mapping, a quote left open.
            KNOWN.replace("words: 2 }", "words: 2"),
            KNOWN.replace("text: b b", "text: \"b b"),
            // A key written twice across the run's edge; an item out of its column.
            KNOWN.replace("  - name: three\n", "  - name: three\n    name: again\n"),
            KNOWN.replace("  - name: two\n", "    - name: two\n"),
            KNOWN.replace("  - name: two\n", "pricing: 2\n  - name: two\n"),
        ];
        for text in &cases {
            assert!(
                !reads_the_same(text, KNOWN),
                "read through the tree:\n{text}"
            );
        }
    }

    #[test]
    fn every_one_line_edit_reads_as_the_whole_text_does() {
        // Each line deleted, doubled, indented, cut short, or followed by an example, a key or
        // a comment: whether through the tree or whole, the same tree or the same refusal.
        let known = format!("{KNOWN}source: {{ repository: x, commit: y }}\n");
        let lines: Vec<&str> = known.split_inclusive('\n').collect();
        let mut through = 0;
        for i in 0..lines.len() {
            let edits: [&dyn Fn(&str) -> String; 7] = [
                &|_| String::new(),
                &|l| format!("{l}{l}"),
                &|l| format!("  {l}"),
                &|l| l.get(2..).unwrap_or_default().to_string(),
                &|l| format!("{}\n", l.trim_end().trim_end_matches(['}', ']'])),
                &|l| format!("{l}  - name: new\n    input: {{}}\n"),
                &|l| format!("{l}    extra: 1\n# note\n"),
            ];
            for edit in edits {
                let mut text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                text[i] = edit(lines[i]);
                if reads_the_same(&text.concat(), &known) {
                    through += 1;
                }
            }
        }
        // Most are read through the tree.
        assert!(
            through > lines.len() * 3,
            "{through} of {}",
            lines.len() * 7
        );
    }

    #[test]
    fn every_two_line_edit_reads_as_the_whole_text_does() {
        let known = format!("{KNOWN}source: {{ repository: x, commit: y }}\n");
        let lines: Vec<&str> = known.split_inclusive('\n').collect();
        let edits: [&dyn Fn(&str) -> String; 3] =
            [&|_| String::new(), &|l| format!("{l}{l}"), &|l| {
                format!("  {l}")
            }];
        let (mut through, mut tried) = (0, 0);
        for i in 0..lines.len() {
            for j in i + 1..lines.len() {
                for a in edits {
                    for b in edits {
                        let mut text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                        text[i] = a(lines[i]);
                        text[j] = b(lines[j]);
                        if reads_the_same(&text.concat(), &known) {
                            through += 1;
                        }
                        tried += 1;
                    }
                }
            }
        }
        // Many of these leave no YAML, or a key written twice, and are read whole by design;
        // the others are read through the tree, the second run changing the first's tree in
        // place.
        assert!(through * 10 > tried, "{through} of {tried}");
    }

    #[test]
    fn a_collection_in_flow_style_is_read_whole() {
        // As a child of a block collection, it is that child read again whole.
        let known = "examples: [{ name: one }, { name: two }]\nprice: 1\n";
        let text = known.replace("two", "three");
        assert!(reads_the_same(&text, known));
        // At the root, nothing is in block style: all of it is read whole.
        let known = "{ examples: [{ name: one }, { name: two }],\n  price: 1 }\n";
        let text = known.replace("two", "three");
        assert!(!reads_the_same(&text, known));
    }
}

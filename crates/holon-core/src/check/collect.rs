//! The diagnostics of one run, each located in the manifest's tree as it is added: a check
//! names the pointer, the collector finds its line and column. A check lists at most
//! [`LISTED`] of its problems; one more diagnostic counts the rest.

use std::collections::{HashMap, HashSet};

use super::diagnostic::{Diagnostic, Severity};
use crate::ids::{self, Id};
use crate::manifest::yaml::{Loc, Locator, Node};
use crate::pointer;

/// The most diagnostics one check lists. A hostile manifest can hold millions of problems of
/// one kind (a mapping of unknown keys, a schema of properties without descriptions): listing
/// them all costs gigabytes and helps no one, and a count says as much.
pub const LISTED: usize = 1000;

/// The manifest's located tree and every problem found in it so far.
pub struct Diagnostics<'a> {
    tree: Locator<'a>,
    list: Vec<Diagnostic>,
    /// How many problems each check found, listed or not.
    found: HashMap<Id, usize>,
    /// The checks whose count past [`LISTED`] is a lower bound: they stopped counting each
    /// problem of a payload once they were full.
    in_part: HashSet<Id>,
    /// Where a problem past [`LISTED`] is written, to be dropped.
    unlisted: Diagnostic,
}

/// The diagnostics a check run lists, and how many problems it found but did not list.
pub struct Found {
    /// What is listed: at most `LISTED` of each check, and for a check past it, one more
    /// diagnostic that counts what is not listed.
    pub list: Vec<Diagnostic>,
    /// Problems found and not listed, past those each counting diagnostic stands for itself:
    /// errors, then warnings.
    pub unlisted: [usize; 2],
}

/// The diagnostic just added, to give it a hint.
pub struct Added<'d>(&'d mut Diagnostic, bool);

impl Added<'_> {
    /// Whether it is listed: a hint that costs something to work out (a "did you mean") is
    /// worked out only then.
    pub fn listed(&self) -> bool {
        self.1
    }

    /// Places it at `loc` rather than at the node its pointer names: at a key rather than its
    /// value, say.
    pub fn at(self, loc: Loc) -> Self {
        self.0.line = loc.line;
        self.0.column = loc.column;
        self
    }

    /// Says how to fix the problem.
    pub fn hint(self, hint: impl Into<String>) {
        self.0.hint = Some(hint.into());
    }
}

impl<'a> Diagnostics<'a> {
    /// None yet, located in `root`.
    pub fn new(root: &'a Node) -> Self {
        Diagnostics {
            tree: Locator::new(root),
            list: Vec::new(),
            found: HashMap::new(),
            in_part: HashSet::new(),
            unlisted: Diagnostic::error(ids::YAML_SYNTAX, "", Loc::default(), ""),
        }
    }

    /// The tree the diagnostics are located in.
    pub fn root(&self) -> &'a Node {
        self.tree.root()
    }

    /// Whether the mapping at `pointer` has a key `name`, whatever its value.
    pub fn has_key(&self, pointer: &str, name: &str) -> bool {
        self.tree.locate_key(pointer, name).is_some()
    }

    /// An error at `pointer`, located at the node there (or the deepest one on the way).
    pub fn error(
        &mut self,
        check: Id,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Added<'_> {
        self.add(Severity::Error, check, pointer.into(), message.into())
    }

    /// A warning at `pointer`, located at the node there (or the deepest one on the way).
    pub fn warning(
        &mut self,
        check: Id,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Added<'_> {
        self.add(Severity::Warning, check, pointer.into(), message.into())
    }

    /// The pointer to the member `name` of the mapping at `parent`, and where its key stands
    /// (where "this property ..." should point); the node's own place when there is no such key.
    pub fn key(&self, parent: &str, name: &str) -> (String, Loc) {
        let at = pointer::child(parent, name);
        let loc = self
            .tree
            .locate_key(parent, name)
            .unwrap_or_else(|| self.tree.locate(&at));
        (at, loc)
    }

    /// Whether `check` lists no more problems: what it finds from now on is only counted.
    pub fn full(&self, check: Id) -> bool {
        self.found.get(&check).is_some_and(|n| *n >= LISTED)
    }

    /// Counts one more problem of `check`, which is [`full`](Self::full): nothing is listed, so
    /// nothing need be written or located.
    pub fn tally(&mut self, check: Id) {
        *self.found.entry(check).or_default() += 1;
    }

    /// Says that `check` no longer counts every problem, only that there is one more: its
    /// count of those not listed is then "at least".
    pub fn counted_in_part(&mut self, check: Id) {
        self.in_part.insert(check);
    }

    /// How many problems were found so far, listed or not.
    pub fn count(&self) -> usize {
        self.found.values().sum()
    }

    /// Every diagnostic listed, in the order they were added, then for each check that found
    /// more than `LISTED`, one that says how many more it found.
    pub fn into_list(self) -> Vec<Diagnostic> {
        self.into_found().list
    }

    /// [`into_list`](Self::into_list), with the count of what is not listed.
    pub fn into_found(self) -> Found {
        let mut found = Found {
            list: self.list,
            unlisted: [0, 0],
        };
        let mut over: Vec<(Id, usize)> = (self.found.into_iter())
            .filter(|(_, n)| *n > LISTED)
            .collect();
        over.sort_unstable_by_key(|(check, _)| check.name());
        for (check, n) in over {
            // Placed at the last one listed, so that it reads after them.
            let Some(last) = found.list.iter().rev().find(|d| d.check == check.name()) else {
                continue;
            };
            let (severity, line, column) = (last.severity, last.line, last.column);
            let what = match severity {
                Severity::Error => "errors",
                Severity::Warning => "warnings",
            };
            let more = n - LISTED;
            let at_least = if self.in_part.contains(&check) {
                "at least "
            } else {
                ""
            };
            found.list.push(Diagnostic {
                severity,
                line,
                column,
                ..Diagnostic::error(
                    check,
                    "",
                    Loc::default(),
                    format!("{at_least}{more} more `{}` {what} are not listed: a check lists its first {LISTED}", check.name()),
                )
            });
            if let Some(slot) = found
                .unlisted
                .get_mut(usize::from(severity == Severity::Warning))
            {
                *slot += more - 1;
            }
        }
        found
    }

    fn add(
        &mut self,
        severity: Severity,
        check: Id,
        pointer: String,
        message: String,
    ) -> Added<'_> {
        let found = self.found.entry(check).or_default();
        *found += 1;
        if *found > LISTED {
            return Added(&mut self.unlisted, false);
        }
        let loc = self.tree.locate(&pointer);
        let added = self.list.push_mut(Diagnostic {
            severity,
            ..Diagnostic::error(check, pointer, loc, message)
        });
        Added(added, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::yaml;

    #[test]
    fn locates_each_diagnostic_at_its_pointer() {
        let root = yaml::parse("a:\n  b/c: [1, 2]\n  d: yes\n").unwrap();
        let mut out = Diagnostics::new(&root);
        out.error(ids::MISSING_FIELD, "/a/b~1c/1", "second item")
            .hint("fix it");
        out.warning(ids::INPUT_OPEN, "/a/missing/deeper", "not there");
        let (at, loc) = out.key("/a", "d");
        out.warning(ids::STRING_UNBOUNDED, at, "the key").at(loc);
        assert_eq!(out.count(), 3);
        let list = out.into_list();
        let places: Vec<_> = list
            .iter()
            .map(|d| (d.check, d.pointer.as_str(), d.line, d.column, d.severity))
            .collect();
        assert_eq!(
            places,
            [
                ("missing-field", "/a/b~1c/1", 2, 12, Severity::Error),
                // The deepest node on the way: the mapping under `a`.
                ("input-open", "/a/missing/deeper", 2, 3, Severity::Warning),
                ("string-unbounded", "/a/d", 3, 3, Severity::Warning),
            ]
        );
        assert_eq!(list[0].hint.as_deref(), Some("fix it"));
        assert_eq!(list[1].hint, None);
    }

    #[test]
    fn a_missing_key_is_located_at_the_node_on_the_way() {
        let root = yaml::parse("a:\n  b: 1\n").unwrap();
        let out = Diagnostics::new(&root);
        let (at, loc) = out.key("/a", "x/y");
        assert_eq!(at, "/a/x~1y");
        assert_eq!((loc.line, loc.column), (2, 3));
    }
}

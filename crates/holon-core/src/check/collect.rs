//! The diagnostics of one run, each located in the manifest's tree as it is added: a check
//! names the pointer, the collector finds its line and column.

use super::diagnostic::{Diagnostic, Severity};
use crate::manifest::yaml::{Loc, Node};
use crate::pointer;

/// The manifest's located tree and every problem found in it so far.
pub struct Diagnostics<'a> {
    root: &'a Node,
    list: Vec<Diagnostic>,
}

/// The diagnostic just added, to give it a hint.
pub struct Added<'d>(&'d mut Diagnostic);

impl Added<'_> {
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
            root,
            list: Vec::new(),
        }
    }

    /// The tree the diagnostics are located in.
    pub fn root(&self) -> &'a Node {
        self.root
    }

    /// An error at `pointer`, located at the node there (or the deepest one on the way).
    pub fn error(
        &mut self,
        check: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Added<'_> {
        self.add(Severity::Error, check, pointer.into(), message.into())
    }

    /// A warning at `pointer`, located at the node there (or the deepest one on the way).
    pub fn warning(
        &mut self,
        check: &'static str,
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
            .root
            .locate_key(parent, name)
            .unwrap_or_else(|| self.root.locate(&at));
        (at, loc)
    }

    /// How many diagnostics were added so far.
    pub fn count(&self) -> usize {
        self.list.len()
    }

    /// Every diagnostic, in the order they were added.
    pub fn into_list(self) -> Vec<Diagnostic> {
        self.list
    }

    fn add(
        &mut self,
        severity: Severity,
        check: &'static str,
        pointer: String,
        message: String,
    ) -> Added<'_> {
        let loc = self.root.locate(&pointer);
        Added(self.list.push_mut(Diagnostic {
            severity,
            ..Diagnostic::error(check, pointer, loc, message)
        }))
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
        out.error("one", "/a/b~1c/1", "second item").hint("fix it");
        out.warning("two", "/a/missing/deeper", "not there");
        let (at, loc) = out.key("/a", "d");
        out.warning("three", at, "the key").at(loc);
        assert_eq!(out.count(), 3);
        let list = out.into_list();
        let places: Vec<_> = list
            .iter()
            .map(|d| (d.check, d.pointer.as_str(), d.line, d.column, d.severity))
            .collect();
        assert_eq!(
            places,
            [
                ("one", "/a/b~1c/1", 2, 12, Severity::Error),
                // The deepest node on the way: the mapping under `a`.
                ("two", "/a/missing/deeper", 2, 3, Severity::Warning),
                ("three", "/a/d", 3, 3, Severity::Warning),
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

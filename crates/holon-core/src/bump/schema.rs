//! `interface.input` and `interface.output` compared keyword by keyword, each difference judged
//! by what it does to the values the schema admits: fewer (narrower), more (wider), some of
//! each (a type changed), the same (an annotation), or what the rules cannot tell (not proven
//! compatible, and so major, as cargo-semver-checks errs to the safe side). Whether narrower
//! breaks a caller depends on the side: a narrower input refuses a call that was admitted, a
//! wider output gives an answer that could not be given.
//!
//! The walk visits each node of both schemas once, through an index for a large mapping, so it
//! is linear in their size. It recurses once per schema level, which the YAML reader's depth
//! budget (160) bounds.

use std::collections::HashSet;

use super::change::{Bump, Change, Side};
use super::effect::{
    ANNOTATIONS, Effect, Flow, LOWER, UNJUDGED, UPPER, compare_sets, has_key, several, shown,
    shown_opt, type_set, undeclared,
};
use super::tree::{Entries, same, union};
use crate::manifest::yaml::{Kind, Loc, Node};
use crate::pointer::{self, dotted};

/// Compares the schema `old` (of the published manifest) with `new` at `at`
/// (`/interface/input` or `/interface/output`), adding a change for each difference.
pub(super) fn compare(old: &Node, new: &Node, at: &str, flow: Flow, out: &mut Vec<Change>) {
    let empty = Node {
        kind: Kind::Map(Vec::new()),
        loc: Loc::default(),
    };
    let mut walk = Walk {
        flow,
        // Under `not` (and `if`) a narrower subschema admits more: a definition referred to
        // there would be judged the wrong way round, so then no change to one is judged.
        definitions_judged: !has_key(old, &["not", "if"]) && !has_key(new, &["not", "if"]),
        empty: &empty,
        out,
    };
    walk.schema(old, new, &Place::same(at));
}

/// Where a node is in each document: the same pointer, except where a property declared on one
/// side is compared with what the other side admits for any undeclared one.
#[derive(Clone)]
struct Place {
    old: String,
    new: String,
}

impl Place {
    fn same(at: &str) -> Place {
        Place {
            old: at.to_string(),
            new: at.to_string(),
        }
    }

    fn child(&self, token: &str) -> Place {
        Place {
            old: pointer::child(&self.old, token),
            new: pointer::child(&self.new, token),
        }
    }

    /// The schema's place as a message names it.
    fn shown(&self) -> String {
        format!("`{}`", dotted(&self.new))
    }
}

struct Walk<'a> {
    flow: Flow,
    definitions_judged: bool,
    /// `{}`: what an absent subschema keyword (`items`, `additionalProperties`) admits.
    empty: &'a Node,
    out: &'a mut Vec<Change>,
}

impl Walk<'_> {
    /// One change: what it is, where, and what it does to a caller.
    fn change(&mut self, effect: Effect, side: Side, at: &Place, what: String) {
        let pointer = match side {
            Side::Published => at.old.clone(),
            Side::Manifest => at.new.clone(),
        };
        self.out.push(Change {
            bump: self.flow.bump(effect),
            side,
            pointer,
            message: format!("{what}: {}", self.flow.phrase(effect)),
        });
    }

    /// Two schemas at the same place.
    fn schema(&mut self, old: &Node, new: &Node, at: &Place) {
        match (&old.kind, &new.kind) {
            (Kind::Bool(false), Kind::Bool(false)) | (Kind::Bool(true), Kind::Bool(true)) => {}
            (Kind::Bool(false), _) => self.change(
                Effect::Wider,
                Side::Manifest,
                at,
                format!("{} admitted nothing and admits values now", at.shown()),
            ),
            (_, Kind::Bool(false)) => self.change(
                Effect::Narrower,
                Side::Manifest,
                at,
                format!("{} admits nothing now", at.shown()),
            ),
            (Kind::Map(_) | Kind::Bool(true), Kind::Map(_) | Kind::Bool(true)) => {
                // `true` admits what `{}` admits.
                let is_true = |n: &Node| matches!(n.kind, Kind::Bool(true));
                let old = if is_true(old) { self.empty } else { old };
                let new = if is_true(new) { self.empty } else { new };
                let (Some(o), Some(n)) = (Entries::of(old), Entries::of(new)) else {
                    return;
                };
                self.keywords(&o, &n, at);
            }
            _ if same(old, new) => {}
            _ => self.change(
                Effect::Unproven,
                Side::Manifest,
                at,
                format!("{} changed and is not a schema", at.shown()),
            ),
        }
    }

    /// Every keyword of two schema mappings.
    fn keywords(&mut self, old: &Entries, new: &Entries, at: &Place) {
        for keyword in union(old, new) {
            let (o, n) = (old.get(keyword), new.get(keyword));
            if let (Some(o), Some(n)) = (o, n)
                && same(o, n)
            {
                continue;
            }
            let here = at.child(keyword);
            match keyword {
                "type" => self.types(o, n, at, &here),
                "enum" => self.values(keyword, o, n, at, &here),
                "const" => self.values(keyword, o, n, at, &here),
                k if UPPER.contains(&k) => self.bound(k, true, o, n, at, &here),
                k if LOWER.contains(&k) => self.bound(k, false, o, n, at, &here),
                "multipleOf" => self.multiple_of(o, n, at, &here),
                "pattern" | "format" => self.pattern(keyword, o, n, at, &here),
                "uniqueItems" => self.unique_items(o, n, at, &here),
                "required" => self.required(o, n, at, &here),
                "properties" => self.properties(old, new, at),
                "additionalProperties" | "items" | "propertyNames" => {
                    self.schema(o.unwrap_or(self.empty), n.unwrap_or(self.empty), &here)
                }
                "contains" => match (o, n) {
                    (Some(o), Some(n)) => self.schema(o, n, &here),
                    (None, _) => self.change(
                        Effect::Narrower,
                        Side::Manifest,
                        &here,
                        format!("`contains` added to {}", at.shown()),
                    ),
                    (_, None) => self.change(
                        Effect::Wider,
                        Side::Published,
                        &here,
                        format!("`contains` removed from {}", at.shown()),
                    ),
                },
                "prefixItems" | "allOf" => self.pairwise(keyword, o, n, at, &here),
                "$defs" | "definitions" => self.definitions(keyword, o, n, at, &here),
                "default" => self.annotation(keyword, Effect::Default, o, n, at, &here),
                k if UNJUDGED.contains(&k) => self.unproven(k, o, n, at, &here),
                k if ANNOTATIONS.contains(&k) => {
                    self.annotation(k, Effect::Annotation, o, n, at, &here)
                }
                // A keyword the validator does not know admits everything: an annotation.
                k => self.annotation(k, Effect::Annotation, o, n, at, &here),
            }
        }
    }

    /// A keyword that changes only what the schema says (or, for `default`, what an omitted
    /// property means).
    fn annotation(
        &mut self,
        keyword: &str,
        effect: Effect,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        let (side, what) = match (o, n) {
            (Some(o), Some(n)) => {
                let (was, now) = crate::message::pair(&o.to_json(), &n.to_json());
                (
                    Side::Manifest,
                    format!(
                        "`{keyword}` of {} changed from `{was}` to `{now}`",
                        at.shown()
                    ),
                )
            }
            (None, Some(n)) => (
                Side::Manifest,
                format!(
                    "`{keyword}: {}` added to {}",
                    shown_opt(Some(n)),
                    at.shown()
                ),
            ),
            (Some(o), None) => (
                Side::Published,
                format!("`{keyword}` ({}) removed from {}", shown(o), at.shown()),
            ),
            (None, None) => return,
        };
        self.change(effect, side, here, what);
    }

    /// A keyword whose changes the rules do not judge.
    fn unproven(
        &mut self,
        keyword: &str,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        let (side, how) = match (o, n) {
            (Some(_), Some(_)) => (Side::Manifest, "changed in"),
            (None, Some(_)) => (Side::Manifest, "added to"),
            (Some(_), None) => (Side::Published, "removed from"),
            (None, None) => return,
        };
        let what = format!("`{keyword}` {how} {}", at.shown());
        self.change(Effect::Unproven, side, here, what);
    }

    fn types(&mut self, o: Option<&Node>, n: Option<&Node>, at: &Place, here: &Place) {
        let (Ok(old), Ok(new)) = (type_set(o), type_set(n)) else {
            return self.unproven("type", o, n, at, here);
        };
        let effect = compare_sets(&old, &new);
        let side = if n.is_some() {
            Side::Manifest
        } else {
            Side::Published
        };
        let what = match (o, n) {
            (Some(o), Some(n)) => {
                let how = match effect {
                    Effect::Wider => "widened",
                    Effect::Narrower => "narrowed",
                    _ => "changed",
                };
                format!(
                    "`type` of {} {how} from {} to {}",
                    at.shown(),
                    shown(o),
                    shown(n)
                )
            }
            (None, Some(n)) => format!("`type: {}` added to {}", shown(n), at.shown()),
            (Some(o), None) => format!("`type` ({}) removed from {}", shown(o), at.shown()),
            (None, None) => return,
        };
        self.change(effect, side, here, what);
    }

    /// `enum` or `const`: the values admitted, by their canonical form.
    fn values(
        &mut self,
        keyword: &str,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        let listed = |node: Option<&Node>| -> Result<Option<Vec<(String, usize)>>, ()> {
            let Some(node) = node else { return Ok(None) };
            let values: Vec<&Node> = match (&node.kind, keyword) {
                (_, "const") => vec![node],
                (Kind::Seq(items), _) => items.iter().collect(),
                _ => return Err(()),
            };
            Ok(Some(
                (values.iter().enumerate())
                    .map(|(i, v)| (crate::json::canonical(&v.to_json()), i))
                    .collect(),
            ))
        };
        let (Ok(old), Ok(new)) = (listed(o), listed(n)) else {
            return self.unproven(keyword, o, n, at, here);
        };
        match (old, new) {
            (Some(old), Some(new)) => {
                let old_set: HashSet<&str> = old.iter().map(|(v, _)| v.as_str()).collect();
                let new_set: HashSet<&str> = new.iter().map(|(v, _)| v.as_str()).collect();
                let lost: Vec<&(String, usize)> = old
                    .iter()
                    .filter(|(v, _)| !new_set.contains(v.as_str()))
                    .collect();
                let gained: Vec<&(String, usize)> = new
                    .iter()
                    .filter(|(v, _)| !old_set.contains(v.as_str()))
                    .collect();
                let item = |place: &Place, i: usize| match keyword {
                    "const" => place.clone(),
                    _ => place.child(&i.to_string()),
                };
                if let Some((_, i)) = lost.first() {
                    let what = format!("`{keyword}` of {} lost {}", at.shown(), several(&lost));
                    self.change(Effect::Narrower, Side::Published, &item(here, *i), what);
                }
                if let Some((_, i)) = gained.first() {
                    let what = format!("`{keyword}` of {} gained {}", at.shown(), several(&gained));
                    self.change(Effect::Wider, Side::Manifest, &item(here, *i), what);
                }
                if lost.is_empty() && gained.is_empty() {
                    let what = format!("`{keyword}` of {} reordered", at.shown());
                    self.change(Effect::Annotation, Side::Manifest, here, what);
                }
            }
            (None, Some(new)) => {
                let what = match keyword {
                    "const" => format!(
                        "`const` added to {}: only {} is admitted",
                        at.shown(),
                        several(&new.iter().collect::<Vec<_>>())
                    ),
                    _ => format!(
                        "`enum` added to {}: only its {} values are admitted",
                        at.shown(),
                        new.len()
                    ),
                };
                self.change(Effect::Narrower, Side::Manifest, here, what);
            }
            (Some(_), None) => {
                let what = format!("`{keyword}` removed from {}", at.shown());
                self.change(Effect::Wider, Side::Published, here, what);
            }
            (None, None) => {}
        }
    }

    fn bound(
        &mut self,
        keyword: &str,
        upper: bool,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        let number = |node: Option<&Node>| match node.map(|n| &n.kind) {
            None => Ok(None),
            Some(Kind::Number(x)) => x.as_f64().map(Some).ok_or(()),
            Some(_) => Err(()),
        };
        let (Ok(old), Ok(new)) = (number(o), number(n)) else {
            return self.unproven(keyword, o, n, at, here);
        };
        let tighter = |from: f64, to: f64| if upper { to < from } else { to > from };
        let (effect, side, what) = match (old, new) {
            (Some(a), Some(b)) if a == b => return,
            (Some(a), Some(b)) => {
                let how = if b < a { "lowered" } else { "raised" };
                let what = format!(
                    "`{keyword}` of {} {how} from {} to {}",
                    at.shown(),
                    shown_opt(o),
                    shown_opt(n)
                );
                let effect = if tighter(a, b) {
                    Effect::Narrower
                } else {
                    Effect::Wider
                };
                (effect, Side::Manifest, what)
            }
            _ => match one_sided(keyword, o, n, at) {
                Some(found) => found,
                None => return,
            },
        };
        self.change(effect, side, here, what);
    }

    fn multiple_of(&mut self, o: Option<&Node>, n: Option<&Node>, at: &Place, here: &Place) {
        let number = |node: Option<&Node>| match node.map(|n| &n.kind) {
            None => Ok(None),
            Some(Kind::Number(x)) => x.as_f64().filter(|f| *f > 0.0).map(Some).ok_or(()),
            Some(_) => Err(()),
        };
        let (Ok(old), Ok(new)) = (number(o), number(n)) else {
            return self.unproven("multipleOf", o, n, at, here);
        };
        let whole = |x: f64| x.is_finite() && x.fract() == 0.0;
        let (effect, side, what) = match (old, new) {
            (Some(a), Some(b)) => {
                // Every multiple of `b` is one of `a` when `b` is a whole multiple of `a`.
                let effect = if whole(b / a) {
                    Effect::Narrower
                } else if whole(a / b) {
                    Effect::Wider
                } else {
                    Effect::Other
                };
                let what = format!(
                    "`multipleOf` of {} changed from {} to {}",
                    at.shown(),
                    shown_opt(o),
                    shown_opt(n)
                );
                (effect, Side::Manifest, what)
            }
            _ => match one_sided("multipleOf", o, n, at) {
                Some(found) => found,
                None => return,
            },
        };
        self.change(effect, side, here, what);
    }

    /// `pattern`, and `format` (which the gateway does not assert, but which callers build
    /// their values and read the agent's by, so it is judged as a pattern is).
    fn pattern(
        &mut self,
        keyword: &str,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        let (effect, side, what) = match (o, n) {
            (Some(o), Some(n)) => (
                Effect::Other,
                Side::Manifest,
                format!(
                    "`{keyword}` of {} changed from {} to {}",
                    at.shown(),
                    shown(o),
                    shown(n)
                ),
            ),
            _ => match one_sided(keyword, o, n, at) {
                Some(found) => found,
                None => return,
            },
        };
        self.change(effect, side, here, what);
    }

    fn unique_items(&mut self, o: Option<&Node>, n: Option<&Node>, at: &Place, here: &Place) {
        let flag = |node: Option<&Node>| match node.map(|n| &n.kind) {
            None => Ok(false),
            Some(Kind::Bool(b)) => Ok(*b),
            Some(_) => Err(()),
        };
        let (Ok(old), Ok(new)) = (flag(o), flag(n)) else {
            return self.unproven("uniqueItems", o, n, at, here);
        };
        let side = if n.is_some() {
            Side::Manifest
        } else {
            Side::Published
        };
        match (old, new) {
            (false, true) => self.change(
                Effect::Narrower,
                side,
                here,
                format!("{} requires unique items now", at.shown()),
            ),
            (true, false) => self.change(
                Effect::Wider,
                side,
                here,
                format!("{} no longer requires unique items", at.shown()),
            ),
            // `uniqueItems: false` written or left out.
            _ => self.annotation("uniqueItems", Effect::Annotation, o, n, at, here),
        }
    }

    fn required(&mut self, o: Option<&Node>, n: Option<&Node>, at: &Place, here: &Place) {
        fn names(node: Option<&Node>) -> Result<Vec<(&str, usize)>, ()> {
            match node.map(|n| &n.kind) {
                None => Ok(Vec::new()),
                Some(Kind::Seq(items)) => (items.iter().enumerate())
                    .map(|(i, item)| match &item.kind {
                        Kind::String(s) => Ok((s.as_str(), i)),
                        _ => Err(()),
                    })
                    .collect(),
                Some(_) => Err(()),
            }
        }
        let (Ok(old), Ok(new)) = (names(o), names(n)) else {
            return self.unproven("required", o, n, at, here);
        };
        let old_set: HashSet<&str> = old.iter().map(|(s, _)| *s).collect();
        let new_set: HashSet<&str> = new.iter().map(|(s, _)| *s).collect();
        let mut any = false;
        for (name, i) in &new {
            if !old_set.contains(name) {
                any = true;
                let what = format!("{} requires `{name}` now", at.shown());
                self.change(
                    Effect::Narrower,
                    Side::Manifest,
                    &here.child(&i.to_string()),
                    what,
                );
            }
        }
        for (name, i) in &old {
            if !new_set.contains(name) {
                any = true;
                let what = format!("{} no longer requires `{name}`", at.shown());
                self.change(
                    Effect::Wider,
                    Side::Published,
                    &here.child(&i.to_string()),
                    what,
                );
            }
        }
        if !any {
            self.annotation("required", Effect::Annotation, o, n, at, here);
        }
    }

    /// `properties`: each declared on both sides compared; one declared on one side only,
    /// compared with what the other side admits for an undeclared property.
    fn properties(&mut self, old: &Entries, new: &Entries, at: &Place) {
        let here = at.child("properties");
        let (o, n) = (old.get("properties"), new.get("properties"));
        let (Some(op), Some(np)) = (
            Entries::of(o.unwrap_or(self.empty)),
            Entries::of(n.unwrap_or(self.empty)),
        ) else {
            return self.unproven("properties", o, n, at, &here);
        };
        for name in union(&op, &np) {
            let place = here.child(name);
            match (op.get(name), np.get(name)) {
                (Some(a), Some(b)) => self.schema(a, b, &place),
                (None, Some(b)) => {
                    let (other, other_at) = undeclared(old, self.empty, &at.old, name);
                    let compared = Place {
                        old: other_at,
                        new: place.new.clone(),
                    };
                    let bump = self.scratch(other, b, &compared);
                    self.added_property(name, bump, at, &place);
                }
                (Some(a), None) => {
                    let (other, other_at) = undeclared(new, self.empty, &at.new, name);
                    let compared = Place {
                        old: place.old.clone(),
                        new: other_at,
                    };
                    let bump = self.scratch(a, other, &compared);
                    self.removed_property(name, bump, at, &place);
                }
                (None, None) => {}
            }
        }
    }

    /// The worst effect of the differences between two schemas, recorded apart: a property
    /// added or removed is one change, whatever its schema holds.
    fn scratch(&mut self, old: &Node, new: &Node, at: &Place) -> Option<Bump> {
        let mut found = Vec::new();
        let mut walk = Walk {
            flow: self.flow,
            definitions_judged: self.definitions_judged,
            empty: self.empty,
            out: &mut found,
        };
        walk.schema(old, new, at);
        found.iter().map(|c| c.bump).max()
    }

    fn added_property(&mut self, name: &str, bump: Option<Bump>, at: &Place, place: &Place) {
        let (effect, what) = match (self.flow, bump) {
            // A caller that does not know a new output field can leave it: a new version, not a
            // breaking one. Under `additionalProperties: false` no answer could hold it before,
            // so what it breaks is said as it is.
            (Flow::Output, Some(Bump::Major)) => {
                self.out.push(Change {
                    bump: Bump::Minor,
                    side: Side::Manifest,
                    pointer: place.new.clone(),
                    message: format!(
                        "{} has a new property `{name}`, which no answer could hold before (it admitted no undeclared property): a caller that reads the fields it knows and leaves the others is not broken by it",
                        at.shown()
                    ),
                });
                return;
            }
            (Flow::Output, _) => (
                Effect::Narrower,
                format!("{} has a new property `{name}`", at.shown()),
            ),
            (Flow::Input, Some(Bump::Major)) => (
                Effect::Narrower,
                format!(
                    "{} declares a new property `{name}`, which it admitted with other values before (it has no `additionalProperties: false`)",
                    at.shown()
                ),
            ),
            (Flow::Input, Some(Bump::Minor)) => (
                Effect::Wider,
                format!("{} admits a new optional property `{name}`", at.shown()),
            ),
            (Flow::Input, _) => (
                Effect::Annotation,
                format!(
                    "{} declares the property `{name}`, which it admitted as it does now",
                    at.shown()
                ),
            ),
        };
        self.change(effect, Side::Manifest, place, what);
    }

    fn removed_property(&mut self, name: &str, bump: Option<Bump>, at: &Place, place: &Place) {
        let (effect, what) = match (self.flow, bump) {
            (Flow::Input, Some(Bump::Major)) => (
                Effect::Narrower,
                format!(
                    "{} no longer admits the property `{name}` (it admits no undeclared property)",
                    at.shown()
                ),
            ),
            (Flow::Input, Some(Bump::Minor)) => (
                Effect::Wider,
                format!(
                    "{} no longer declares the property `{name}`, and admits it with any value",
                    at.shown()
                ),
            ),
            (Flow::Output, Some(Bump::Major)) => (
                Effect::Wider,
                format!(
                    "{} no longer declares the property `{name}`, and admits it with any value",
                    at.shown()
                ),
            ),
            (Flow::Output, Some(Bump::Minor)) => (
                Effect::Narrower,
                format!("{} no longer has the property `{name}`", at.shown()),
            ),
            _ => (
                Effect::Annotation,
                format!(
                    "{} no longer declares the property `{name}`, and admits it as it did",
                    at.shown()
                ),
            ),
        };
        self.change(effect, Side::Published, place, what);
    }

    /// `prefixItems` and `allOf`: lists of the same length compared item by item (each item
    /// narrower makes the whole narrower, each wider makes it wider); otherwise not judged.
    fn pairwise(
        &mut self,
        keyword: &str,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        match (o.map(|o| &o.kind), n.map(|n| &n.kind)) {
            (Some(Kind::Seq(a)), Some(Kind::Seq(b))) if a.len() == b.len() => {
                for (i, (a, b)) in a.iter().zip(b).enumerate() {
                    self.schema(a, b, &here.child(&i.to_string()));
                }
            }
            _ => self.unproven(keyword, o, n, at, here),
        }
    }

    /// `$defs`: each definition compared in the schema's own direction, where the schema has no
    /// `not` or `if` to turn a reference around; a definition added or removed changes nothing
    /// by itself (a `$ref` to it changed, and that is judged where it is).
    fn definitions(
        &mut self,
        keyword: &str,
        o: Option<&Node>,
        n: Option<&Node>,
        at: &Place,
        here: &Place,
    ) {
        let (Some(old), Some(new)) = (o.and_then(Entries::of), n.and_then(Entries::of)) else {
            return self.unproven(keyword, o, n, at, here);
        };
        if !self.definitions_judged {
            return self.unproven(keyword, o, n, at, here);
        }
        for name in union(&old, &new) {
            let place = here.child(name);
            match (old.get(name), new.get(name)) {
                (Some(a), Some(b)) => self.schema(a, b, &place),
                (None, Some(_)) => self.change(
                    Effect::Annotation,
                    Side::Manifest,
                    &place,
                    format!("definition `{name}` added to {}", at.shown()),
                ),
                (Some(_), None) => self.change(
                    Effect::Annotation,
                    Side::Published,
                    &place,
                    format!("definition `{name}` removed from {}", at.shown()),
                ),
                (None, None) => {}
            }
        }
    }
}

/// A keyword on one side only: added, it narrows what is admitted (the manifest's line);
/// removed, it widens it (the published one's). `None` where both sides have it, or neither.
fn one_sided(
    keyword: &str,
    o: Option<&Node>,
    n: Option<&Node>,
    at: &Place,
) -> Option<(Effect, Side, String)> {
    match (o, n) {
        (None, Some(_)) => Some((
            Effect::Narrower,
            Side::Manifest,
            format!("`{keyword}: {}` added to {}", shown_opt(n), at.shown()),
        )),
        (Some(o), None) => Some((
            Effect::Wider,
            Side::Published,
            format!("`{keyword}` ({}) removed from {}", shown(o), at.shown()),
        )),
        _ => None,
    }
}

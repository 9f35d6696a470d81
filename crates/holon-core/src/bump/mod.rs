//! The version a change needs: a manifest compared with the one published, as documents (comments,
//! key order, quoting and layout change nothing), each difference classed by what it does to a
//! caller. Major: a call admitted before is refused, an answer can be given that could not be,
//! or a declared code a caller branches on is gone. Minor: the interface changed and no caller
//! breaks. Patch: only the published document changed (a description, an example, the price).
//!
//! It reads the two located trees and nothing else; the publish checks say which version that
//! allows (`check::against`).

mod change;
mod effect;
mod schema;
mod tree;

use std::collections::{HashMap, HashSet};

use crate::manifest::yaml::{Kind, Node};
use crate::pointer::{self, dotted};
pub use change::{Bump, Change, Side};
use effect::Flow;
use tree::{Entries, first_difference, same, union};

/// Every difference between the published manifest `old` and `new`, in no particular order;
/// `name` and `version` are not compared here (another agent, or the version itself). Whatever
/// part of either document cannot be read as a manifest is compared as a document: a change
/// there is a patch unless it is in the interface, where it is not proven compatible.
pub fn compare(old: &Node, new: &Node) -> Vec<Change> {
    let mut out = Vec::new();
    let (Some(o), Some(n)) = (Entries::of(old), Entries::of(new)) else {
        if !same(old, new) {
            out.push(whole(Bump::Major, "", "the document"));
        }
        return out;
    };
    for key in union(&o, &n) {
        let at = pointer::child("", key);
        let (a, b) = (o.get(key), n.get(key));
        match key {
            "name" | "version" => {}
            "interface" => interface(a, b, &mut out),
            "runtime" => runtime(a, b, &mut out),
            "pricing" => pricing(a, b, &mut out),
            "examples" => examples(a, b, &mut out),
            _ => document(Bump::Patch, a, b, &at, &mut out),
        }
    }
    // What a document holds, billing has two halves: each code's `billed`, and `charge_on`.
    billing(&o, &n, &mut out);
    // A difference the rules above did not name is still a difference of the document.
    if out.is_empty()
        && let Some(at) = difference_apart_from_version(old, new)
    {
        out.push(Change {
            bump: Bump::Patch,
            side: side_of(new, &at),
            message: format!("`{}` changed", dotted(&at)),
            pointer: at,
        });
    }
    out
}

/// The version the changes need together: the largest of theirs.
pub fn required(changes: &[Change]) -> Bump {
    changes.iter().map(|c| c.bump).max().unwrap_or(Bump::None)
}

/// The first difference of the two documents that is not `version`'s.
fn difference_apart_from_version(old: &Node, new: &Node) -> Option<String> {
    let (o, n) = (Entries::of(old)?, Entries::of(new)?);
    union(&o, &n)
        .into_iter()
        .filter(|k| *k != "version")
        .find_map(|key| {
            let at = pointer::child("", key);
            match (o.get(key), n.get(key)) {
                (Some(a), Some(b)) => first_difference(a, b, &at),
                _ => Some(at),
            }
        })
}

/// The side whose document has a node at `pointer`: this manifest's when it has one.
fn side_of(new: &Node, at: &str) -> Side {
    let mut node = new;
    for token in pointer::tokens(at) {
        let next = match &node.kind {
            Kind::Map(_) => node.get(&token),
            Kind::Seq(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => return Side::Published,
        }
    }
    Side::Manifest
}

/// A change of a whole part of the document, at `at`.
fn whole(bump: Bump, at: &str, what: &str) -> Change {
    Change {
        bump,
        side: Side::Manifest,
        pointer: at.to_string(),
        message: format!("{what} changed"),
    }
}

/// A part compared as a document only: added, removed or changed, with the version `bump`.
fn document(bump: Bump, old: Option<&Node>, new: Option<&Node>, at: &str, out: &mut Vec<Change>) {
    let name = format!("`{}`", dotted(at));
    let (side, pointer, message) = match (old, new) {
        (Some(a), Some(b)) => match first_difference(a, b, at) {
            Some(inner) if inner == at && scalar(a) && scalar(b) => {
                let (was, now) = crate::message::pair(&a.to_json(), &b.to_json());
                (
                    Side::Manifest,
                    inner,
                    format!("{name} changed from `{was}` to `{now}`"),
                )
            }
            Some(inner) if inner == at => (Side::Manifest, inner, format!("{name} changed")),
            Some(inner) => {
                let below = inner.strip_prefix(at).unwrap_or(&inner);
                (side_of(b, below), inner.clone(), format!("{name} changed"))
            }
            None => return,
        },
        (None, Some(_)) => (Side::Manifest, at.to_string(), format!("{name} added")),
        (Some(_), None) => (Side::Published, at.to_string(), format!("{name} removed")),
        (None, None) => return,
    };
    out.push(Change {
        bump,
        side,
        pointer,
        message: with_effect(bump, message),
    });
}

/// A message with what a change of this class does, for a part with no rule of its own.
fn with_effect(bump: Bump, message: String) -> String {
    match bump {
        Bump::Major => format!("{message}: not proven compatible, so taken as breaking"),
        Bump::Minor => format!("{message}: the interface changed, and no caller breaks"),
        Bump::Patch | Bump::None => {
            format!("{message}: the published document changed, not its interface")
        }
    }
}

/// `interface`: the two schemas and the declared codes.
fn interface(old: Option<&Node>, new: Option<&Node>, out: &mut Vec<Change>) {
    let (Some(o), Some(n)) = (old.and_then(Entries::of), new.and_then(Entries::of)) else {
        return document(Bump::Major, old, new, "/interface", out);
    };
    for key in union(&o, &n) {
        let at = pointer::child("/interface", key);
        let (a, b) = (o.get(key), n.get(key));
        match (key, a, b) {
            ("input", Some(a), Some(b)) => schema::compare(a, b, &at, Flow::Input, out),
            ("output", Some(a), Some(b)) => schema::compare(a, b, &at, Flow::Output, out),
            ("input" | "output", _, _) => document(Bump::Major, a, b, &at, out),
            ("errors", _, _) => errors(a, b, out),
            _ => document(Bump::Patch, a, b, &at, out),
        }
    }
}

/// One declared code: where it is and what it says.
struct Declared<'a> {
    index: usize,
    node: &'a Node,
}

/// The declared codes of `interface.errors`, by code (the first entry of each); `None` when
/// it is not a sequence.
fn declared(errors: Option<&Node>) -> Option<(Vec<&str>, HashMap<&str, Declared<'_>>)> {
    let Some(errors) = errors else {
        return Some((Vec::new(), HashMap::new()));
    };
    let Kind::Seq(items) = &errors.kind else {
        return None;
    };
    let mut order = Vec::new();
    let mut codes = HashMap::new();
    for (index, node) in items.iter().enumerate() {
        if let Some(Node {
            kind: Kind::String(code),
            ..
        }) = node.get("code")
            && !codes.contains_key(code.as_str())
        {
            order.push(code.as_str());
            codes.insert(code.as_str(), Declared { index, node });
        }
    }
    Some((order, codes))
}

/// `interface.errors`: codes removed (major: a caller branches on them), added (minor),
/// `retryable` changed (minor), descriptions and order (patch). Billing is [`billing`]'s.
fn errors(old: Option<&Node>, new: Option<&Node>, out: &mut Vec<Change>) {
    let (Some((old_order, old_codes)), Some((new_order, new_codes))) =
        (declared(old), declared(new))
    else {
        return document(Bump::Major, old, new, "/interface/errors", out);
    };
    let at = |i: usize| format!("/interface/errors/{i}");
    for code in &old_order {
        if let (Some(d), None) = (old_codes.get(code), new_codes.get(code)) {
            out.push(Change {
                bump: Bump::Major,
                side: Side::Published,
                pointer: format!("{}/code", at(d.index)),
                message: format!(
                    "declared code `{code}` removed or renamed: a caller that branches on it never sees it again"
                ),
            });
        }
    }
    for code in &new_order {
        let Some(d) = new_codes.get(code) else {
            continue;
        };
        let Some(before) = old_codes.get(code) else {
            out.push(Change {
                bump: Bump::Minor,
                side: Side::Manifest,
                pointer: format!("{}/code", at(d.index)),
                message: format!(
                    "new declared code `{code}`: a failure a caller can branch on, and no caller breaks"
                ),
            });
            continue;
        };
        let (Some(o), Some(n)) = (Entries::of(before.node), Entries::of(d.node)) else {
            continue;
        };
        for key in union(&o, &n) {
            let (a, b) = (o.get(key), n.get(key));
            let here_new = format!("{}/{key}", at(d.index));
            match key {
                "code" | "billed" => {}
                "retryable" => {
                    let flag =
                        |n: Option<&Node>| matches!(n.map(|n| &n.kind), Some(Kind::Bool(true)));
                    if flag(a) != flag(b) {
                        let (side, pointer) = match b {
                            Some(_) => (Side::Manifest, here_new),
                            None => (Side::Published, format!("{}/{key}", at(before.index))),
                        };
                        out.push(Change {
                            bump: Bump::Minor,
                            side,
                            pointer,
                            message: format!(
                                "`retryable` of declared code `{code}` changed from `{}` to `{}`: whether a caller tries again changes, and no call breaks",
                                flag(a),
                                flag(b)
                            ),
                        });
                    } else {
                        document(Bump::Patch, a, b, &here_new, out);
                    }
                }
                _ => match (a, b) {
                    (Some(_), None) => document(
                        Bump::Patch,
                        a,
                        b,
                        &format!("{}/{key}", at(before.index)),
                        out,
                    ),
                    _ => document(Bump::Patch, a, b, &here_new, out),
                },
            }
        }
    }
    let kept: HashSet<&str> = new_codes.keys().copied().collect();
    let old_kept: Vec<&&str> = old_order.iter().filter(|c| kept.contains(**c)).collect();
    let still: HashSet<&str> = old_codes.keys().copied().collect();
    let new_kept: Vec<&&str> = new_order.iter().filter(|c| still.contains(**c)).collect();
    if old_kept != new_kept {
        out.push(Change {
            bump: Bump::Patch,
            side: Side::Manifest,
            pointer: "/interface/errors".to_string(),
            message: "the declared codes are in another order: the published document changed, not its interface".to_string(),
        });
    }
}

/// Whether `charge_on` is `attempt`: declared failures marked `billed: true` are billed.
fn attempt(root: &Entries) -> Result<bool, ()> {
    let Some(pricing) = root.get("pricing") else {
        return Ok(false);
    };
    match pricing.get("charge_on").map(|n| &n.kind) {
        None => Ok(false),
        Some(Kind::String(s)) if s == "success" => Ok(false),
        Some(Kind::String(s)) if s == "attempt" => Ok(true),
        Some(_) => Err(()),
    }
}

/// Billing: `charge_on` changed to `attempt` (major) or to `success` (minor), and each code
/// kept whose failure was free and is billed now (major), or the reverse (minor); a `billed`
/// that has no effect either way (under `charge_on: success`) is a patch.
fn billing(old: &Entries, new: &Entries, out: &mut Vec<Change>) {
    let (Ok(was), Ok(is)) = (attempt(old), attempt(new)) else {
        let (a, b) = (pricing_of(old), pricing_of(new));
        return document(Bump::Major, a, b, "/pricing/charge_on", out);
    };
    if was != is {
        let side = if new
            .get("pricing")
            .and_then(|p| p.get("charge_on"))
            .is_some()
        {
            Side::Manifest
        } else {
            Side::Published
        };
        out.push(Change {
            bump: if is { Bump::Major } else { Bump::Minor },
            side,
            pointer: "/pricing/charge_on".to_string(),
            message: if is {
                "`charge_on` changed to `attempt`: a declared failure marked `billed: true` is billed now, which was free".to_string()
            } else {
                "`charge_on` changed to `success`: only a success is billed now, and no caller pays more".to_string()
            },
        });
    }
    fn errors_of<'a>(root: &Entries<'a>) -> Option<&'a Node> {
        root.get("interface").and_then(|i| i.get("errors"))
    }
    let (Some((_, old_codes)), Some((new_order, new_codes))) =
        (declared(errors_of(old)), declared(errors_of(new)))
    else {
        return;
    };
    let billed = |d: &Declared| {
        matches!(
            d.node.get("billed").map(|n| &n.kind),
            Some(Kind::Bool(true))
        )
    };
    for code in new_order {
        let Some(d) = new_codes.get(code) else {
            continue;
        };
        let at = format!("/interface/errors/{}/billed", d.index);
        let side = if d.node.get("billed").is_some() {
            Side::Manifest
        } else {
            Side::Published
        };
        let pointer = match (side, old_codes.get(code)) {
            (Side::Published, Some(before)) => {
                format!("/interface/errors/{}/billed", before.index)
            }
            _ => at.clone(),
        };
        let Some(before) = old_codes.get(code) else {
            // A new code billed: the failure it names was free before (undeclared, or another
            // code) or billed as a success; which, the manifests do not say.
            if is && billed(d) {
                out.push(Change {
                    bump: Bump::Major,
                    side: Side::Manifest,
                    pointer: at,
                    message: format!(
                        "new declared code `{code}` is billed (`billed: true` under `charge_on: attempt`): a failure that was free before may be billed now"
                    ),
                });
            }
            continue;
        };
        let (then, now) = (was && billed(before), is && billed(d));
        let (bump, message) = match (then, now) {
            (false, true) => (
                Bump::Major,
                format!("declared code `{code}` was free and is billed now"),
            ),
            (true, false) => (
                Bump::Minor,
                format!("declared code `{code}` was billed and is free now: no caller pays more"),
            ),
            _ if billed(before) != billed(d) => (
                Bump::Patch,
                format!(
                    "`billed` of declared code `{code}` changed, with no effect under `charge_on: success`"
                ),
            ),
            _ => continue,
        };
        out.push(Change {
            bump,
            side,
            pointer,
            message,
        });
    }
}

fn pricing_of<'a>(root: &Entries<'a>) -> Option<&'a Node> {
    root.get("pricing").and_then(|p| p.get("charge_on"))
}

/// `runtime`: the tool's name (major: callers call it by name), `max_input_bytes` lowered
/// (major) or raised (minor), `timeout_s` (minor).
fn runtime(old: Option<&Node>, new: Option<&Node>, out: &mut Vec<Change>) {
    let (Some(o), Some(n)) = (old.and_then(Entries::of), new.and_then(Entries::of)) else {
        return document(Bump::Major, old, new, "/runtime", out);
    };
    for key in union(&o, &n) {
        let at = pointer::child("/runtime", key);
        let (a, b) = (o.get(key), n.get(key));
        match (key, a, b) {
            ("tool", Some(a), Some(b)) if !same(a, b) => out.push(Change {
                bump: Bump::Major,
                side: Side::Manifest,
                pointer: at,
                message: format!(
                    "`runtime.tool` renamed from {} to {}: a caller that calls the tool by its name finds none",
                    value(a),
                    value(b)
                ),
            }),
            ("tool", _, _) => document(Bump::Major, a, b, &at, out),
            ("limits", _, _) => limits(a, b, out),
            _ => document(Bump::Patch, a, b, &at, out),
        }
    }
}

fn limits(old: Option<&Node>, new: Option<&Node>, out: &mut Vec<Change>) {
    let (Some(o), Some(n)) = (old.and_then(Entries::of), new.and_then(Entries::of)) else {
        return document(Bump::Major, old, new, "/runtime/limits", out);
    };
    let number = |n: Option<&Node>| match n.map(|n| &n.kind) {
        Some(Kind::Number(x)) => x.as_f64(),
        _ => None,
    };
    for key in union(&o, &n) {
        let at = pointer::child("/runtime/limits", key);
        let (a, b) = (o.get(key), n.get(key));
        if let (Some(x), Some(y)) = (a, b)
            && same(x, y)
        {
            continue;
        }
        match (key, number(a), number(b)) {
            ("max_input_bytes", Some(x), Some(y)) => out.push(Change {
                bump: if y < x { Bump::Major } else { Bump::Minor },
                side: Side::Manifest,
                message: if y < x {
                    format!(
                        "`runtime.limits.max_input_bytes` lowered from {} to {}: a call admitted before is refused now",
                        value_of(a),
                        value_of(b)
                    )
                } else {
                    format!(
                        "`runtime.limits.max_input_bytes` raised from {} to {}: larger calls are admitted now, and every call admitted before still is",
                        value_of(a),
                        value_of(b)
                    )
                },
                pointer: at,
            }),
            ("max_input_bytes", _, _) => document(Bump::Major, a, b, &at, out),
            ("timeout_s", Some(_), Some(_)) => out.push(Change {
                bump: Bump::Minor,
                side: Side::Manifest,
                message: format!(
                    "`runtime.limits.timeout_s` changed from {} to {}: how long a caller waits at most changed",
                    value_of(a),
                    value_of(b)
                ),
                pointer: at,
            }),
            ("timeout_s", _, _) => document(Bump::Minor, a, b, &at, out),
            _ => document(Bump::Patch, a, b, &at, out),
        }
    }
}

/// `pricing`: the price and currency are patches (a caller reads them at each call, and the
/// guides count them so); `charge_on` is [`billing`]'s.
fn pricing(old: Option<&Node>, new: Option<&Node>, out: &mut Vec<Change>) {
    let (Some(o), Some(n)) = (old.and_then(Entries::of), new.and_then(Entries::of)) else {
        return document(Bump::Patch, old, new, "/pricing", out);
    };
    for key in union(&o, &n) {
        if key == "charge_on" {
            continue;
        }
        let at = pointer::child("/pricing", key);
        document(Bump::Patch, o.get(key), n.get(key), &at, out);
    }
}

/// `examples`: matched by name; each added, changed or removed is a patch (a published
/// example cannot be edited in place), and so is a new order.
fn examples(old: Option<&Node>, new: Option<&Node>, out: &mut Vec<Change>) {
    let (Some(Kind::Seq(a)), Some(Kind::Seq(b))) = (old.map(|n| &n.kind), new.map(|n| &n.kind))
    else {
        return document(Bump::Patch, old, new, "/examples", out);
    };
    let key = |i: usize, node: &Node| match node.get("name").map(|n| &n.kind) {
        Some(Kind::String(name)) => name.clone(),
        // Unnamed (the checks refuse that): matched by place.
        _ => format!("#{i}"),
    };
    let mut old_by_name: HashMap<String, usize> = HashMap::with_capacity(a.len());
    for (i, node) in a.iter().enumerate() {
        old_by_name.entry(key(i, node)).or_insert(i);
    }
    let mut matched = HashSet::with_capacity(b.len());
    let mut order = Vec::new();
    for (j, node) in b.iter().enumerate() {
        let name = key(j, node);
        let at = format!("/examples/{j}");
        let Some(&i) = old_by_name.get(&name) else {
            out.push(Change {
                bump: Bump::Patch,
                side: Side::Manifest,
                pointer: at,
                message: format!(
                    "example `{name}` added: the published document changed, not its interface"
                ),
            });
            continue;
        };
        if !matched.insert(i) {
            continue;
        }
        order.push(i);
        let Some(before) = a.get(i) else { continue };
        if same(before, node) {
            continue;
        }
        // Where in the example, on the side that has it.
        let inner = first_difference(before, node, "").unwrap_or_default();
        let (side, pointer) = match side_of(node, &inner) {
            Side::Manifest => (Side::Manifest, format!("{at}{inner}")),
            Side::Published => (Side::Published, format!("/examples/{i}{inner}")),
        };
        out.push(Change {
            bump: Bump::Patch,
            side,
            pointer,
            message: format!(
                "example `{name}` changed: a published example cannot be edited in place"
            ),
        });
    }
    for (i, node) in a.iter().enumerate() {
        if !matched.contains(&i) && old_by_name.get(&key(i, node)) == Some(&i) {
            out.push(Change {
                bump: Bump::Patch,
                side: Side::Published,
                pointer: format!("/examples/{i}"),
                message: format!(
                    "example `{}` removed: the published document changed, not its interface",
                    key(i, node)
                ),
            });
        }
    }
    if !order.is_sorted() {
        out.push(Change {
            bump: Bump::Patch,
            side: Side::Manifest,
            pointer: "/examples".to_string(),
            message: "the examples are in another order: the published document changed, not its interface".to_string(),
        });
    }
}

fn scalar(node: &Node) -> bool {
    !matches!(node.kind, Kind::Seq(_) | Kind::Map(_))
}

/// A scalar as a message shows it, in backticks.
fn value(node: &Node) -> String {
    format!("`{}`", crate::message::short(&node.to_json()))
}

fn value_of(node: Option<&Node>) -> String {
    node.map(|n| crate::message::short(&n.to_json()))
        .unwrap_or_default()
}

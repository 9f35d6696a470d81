//! The public API, held by a snapshot: every item an author can name, with its signature, from
//! rustdoc's JSON output (built with `RUSTC_BOOTSTRAP=1`, as cargo-public-api does on stable).
//! A change to the API is a change to `snapshots/it__api__public_api.snap`, reviewed as a diff;
//! `cargo insta review` accepts it.
//!
//! rustdoc runs with `-D warnings`, so the API's documentation has no broken link either.
//!
//! Items `#[doc(hidden)]` (the binary's entry point, the test seam, what `manifest!` expands
//! to) are left out by rustdoc itself, as they are out of the API.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::root;

/// The crates whose items holon-kit re-exports: the facade's `use` items point into them.
const SOURCES: [&str; 3] = ["holon-core", "holon-runtime", "holon-harness"];

/// rustdoc's JSON for holon-kit and the crates it re-exports from, with every feature, from one
/// `cargo doc` in its own target folder beside the test's (a JSON build shares nothing with a
/// normal one): one resolve, so their dependencies are checked once, not once per crate.
fn rustdoc_json() -> BTreeMap<String, Value> {
    let exe = std::env::current_exe().expect("the test binary");
    // `<target>/<profile>/deps/<test>`.
    let target = exe
        .ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .expect("a cargo target folder");
    let api_target = target.join("api");
    let packages: Vec<&str> = std::iter::once("holon-kit").chain(SOURCES).collect();
    let mut doc = crate::util::cargo();
    doc.args([
        "doc",
        "--no-deps",
        "--all-features",
        "--quiet",
        "--target-dir",
    ])
    .arg(&api_target);
    for package in &packages {
        doc.args(["-p", package]);
    }
    // A broken link in the documentation of the API fails the test too.
    let out = doc
        .env(
            "RUSTDOCFLAGS",
            "-Z unstable-options --output-format json -D warnings",
        )
        .current_dir(root())
        .env("RUSTC_BOOTSTRAP", "1")
        .output()
        .expect("cargo doc runs");
    assert!(
        out.status.success(),
        "cargo doc {packages:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (packages.iter())
        .map(|package| {
            let name = package.replace('-', "_");
            let file: PathBuf = api_target.join(format!("doc/{name}.json"));
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            (name, serde_json::from_str(&text).expect("rustdoc's JSON"))
        })
        .collect()
}

/// One crate's JSON, with its items found by their defining path.
struct Crate {
    doc: Value,
    by_path: BTreeMap<Vec<String>, String>,
}

impl Crate {
    fn new(doc: Value) -> Crate {
        let by_path = doc["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, e)| e["crate_id"] == 0)
            .filter_map(|(id, e)| {
                let path = e["path"].as_array()?;
                let path = path.iter().filter_map(Value::as_str).map(str::to_string);
                Some((path.collect(), id.clone()))
            })
            .collect();
        Crate { doc, by_path }
    }
}

/// An item: the crate whose JSON holds it, and its id there.
type Ref = (String, String);

/// The crates' items as rustdoc wrote them, and the public path of each one reached from
/// holon-kit's root, across the re-exports into the crates behind it.
struct Api {
    crates: BTreeMap<String, Crate>,
    public: BTreeMap<Ref, String>,
    lines: BTreeSet<String>,
}

impl Api {
    /// The item `id` names in `krate`'s JSON, followed into the crate that defines it.
    fn resolve(&self, krate: &str, id: &Value) -> Option<Ref> {
        let id = id.to_string();
        let here = self.crates.get(krate)?;
        if here.doc["index"].get(&id).is_some() {
            return Some((krate.to_string(), id));
        }
        let (owner, path) = self.defined(krate, &id)?;
        let there = self.crates.get(&owner)?;
        let found = there.by_path.get(&path)?;
        Some((owner, found.clone()))
    }

    /// Where `id` of `krate`'s JSON is defined: the crate's name and the item's path.
    fn defined(&self, krate: &str, id: &str) -> Option<(String, Vec<String>)> {
        let doc = &self.crates.get(krate)?.doc;
        let entry = doc["paths"].get(id)?;
        let path: Vec<String> = (entry["path"].as_array()?.iter())
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let owner = match entry["crate_id"].as_u64()? {
            0 => krate.to_string(),
            n => doc["external_crates"][n.to_string()]["name"]
                .as_str()?
                .to_string(),
        };
        Some((owner, path))
    }

    fn item(&self, r: &Ref) -> Option<&Value> {
        self.crates.get(&r.0)?.doc["index"].get(&r.1)
    }

    /// Names every item reachable from the root under its public path (first pass), so that
    /// signatures can name types by where an author finds them.
    fn name(&mut self, r: &Ref, path: &str) {
        let Some(item) = self.item(r).cloned() else {
            return;
        };
        if let Some(module) = item["inner"].get("module") {
            for child in module["items"].as_array().into_iter().flatten() {
                let Some(c) = self.resolve(&r.0, child) else {
                    continue;
                };
                let Some(ci) = self.item(&c).cloned() else {
                    continue;
                };
                if let Some(u) = ci["inner"].get("use") {
                    let name = u["name"].as_str().unwrap_or_default();
                    if let Some(target) = self.resolve(&c.0, &u["id"]) {
                        self.name(&target, &format!("{path}::{name}"));
                    }
                } else if let Some(name) = ci["name"].as_str() {
                    self.name(&c, &format!("{path}::{name}"));
                }
            }
        } else {
            self.public.insert(r.clone(), path.to_string());
        }
    }

    /// Writes the lines of every item reached (second pass).
    fn walk(&mut self, r: &Ref, path: &str) {
        let Some(item) = self.item(r).cloned() else {
            return;
        };
        let krate = r.0.clone();
        let inner = &item["inner"];
        let (kind, body) = inner
            .as_object()
            .and_then(|o| o.iter().next())
            .map(|(k, v)| (k.as_str(), v.clone()))
            .unwrap_or(("", Value::Null));
        let body = &body;
        match kind {
            "module" => {
                self.lines.insert(format!("pub mod {path}"));
                for child in body["items"].as_array().into_iter().flatten() {
                    let Some(c) = self.resolve(&krate, child) else {
                        continue;
                    };
                    let Some(ci) = self.item(&c).cloned() else {
                        continue;
                    };
                    if let Some(u) = ci["inner"].get("use") {
                        let name = u["name"].as_str().unwrap_or_default();
                        if let Some(target) = self.resolve(&c.0, &u["id"]) {
                            self.walk(&target, &format!("{path}::{name}"));
                        }
                    } else if let Some(name) = ci["name"].as_str() {
                        self.walk(&c, &format!("{path}::{name}"));
                    }
                }
            }
            "function" => {
                let line = self.function(&krate, path, body);
                self.lines.insert(line);
            }
            "struct" => {
                let generics = self.params(&krate, &body["generics"]);
                self.lines.insert(format!("pub struct {path}{generics}"));
                if let Some(fields) = body["kind"]["plain"]["fields"].as_array() {
                    for f in fields {
                        let Some(field) = self.local(&krate, f) else {
                            continue;
                        };
                        let name = field["name"].as_str().unwrap_or_default();
                        let ty = self.ty(&krate, &field["inner"]["struct_field"]);
                        self.lines.insert(format!("pub {path}::{name}: {ty}"));
                    }
                }
                self.impls(&krate, path, body);
            }
            "enum" => {
                let generics = self.params(&krate, &body["generics"]);
                self.lines.insert(format!("pub enum {path}{generics}"));
                for v in body["variants"].as_array().into_iter().flatten() {
                    let Some(variant) = self.local(&krate, v) else {
                        continue;
                    };
                    let name = variant["name"].as_str().unwrap_or_default();
                    let kind = &variant["inner"]["variant"]["kind"];
                    let shape = if let Some(fields) = kind["tuple"].as_array() {
                        let types: Vec<String> = fields
                            .iter()
                            .filter_map(|f| self.local(&krate, f))
                            .map(|f| self.ty(&krate, &f["inner"]["struct_field"]))
                            .collect();
                        format!("({})", types.join(", "))
                    } else if let Some(fields) = kind["struct"]["fields"].as_array() {
                        let named: Vec<String> = fields
                            .iter()
                            .filter_map(|f| self.local(&krate, f))
                            .map(|f| {
                                format!(
                                    "{}: {}",
                                    f["name"].as_str().unwrap_or_default(),
                                    self.ty(&krate, &f["inner"]["struct_field"])
                                )
                            })
                            .collect();
                        format!(" {{ {} }}", named.join(", "))
                    } else {
                        String::new()
                    };
                    self.lines.insert(format!("pub {path}::{name}{shape}"));
                }
                self.impls(&krate, path, body);
            }
            "trait" => {
                let generics = self.params(&krate, &body["generics"]);
                let bounds = self.bounds(&krate, &body["bounds"]);
                let supertraits = if bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {bounds}")
                };
                self.lines
                    .insert(format!("pub trait {path}{generics}{supertraits}"));
                for m in body["items"].as_array().into_iter().flatten() {
                    let Some(method) = self.local(&krate, m) else {
                        continue;
                    };
                    if let Some(f) = method["inner"].get("function") {
                        let name = method["name"].as_str().unwrap_or_default();
                        let line = self.function(&krate, &format!("{path}::{name}"), f);
                        self.lines.insert(line);
                    }
                }
            }
            "type_alias" => {
                let ty = self.ty(&krate, &body["type"]);
                self.lines.insert(format!("pub type {path} = {ty}"));
            }
            "constant" => {
                let ty = self.ty(&krate, &body["type"]);
                self.lines.insert(format!("pub const {path}: {ty}"));
            }
            "macro" => {
                self.lines.insert(format!("macro {path}!"));
            }
            other => {
                self.lines.insert(format!("{other} {path}"));
            }
        }
    }

    /// An item of `krate`'s own index (a field, a variant, a method, an impl).
    fn local(&self, krate: &str, id: &Value) -> Option<Value> {
        self.crates.get(krate)?.doc["index"]
            .get(id.to_string())
            .cloned()
    }

    /// Inherent methods, and the trait impls written in the crate (auto traits and blanket
    /// impls are the compiler's, not the crate's promise).
    fn impls(&mut self, krate: &str, path: &str, body: &Value) {
        for i in body["impls"].as_array().into_iter().flatten() {
            let Some(imp) = self.local(krate, i) else {
                continue;
            };
            let imp = &imp["inner"]["impl"];
            if imp["is_synthetic"] == true || !imp["blanket_impl"].is_null() {
                continue;
            }
            if imp["trait"].is_null() {
                for m in imp["items"].as_array().into_iter().flatten() {
                    let Some(method) = self.local(krate, m) else {
                        continue;
                    };
                    if method["visibility"] != "public" {
                        continue;
                    }
                    if let Some(f) = method["inner"].get("function") {
                        let name = method["name"].as_str().unwrap_or_default();
                        let line = self.function(krate, &format!("{path}::{name}"), f);
                        self.lines.insert(line);
                    }
                }
            } else {
                let generics = self.params(krate, &imp["generics"]);
                let tr = self.path(krate, &imp["trait"]);
                let wheres = self.wheres(krate, &imp["generics"]);
                self.lines
                    .insert(format!("impl{generics} {tr} for {path}{wheres}"));
            }
        }
    }

    fn function(&self, krate: &str, path: &str, f: &Value) -> String {
        let header = &f["header"];
        let mut quals = String::new();
        if header["is_const"] == true {
            quals.push_str("const ");
        }
        if header["is_async"] == true {
            quals.push_str("async ");
        }
        if header["is_unsafe"] == true {
            quals.push_str("unsafe ");
        }
        let generics = self.params(krate, &f["generics"]);
        let inputs: Vec<String> = f["sig"]["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|pair| {
                let name = pair[0].as_str().unwrap_or_default();
                let ty = &pair[1];
                match (name, ty) {
                    ("self", t) if t["generic"] == "Self" => "self".to_string(),
                    ("self", t) if t["borrowed_ref"]["type"]["generic"] == "Self" => {
                        if t["borrowed_ref"]["is_mutable"] == true {
                            "&mut self".to_string()
                        } else {
                            "&self".to_string()
                        }
                    }
                    _ => format!("{name}: {}", self.ty(krate, ty)),
                }
            })
            .collect();
        let output = match &f["sig"]["output"] {
            Value::Null => String::new(),
            t => format!(" -> {}", self.ty(krate, t)),
        };
        let wheres = self.wheres(krate, &f["generics"]);
        format!(
            "pub {quals}fn {path}{generics}({}){output}{wheres}",
            inputs.join(", ")
        )
    }

    /// `<T: Bound, 'a>`, leaving out `impl Trait` arguments (shown in place).
    fn params(&self, krate: &str, generics: &Value) -> String {
        let shown: Vec<String> = generics["params"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["kind"]["type"]["is_synthetic"] != true)
            .map(|p| {
                let name = p["name"].as_str().unwrap_or_default();
                let bounds = self.bounds(krate, &p["kind"]["type"]["bounds"]);
                if bounds.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}: {bounds}")
                }
            })
            .collect();
        if shown.is_empty() {
            String::new()
        } else {
            format!("<{}>", shown.join(", "))
        }
    }

    fn wheres(&self, krate: &str, generics: &Value) -> String {
        let preds: Vec<String> = generics["where_predicates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("bound_predicate"))
            .map(|p| {
                format!(
                    "{}: {}",
                    self.ty(krate, &p["type"]),
                    self.bounds(krate, &p["bounds"])
                )
            })
            .collect();
        if preds.is_empty() {
            String::new()
        } else {
            format!(" where {}", preds.join(", "))
        }
    }

    fn bounds(&self, krate: &str, bounds: &Value) -> String {
        let shown: Vec<String> = bounds
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| {
                if let Some(t) = b.get("trait_bound") {
                    let modifier = if t["modifier"] == "maybe" { "?" } else { "" };
                    format!("{modifier}{}", self.path(krate, &t["trait"]))
                } else {
                    b["outlives"].as_str().unwrap_or_default().to_string()
                }
            })
            .collect();
        shown.join(" + ")
    }

    /// A path by where an author finds it: the public path of the crate's own items, the
    /// defining path of another crate's, with its generic arguments.
    fn path(&self, krate: &str, p: &Value) -> String {
        let base = match self
            .resolve(krate, &p["id"])
            .and_then(|r| self.public.get(&r))
        {
            Some(public) => public.clone(),
            None => match self.defined(krate, &p["id"].to_string()) {
                Some((_, parts)) => parts.join("::"),
                None => p["path"].as_str().unwrap_or_default().to_string(),
            },
        };
        let args = &p["args"];
        if let Some(a) = args.get("angle_bracketed") {
            let mut shown: Vec<String> = a["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|arg| match arg.get("type") {
                    Some(t) => self.ty(krate, t),
                    None => arg["lifetime"].as_str().unwrap_or("_").to_string(),
                })
                .collect();
            for c in a["constraints"].as_array().into_iter().flatten() {
                let name = c["name"].as_str().unwrap_or_default();
                if let Some(t) = c["binding"]["equality"].get("type") {
                    shown.push(format!("{name} = {}", self.ty(krate, t)));
                } else {
                    shown.push(format!(
                        "{name}: {}",
                        self.bounds(krate, &c["binding"]["constraint"])
                    ));
                }
            }
            if shown.is_empty() {
                base
            } else {
                format!("{base}<{}>", shown.join(", "))
            }
        } else if let Some(f) = args.get("parenthesized") {
            let inputs: Vec<String> = f["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| self.ty(krate, t))
                .collect();
            let output = match &f["output"] {
                Value::Null => String::new(),
                t => format!(" -> {}", self.ty(krate, t)),
            };
            format!("{base}({}){output}", inputs.join(", "))
        } else {
            base
        }
    }

    fn ty(&self, krate: &str, t: &Value) -> String {
        let Some((kind, v)) = t.as_object().and_then(|o| o.iter().next()) else {
            return t.as_str().unwrap_or("?").to_string();
        };
        match kind.as_str() {
            "resolved_path" => self.path(krate, v),
            "generic" | "primitive" => v.as_str().unwrap_or_default().to_string(),
            "borrowed_ref" => {
                let lifetime = v["lifetime"]
                    .as_str()
                    .map(|l| format!("{l} "))
                    .unwrap_or_default();
                let mutable = if v["is_mutable"] == true { "mut " } else { "" };
                format!("&{lifetime}{mutable}{}", self.ty(krate, &v["type"]))
            }
            "slice" => format!("[{}]", self.ty(krate, v)),
            "array" => format!(
                "[{}; {}]",
                self.ty(krate, &v["type"]),
                v["len"].as_str().unwrap_or("_")
            ),
            "tuple" => {
                let parts: Vec<String> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| self.ty(krate, t))
                    .collect();
                format!("({})", parts.join(", "))
            }
            "impl_trait" => format!("impl {}", self.bounds(krate, v)),
            "dyn_trait" => {
                let mut parts: Vec<String> = v["traits"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| self.path(krate, &t["trait"]))
                    .collect();
                if let Some(l) = v["lifetime"].as_str() {
                    parts.push(l.to_string());
                }
                format!("dyn {}", parts.join(" + "))
            }
            "raw_pointer" => {
                let m = if v["is_mutable"] == true {
                    "mut"
                } else {
                    "const"
                };
                format!("*{m} {}", self.ty(krate, &v["type"]))
            }
            "qualified_path" => format!(
                "<{} as {}>::{}",
                self.ty(krate, &v["self_type"]),
                self.path(krate, &v["trait"]),
                v["name"].as_str().unwrap_or_default()
            ),
            other => format!("<{other}>"),
        }
    }
}

/// The path a line is about (the type an impl is for, or the item's own path), then the
/// item before its impls.
fn about(line: &str) -> (String, bool) {
    let (tail, is_impl) = match line.split_once(" for ") {
        Some((_, ty)) if line.starts_with("impl") => (ty, true),
        _ => (line, false),
    };
    let word = tail
        .split_whitespace()
        .find(|w| w.starts_with("holon_kit"))
        .unwrap_or(tail);
    let end = word.find(['(', '<', '!']).unwrap_or(word.len());
    (word[..end].trim_end_matches(':').to_string(), is_impl)
}

#[test]
fn the_public_api_is_the_reviewed_one() {
    let crates: BTreeMap<String, Crate> = (rustdoc_json().into_iter())
        .map(|(name, doc)| (name, Crate::new(doc)))
        .collect();
    let root: Ref = (
        "holon_kit".into(),
        crates["holon_kit"].doc["root"].to_string(),
    );
    let mut api = Api {
        crates,
        public: BTreeMap::new(),
        lines: BTreeSet::new(),
    };
    api.name(&root, "holon_kit");
    api.walk(&root, "holon_kit");
    // Grouped by the item they are about: a type, then its fields, methods and impls.
    let mut listing: Vec<String> = api
        .lines
        .into_iter()
        .filter(|l| !l.contains("StructuralPartialEq"))
        .collect();
    listing.sort_by_cached_key(|line| (about(line), line.clone()));
    insta::assert_snapshot!("public_api", listing.join("\n"));
}

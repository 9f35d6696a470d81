//! Tidy tests, in the spirit of rust-analyzer's: they read the workspace's source and fail when
//! an invariant ARCHITECTURE.md states stops being true. The layers are read from the
//! `layers` block of ARCHITECTURE.md itself, so the prose and the test cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::root;

/// A Rust source file as the rules read it: the code with comments and literals blanked (same
/// length, so offsets agree), each string literal with its offset, and the ranges that are test
/// code (`#[cfg(test)]` items).
struct Source {
    path: PathBuf,
    code: String,
    strings: Vec<(usize, String)>,
    tests: Vec<(usize, usize)>,
}

impl Source {
    fn read(path: &Path) -> Source {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let (code, strings) = lex(&text);
        let tests = test_ranges(&code);
        Source {
            path: path.to_path_buf(),
            code,
            strings,
            tests,
        }
    }

    fn in_test(&self, at: usize) -> bool {
        let file = self.path.file_name().and_then(|n| n.to_str());
        file == Some("tests.rs") || self.tests.iter().any(|(a, b)| (*a..*b).contains(&at))
    }

    /// 1-based line of an offset.
    fn line(&self, at: usize) -> usize {
        self.code[..at].matches('\n').count() + 1
    }

    /// The name of the function an offset is in (the last `fn NAME` before it).
    fn function_at(&self, at: usize) -> String {
        let before = &self.code[..at];
        let Some(i) = before.rfind("fn ") else {
            return String::new();
        };
        before[i + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    }

    fn shown(&self) -> String {
        self.path
            .strip_prefix(root())
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }
}

/// Blanks comments, strings and chars (keeping newlines) and collects string literals.
fn lex(text: &str) -> (String, Vec<(usize, String)>) {
    let bytes = text.as_bytes();
    let mut code = bytes.to_vec();
    let mut strings = Vec::new();
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut code[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
            blank(&mut code, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < bytes.len() && depth > 0 {
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut code, i, j);
            i = j;
        } else if let Some((open, hashes)) = raw_string_start(rest) {
            let start = i + open;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let end = (start..bytes.len())
                .find(|&j| bytes[j..].starts_with(&close))
                .unwrap_or(bytes.len());
            strings.push((i, text[start..end].to_string()));
            let to = (end + close.len()).min(bytes.len());
            blank(&mut code, i, to);
            i = to;
        } else if bytes[i] == b'"' || rest.starts_with(b"b\"") {
            let start = i + if bytes[i] == b'"' { 1 } else { 2 };
            let mut j = start;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(bytes.len());
            strings.push((i, text[start..end].to_string()));
            blank(&mut code, i, (end + 1).min(bytes.len()));
            i = end + 1;
        } else if bytes[i] == b'\'' {
            // A char literal ('x', '\n', '\u{1F980}'), or a lifetime ('a), which stays.
            let literal_end = if rest.get(1) == Some(&b'\\') {
                (i + 2..bytes.len()).find(|&j| bytes[j] == b'\'')
            } else {
                let c = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (bytes.get(i + 1 + c) == Some(&b'\'')).then_some(i + 1 + c)
            };
            match literal_end {
                Some(end) => {
                    blank(&mut code, i, end + 1);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    (String::from_utf8_lossy(&code).into_owned(), strings)
}

/// `r"`, `r#"`, `br##"`...: the length of the opening and the number of `#`.
fn raw_string_start(rest: &[u8]) -> Option<(usize, usize)> {
    let after_b = if rest.first() == Some(&b'b') { 1 } else { 0 };
    if rest.get(after_b) != Some(&b'r') {
        return None;
    }
    let hashes = rest[after_b + 1..]
        .iter()
        .take_while(|b| **b == b'#')
        .count();
    (rest.get(after_b + 1 + hashes) == Some(&b'"')).then_some((after_b + 2 + hashes, hashes))
}

/// The ranges of the items under `#[cfg(test)]`.
fn test_ranges(code: &str) -> Vec<(usize, usize)> {
    item_ranges(code, code.match_indices("#[cfg(test)]").map(|(at, _)| at))
}

/// The ranges of the items under `#[cfg(target_os = "linux")]` (its string is blanked in the
/// code, so the attribute is found through the literal).
fn linux_ranges(source: &Source) -> Vec<(usize, usize)> {
    let gate = "#[cfg(target_os = ";
    let attributes = (source.strings.iter())
        .filter(|(at, literal)| literal == "linux" && source.code[..*at].ends_with(gate))
        .map(|(at, _)| at - gate.len());
    item_ranges(&source.code, attributes)
}

/// The ranges of the items under the attributes at `attributes` (offsets in `code`): from the
/// attribute to the end of the item's block, or to its `;`.
fn item_ranges(code: &str, attributes: impl IntoIterator<Item = usize>) -> Vec<(usize, usize)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for at in attributes {
        let Some(open) = code[at..].find(['{', ';']).map(|n| at + n) else {
            continue;
        };
        if bytes[open] == b';' {
            out.push((at, open));
            continue;
        }
        let mut depth = 0;
        for (j, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push((at, j + 1));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The shipped source of the workspace: the facade's and every crate's `src/`.
fn shipped() -> Vec<Source> {
    let mut files = rust_files(&root().join("src"));
    for entry in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        files.extend(rust_files(&entry.path().join("src")));
    }
    files.iter().map(|f| Source::read(f)).collect()
}

/// The `layers` block of ARCHITECTURE.md: for each name (`workspace` or a crate), its groups,
/// lowest first.
fn layers() -> BTreeMap<String, Vec<BTreeSet<String>>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let block = text
        .split("```layers\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("ARCHITECTURE.md has a ```layers block");
    block
        .lines()
        .filter_map(|line| {
            // `holon-harness::mcp: words < ...`: the name ends at the colon before a space.
            let (name, groups) = line.split_once(": ")?;
            let groups = groups
                .split('<')
                .map(|g| g.split_whitespace().map(str::to_string).collect())
                .collect();
            Some((name.trim().to_string(), groups))
        })
        .collect()
}

fn group_of(groups: &[BTreeSet<String>], name: &str) -> Option<usize> {
    groups.iter().position(|g| g.contains(name))
}

#[test]
fn crates_depend_only_on_the_crates_below_them() {
    let metadata = crate::util::paths::workspace_metadata();
    let layers = layers();
    let order = &layers["workspace"];
    let members: BTreeSet<String> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    let mut wrong = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("a name");
        let Some(mine) = group_of(order, name) else {
            wrong.push(format!("`{name}` has no place in the `workspace` layers"));
            continue;
        };
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            if !members.contains(dep_name) {
                continue;
            }
            let kind = dep["kind"].as_str().unwrap_or("normal");
            match group_of(order, dep_name) {
                Some(theirs) if theirs < mine => {}
                _ => wrong.push(format!(
                    "`{name}` depends ({kind}) on `{dep_name}`, which is not below it"
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Only the reporter and the command line write what a run says: the harness prints from its
/// `reporter` alone, which scrubs each event of the run's secrets once, and the crates below it
/// (the checks, the settings, explore, the upstreams, bless) return what happened and print
/// nothing. A print macro, or a write to the process's standard output or error, anywhere else
/// is a path around that one scrub.
#[test]
fn only_the_reporter_and_the_command_line_print() {
    let writes = [
        "print!(",
        "println!(",
        "eprint!(",
        "eprintln!(",
        "io::stdout()",
        "io::stderr()",
    ];
    let mut wrong = Vec::new();
    for name in [
        "holon-harness",
        "holon-core",
        "holon-config",
        "holon-explore",
        "holon-upstream",
        "holon-bless",
    ] {
        for file in rust_files(&root().join("crates").join(name).join("src")) {
            if file.ends_with("holon-harness/src/reporter.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a source file");
            for (i, line) in text.lines().enumerate() {
                // Whether standard error is a terminal decides colour; nothing is written.
                let line = line.replace("std::io::stderr().is_terminal()", "");
                if let Some(write) = writes.iter().find(|w| line.contains(*w)) {
                    let shown = file
                        .strip_prefix(root())
                        .unwrap_or(&file)
                        .display()
                        .to_string();
                    wrong.push(format!("{shown}:{}: `{write}`", i + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "written around the reporter (emit a `reporter::Event` instead):\n{}",
        wrong.join("\n")
    );
}

/// Every benchmark has its own `main` (it measures whole runs against a peer): each
/// `[[bench]]` says `harness = false`, or cargo builds it with libtest's and it runs nothing.
#[test]
fn every_benchmark_runs_its_own_main() {
    let manifest =
        std::fs::read_to_string(crate::util::root().join("Cargo.toml")).expect("Cargo.toml");
    let mut wrong = Vec::new();
    for section in manifest.split("[[bench]]").skip(1) {
        // The section ends at the next table.
        let body = section.split("\n[").next().unwrap_or_default();
        let name = (body.lines())
            .find_map(|l| l.trim().strip_prefix("name = "))
            .unwrap_or("(no name)");
        if !body.lines().any(|l| l.trim() == "harness = false") {
            wrong.push(name.to_string());
        }
    }
    assert!(
        manifest.contains("[[bench]]"),
        "the benchmarks were not found in Cargo.toml"
    );
    assert!(wrong.is_empty(), "without `harness = false`: {wrong:?}");
}

/// What every agent's production build compiles, the runtime and holon-core below it, holds
/// what the registry and the gateway decide, and nothing of a test run: no `holon-config`, no
/// `toml` among its normal dependencies.
#[test]
fn the_runtime_an_agent_ships_carries_nothing_of_a_test_run() {
    let out = crate::util::cargo()
        .current_dir(crate::util::root())
        .args([
            "tree",
            "-p",
            "holon-runtime",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.lines().any(|l| l.starts_with("holon-core ")), "{tree}");
    let carried: Vec<&str> = (tree.lines())
        .filter(|l| l.starts_with("toml ") || l.starts_with("holon-config "))
        .collect();
    assert!(carried.is_empty(), "{carried:?} in:\n{tree}");
}

/// The top-level module a file of `src/` belongs to (`lib` for `lib.rs` and `main.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("a file of src/");
    let first = rel
        .components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .unwrap_or_default();
    first
        .strip_suffix(".rs")
        .unwrap_or(first)
        .replace("main", "lib")
}

/// What `lib.rs` re-exports at the root, by name: the module each name comes from.
fn root_exports(lib: &Source) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let re = regex::Regex::new(r"use\s+([a-z_]+)::(\{[^}]*\}|[A-Za-z_]+)").expect("regex");
    for c in re.captures_iter(&lib.code) {
        let module = c[1].to_string();
        let names = c[2].trim_matches(['{', '}']);
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or_default().trim();
            if !name.is_empty() && name != "self" {
                out.insert(name.to_string(), module.clone());
            }
        }
    }
    out
}

#[test]
fn modules_name_only_the_modules_below_them() {
    let layers = layers();
    let single = regex::Regex::new(r"\b(crate|super)::([A-Za-z_]\w*)").expect("regex");
    let grouped = regex::Regex::new(r"\b(crate|super)::\{([^}]*)\}").expect("regex");
    let relative = regex::Regex::new(r"\b([a-z_]\w*)::").expect("regex");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (krate, groups) in &layers {
        if krate == "workspace" || krate.contains("::") {
            continue;
        }
        let src = root().join("crates").join(krate).join("src");
        let files = rust_files(&src);
        assert!(!files.is_empty(), "no source for `{krate}` in the layers");
        let lib = Source::read(&src.join("lib.rs"));
        let exports = root_exports(&lib);
        let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
        for module in &modules {
            if group_of(groups, module).is_none() {
                wrong.push(format!(
                    "`{krate}`: module `{module}` has no place in the layers"
                ));
            }
        }
        let target = |name: &str| -> String {
            if modules.contains(name) {
                name.to_string()
            } else {
                exports.get(name).cloned().unwrap_or_else(|| "lib".into())
            }
        };
        for file in &files {
            let source = Source::read(file);
            let module = module_of(&src, file);
            // `super::` names the root from a file directly in `src/` only.
            let top = file.parent() == Some(src.as_path());
            let mut names: Vec<(usize, String)> = Vec::new();
            for c in single.captures_iter(&source.code) {
                let at = c.get(0).map_or(0, |m| m.start());
                // `$crate::` in a macro names the macro's own crate, not a module.
                let in_macro = at > 0 && source.code.as_bytes()[at - 1] == b'$';
                if (&c[1] == "crate" || top) && !in_macro {
                    names.push((at, c[2].to_string()));
                }
            }
            // At the root, a path that starts with a module's name names that module.
            if module == "lib" {
                for c in relative.captures_iter(&source.code) {
                    let at = c.get(1).map_or(0, |m| m.start());
                    let before = source.code[..at].trim_end();
                    let is_path = before.ends_with("::") || before.ends_with('$');
                    if modules.contains(&c[1]) && !is_path && !before.ends_with("mod") {
                        names.push((at, c[1].to_string()));
                    }
                }
            }
            for c in grouped.captures_iter(&source.code) {
                if &c[1] == "crate" || top {
                    let at = c.get(0).map_or(0, |m| m.start());
                    names.extend(first_names(&c[2]).map(|name| (at, name)));
                }
            }
            for (at, name) in names {
                if source.in_test(at) {
                    continue;
                }
                checked += 1;
                let other = target(&name);
                if other == module {
                    continue;
                }
                let (Some(mine), Some(theirs)) =
                    (group_of(groups, &module), group_of(groups, &other))
                else {
                    continue;
                };
                if theirs >= mine {
                    wrong.push(format!(
                        "{}:{}: `{module}` names `{name}` (in `{other}`), which is not below it",
                        source.shown(),
                        source.line(at)
                    ));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} references read: the parser is broken"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The first name of each path in a `{a::b, c}` list: `a`, `c`.
fn first_names(list: &str) -> impl Iterator<Item = String> + '_ {
    list.split(',')
        .map(|part| {
            part.trim()
                .split("::")
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .filter(|first| !first.is_empty())
}

/// The folder modules of `src` at every depth, as paths from `src` (`mcp`, `recording`), with
/// their files: each child module a file directly in the folder (its stem; `mod` for the
/// folder's own `mod.rs`) or a folder of its own (its name). Test modules (`tests.rs`) are not
/// children; a folder whose only files are tests is not a folder module.
fn folder_modules(src: &Path) -> BTreeMap<String, Vec<(String, PathBuf)>> {
    let mut out: BTreeMap<String, Vec<(String, PathBuf)>> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).expect("a file of src/");
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        // Every folder this file is under, each with the child the file belongs to.
        for depth in 1..parts.len() {
            let folder = parts[..depth].join("::");
            let child = &parts[depth];
            let child = child.strip_suffix(".rs").unwrap_or(child).to_string();
            out.entry(folder).or_default().push((child, file.clone()));
        }
    }
    // A folder that holds only its `mod.rs` has no modules to order.
    out.retain(|_, children| children.iter().any(|(c, _)| c != "mod"));
    out
}

/// What a folder module's `mod.rs` (or the file beside the folder) re-exports, by name: the
/// child each name comes from.
fn folder_exports(parent: &Source) -> BTreeMap<String, String> {
    root_exports(parent)
}

#[test]
fn the_modules_of_every_folder_name_only_the_modules_below_them() {
    let layers = layers();
    let single = regex::Regex::new(r"\bsuper::([A-Za-z_]\w*)").expect("regex");
    let grouped = regex::Regex::new(r"\bsuper::\{([^}]*)\}").expect("regex");
    let mut wrong = Vec::new();
    let mut folders = 0;
    let mut checked = 0;
    let crates: Vec<&String> = (layers.keys())
        .filter(|k| *k != "workspace" && !k.contains("::"))
        .collect();
    for krate in crates {
        let src = root().join("crates").join(krate).join("src");
        for (folder, children) in folder_modules(&src) {
            folders += 1;
            let key = format!("{krate}::{folder}");
            let Some(groups) = layers.get(&key) else {
                wrong.push(format!(
                    "`{key}` (a folder module) has no line in the layers"
                ));
                continue;
            };
            let dir = src.join(folder.replace("::", "/"));
            let parent = match dir.join("mod.rs") {
                inside if inside.is_file() => inside,
                _ => dir.with_extension("rs"),
            };
            let exports = if parent.is_file() {
                folder_exports(&Source::read(&parent))
            } else {
                BTreeMap::new()
            };
            let names: BTreeSet<String> = children.iter().map(|(c, _)| c.clone()).collect();
            for name in &names {
                if name != "mod" && group_of(groups, name).is_none() {
                    wrong.push(format!(
                        "`{key}`: module `{name}` has no place in the layers"
                    ));
                }
            }
            let full = regex::Regex::new(&format!(
                r"\bcrate::{}::(\{{[^}}]*\}}|[A-Za-z_]\w*)",
                regex::escape(&folder)
            ))
            .expect("regex");
            let target = |name: &str| -> String {
                if names.contains(name) {
                    name.to_string()
                } else {
                    exports.get(name).cloned().unwrap_or_else(|| "mod".into())
                }
            };
            let top = groups.len();
            let group = |name: &str| {
                if name == "mod" {
                    Some(top)
                } else {
                    group_of(groups, name)
                }
            };
            for (module, file) in &children {
                let source = Source::read(file);
                // `super::` names the folder's own modules from a file directly in it (from a
                // deeper file or `mod.rs` it names something else).
                let direct = file.parent() == Some(dir.as_path()) && module != "mod";
                let mut named: Vec<(usize, String)> = Vec::new();
                if direct {
                    for c in single.captures_iter(&source.code) {
                        named.push((c.get(0).map_or(0, |m| m.start()), c[1].to_string()));
                    }
                    for c in grouped.captures_iter(&source.code) {
                        let at = c.get(0).map_or(0, |m| m.start());
                        named.extend(first_names(&c[1]).map(|name| (at, name)));
                    }
                }
                for c in full.captures_iter(&source.code) {
                    let at = c.get(0).map_or(0, |m| m.start());
                    let list = c[1].trim_matches(['{', '}']).to_string();
                    named.extend(first_names(&list).map(|name| (at, name)));
                }
                for (at, name) in named {
                    if source.in_test(at) || name == "super" || name == "self" {
                        continue;
                    }
                    checked += 1;
                    let other = target(&name);
                    if &other == module {
                        continue;
                    }
                    let (Some(mine), Some(theirs)) = (group(module), group(&other)) else {
                        continue;
                    };
                    if theirs >= mine {
                        wrong.push(format!(
                            "{}:{}: `{key}::{module}` names `{name}` (in `{other}`), which is not below it",
                            source.shown(),
                            source.line(at)
                        ));
                    }
                }
            }
        }
    }
    assert!(
        folders >= 4,
        "only {folders} folder modules found: the reader is broken"
    );
    assert!(
        checked > 5,
        "only {checked} references read: the parser is broken"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The `Result<_, String>` the harness's crates may keep, each with why its error is words and
/// not a type: (file, how many, why).
const STRING_ERRORS: [(&str, usize, &str); 4] = [
    (
        "crates/holon-explore/src/generate.rs",
        1,
        "the regex parser's and proptest's own words for a pattern they cannot draw from, kept as `Unservable::Pattern`'s reason",
    ),
    (
        "crates/holon-upstream/src/call.rs",
        1,
        "a real service's failure in a record run, its error chain in words, cloned to every pass that made the same request",
    ),
    (
        "crates/holon-upstream/src/proxy.rs",
        3,
        "the same words, where the proxy asks the real service (`forward`, `record`, and `live`, which sends on what the agent gave up on)",
    ),
    (
        "crates/holon-bless/src/collect.rs",
        1,
        "why an answer may never be an example, the line `--bless` prints for it",
    ),
];

#[test]
fn the_harness_says_its_errors_with_types_but_where_the_list_says_why() {
    let result = regex::Regex::new(r"Result<((?:[^<>;{]|<(?:[^<>]|<[^<>]*>)*>)*?),\s*String\s*>")
        .expect("regex");
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for dir in HARNESS {
        for file in rust_files(&root().join(dir)) {
            let source = Source::read(&file);
            for m in result.find_iter(&source.code) {
                if !source.in_test(m.start()) {
                    *found.entry(source.shown()).or_default() += 1;
                }
            }
        }
    }
    let allowed: BTreeMap<String, usize> = (STRING_ERRORS.iter())
        .map(|(file, n, _)| (file.to_string(), *n))
        .collect();
    assert_eq!(
        found, allowed,
        "`Result<_, String>` where a typed error belongs"
    );
    let total: usize = allowed.values().sum();
    assert!(total <= 10, "{total} string errors left");
}

/// The longest a shipped source file may be: past it, a file holds more than one job. The RE2
/// parser is a port of one file of RE2's, kept whole to follow it decision by decision.
const LONGEST_FILE: usize = 800;

#[test]
fn no_shipped_file_is_longer_than_the_limit_but_the_re2_parser() {
    let exempt = Path::new("crates/holon-re2/src/parser.rs");
    let mut wrong = Vec::new();
    for source in shipped() {
        let lines = source.code.lines().count();
        if lines > LONGEST_FILE && !source.path.ends_with(exempt) {
            wrong.push(format!("{}: {lines} lines", source.shown()));
        }
    }
    assert!(
        wrong.is_empty(),
        "over {LONGEST_FILE} lines:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn each_reserved_code_is_spelled_in_one_file() {
    let home = Path::new("crates/holon-core/src/gateway/status.rs");
    let codes: Vec<&str> = holon_core::gateway::Status::RESERVED
        .iter()
        .map(|s| s.code())
        .collect();
    assert_eq!(codes.len(), 7);
    // A code with an underscore is never an English word: any whole-word use spells it. The one
    // that is a word (`timeout`) is a code when it is the whole literal, in backticks, or a
    // status.
    let words: Vec<regex::Regex> = codes
        .iter()
        .map(|c| {
            let pattern = if c.contains('_') {
                format!(r"\b{c}\b")
            } else {
                format!(r"^{c}$|`{c}`|status: {c}\b")
            };
            regex::Regex::new(&pattern).expect("regex")
        })
        .collect();
    let mut wrong = Vec::new();
    let mut home_has = BTreeSet::new();
    for source in shipped() {
        let is_home = source.path.ends_with(home);
        for (at, literal) in &source.strings {
            if source.in_test(*at) {
                continue;
            }
            for (code, word) in codes.iter().zip(&words) {
                if word.is_match(literal) {
                    if is_home {
                        home_has.insert(*code);
                    } else {
                        wrong.push(format!(
                            "{}:{}: `{code}` spelled in \"{}\"",
                            source.shown(),
                            source.line(*at),
                            literal.chars().take(80).collect::<String>()
                        ));
                    }
                }
            }
        }
    }
    assert_eq!(
        home_has.len(),
        7,
        "`{}` spells {home_has:?}",
        home.display()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The harness's files that may call Unix-only functions, as ARCHITECTURE.md says.
const UNIX_ONLY: [&str; 2] = ["supervise.rs", "strays.rs"];

#[test]
fn only_supervise_and_strays_call_unix_only_functions() {
    let src = root().join("crates/holon-harness/src");
    let calls = [
        "libc::",
        "std::os::unix",
        "std::os::fd",
        "signal::unix",
        "CommandExt",
        "pre_exec",
    ];
    let mut wrong = Vec::new();
    for file in rust_files(&src) {
        let source = Source::read(&file);
        let allowed = file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| UNIX_ONLY.contains(&n));
        for call in calls {
            for (at, _) in source.code.match_indices(call) {
                if !allowed && !source.in_test(at) {
                    wrong.push(format!("{}:{}: `{call}`", source.shown(), source.line(at)));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn tests_read_proc_only_behind_a_linux_gate() {
    // CI runs the tests on macOS too, which has no `/proc`.
    let mut wrong = Vec::new();
    let mut gated = 0;
    // This file names what it looks for.
    let rules = root().join("tests/it/tidy.rs");
    for file in rust_files(&root().join("tests")) {
        if file == rules {
            continue;
        }
        let source = Source::read(&file);
        let linux = linux_ranges(&source);
        for (at, literal) in &source.strings {
            if !literal.starts_with("/proc") {
                continue;
            }
            if linux.iter().any(|(a, b)| (*a..*b).contains(at)) {
                gated += 1;
            } else {
                wrong.push(format!(
                    "{}:{}: `{literal}` outside `#[cfg(target_os = \"linux\")]`",
                    source.shown(),
                    source.line(*at)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(gated > 0, "no read of `/proc` found: the reader is broken");
}

/// Where the harness may sleep, as ARCHITECTURE.md says: polls with backoff under a limit,
/// and the function pass's watchdog. Anything else waits on an event.
const SLEEPS: [(&str, &str); 6] = [
    ("process.rs", "wait_ready"),
    ("eras.rs", "first_answer"),
    ("process.rs", "wait_exit"),
    ("process.rs", "stop"),
    ("process.rs", "stop_all"),
    ("supervise.rs", "watch"),
];

/// The crates of the harness, which the rules about waiting read.
const HARNESS: [&str; 4] = [
    "crates/holon-harness/src",
    "crates/holon-explore/src",
    "crates/holon-upstream/src",
    "crates/holon-bless/src",
];

#[test]
fn the_harness_sleeps_only_where_architecture_says() {
    let files = HARNESS.iter().flat_map(|dir| rust_files(&root().join(dir)));
    let mut wrong = Vec::new();
    let mut found = BTreeSet::new();
    for file in files {
        let source = Source::read(&file);
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        for call in ["thread::sleep", "time::sleep", "nanosleep"] {
            for (at, _) in source.code.match_indices(call) {
                if source.in_test(at) {
                    continue;
                }
                let function = source.function_at(at);
                if SLEEPS.contains(&(name.as_str(), function.as_str())) {
                    found.insert((name.clone(), function));
                } else {
                    wrong.push(format!(
                        "{}:{}: `{call}` in `{function}`",
                        source.shown(),
                        source.line(at)
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The list holds no place that no longer sleeps.
    assert_eq!(found.len(), SLEEPS.len(), "{found:?}");
}

#[test]
fn the_environment_is_set_in_one_place() {
    let mut found = Vec::new();
    for source in shipped() {
        for call in ["set_var(", "remove_var("] {
            for (at, _) in source.code.match_indices(call) {
                if !source.in_test(at) {
                    found.push(format!(
                        "{}:{}: `{call}` in `{}`",
                        source.shown(),
                        source.line(at),
                        source.function_at(at)
                    ));
                }
            }
        }
    }
    assert_eq!(found.len(), 1, "{}", found.join("\n"));
    assert!(
        found
            .iter()
            .all(|f| f.starts_with("crates/holon-upstream/src/upstreams.rs:")
                && f.ends_with("in `set_before_threads`")),
        "{}",
        found.join("\n")
    );
}

/// The words of a name: `max_input_bytes` and `MaxInputBytes` are `max input bytes`.
fn words_of_name(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for c in name.chars() {
        if (c == '_' || c.is_uppercase()) && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c != '_' {
            word.extend(c.to_lowercase());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[test]
fn no_doc_comment_only_restates_its_name() {
    let item = regex::Regex::new(
        r"^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:(?:async|const|unsafe)\s+)*(?:fn|struct|enum|trait|type|const|static|mod)\s+([A-Za-z_]\w*)|^\s*(?:pub(?:\([a-z]+\))?\s+)?([a-z_]\w*)\s*:|^\s*([A-Z]\w*)\s*[,({]",
    )
    .expect("regex");
    let filler = ["the", "a", "an", "its", "this", "of", "it"];
    let mut wrong = Vec::new();
    for source in shipped() {
        let text = std::fs::read_to_string(&source.path).expect("source");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(doc) = line.trim_start().strip_prefix("///") else {
                continue;
            };
            // A one-line comment, directly on its item (attributes between are fine).
            let previous_is_doc = i > 0 && lines[i - 1].trim_start().starts_with("///");
            let mut next = i + 1;
            while lines
                .get(next)
                .is_some_and(|l| l.trim_start().starts_with("#["))
            {
                next += 1;
            }
            let Some(item_line) = lines.get(next) else {
                continue;
            };
            if previous_is_doc || item_line.trim_start().starts_with("///") {
                continue;
            }
            let Some(c) = item.captures(item_line) else {
                continue;
            };
            let Some(name) = c.get(1).or(c.get(2)).or(c.get(3)) else {
                continue;
            };
            let said: Vec<String> = doc
                .split(|ch: char| !ch.is_alphanumeric() && ch != '_')
                .map(str::to_lowercase)
                .filter(|w| !w.is_empty() && !filler.contains(&w.as_str()))
                .collect();
            if !said.is_empty() && said == words_of_name(name.as_str()) {
                wrong.push(format!(
                    "{}:{}: `///{doc}` only restates `{}`",
                    source.shown(),
                    i + 1,
                    name.as_str()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_lexer_blanks_literals_and_comments() {
    let (code, strings) = lex(
        "let a = \"x // y\"; // \"z\"\nlet b = r#\"q\"#; let c = 'c'; fn f<'a>() {} /* \"w\" */",
    );
    assert_eq!(
        strings.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>(),
        ["x // y", "q"]
    );
    assert!(code.contains("fn f<'a>()"), "{code}");
    assert!(!code.contains('"'), "{code}");
    let ranges = test_ranges("fn a() {}\n#[cfg(test)]\nmod tests { fn b() { } }\nfn c() {}");
    assert_eq!(ranges.len(), 1);
    assert_eq!(words_of_name("MaxInputBytes"), ["max", "input", "bytes"]);
    assert_eq!(words_of_name("max_input_bytes"), ["max", "input", "bytes"]);
}

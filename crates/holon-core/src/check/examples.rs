//! Examples: named, unique, one outcome each, within the bounds, valid against the schemas.

use std::collections::{HashMap, HashSet};

use jsonschema::Validator;
use serde_json::Value;

use super::collect::Diagnostics;
use super::diagnostic::dotted;
use super::structure::RawExample;
use crate::gateway::{bounds, schema};
use crate::ids;
use crate::json::size as json_size;
use crate::manifest::{ErrorDecl, Example, Expect, Limits};

/// How many declared codes an undeclared one is compared with for a "did you mean".
const SUGGESTED_AMONG: usize = 1000;

/// What the example checks need besides the examples.
pub struct Context<'a> {
    pub input: Option<&'a Validator>,
    pub output: Option<&'a Validator>,
    pub errors: &'a [(usize, ErrorDecl)],
    /// Whether `interface.errors` was readable (an undeclared code is only reported then).
    pub errors_known: bool,
    pub limits: Option<Limits>,
    /// The `files/` folder beside the manifest, when the manifest is a file on disk: every
    /// `holon://files/NAME` in an input must name a file in it.
    pub files_dir: Option<&'a std::path::Path>,
}

/// Checks every example and returns those complete enough to run; `given` is whether the
/// manifest has `examples` at all (when not, the structure pass said so).
pub fn check(
    given: bool,
    examples: &[RawExample],
    cx: &Context,
    out: &mut Diagnostics,
) -> Vec<Example> {
    let declared: HashSet<&str> = cx.errors.iter().map(|(_, d)| d.code.as_str()).collect();
    // Whether each handle's file exists, asked of the file system once a name.
    let mut files: HashMap<String, bool> = HashMap::new();
    let mut checked = Vec::with_capacity(examples.len());
    let mut successes = 0;
    let mut first_by_name: HashMap<&str, usize> = HashMap::new();
    for ex in examples {
        let ptr = format!("/examples/{}", ex.index);
        let label = match &ex.name {
            Some(n) => format!("example `{n}`"),
            None => format!("`examples[{}]`", ex.index),
        };
        name(ex, &ptr, &mut first_by_name, out);
        if ex.input.is_none() {
            out.error(
                ids::EXAMPLE_INPUT_MISSING,
                format!("{ptr}/input"),
                format!("{label} has no `input`"),
            );
        }
        if outcome(ex, &ptr, &label, out) {
            successes += 1;
        }
        if let Some(input) = &ex.input {
            let at = format!("{ptr}/input");
            if let Some(dir) = cx.files_dir {
                file_handles(input, &at, dir, &mut files, out);
            }
            input_payload(input, &at, &label, cx, out);
        }
        if let Some(output) = &ex.output {
            let at = format!("{ptr}/output");
            payload(output, &at, &label, "output", cx.output, out);
        }
        if let Some(code) = &ex.error
            && cx.errors_known
            && !declared.contains(code.as_str())
        {
            undeclared(code, &format!("{ptr}/error"), &label, cx.errors, out);
        }
        checked.extend(runnable(ex));
    }
    // No `examples` at all is the structure pass's to say.
    if successes == 0 && given {
        out.error(ids::NO_SUCCESS_EXAMPLE, "/examples", "the manifest has no successful example")
            .hint("add at least one example with an `output`: it is what a caller reads to see a good run");
    }
    checked
}

/// Whether the example at `ptr` has a key `key`, whatever its value (a key of the wrong type
/// was reported as `wrong-type`: it is not missing).
fn present(out: &Diagnostics, ptr: &str, key: &str) -> bool {
    out.has_key(ptr, key)
}

/// Every example has a name, not empty, and no two share one.
fn name<'e>(
    ex: &'e RawExample,
    ptr: &str,
    first_by_name: &mut HashMap<&'e str, usize>,
    out: &mut Diagnostics,
) {
    let at = format!("{ptr}/name");
    match &ex.name {
        None if present(out, ptr, "name") => {}
        None => {
            out.error(
                ids::EXAMPLE_NAME_MISSING,
                at,
                format!("`examples[{}]` has no `name`", ex.index),
            );
        }
        Some(n) if n.trim().is_empty() => {
            out.error(
                ids::EXAMPLE_NAME_MISSING,
                at,
                format!("`examples[{}]` has an empty `name`", ex.index),
            );
        }
        Some(n) => {
            if let Some(first) = first_by_name.get(n.as_str()) {
                out.error(
                    ids::EXAMPLE_NAME_DUPLICATE,
                    at,
                    format!("example name `{n}` is used twice (first at `examples[{first}]`)"),
                )
                .hint("trials are named after examples; give each a unique name");
            } else {
                first_by_name.insert(n, ex.index);
            }
        }
    }
}

/// Exactly one of `output` and `error`; returns whether the example is a success.
fn outcome(ex: &RawExample, ptr: &str, label: &str, out: &mut Diagnostics) -> bool {
    match (
        ex.output.is_some(),
        ex.error.is_some() || present(out, ptr, "error"),
    ) {
        (true, true) => {
            out.error(
                ids::EXAMPLE_OUTCOME,
                format!("{ptr}/error"),
                format!("{label} has both `output` and `error`"),
            )
            .hint("an example either succeeds with an `output` or fails with an `error` code");
            false
        }
        (false, false) => {
            out.error(ids::EXAMPLE_OUTCOME, ptr, format!("{label} has neither `output` nor `error`"))
                .hint("add the exact `output` the agent returns, or the declared `error` code it fails with");
            false
        }
        (true, false) => true,
        (false, true) => false,
    }
}

/// The input's bounds and schema, then its size against `runtime.limits.max_input_bytes`.
fn input_payload(input: &Value, at: &str, label: &str, cx: &Context, out: &mut Diagnostics) {
    let within_bounds = payload(input, at, label, "input", cx.input, out);
    if let Some(limits) = cx.limits {
        let size = json_size(input);
        if size > limits.max_input_bytes && within_bounds {
            out.error(ids::INPUT_TOO_LARGE, at, format!("the input of {label} is {size} bytes, over `runtime.limits.max_input_bytes` ({})", limits.max_input_bytes))
                .hint("raise `max_input_bytes` or shorten the example");
        }
    }
}

/// An example that fails with a code `interface.errors` does not declare.
fn undeclared(
    code: &str,
    at: &str,
    label: &str,
    errors: &[(usize, ErrorDecl)],
    out: &mut Diagnostics,
) {
    let added = out.error(
        ids::EXAMPLE_ERROR_UNDECLARED,
        at,
        format!("{label} fails with `{code}`, which is not declared in `interface.errors`"),
    );
    // A "did you mean" compares the code with each declared one: only for a listed problem,
    // and only among a list one could read.
    if !added.listed() {
        return;
    }
    let declared: Vec<&str> = (errors.iter().take(SUGGESTED_AMONG))
        .map(|(_, d)| d.code.as_str())
        .collect();
    match super::structure::suggest(code, &declared) {
        Some(s) => added.hint(format!("did you mean `{s}`?")),
        None => added.hint("declare it under `interface.errors` with a description"),
    }
}

/// The example as the harness runs it, when it has a name, an input and one outcome.
fn runnable(ex: &RawExample) -> Option<Example> {
    let (name, input) = (ex.name.as_ref()?, ex.input.as_ref()?);
    let expect = match (&ex.output, &ex.error) {
        (Some(o), None) => Expect::Output(o.clone()),
        (None, Some(e)) => Expect::Error(e.clone()),
        _ => return None,
    };
    Some(Example {
        name: name.clone(),
        input: input.clone(),
        expect,
    })
}

/// Every `holon://files/NAME` string in an example input names a file inside `files/`;
/// `exists` keeps what the file system said of each name.
fn file_handles(
    input: &Value,
    ptr: &str,
    dir: &std::path::Path,
    exists: &mut HashMap<String, bool>,
    out: &mut Diagnostics,
) {
    use crate::gateway::handles::{HANDLE_PREFIX, handle_name};
    let mut stack = vec![(ptr.to_string(), input)];
    while let Some((at, value)) = stack.pop() {
        match value {
            Value::String(s) if s.starts_with(HANDLE_PREFIX) => match handle_name(s) {
                Err(why) => out.error(ids::FILE_HANDLE_ESCAPE, at, format!("file handle `{s}` is refused: {why}"))
                    .hint("a handle names a file inside `files/` beside the manifest, e.g. `holon://files/report.pdf`"),
                Ok(name) => {
                    let found = match exists.get(name) {
                        Some(found) => *found,
                        None => *exists
                            .entry(name.to_string())
                            .or_insert_with(|| dir.join(name).is_file()),
                    };
                    if !found {
                        out.error(ids::FILE_HANDLE_MISSING, at, format!("file handle `{s}` has no file: `files/{name}` does not exist"))
                            .hint("the tests serve `holon://files/NAME` from `files/NAME` beside the manifest");
                    }
                }
            },
            Value::Array(items) => stack.extend(items.iter().enumerate().map(|(i, v)| (format!("{at}/{i}"), v))),
            Value::Object(map) => stack.extend(map.iter().map(|(k, v)| (crate::pointer::child(&at, k), v))),
            _ => {}
        }
    }
}

/// Checks a payload's bounds, then its schema; returns whether it is within the bounds.
fn payload(
    value: &Value,
    ptr: &str,
    label: &str,
    what: &str,
    validator: Option<&Validator>,
    out: &mut Diagnostics,
) -> bool {
    if let Err(e) = bounds::check(value) {
        out.error(
            e.check_id(),
            format!("{ptr}{}", e.pointer()),
            format!("the {what} of {label} {e}"),
        )
        .hint(
            "the gateway refuses payloads past 64 levels, 200000 values or arrays of 10000 items",
        );
        return false;
    }
    let Some(validator) = validator else {
        return true;
    };
    let check = if what == "input" {
        ids::EXAMPLE_INPUT_INVALID
    } else {
        ids::EXAMPLE_OUTPUT_INVALID
    };
    let schema_name = if what == "input" {
        "interface.input"
    } else {
        "interface.output"
    };
    // Past what the check lists, the first violation is enough: the payload counts as at
    // least one more problem, without collecting every one (a schema can require a million
    // properties, and each example miss them all).
    let found = if out.full(check) {
        out.counted_in_part(check);
        schema::first_violations(validator, value)
    } else {
        schema::violations(validator, value)
    };
    for v in found {
        let at = format!("{ptr}{}", v.pointer);
        let message = format!(
            "`{}` does not match `{schema_name}`: {}",
            dotted(&at),
            v.message
        );
        out.error(check, at, message);
    }
    true
}

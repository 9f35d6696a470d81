//! Examples: named, unique, one outcome each, within the bounds, valid against the schemas.

use jsonschema::Validator;

use super::diagnostic::{Diagnostic, dotted};
use super::structure::RawExample;
use crate::gateway::{bounds, json_size, schema};
use crate::manifest::yaml::Node;
use crate::manifest::{ErrorDecl, Example, Expect, Limits};

/// What the example checks need besides the examples.
pub struct Context<'a> {
    pub root: &'a Node,
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

/// Checks every example and returns those complete enough to run.
pub fn check(examples: &[RawExample], cx: &Context, out: &mut Vec<Diagnostic>) -> Vec<Example> {
    let root = cx.root;
    let mut checked = Vec::with_capacity(examples.len());
    let mut successes = 0;
    let mut first_by_name: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::new();
    for ex in examples {
        let ptr = format!("/examples/{}", ex.index);
        let loc = root.locate(&ptr);
        let label = match &ex.name {
            Some(n) => format!("example `{n}`"),
            None => format!("`examples[{}]`", ex.index),
        };
        // A key that is there with the wrong type was reported as `wrong-type`; it is not missing.
        let present = |key: &str| root.locate_key(&ptr, key).is_some();
        match &ex.name {
            None if present("name") => {}
            None => out.push(Diagnostic::error(
                "example-name-missing",
                format!("{ptr}/name"),
                loc,
                format!("`examples[{}]` has no `name`", ex.index),
            )),
            Some(n) if n.trim().is_empty() => {
                let at = format!("{ptr}/name");
                out.push(Diagnostic::error(
                    "example-name-missing",
                    &at,
                    root.locate(&at),
                    format!("`examples[{}]` has an empty `name`", ex.index),
                ));
            }
            Some(n) => {
                if let Some(first) = first_by_name.get(n.as_str()) {
                    let at = format!("{ptr}/name");
                    out.push(
                        Diagnostic::error(
                            "example-name-duplicate",
                            &at,
                            root.locate(&at),
                            format!(
                                "example name `{n}` is used twice (first at `examples[{first}]`)"
                            ),
                        )
                        .with_hint("trials are named after examples; give each a unique name"),
                    );
                } else {
                    first_by_name.insert(n, ex.index);
                }
            }
        }
        if ex.input.is_none() {
            out.push(Diagnostic::error(
                "example-input-missing",
                format!("{ptr}/input"),
                loc,
                format!("{label} has no `input`"),
            ));
        }
        match (ex.output.is_some(), ex.error.is_some() || present("error")) {
            (true, true) => {
                let at = format!("{ptr}/error");
                out.push(
                    Diagnostic::error("example-outcome", &at, root.locate(&at), format!("{label} has both `output` and `error`"))
                        .with_hint("an example either succeeds with an `output` or fails with an `error` code"),
                );
            }
            (false, false) => out.push(
                Diagnostic::error("example-outcome", &ptr, loc, format!("{label} has neither `output` nor `error`"))
                    .with_hint("add the exact `output` the agent returns, or the declared `error` code it fails with"),
            ),
            (true, false) => successes += 1,
            (false, true) => {}
        }
        if let (Some(input), Some(dir)) = (&ex.input, cx.files_dir) {
            file_handles(input, &format!("{ptr}/input"), dir, root, out);
        }
        if let Some(input) = &ex.input {
            let within_bounds = payload(
                input,
                &format!("{ptr}/input"),
                &label,
                "input",
                cx.input,
                root,
                out,
            );
            if let Some(limits) = cx.limits {
                let size = json_size(input);
                if size > limits.max_input_bytes && within_bounds {
                    let at = format!("{ptr}/input");
                    out.push(
                        Diagnostic::error("input-too-large", &at, root.locate(&at), format!("the input of {label} is {size} bytes, over `runtime.limits.max_input_bytes` ({})", limits.max_input_bytes))
                            .with_hint("raise `max_input_bytes` or shorten the example"),
                    );
                }
            }
        }
        if let Some(output) = &ex.output {
            payload(
                output,
                &format!("{ptr}/output"),
                &label,
                "output",
                cx.output,
                root,
                out,
            );
        }
        if let Some(code) = &ex.error
            && cx.errors_known
            && !cx.errors.iter().any(|(_, d)| d.code == *code)
        {
            let at = format!("{ptr}/error");
            let declared: Vec<&str> = cx.errors.iter().map(|(_, d)| d.code.as_str()).collect();
            let d = Diagnostic::error(
                "example-error-undeclared",
                &at,
                root.locate(&at),
                format!("{label} fails with `{code}`, which is not declared in `interface.errors`"),
            );
            out.push(match super::structure::suggest(code, &declared) {
                Some(s) => d.with_hint(format!("did you mean `{s}`?")),
                None => d.with_hint("declare it under `interface.errors` with a description"),
            });
        }
        if let (Some(name), Some(input)) = (&ex.name, &ex.input) {
            let expect = match (&ex.output, &ex.error) {
                (Some(o), None) => Some(Expect::Output(o.clone())),
                (None, Some(e)) => Some(Expect::Error(e.clone())),
                _ => None,
            };
            if let Some(expect) = expect {
                checked.push(Example {
                    name: name.clone(),
                    input: input.clone(),
                    expect,
                });
            }
        }
    }
    if successes == 0 {
        let at = "/examples";
        out.push(
            Diagnostic::error("no-success-example", at, root.locate(at), "the manifest has no successful example")
                .with_hint("add at least one example with an `output`: it is what a caller reads to see a good run"),
        );
    }
    checked
}

/// Every `holon://files/NAME` string in an example input names a file inside `files/`.
fn file_handles(
    input: &serde_json::Value,
    ptr: &str,
    dir: &std::path::Path,
    root: &Node,
    out: &mut Vec<Diagnostic>,
) {
    use crate::gateway::handles::{HANDLE_PREFIX, handle_name};
    use serde_json::Value;
    let mut stack = vec![(ptr.to_string(), input)];
    while let Some((at, value)) = stack.pop() {
        match value {
            Value::String(s) if s.starts_with(HANDLE_PREFIX) => match handle_name(s) {
                Err(why) => out.push(
                    Diagnostic::error("file-handle-escape", &at, root.locate(&at), format!("file handle `{s}` is refused: {why}"))
                        .with_hint("a handle names a file inside `files/` beside the manifest, e.g. `holon://files/report.pdf`"),
                ),
                Ok(name) => {
                    if !dir.join(name).is_file() {
                        out.push(
                            Diagnostic::error("file-handle-missing", &at, root.locate(&at), format!("file handle `{s}` has no file: `files/{name}` does not exist"))
                                .with_hint("the tests serve `holon://files/NAME` from `files/NAME` beside the manifest"),
                        );
                    }
                }
            },
            Value::Array(items) => stack.extend(items.iter().enumerate().map(|(i, v)| (format!("{at}/{i}"), v))),
            Value::Object(map) => stack.extend(map.iter().map(|(k, v)| (format!("{at}/{}", bounds::escape(k)), v))),
            _ => {}
        }
    }
}

/// Checks a payload's bounds, then its schema; returns whether it is within the bounds.
fn payload(
    value: &serde_json::Value,
    ptr: &str,
    label: &str,
    what: &str,
    validator: Option<&Validator>,
    root: &Node,
    out: &mut Vec<Diagnostic>,
) -> bool {
    if let Err(e) = bounds::check(value) {
        let at = format!("{ptr}{}", e.pointer());
        out.push(
            Diagnostic::error(e.check_id(), &at, root.locate(&at), format!("the {what} of {label} {e}"))
                .with_hint("the gateway refuses payloads past 64 levels, 200000 values or arrays of 10000 items"),
        );
        return false;
    }
    let Some(validator) = validator else {
        return true;
    };
    let check = if what == "input" {
        "example-input-invalid"
    } else {
        "example-output-invalid"
    };
    let schema_name = if what == "input" {
        "interface.input"
    } else {
        "interface.output"
    };
    for v in schema::violations(validator, value) {
        let at = format!("{ptr}{}", v.pointer);
        out.push(Diagnostic::error(
            check,
            &at,
            root.locate(&at),
            format!(
                "`{}` does not match `{schema_name}`: {}",
                dotted(&at),
                v.message
            ),
        ));
    }
    true
}

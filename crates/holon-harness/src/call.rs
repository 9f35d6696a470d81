//! `holon-test call INPUT`: one call by hand, judged as the gateway would judge it. The gate
//! first (an input it refuses is `rejected_input`, and nothing is sent), then one call through
//! the pass a run would make it through (the MCP server, or with `--function` the agent
//! function), entered on the upstreams as an example's call (the example named, or the one
//! whose input it is) or as explore's, then the status, `billed`, the time and the upstream
//! requests, in the receipt's words: in lines for a person, or one JSON document. With
//! `--save NAME`, the call becomes an example of `holon.yaml` (`holon_bless::append`) when its
//! answer is one an example may promise.
//!
//! A Rust agent's function lives in its test target: the command line runs it with
//! [`CALL_VAR`] naming a file that holds the [`Spec`], and its `Harness::run` makes the call.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::adapter::Adapter;
use crate::context::Run;
use crate::error::RunError;
use crate::exit;
use crate::function::FunctionPass;
use crate::mcp::McpPass;
use crate::measure::{CallEnd, receipt};
use crate::pass::Caller;
use crate::reporter::Event;
use crate::target::Target;
use holon_core::gateway::{Answer, Pass, Status};
use holon_core::json::equal;
use holon_core::manifest::Expect;
use holon_runtime::Agent;
use holon_upstream::Scope;

/// Makes the call of `spec` in `run`: through `agent` when `spec` asks for the function (the
/// adapter's process, when it is one, started for it and stopped after), or through the server
/// `target` names (started for it, and stopped after); the exit code, or why nothing could be
/// called.
pub(crate) fn make(
    run: &Run,
    spec: &Spec,
    agent: Option<Arc<dyn Agent>>,
    target: Target<'_>,
    adapter: Option<&Adapter>,
) -> Result<u8, RunError> {
    let resolved = match resolve(run, spec) {
        Ok(resolved) => resolved,
        Err(code) => return Ok(code),
    };
    let adapter = adapter.filter(|_| spec.function);
    if let Some(adapter) = adapter {
        adapter.startup(run.settings.startup, run.manifest.runtime.limits.timeout());
        if let Some(functions) = &run.functions {
            adapter.warm(functions);
        }
    }
    let mut server = None;
    let caller: Result<Arc<dyn Caller>, CallError> = match (spec.function, agent) {
        (true, Some(agent)) => Ok(Arc::new(FunctionPass::new(run, agent, 1))),
        (true, None) => Err(CallError::NoFunction),
        (false, _) => match crate::target::server(run, target)? {
            Some(started) => {
                server = Some(started.clone());
                Ok(Arc::new(McpPass::new(run, started, 0)))
            }
            None => Err(CallError::NoServer),
        },
    };
    let code = one(run, caller, spec, resolved);
    if let Some(server) = server {
        let _ = server.stop(false);
    }
    // What the adapter's process printed, when the call failed, to say why.
    if let Some(output) = adapter.and_then(|a| a.stop())
        && code != exit::OK
    {
        run.reporter.emit(Event::Paragraph(output));
    }
    Ok(code)
}

/// Set by the command line for a Rust agent's test target: the path of a file holding the
/// [`Spec`] of one call to make instead of the tests.
pub const CALL_VAR: &str = "HOLON_CALL";

/// Why a call by hand was not made, or not saved.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The file [`CALL_VAR`] names does not hold a call.
    #[error("`{CALL_VAR}` names `{}`, which does not hold a call: {why}", path.display())]
    Spec {
        /// The file.
        path: std::path::PathBuf,
        /// Why it cannot be read as one.
        why: String,
    },
    /// `--function` where the harness has no function.
    #[error(
        "`--function`: this agent has no function to call here (a Rust agent's function is called in its package, through its test target; a TypeScript or Python agent's is the one `[server] function` names in `holon-test.toml`)"
    )]
    NoFunction,
    /// No server to call.
    #[error(
        "no server to call (`--server-cmd`, `--url`, or `[server] command` in `holon-test.toml`)"
    )]
    NoServer,
    /// The call ended in a status no example may promise.
    #[error(
        "an example promises a success or a declared failure, and this call ended in `{0}`; nothing was written"
    )]
    Unpromised(String),
    /// The call ended in a code marked `retryable: true`.
    #[error(
        "`{0}` is marked `retryable: true`: a transient failure is not what the agent promises for this input (`--bless` never writes one either); nothing was written"
    )]
    Transient(String),
    /// The call was not judged.
    #[error("the call was not judged (see above); nothing was written")]
    NotJudged,
    /// The answer holds a secret's value.
    #[error(
        "the answer holds the value of `{0}`, which is never written into a file; nothing was written"
    )]
    Secret(String),
    /// The manifest could not be written.
    #[error(transparent)]
    Bless(#[from] holon_bless::BlessError),
}

/// What a call by hand asks for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Spec {
    /// The input given (its JSON already read), when no example is named.
    pub input: Option<Value>,
    /// The example whose input to call with.
    pub example: Option<String>,
    /// The name of the example to save the call as.
    pub save: Option<String>,
    /// One JSON document on stdout rather than lines for a person.
    pub json: bool,
    /// Through the agent function rather than the MCP server.
    pub function: bool,
}

impl Spec {
    /// The call a test target is asked to make, when [`CALL_VAR`] is set: the spec, or why it
    /// cannot be read.
    pub fn requested() -> Option<Result<Spec, CallError>> {
        let path = std::path::PathBuf::from(std::env::var_os(CALL_VAR)?);
        let read = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()));
        Some(read.map_err(|why| CallError::Spec { path, why }))
    }
}

/// Makes the call `spec` asks for through `caller` (`None`: the run has no such pass, and
/// `missing` says why) and says what came of it; the exit code: 0 a success or a declared
/// failure, 101 another status (the agent's doing), 1 when no call was judged (the gate
/// refused it, nothing answered, no such example) or `--save` could not write.
/// The input `spec` calls with and the example it is (named, or the one whose input it is),
/// or the exit code of why there is none: found before anything is started, so a mistyped
/// name costs no server start.
fn resolve(run: &Run, spec: &Spec) -> Result<(Value, Option<String>), u8> {
    let manifest = &run.manifest;
    let resolved = match (&spec.example, &spec.input) {
        (Some(name), _) => match manifest.examples.iter().find(|e| e.name == *name) {
            Some(example) => (example.input.clone(), Some(name.clone())),
            None => {
                let names: Vec<String> = (manifest.examples.iter())
                    .map(|e| format!("`{}`", e.name))
                    .collect();
                run.reporter.emit(Event::Error(format!(
                    "`{}` has no example named `{name}` (its examples: {})",
                    holon_core::message::path_shown(&manifest.path),
                    names.join(", ")
                )));
                return Err(exit::REFUSED);
            }
        },
        (None, Some(input)) => {
            // An example's input is that example's call: its recordings answer it.
            let same = (manifest.examples.iter()).find(|e| equal(&e.input, input));
            (input.clone(), same.map(|e| e.name.clone()))
        }
        (None, None) => {
            run.reporter.emit(Event::Error(
                "no input to call with (give INPUT, `@file.json` or `--example NAME`)".into(),
            ));
            return Err(exit::USAGE);
        }
    };
    // A handle the tests cannot serve is refused before a call to the server, which would not
    // be sent; the agent function reads `files/` itself, and answers such a handle its own way.
    let files = manifest.dir().join("files");
    let served = if spec.function {
        Vec::new()
    } else {
        holon_core::gateway::handles::handles_in(&resolved.0)
    };
    for handle in served {
        let why = match holon_core::gateway::handles::handle_name(&handle) {
            Err(why) => why,
            Ok(name) if files.join(name).is_file() => continue,
            Ok(name) => format!(
                "`files/{name}` does not exist beside `{}` (the tests serve `holon://files/NAME` from `files/NAME`)",
                holon_core::message::path_shown(&manifest.path)
            ),
        };
        run.reporter.emit(Event::Error(format!(
            "the input's file handle `{handle}` cannot be served: {why}; nothing was called"
        )));
        return Err(exit::REFUSED);
    }
    // A name taken is refused before the call is paid for (and again as the file is written).
    if let Some(name) = &spec.save
        && manifest.examples.iter().any(|e| e.name == *name)
    {
        run.reporter.emit(Event::Error(format!(
            "`--save {name}`: `{}` has an example named `{name}` already: nothing was called, nothing was written (name the new one otherwise)",
            holon_core::message::path_shown(&manifest.path)
        )));
        return Err(exit::REFUSED);
    }
    Ok(resolved)
}

/// The call of `spec` with `input` (of `example`, when it is one's) through `caller`, said;
/// the exit code.
pub(crate) fn one(
    run: &Run,
    caller: Result<Arc<dyn Caller>, CallError>,
    spec: &Spec,
    (input, example): (Value, Option<String>),
) -> u8 {
    let manifest = &run.manifest;
    let pass = if spec.function {
        Pass::Function
    } else {
        Pass::Mcp
    };
    let (document, status) = match manifest.gateway().admit(&input) {
        Err(rejection) => {
            let document = json!({
                "status": "rejected_input",
                "billed": false,
                "ms": 0,
                "error": {"code": Status::InvalidInput.code(), "message": rejection.to_string()},
                "upstream": [],
                "example": example,
                "pass": pass.name(),
            });
            (document, Some(Status::InvalidInput))
        }
        Ok(()) => {
            let caller = match caller {
                Ok(caller) => caller,
                Err(why) => {
                    run.reporter.emit(Event::Error(why.to_string()));
                    return exit::REFUSED;
                }
            };
            let scope = example.clone().map_or(Scope::Explore, Scope::Example);
            let end = caller.single(&input, scope);
            if let Some(upstreams) = &run.upstreams {
                upstreams.settle();
            }
            let status = end.status(manifest.gateway());
            (document(run, pass, example.as_deref(), &end), status)
        }
    };
    // Scrubbed of the run's secrets as the reporter writes it.
    let said = if spec.json {
        format!("{document}\n")
    } else {
        human(&document, pass, matches!(status, Some(Status::Declared(_))))
    };
    run.reporter.emit(Event::Output(said));
    let gated = document.get("status") == Some(&json!("rejected_input"));
    let mut code = match &status {
        Some(Status::Success | Status::Declared(_)) => exit::OK,
        _ if gated => exit::REFUSED,
        Some(Status::RuntimeUnavailable) | None => exit::REFUSED,
        Some(_) => exit::FAILED,
    };
    if let Some(name) = &spec.save {
        match saved(run, (name, &input), status.as_ref(), &document) {
            Ok(()) => run.reporter.emit(Event::Line(format!(
                "saved the call as the example `{name}` in `{}`",
                holon_core::message::path_shown(&manifest.path)
            ))),
            Err(why) => {
                run.reporter
                    .emit(Event::Error(format!("`--save {name}`: {why}")));
                code = code.max(exit::REFUSED);
            }
        }
    }
    code
}

/// The call's document, in the receipt's words and the receipt's figures: the status,
/// `billed`, `ms`, what it answered (`output`, or `error` with the code and the message; both
/// for an output the schema refuses), the upstream requests, the example it was (or `null`),
/// the pass and the manifest; `not_judged` when there was nothing to judge.
fn document(run: &Run, pass: Pass, example: Option<&str>, end: &CallEnd) -> Value {
    let manifest = &run.manifest;
    let receipt = receipt(
        manifest,
        (pass, example.unwrap_or_default()),
        end,
        &run.reporter,
    );
    let field = |key: &str| receipt.get(key).cloned().unwrap_or(Value::Null);
    let mut document = serde_json::Map::new();
    for key in ["status", "billed", "ms"] {
        document.insert(key.into(), field(key));
    }
    if let Ok(answer) = &end.answer {
        let status = answer.status(manifest.gateway());
        if let Answer::Output(output) = answer {
            document.insert("output".into(), output.clone());
        }
        if status != Status::Success {
            let message = match answer {
                Answer::Failed { message, .. } if matches!(status, Status::Declared(_)) => {
                    message.clone()
                }
                other => other.describe(manifest.gateway()),
            };
            document.insert(
                "error".into(),
                json!({"code": status.code(), "message": message}),
            );
        }
    }
    document.insert("upstream".into(), field("upstream"));
    document.insert("example".into(), json!(example));
    for key in ["pass", "manifest", "not_judged"] {
        if let Some(value) = receipt.get(key) {
            document.insert(key.into(), value.clone());
        }
    }
    Value::Object(document)
}

/// The document in lines for a person: the status (`declared`: a declared failure), billed or
/// not, the time and the pass; the output or the error; each upstream request.
fn human(document: &Value, pass: Pass, declared: bool) -> String {
    let text = |key: &str| document.get(key).and_then(Value::as_str);
    let status = text("status");
    let through = match pass {
        Pass::Function => "the agent function",
        Pass::Mcp => "the MCP server",
    };
    let mut out = match status {
        Some("rejected_input") => {
            "rejected_input: the gate refused the input, so nothing was sent, and nothing is billed\n"
                .to_string()
        }
        Some(status) => format!(
            "{status}{}, {}, {} ms through {through}{}\n",
            if declared { " (declared failure)" } else { "" },
            if document.get("billed") == Some(&json!(true)) {
                "billed"
            } else {
                "not billed"
            },
            at(document, "ms"),
            match text("example") {
                Some(name) => format!(", with the input of the example `{name}`"),
                None => String::new(),
            }
        ),
        None => format!(
            "not judged: {}\n",
            text("not_judged").unwrap_or("the call has nothing to judge")
        ),
    };
    if let Some(output) = document.get("output") {
        let pretty = serde_json::to_string_pretty(output).unwrap_or_default();
        out.push_str(&pretty);
        out.push('\n');
    }
    if let Some(error) = document.get("error") {
        out.push_str(&format!(
            "error: {}: {}\n",
            at(error, "code").as_str().unwrap_or_default(),
            at(error, "message").as_str().unwrap_or_default()
        ));
    }
    for request in at(document, "upstream").as_array().into_iter().flatten() {
        let answered = match at(request, "status").as_u64() {
            Some(status) => format!("HTTP {status}"),
            None => "no answer".to_string(),
        };
        let tokens = match (
            at(request, "input_tokens").as_u64(),
            at(request, "output_tokens").as_u64(),
        ) {
            (Some(i), Some(o)) => format!(", {i} input and {o} output tokens"),
            _ => ", tokens unknown".to_string(),
        };
        out.push_str(&format!(
            "upstream `{}`: {answered}{tokens}\n",
            at(request, "name").as_str().unwrap_or_default()
        ));
    }
    out
}

/// Writes the call into the manifest as the example `name`, when its answer is one an example
/// may promise: a success, or a declared code that is not transient; never an answer that holds
/// a secret's value.
fn saved(
    run: &Run,
    (name, input): (&str, &Value),
    status: Option<&Status>,
    document: &Value,
) -> Result<(), CallError> {
    let manifest = &run.manifest;
    let expect = match status {
        Some(Status::Success) => Expect::Output(at(document, "output").clone()),
        Some(Status::Declared(code)) => {
            if manifest.error(code).is_some_and(|e| e.retryable) {
                return Err(CallError::Transient(code.clone()));
            }
            Expect::Error(code.clone())
        }
        Some(other) => {
            let ended = match other {
                Status::InvalidInput => "rejected_input",
                other => other.code(),
            };
            return Err(CallError::Unpromised(ended.to_string()));
        }
        None => return Err(CallError::NotJudged),
    };
    if let Some(secret) = run.reporter.secrets().name_in(&expect.value().to_string()) {
        return Err(CallError::Secret(secret.to_string()));
    }
    Ok(holon_bless::append(&manifest.path, name, input, &expect)?)
}

/// The field `key` of `value`, `null` when it has none.
fn at<'v>(value: &'v Value, key: &str) -> &'v Value {
    value.get(key).unwrap_or(&Value::Null)
}

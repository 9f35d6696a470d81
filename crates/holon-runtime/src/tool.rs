//! The one MCP tool: `runtime.tool` with the manifest's schemas, and each call's result.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::{Ctx, Runner};
use holon_core::gateway::{Ended, Status};
use holon_core::manifest::{Manifest, identity};

#[derive(Clone)]
pub(crate) struct Handler {
    runner: Runner,
    tool: Arc<Tool>,
    /// What `initialize` says of the manifest, computed once: its `_meta`.
    meta: Arc<JsonObject>,
}

impl Handler {
    pub(crate) fn new(runner: Runner) -> Handler {
        let tool = Arc::new(tool(runner.manifest()));
        let mut meta = JsonObject::new();
        if let Some(identity) = runner.manifest().identity() {
            meta.insert(identity::META_KEY.into(), identity.to_meta());
        }
        Handler {
            runner,
            tool,
            meta: Arc::new(meta),
        }
    }
}

/// The one tool: `runtime.tool`, described by `description`, `interface.input` as its input
/// schema, and an output schema honest for every result the server sends.
fn tool(manifest: &Manifest) -> Tool {
    let input = as_object(&manifest.interface.input);
    Tool::new(
        manifest.runtime.tool.clone(),
        manifest.description.clone(),
        Arc::new(input),
    )
    .with_raw_output_schema(Arc::new(as_object(&output_schema(manifest))))
}

fn as_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(o) => o.clone(),
        // A checked manifest's schemas are objects; `true` would mean "anything".
        _ => JsonObject::new(),
    }
}

/// `{type: object, anyOf: [interface.output, the error envelope]}`: strict MCP clients (the
/// official TypeScript SDK) validate `structuredContent` against `outputSchema` even when
/// `isError` is true, so the schema must admit the failures the server sends too.
pub fn output_schema(manifest: &Manifest) -> Value {
    let mut codes: Vec<Value> = manifest
        .interface
        .errors
        .iter()
        .map(|e| Value::String(e.code.clone()))
        .collect();
    for reserved in Status::FROM_AGENT {
        codes.push(Value::String(reserved.code().into()));
    }
    let mut output = manifest.interface.output.clone();
    if let Value::Object(o) = &mut output {
        // A nested schema may not carry `$schema`; an `$id` keeps its `#/...` references local.
        o.remove("$schema");
        if !o.contains_key("$id") && output_has_local_refs(&manifest.interface.output) {
            o.insert(
                "$id".into(),
                Value::String(format!(
                    "urn:holon:{}:{}:output",
                    manifest.name, manifest.version
                )),
            );
        }
    }
    json!({
        "type": "object",
        "anyOf": [
            output,
            {
                "type": "object",
                "additionalProperties": false,
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": { "enum": codes },
                            "message": { "type": "string" }
                        }
                    }
                }
            }
        ]
    })
}

fn output_has_local_refs(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if o.get("$ref")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.starts_with('#'))
                {
                    return true;
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    false
}

/// The tool result for how a call ended: an output as `structuredContent` plus the same JSON
/// as text; a failure as `isError: true` with `structuredContent.error.{code, message}`.
fn result(outcome: Result<Value, Ended>) -> CallToolResult {
    match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(ended) => CallToolResult::structured_error(
            json!({ "error": { "code": ended.status.code(), "message": ended.message } }),
        ),
    }
}

impl ServerHandler for Handler {
    /// `serverInfo` is the manifest's `name` and `version`, and `_meta` carries
    /// `holon/manifest` (the name, the version, the hash of the canonical document and
    /// `source.commit`), so a client can tell which manifest a deployed agent was built from.
    /// rmcp's `server/discover` (MCP 2026-07-28) copies this `_meta` beside the
    /// `io.modelcontextprotocol/serverInfo` it adds.
    fn get_info(&self) -> ServerConfig {
        let m = self.runner.manifest();
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(m.name.clone(), m.version.clone()));
        config.meta = Some((*self.meta).clone().into());
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.tool).clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != self.tool.name {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`: this server has one tool, `{}`",
                    request.name, self.tool.name
                ),
                None,
            ));
        }
        let input = Value::Object(request.arguments.unwrap_or_default());
        // rmcp moves the request's `_meta` into the context.
        let ctx = Ctx::from_meta(context.meta.get(super::files::META_KEY));
        Ok(result(self.runner.run_apart(input, ctx).await).into())
    }
}

//! `tools/list`: what a server lists held to the manifest (exactly one tool, named
//! `runtime.tool`, with `interface.input` as its input schema and an output schema every
//! example's answer validates against).

use rmcp::model::Tool;
use serde_json::Value;

use crate::error::ToolsError;
use holon_core::json::equal as json_eq;
use holon_core::manifest::{Expect, Manifest};

/// Exactly one tool, named `runtime.tool`, with the manifest's input schema, and an output
/// schema (when there is one) that every example's answer validates against (but an output
/// `--bless` is writing over).
pub(crate) fn check_tools(manifest: &Manifest, tools: &[Tool]) -> Result<(), ToolsError> {
    let want = &manifest.runtime.tool;
    let names: Vec<String> = tools.iter().map(|t| format!("`{}`", t.name)).collect();
    let tool = match tools {
        [] => return Err(ToolsError::None { want: want.clone() }),
        [tool] => tool,
        _ => {
            return Err(ToolsError::Many {
                count: tools.len(),
                names: names.join(", "),
                want: want.clone(),
            });
        }
    };
    if tool.name != *want {
        return Err(ToolsError::Renamed {
            got: tool.name.to_string(),
            want: want.clone(),
        });
    }
    let input = Value::Object((*tool.input_schema).clone());
    if !json_eq(&input, &manifest.interface.input) {
        return Err(ToolsError::InputSchema {
            diff: crate::compare::diff(&manifest.interface.input, &input),
        });
    }
    if let Some(schema) = &tool.output_schema {
        let schema = Value::Object((**schema).clone());
        let validator = holon_core::gateway::schema::compile(&schema)
            .map_err(|e| ToolsError::OutputSchema(e.to_string()))?;
        let mut problems = Vec::new();
        for example in &manifest.examples {
            let answer = match &example.expect {
                // An output `interface.output` itself refuses is in a checked manifest only
                // when the run blesses (`check::for_bless`): the agent's answer is written over
                // it, so it promises nothing a client could be refused.
                Expect::Output(o) if !manifest.gateway().judge_output(o).is_empty() => continue,
                Expect::Output(o) => o.clone(),
                Expect::Error(code) => serde_json::json!({"error": {"code": code, "message": ""}}),
            };
            for v in holon_core::gateway::schema::violations(&validator, &answer) {
                problems.push(format!(
                    "  example `{}`: `{}`: {}",
                    example.name,
                    v.at(),
                    v.message
                ));
            }
        }
        if !problems.is_empty() {
            return Err(ToolsError::OutputRefuses {
                problems: problems.join("\n"),
            });
        }
    }
    Ok(())
}

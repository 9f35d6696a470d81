"""The least an MCP server of the word-count agent costs on the official Python SDK 2.x: the same
tool as the template's (its name, its input schema, its output schema with the error envelope
beside `interface.output`), the same app (`streamable_http_app`, stateless, JSON answers) on
uvicorn, and none of what the runtime package adds (the timeout, ctx, the failures, the
identity, the Origin check). benches/runtime_packages.sh times calls against it
and the package.

    PORT=N python bare_server.py MANIFEST
"""

import json
import os
import sys

import mcp.types as types
import uvicorn
import yaml
from mcp.server.lowlevel import Server

MANIFEST = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
OUTPUT = {k: v for k, v in MANIFEST["interface"]["output"].items() if k != "$schema"}
TOOL = types.Tool(
    name=MANIFEST["runtime"]["tool"],
    description=MANIFEST["description"],
    input_schema=MANIFEST["interface"]["input"],
    output_schema={
        "type": "object",
        "anyOf": [
            OUTPUT,
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {
                                "enum": [e["code"] for e in MANIFEST["interface"].get("errors", [])]
                                + ["agent_crashed", "invalid_input", "timeout"]
                            },
                            "message": {"type": "string"},
                        },
                    }
                },
            },
        ],
    },
)


def run(arguments: dict) -> dict:
    min_length = arguments.get("min_length", 1)
    words, word = [], []
    for c in arguments["text"]:
        if c.isalnum():
            word.append(c)
        elif word:
            words.append("".join(word))
            word = []
    if word:
        words.append("".join(word))
    words = [w for w in words if len(w) >= min_length]
    longest = ""
    for w in words:
        if len(w) > len(longest):
            longest = w
    return {"words": len(words), "longest": longest}


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params) -> types.CallToolResult:
    output = run(params.arguments or {})
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(output))], structured_content=output
    )


server = Server(MANIFEST["name"], version=MANIFEST["version"], on_list_tools=list_tools, on_call_tool=call_tool)
app = server.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1")
print(f"bare server: listening on http://127.0.0.1:{os.environ['PORT']}/mcp", file=sys.stderr, flush=True)
uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")

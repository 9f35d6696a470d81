"""The adapter between `run` (agent.py) and MCP, on the official Python SDK (`mcp` 2.x). You own
this file: it does on the wire what the Holon runtime does for a Rust agent, and `holon-test`
holds it to that.

- One tool, `runtime.tool` of holon.yaml, with `interface.input` as its input schema and, as
  its output schema, `interface.output` or the error envelope (strict clients validate
  `structuredContent` against it even on `isError` results).
- A success goes out as `structuredContent` and the same JSON as text; `raise ctx.fail(code,
  message)` as `isError: true` with `structuredContent.error.code`; a code not declared in
  `interface.errors`, or any other exception, as `agent_crashed` (never with a traceback); a
  run past `runtime.limits.timeout_s` as `timeout`.
- Streamable HTTP at http://$HOST:$PORT/mcp (HOST defaults to 127.0.0.1, PORT to 8080), both
  protocol eras: 2025-11-25 (`initialize`) and 2026-07-28 (`server/discover`, `_meta` on every
  request). SIGTERM lets the calls in flight finish, `timeout_s` + 5 s at most.
- The input was already checked against `interface.input` by the gateway (and by
  `holon-test`), so `run` can trust its types: `holon_types.py`, which `uv run holon-test
  types` writes from holon.yaml.

- `python holon.py --function`: the function mode `holon-test` runs its `function::` trials
  through, before the MCP pass: `run` alone, with no MCP in between, over one connection on
  127.0.0.1:$PORT as JSON lines (`{"id", "input"}` in; `{"id", "output"}`, `{"id", "fail"}` or
  `{"id", "crash"}` out; `{"id", "cancel"}` cancels the call's task). What `run` prints does
  not touch that connection.

    python holon.py        # in the project's environment: `uv run python holon.py`
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

import mcp.types as types
import uvicorn
import yaml
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

import agent

# `HOLON_MANIFEST` names another manifest, as it does for the Rust runtime.
MANIFEST = yaml.safe_load(
    Path(os.environ.get("HOLON_MANIFEST") or Path(__file__).with_name("holon.yaml")).read_text(encoding="utf-8")
)
DECLARED = [e["code"] for e in MANIFEST["interface"].get("errors", [])]
LIMITS = MANIFEST["runtime"].get("limits", {})
TIMEOUT_S = LIMITS.get("timeout_s", 30)
MAX_INPUT_BYTES = LIMITS.get("max_input_bytes", 1_000_000)

# A nested schema may not carry `$schema`.
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
                            "code": {"enum": DECLARED + ["agent_crashed", "invalid_input", "timeout"]},
                            "message": {"type": "string"},
                        },
                    }
                },
            },
        ],
    },
)


class Failure(Exception):
    """A declared failure: `code` is one of `interface.errors`."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class Ctx:
    """What `run` gets beside its input."""

    def fail(self, code: str, message: str) -> Failure:
        """A declared failure, to raise: `raise ctx.fail("empty_text", "the text is empty")`."""
        return Failure(code, message)


def failed(code: str, message: str) -> types.CallToolResult:
    envelope = {"error": {"code": code, "message": message}}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(envelope))],
        structured_content=envelope,
        is_error=True,
    )


async def call(arguments: dict) -> types.CallToolResult:
    """One call of `run`, ended the way the gateway reads it."""
    try:
        output = await asyncio.wait_for(agent.run(arguments, Ctx()), timeout=TIMEOUT_S)
    except asyncio.TimeoutError:
        return failed("timeout", f"the run passed `runtime.limits.timeout_s` ({TIMEOUT_S} s) and was cancelled")
    except Failure as f:
        if f.code in DECLARED:
            return failed(f.code, f.message)
        return failed(
            "agent_crashed",
            f"the agent failed with `{f.code}`, which is not declared in `interface.errors`: {f.message}",
        )
    except Exception as e:
        return failed("agent_crashed", f"the agent raised {type(e).__name__}: {e}")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(output))],
        structured_content=output,
    )


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params) -> types.CallToolResult:
    if params.name != TOOL.name:
        raise MCPError(types.INVALID_PARAMS, f"unknown tool `{params.name}`: this server has one tool, `{TOOL.name}`")
    return await call(params.arguments or {})


async def direct(call_id: int, arguments: dict) -> dict:
    """One call of the function mode: `run` alone, its end as it came (`holon-test` judges it)."""
    try:
        return {"id": call_id, "output": await agent.run(arguments, Ctx())}
    except Failure as f:
        return {"id": call_id, "fail": {"code": f.code, "message": f.message}}
    except Exception as e:
        return {"id": call_id, "crash": f"{type(e).__name__}: {e}"}


async def function_mode(host: str, port: int) -> None:
    """The function mode: the calls of one connection, each in flight until it ends."""

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        running: dict[int, asyncio.Task] = {}

        async def answer(call_id: int, arguments: dict) -> None:
            reply = await direct(call_id, arguments)
            running.pop(call_id, None)
            writer.write((json.dumps(reply) + "\n").encode())
            await writer.drain()

        while line := await reader.readline():
            request = json.loads(line)
            if request.get("cancel"):
                task = running.pop(request["id"], None)
                if task is not None:
                    task.cancel()
                continue
            running[request["id"]] = asyncio.create_task(answer(request["id"], request.get("input", {})))
        for task in running.values():
            task.cancel()

    # A line holds an input as large as the largest the gateway admits.
    server = await asyncio.start_server(connection, host, port, limit=2 * MAX_INPUT_BYTES + 64 * 1024)
    print(f"{MANIFEST['name']} {MANIFEST['version']}: function mode on {host}:{port}", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


def from_env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def main() -> None:
    host = from_env("HOST", "127.0.0.1")
    try:
        port = int(from_env("PORT", "8080"))
    except ValueError:
        sys.exit(f"error: `PORT` is not a port number: {os.environ.get('PORT')!r}")
    if "--function" in sys.argv:
        asyncio.run(function_mode(host, port))
        return
    server = Server(
        MANIFEST["name"],
        version=MANIFEST["version"],
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # Room for the largest input the gateway admits, and the request around it. On loopback the
    # SDK refuses other Host headers (DNS rebinding); elsewhere the gateway sits in front.
    app = server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        host=host,
        max_request_body_size=max(4 * 1024 * 1024, 2 * MAX_INPUT_BYTES + 64 * 1024),
    )
    # Bound before the line is printed: a client that reads it can connect.
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as e:
        sys.exit(f"error: cannot listen on {host} port {port}: {e}")
    listener.listen(512)
    shown = f"[{host}]" if ":" in host else host
    print(f"{MANIFEST['name']} {MANIFEST['version']}: listening on http://{shown}:{port}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=TIMEOUT_S + 5)
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    main()

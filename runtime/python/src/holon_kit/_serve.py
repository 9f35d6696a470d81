"""The agent function as an MCP server of one tool, on the official SDK (`mcp`
2.x), as the gateway reads it (`serve(run)` without `--function`).

- One tool, `runtime.tool` of holon.yaml, with `interface.input` as its input schema and, as its
  output schema, `interface.output` or the error envelope (strict clients validate
  `structuredContent` against it even on `isError` results).
- A success goes out as `structuredContent` and the same JSON as text; `raise ctx.fail(code,
  message)` as `isError: true` with `structuredContent.error.code`; a code not declared in
  `interface.errors`, or any other exception, as `agent_crashed` (never with a traceback); a run
  past `runtime.limits.timeout_s` as `timeout`, its task cancelled.
- Streamable HTTP at http://$HOST:$PORT/mcp (HOST defaults to 127.0.0.1, PORT to 8080), both
  protocol eras: 2025-11-25 (`initialize`) and 2026-07-28 (`server/discover`). On loopback,
  another Host is refused (DNS rebinding), and a browser's foreign Origin everywhere. SIGTERM
  lets the calls in flight finish, `timeout_s` + 5 s at most.
- `serverInfo` is the manifest's name and version, and the answers to `initialize` and
  `server/discover` carry `_meta["holon/manifest"]`: the name, the version, the SHA-256 of the
  canonical document and `source.commit`, as the Rust runtime announces them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.datastructures import Headers
from starlette.responses import Response

from . import _manifest
from ._ctx import Ctx, Failure, Run
from ._files import META_KEY as FILES_META_KEY
from ._files import Files, links_from_meta

class Agent:
    """The manifest a server runs on, and one call of `run` ended as the gateway reads it."""

    def __init__(self, run: Run, path: Path):
        document = _manifest.read(path)
        self.run = run
        self.document = document
        self.identity = _manifest.identity(document)
        self.name: str = document["name"]
        self.version: str = str(document["version"])
        self.declared: list[str] = [e["code"] for e in document["interface"].get("errors") or []]
        limits = document["runtime"].get("limits") or {}
        self.timeout_s: float = limits.get("timeout_s", 30)
        self.max_input_bytes: int = limits.get("max_input_bytes", 1_000_000)
        # A nested schema may not carry `$schema`.
        output = {k: v for k, v in document["interface"]["output"].items() if k != "$schema"}
        self.tool = types.Tool(
            name=document["runtime"]["tool"],
            description=document["description"],
            input_schema=document["interface"]["input"],
            output_schema={
                "type": "object",
                "anyOf": [
                    output,
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["error"],
                        "properties": {
                            "error": {
                                "type": "object",
                                "required": ["code", "message"],
                                "properties": {
                                    "code": {"enum": self.declared + ["agent_crashed", "invalid_input", "timeout"]},
                                    "message": {"type": "string"},
                                },
                            }
                        },
                    },
                ],
            },
        )

    async def call(self, arguments: dict[str, Any], files: Files) -> types.CallToolResult:
        """One call of `run`, ended the way the gateway reads it."""
        try:
            output = await asyncio.wait_for(self.run(arguments, Ctx(files)), timeout=self.timeout_s)
        except asyncio.TimeoutError:
            return failed(
                "timeout", f"the run passed `runtime.limits.timeout_s` ({self.timeout_s} s) and was cancelled"
            )
        except Failure as f:
            if f.code in self.declared:
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


def failed(code: str, message: str) -> types.CallToolResult:
    envelope = {"error": {"code": code, "message": message}}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(envelope))],
        structured_content=envelope,
        is_error=True,
    )


def _server(agent: Agent) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[agent.tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != agent.tool.name:
            raise MCPError(
                types.INVALID_PARAMS, f"unknown tool `{params.name}`: this server has one tool, `{agent.tool.name}`"
            )
        meta: Mapping[str, Any] = params.meta or {}
        return await agent.call(params.arguments or {}, Files(links_from_meta(meta.get(FILES_META_KEY))))

    async def announce(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        # The answers that open an era say which manifest this server was built from.
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            result["_meta"] = {**(result.get("_meta") or {}), _manifest.META_KEY: agent.identity}
        return result

    server: Server[Any] = Server(agent.name, version=agent.version, on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(announce)
    return server


def _origin_checked(app: Any, security: TransportSecuritySettings) -> Any:
    """`app`, refusing a request whose Origin is not a loopback one (HTTP 403)."""
    check = TransportSecurityMiddleware(security)

    async def checked(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            origin = Headers(scope=scope).get("origin")
            if not check._validate_origin(origin):
                await Response("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await app(scope, receive, send)

    return checked


def mcp_server(run: Run, path: Path, host: str, port: int) -> None:
    """The MCP server of `run` on `host:port`, for the manifest at `path`."""
    agent = Agent(run, path)
    server = _server(agent)
    loopback = host in ("127.0.0.1", "localhost", "::1")
    names = ("127.0.0.1", "localhost", "[::1]")
    origins = [f"{scheme}://{name}:*" for name in names for scheme in ("http", "https")]
    origins += [f"{scheme}://{name}" for name in names for scheme in ("http", "https")]
    # On loopback another Host is refused (DNS rebinding); elsewhere the gateway, in front, sets
    # its own. A browser's foreign Origin is refused everywhere.
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names] + list(names),
        allowed_origins=origins,
    )
    # Room for the largest input the gateway admits, and the request around it.
    app = server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        host=host,
        transport_security=security if loopback else TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max(4 * 1024 * 1024, 2 * agent.max_input_bytes + 64 * 1024),
    )
    if not loopback:
        app = _origin_checked(app, security)
    # Bound before the line is printed: a client that reads it can connect.
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Each connection without Nagle's delay, as uvicorn sets it on sockets of its own (accepted
    # ones inherit it): with it, every answer after the first waited ~40 ms for an ACK.
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listener.bind((host, port))
    except OSError as e:
        sys.exit(f"error: cannot listen on {host} port {port}: {e}")
    listener.listen(512)
    shown = f"[{host}]" if ":" in host else host
    print(f"{agent.name} {agent.version}: listening on http://{shown}:{port}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=int(agent.timeout_s) + 5)
    uvicorn.Server(config).run(sockets=[listener])

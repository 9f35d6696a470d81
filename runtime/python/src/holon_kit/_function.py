"""The function mode, protocol version 1 (the kit's own; `holon-harness`'s `adapter` module
specifies it): `run` alone, with no MCP in between, for `holon-test`'s `function::` trials.

On each connection to `HOST:PORT`, JSON lines. This side speaks first, a greeting that names the
protocol, the package's version and Python's; then `{"id", "input"}` is answered by `{"id",
"output"}`, `{"id", "fail": {code, message}}` or `{"id", "crash": "Type: message"}` (one line, no
traceback); `{"id", "cancel"}` cancels the call's task; `{"id", "ping"}` is answered `{"id",
"pong"}` from the loop the calls run on, so a loop a call blocks answers none. What `run` prints
never touches the connection. `ctx.download("holon://files/NAME")` reads `NAME` in the folder
`HOLON_FILES` names."""

from __future__ import annotations

import asyncio
import json
import platform
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from . import __version__
from ._ctx import Ctx, Failure
from ._files import Files

PROTOCOL = 1


def greeting() -> dict[str, Any]:
    return {
        "holon": "function",
        "protocol": PROTOCOL,
        "runtime": f"holon-kit {__version__}",
        "language": f"Python {platform.python_version()}",
    }


async def _direct(run: Callable[[Any, Ctx[Any]], Awaitable[Any]], call_id: Any, arguments: Any) -> dict[str, Any]:
    """One call: `run` alone, its end as it came (`holon-test` judges it)."""
    try:
        return {"id": call_id, "output": await run(arguments, Ctx(Files.of_function_mode()))}
    except Failure as f:
        return {"id": call_id, "fail": {"code": f.code, "message": f.message}}
    except Exception as e:
        return {"id": call_id, "crash": f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__}


async def serve(
    name: str, version: str, run: Callable[[Any, Ctx[Any]], Awaitable[Any]], max_input_bytes: int, host: str, port: int
) -> None:
    """Listens on `host:port`, each connection's calls in flight until they end."""

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        running: dict[Any, asyncio.Task[None]] = {}

        def send(message: dict[str, Any]) -> None:
            writer.write((json.dumps(message) + "\n").encode())

        async def answer(call_id: Any, arguments: Any) -> None:
            reply = await _direct(run, call_id, arguments)
            running.pop(call_id, None)
            try:
                send(reply)
            except TypeError as e:
                # An output that is not JSON is the agent's crash, said as one.
                send({"id": call_id, "crash": f"the output is not JSON: {e}"})
            await writer.drain()

        send(greeting())
        await writer.drain()
        while line := await reader.readline():
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if not isinstance(request, dict):
                continue
            call_id = request.get("id")
            if request.get("ping"):
                send({"id": call_id, "pong": True})
                await writer.drain()
            elif request.get("cancel"):
                task = running.pop(call_id, None)
                if task is not None:
                    task.cancel()
            else:
                running[call_id] = asyncio.create_task(answer(call_id, request.get("input", {})))
        for task in running.values():
            task.cancel()

    # A line holds an input as large as the largest the gateway admits.
    server = await asyncio.start_server(connection, host, port, limit=2 * max_input_bytes + 64 * 1024)
    print(f"{name} {version}: function mode on {host}:{port}", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()

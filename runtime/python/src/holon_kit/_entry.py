"""`serve(run)`: the MCP server (`_serve`, on the official SDK) or, with `--function`, the
function mode (`_function`), each imported only when it runs: the function mode starts without
the SDK, in a fraction of the time."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from . import _manifest
from ._ctx import Run


def serve(run: Run, *, manifest: str | os.PathLike[str] | None = None) -> None:
    """Serves `run` as the agent's MCP server, on `HOST` and `PORT`; with `--function` on the
    command line, as the function mode `holon-test` calls it through. The manifest is
    `HOLON_MANIFEST`, else `manifest`, else `holon.yaml` beside the file that defines `run`."""
    if os.environ.get("HOLON_MANIFEST"):
        path = Path(os.environ["HOLON_MANIFEST"])
    elif manifest is not None:
        path = Path(manifest)
    else:
        module = sys.modules.get(getattr(run, "__module__", ""), None)
        file = getattr(module, "__file__", None)
        path = _manifest.locate(Path(file).resolve().parent if file else None)
    host = os.environ.get("HOST") or "127.0.0.1"
    try:
        port = int(os.environ.get("PORT") or "8080")
    except ValueError:
        sys.exit(f"error: `PORT` is not a port number: {os.environ.get('PORT')!r}")
    if "--function" in sys.argv[1:]:
        from . import _function

        document = _manifest.read(path)
        limits = document["runtime"].get("limits") or {}
        name, version = str(document["name"]), str(document["version"])
        max_input_bytes = int(limits.get("max_input_bytes", 1_000_000))
        asyncio.run(_function.serve(name, version, run, max_input_bytes, host, port))
    else:
        from . import _serve

        _serve.mcp_server(run, path, host, port)

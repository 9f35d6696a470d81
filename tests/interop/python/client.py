"""The official Python MCP SDK against a Holon agent's server.

    PYTHONPATH=target/interop/python python3 client.py URL TOOL CALLS

CALLS is a JSON array of `{"name": ..., "arguments": {...}}`. Lists the tools (exactly one,
named TOOL), makes each call, and prints one JSON line with what the SDK returned. The SDK
validates `structuredContent` against the tool's `outputSchema` only on successful results; this
client validates failures too, as the strict TypeScript SDK does. Any SDK error exits non-zero.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, tool: str, calls: list) -> dict:
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = (await session.list_tools()).tools
            if len(tools) != 1 or tools[0].name != tool:
                raise RuntimeError(f"expected exactly one tool `{tool}`, got {[t.name for t in tools]}")
            results = []
            for call in calls:
                result = await session.call_tool(tool, call["arguments"])
                # Raises when `structuredContent` does not fit `outputSchema`.
                await session.validate_tool_result(tool, result)
                text = next((c.text for c in result.content if c.type == "text"), None)
                results.append(
                    {
                        "name": call["name"],
                        "isError": bool(result.is_error),
                        "structuredContent": result.structured_content,
                        "text": text,
                    }
                )
            return {
                "sdk": "python",
                "server": {"name": init.server_info.name, "version": init.server_info.version},
                "tools": [
                    {
                        "name": t.name,
                        "description": t.description,
                        "inputSchema": t.input_schema,
                        "outputSchema": t.output_schema,
                    }
                    for t in tools
                ],
                "calls": results,
            }


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("usage: client.py URL TOOL CALLS_JSON", file=sys.stderr)
        sys.exit(2)
    try:
        report = asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
    except BaseException as error:  # an ExceptionGroup from the SDK's task group included
        print(f"python sdk: {error!r}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(report))

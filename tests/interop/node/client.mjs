// The official TypeScript MCP SDK against a Holon agent's server: the strict client, which
// validates `structuredContent` against the tool's `outputSchema` even on `isError` results.
//
//   node client.mjs URL TOOL CALLS
//
// CALLS is a JSON array of `{"name": ..., "arguments": {...}}`. Lists the tools (exactly one,
// named TOOL), makes each call, and prints one JSON line with what the SDK returned. Any SDK
// error, a schema validation error included, exits non-zero.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, callsJson] = process.argv.slice(2);
if (!url || !tool || !callsJson) {
  console.error("usage: node client.mjs URL TOOL CALLS_JSON");
  process.exit(2);
}

const client = new Client({ name: "holon-kit-interop", version: "0.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // listTools also compiles the output schema validators that callTool applies.
  const { tools } = await client.listTools();
  if (tools.length !== 1 || tools[0].name !== tool) {
    throw new Error(
      `expected exactly one tool \`${tool}\`, got ${JSON.stringify(tools.map((t) => t.name))}`,
    );
  }
  const calls = [];
  for (const { name, arguments: args } of JSON.parse(callsJson)) {
    const result = await client.callTool({ name: tool, arguments: args });
    calls.push({
      name,
      isError: result.isError ?? false,
      structuredContent: result.structuredContent ?? null,
      text: result.content?.find((c) => c.type === "text")?.text ?? null,
    });
  }
  console.log(
    JSON.stringify({
      sdk: "typescript",
      server: client.getServerVersion(),
      tools: tools.map(({ name, description, inputSchema, outputSchema }) => ({
        name,
        description,
        inputSchema,
        outputSchema,
      })),
      calls,
    }),
  );
} catch (error) {
  console.error(`typescript sdk: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}

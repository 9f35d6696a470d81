// The official TypeScript MCP SDK replaying a manifest's examples against a Holon agent's
// server, for benches/harness.rs: the peer of the harness's MCP pass, timed the same way (one
// call after the other, each answer checked against the example).
//
//   node replay.mjs URL TOOL EXAMPLES_FILE
//
// EXAMPLES_FILE is a JSON array of `{"arguments": {...}, "output": {...}}` or
// `{"arguments": {...}, "error": "code"}`. Prints one JSON line: calls, mismatches, and the
// median, p90, mean and total of the calls in microseconds.
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, file] = process.argv.slice(2);
if (!url || !tool || !file) {
  console.error("usage: node replay.mjs URL TOOL EXAMPLES_FILE");
  process.exit(2);
}
const examples = JSON.parse(readFileSync(file, "utf8"));

const client = new Client({ name: "holon-kit-replay", version: "0.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // Listing the tool makes callTool validate every result against its outputSchema.
  await client.listTools();
  const us = [];
  let mismatches = 0;
  for (const example of examples) {
    const start = process.hrtime.bigint();
    const result = await client.callTool({ name: tool, arguments: example.arguments });
    const ok =
      example.error === undefined
        ? !result.isError && isDeepStrictEqual(result.structuredContent, example.output)
        : result.isError === true && result.structuredContent?.error?.code === example.error;
    us.push(Number(process.hrtime.bigint() - start) / 1000);
    if (!ok) mismatches++;
  }
  const total = us.reduce((a, b) => a + b, 0);
  us.sort((a, b) => a - b);
  const at = (q) => us[Math.min(us.length - 1, Math.floor(us.length * q))];
  console.log(
    JSON.stringify({
      calls: us.length,
      mismatches,
      median_us: at(0.5),
      p90_us: at(0.9),
      mean_us: total / us.length,
      total_us: total,
    }),
  );
} catch (error) {
  console.error(`typescript sdk: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}

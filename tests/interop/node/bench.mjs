// The same sequential-call benchmark as benches/runtime.rs, with the official TypeScript SDK as
// the client, so the runtime's figure has a peer to be read against.
//
//   node bench.mjs URL TOOL ARGUMENTS_JSON CALLS WARMUP
//
// Prints one JSON line: calls, median, p90, p99 and min, in microseconds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, argsJson, callsArg, warmupArg] = process.argv.slice(2);
const args = JSON.parse(argsJson);
const calls = Number(callsArg);
const warmup = Number(warmupArg);

const client = new Client({ name: "holon-kit-bench", version: "0.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // Listing the tool makes callTool validate every result, as a strict client does.
  await client.listTools();
  const call = async () => {
    const result = await client.callTool({ name: tool, arguments: args });
    if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result)}`);
  };
  for (let i = 0; i < warmup; i++) await call();
  const us = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await call();
    us.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  us.sort((a, b) => a - b);
  const at = (q) => us[Math.min(us.length - 1, Math.floor(us.length * q))];
  console.log(
    JSON.stringify({ calls, median_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99), min_us: us[0] }),
  );
} catch (error) {
  console.error(`typescript sdk: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}

// The least an MCP server of the word-count agent costs on the official TypeScript SDK 2.x: the
// same tool as the template's (its name, its input schema, its output schema with the error
// envelope beside `interface.output`, which a strict client validates every answer against),
// the same handler factory and body limit, and none of what the runtime package adds (the
// timeout, ctx, the failures, the identity, the Host and Origin checks). benches/runtime_packages.sh times calls against it and the package.
//   PORT=N node bare_server.mjs MANIFEST
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { parse } from 'yaml';

const manifest = parse(readFileSync(process.argv[2], 'utf8'));
const { $schema: _dialect, ...output } = manifest.interface.output;
const codes = [...(manifest.interface.errors ?? []).map((e) => e.code), 'agent_crashed', 'invalid_input', 'timeout'];
const envelope = {
  type: 'object',
  additionalProperties: false,
  required: ['error'],
  properties: {
    error: { type: 'object', required: ['code', 'message'], properties: { code: { enum: codes }, message: { type: 'string' } } },
  },
};
const tool = {
  name: manifest.runtime.tool,
  description: manifest.description,
  inputSchema: manifest.interface.input,
  outputSchema: { type: 'object', anyOf: [output, envelope] },
};

function run(input) {
  const minLength = input.min_length ?? 1;
  const words = input.text.split(/[^\p{Alphabetic}\p{N}]+/u).filter((word) => [...word].length >= minLength);
  let longest = '';
  for (const word of words) if ([...word].length > [...longest].length) longest = word;
  return { words: words.length, longest };
}

function server() {
  const instance = new Server({ name: manifest.name, version: manifest.version }, { capabilities: { tools: {} } });
  instance.setRequestHandler('tools/list', () => ({ tools: [tool] }));
  instance.setRequestHandler('tools/call', async (request) => {
    const result = run(request.params.arguments ?? {});
    return instance.projectCallToolResult(
      { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result },
      tool.outputSchema,
    );
  });
  return instance;
}

const maxRequestBodySize = 4 * 1024 * 1024;
const handler = toNodeHandler(createMcpHandler(server, { maxRequestBodySize }), { maxRequestBodySize });
const port = Number(process.env.PORT);
createServer((req, res) => void handler(req, res)).listen(port, '127.0.0.1', () => {
  console.error(`bare server: listening on http://127.0.0.1:${port}/mcp`);
});

// The adapter between `run` (agent.ts) and MCP, on the official TypeScript SDK. You own this
// file: it does on the wire what the Holon runtime does for a Rust agent, and `holon-test`
// holds it to that.
//
// - One tool, `runtime.tool` of holon.yaml, with `interface.input` as its input schema and, as
//   its output schema, `interface.output` or the error envelope (strict clients validate
//   `structuredContent` against it even on `isError` results).
// - A success goes out as `structuredContent` and the same JSON as text; `throw ctx.fail(code,
//   message)` as `isError: true` with `structuredContent.error.code`; a code not declared in
//   `interface.errors`, or anything else thrown, as `agent_crashed` (never with a stack); a run
//   past `runtime.limits.timeout_s` as `timeout`.
// - Streamable HTTP at http://$HOST:$PORT/mcp (HOST defaults to 127.0.0.1, PORT to 8080), both
//   protocol eras: 2025-11-25 (`initialize`) and 2026-07-28 (`server/discover`, `_meta` on
//   every request). SIGTERM lets the calls in flight finish, `timeout_s` + 5 s at most.
// - The input was already checked against `interface.input` by the gateway (and by
//   `holon-test`), so `run` can trust its types: `holon.types.ts`, which `npx holon-test types`
//   writes from holon.yaml.
//
// - `node holon.ts --function`: the function mode `holon-test` runs its `function::` trials
//   through, before the MCP pass: `run` alone, with no MCP in between, over one connection on
//   127.0.0.1:$PORT as JSON lines (`{"id", "input"}` in; `{"id", "output"}`, `{"id", "fail"}`
//   or `{"id", "crash"}` out; `{"id", "cancel"}` aborts `ctx.signal`). What `run` prints does
//   not touch that connection.
//
// Node runs this file as it is (`node holon.ts`: Node 22.18 or later strips the types), so the
// server always runs what you last wrote, and a stack trace points at these lines.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createListener } from 'node:net';
import {
  type CallToolResult,
  createMcpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { parse } from 'yaml';

import { run } from './agent.ts';
import type { Ctx, ErrorCode, Input } from './holon.types.ts';

/** A declared failure: `code` is one of `interface.errors`. */
class Failure extends Error {
  readonly code: string;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

interface Manifest {
  name: string;
  version: string;
  description: string;
  interface: { input: Tool['inputSchema']; output: Record<string, unknown>; errors?: { code: string }[] };
  runtime: { tool: string; limits?: { timeout_s?: number; max_input_bytes?: number } };
}

// The manifest beside this file; `HOLON_MANIFEST` names another, as it does for the Rust runtime.
const manifestPath = process.env.HOLON_MANIFEST ?? new URL('./holon.yaml', import.meta.url);
const manifest = parse(readFileSync(manifestPath, 'utf8')) as Manifest;
const declared = new Set((manifest.interface.errors ?? []).map((e) => e.code));
const timeoutS = manifest.runtime.limits?.timeout_s ?? 30;
const maxInputBytes = manifest.runtime.limits?.max_input_bytes ?? 1_000_000;

// A nested schema may not carry `$schema`.
const { $schema: _dialect, ...output } = manifest.interface.output;
const tool: Tool = {
  name: manifest.runtime.tool,
  description: manifest.description,
  inputSchema: manifest.interface.input,
  outputSchema: {
    type: 'object',
    anyOf: [
      output,
      {
        type: 'object',
        additionalProperties: false,
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { enum: [...declared, 'agent_crashed', 'invalid_input', 'timeout'] },
              message: { type: 'string' },
            },
          },
        },
      },
    ],
  },
};

function failed(code: string, message: string): CallToolResult {
  const envelope = { error: { code, message } };
  return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope, isError: true };
}

const timedOut = Symbol('timeout');

/** One call of `run`, ended the way the gateway reads it. */
async function call(args: Record<string, unknown>): Promise<CallToolResult> {
  const controller = new AbortController();
  const ctx: Ctx = { fail: (code, message) => new Failure(code, message), signal: controller.signal };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof timedOut>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), timeoutS * 1000);
  });
  const running = Promise.resolve().then(() => run(args as unknown as Input, ctx));
  // A run given up on may still fail later: that is not the process's end.
  running.catch(() => {});
  try {
    const result = await Promise.race([running, deadline]);
    if (result === timedOut) {
      controller.abort();
      return failed('timeout', `the run passed \`runtime.limits.timeout_s\` (${timeoutS} s) and was cancelled`);
    }
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as never };
  } catch (e) {
    if (e instanceof Failure) {
      return declared.has(e.code)
        ? failed(e.code, e.message)
        : failed(
            'agent_crashed',
            `the agent failed with \`${e.code}\`, which is not declared in \`interface.errors\`: ${e.message}`,
          );
    }
    return failed('agent_crashed', `the agent threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** A server instance: the SDK makes one for each request, from the same definition. */
function server(): Server {
  const instance = new Server({ name: manifest.name, version: manifest.version }, { capabilities: { tools: {} } });
  instance.setRequestHandler('tools/list', () => ({ tools: [tool] }));
  instance.setRequestHandler('tools/call', async (request) => {
    if (request.params.name !== tool.name) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `unknown tool \`${request.params.name}\`: this server has one tool, \`${tool.name}\``,
      );
    }
    return instance.projectCallToolResult(await call(request.params.arguments ?? {}), tool.outputSchema);
  });
  return instance;
}

/** One call of the function mode: `run` alone, its end as it came (`holon-test` judges it). */
async function direct(id: number, input: Record<string, unknown>, signal: AbortSignal): Promise<object> {
  const ctx: Ctx = { fail: (code, message) => new Failure(code, message), signal };
  try {
    return { id, output: await run(input as unknown as Input, ctx) };
  } catch (e) {
    if (e instanceof Failure) {
      return { id, fail: { code: e.code, message: e.message } };
    }
    return { id, crash: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

/** The function mode: the calls of one connection, each in flight until it ends. */
function functionMode(host: string, port: number): void {
  const listener = createListener((socket) => {
    const running = new Map<number, AbortController>();
    let pending = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const request = JSON.parse(pending.slice(0, end)) as { id: number; input?: Record<string, unknown>; cancel?: boolean };
        pending = pending.slice(end + 1);
        if (request.cancel === true) {
          running.get(request.id)?.abort();
          continue;
        }
        const controller = new AbortController();
        running.set(request.id, controller);
        void direct(request.id, request.input ?? {}, controller.signal).then((reply) => {
          running.delete(request.id);
          socket.write(`${JSON.stringify(reply)}\n`);
        });
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      for (const controller of running.values()) {
        controller.abort();
      }
    });
  });
  listener.listen(port, host, () => {
    console.error(`${manifest.name} ${manifest.version}: function mode on ${host}:${port}`);
  });
}

function fromEnv(name: string, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

const host = fromEnv('HOST', '127.0.0.1');
const port = Number(fromEnv('PORT', '8080'));
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`error: \`PORT\` is not a port number: ${JSON.stringify(process.env.PORT)}`);
  process.exit(1);
}
if (process.argv.includes('--function')) {
  functionMode(host, port);
} else {
  serve(host, port);
}

/** The MCP server. */
function serve(host: string, port: number): void {
  // Room for the largest input the gateway admits, and the request around it.
  const maxRequestBodySize = Math.max(4 * 1024 * 1024, 2 * maxInputBytes + 64 * 1024);
  const handler = toNodeHandler(createMcpHandler(server, { maxRequestBodySize }), { maxRequestBodySize });
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(host);
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();

  const http = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    // On loopback, a browser page must not reach the server through DNS rebinding; elsewhere the
    // gateway sits in front. A browser's foreign origin is refused everywhere.
    if ((loopback && !validHost(req, res)) || !validOrigin(req, res)) {
      return;
    }
    void handler(req, res);
  });
  http.listen(port, host, () => {
    console.error(`${manifest.name} ${manifest.version}: listening on http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`);
  });
  process.on('SIGTERM', () => {
    http.close(() => process.exit(0));
    setTimeout(() => process.exit(0), (timeoutS + 5) * 1000).unref();
  });
}

// `serve(run)`: the agent function as an MCP server of one tool, on the official SDK
// (`@modelcontextprotocol/server` 2.x), as the gateway reads it; or, started with `--function`,
// its function mode for `holon-test`.
//
// - One tool, `runtime.tool` of holon.yaml, with `interface.input` as its input schema and, as
//   its output schema, `interface.output` or the error envelope (strict clients validate
//   `structuredContent` against it even on `isError` results).
// - A success goes out as `structuredContent` and the same JSON as text; `throw ctx.fail(code,
//   message)` as `isError: true` with `structuredContent.error.code`; a code not declared in
//   `interface.errors`, or anything else thrown, as `agent_crashed` (never with a stack); a run
//   past `runtime.limits.timeout_s` as `timeout`, `ctx.signal` aborted.
// - Streamable HTTP at http://$HOST:$PORT/mcp (HOST defaults to 127.0.0.1, PORT to 8080), both
//   protocol eras: 2025-11-25 (`initialize`) and 2026-07-28 (`server/discover`). On loopback,
//   another Host is refused (DNS rebinding), and a browser's foreign Origin everywhere. SIGTERM
//   lets the calls in flight finish, `timeout_s` + 5 s at most.
// - `serverInfo` is the manifest's name and version, and the answers to `initialize` and
//   `server/discover` carry `_meta["holon/manifest"]`: the name, the version, the SHA-256 of the
//   canonical document and `source.commit`, as the Rust runtime announces them.

import { realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import {
  type CallToolResult,
  createMcpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';

import { type Ctx, ctxOf, Failure, oneLine } from './ctx.ts';
import { FILES_META_KEY, Files, linksFromMeta } from './files.ts';
import { functionMode } from './function.ts';
import { identity, load, MANIFEST_META_KEY, type Manifest } from './manifest.ts';

/** Where `serve` finds the manifest, when `HOLON_MANIFEST` names none. */
export interface ServeOptions {
  /** The manifest's path; `holon.yaml` beside the program (`node agent.ts`) by default. */
  manifest?: string | URL;
}

function failed(code: string, message: string): CallToolResult {
  const envelope = { error: { code, message } };
  return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope, isError: true };
}

const timedOut = Symbol('timeout');

type Run<Input, Output, Code extends string> = (input: Input, ctx: Ctx<Code>) => Promise<Output> | Output;

class Agent {
  readonly manifest: Manifest;
  readonly tool: Tool;
  readonly meta: Record<string, unknown>;
  readonly declared: Set<string>;
  readonly timeoutS: number;
  readonly maxInputBytes: number;
  readonly #run: (input: unknown, ctx: Ctx) => unknown;

  constructor(manifest: Manifest, run: (input: unknown, ctx: Ctx) => unknown) {
    this.manifest = manifest;
    this.#run = run;
    this.meta = { [MANIFEST_META_KEY]: identity(manifest) };
    this.declared = new Set((manifest.interface.errors ?? []).map((e) => e.code));
    this.timeoutS = manifest.runtime.limits?.timeout_s ?? 30;
    this.maxInputBytes = manifest.runtime.limits?.max_input_bytes ?? 1_000_000;
    // A nested schema may not carry `$schema`.
    const { $schema: _dialect, ...output } = manifest.interface.output;
    this.tool = {
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
                  code: { enum: [...this.declared, 'agent_crashed', 'invalid_input', 'timeout'] },
                  message: { type: 'string' },
                },
              },
            },
          },
        ],
      },
    };
  }

  /** One call of `run`, ended the way the gateway reads it. */
  async call(args: Record<string, unknown>, files: Files): Promise<CallToolResult> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof timedOut>((resolve) => {
      timer = setTimeout(() => resolve(timedOut), this.timeoutS * 1000);
    });
    const running = Promise.resolve().then(() => this.#run(args, ctxOf(files, controller.signal)));
    // A run given up on may still fail later: that is not the process's end.
    running.catch(() => {});
    try {
      const result = await Promise.race([running, deadline]);
      if (result === timedOut) {
        controller.abort();
        return failed('timeout', `the run passed \`runtime.limits.timeout_s\` (${this.timeoutS} s) and was cancelled`);
      }
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as never };
    } catch (e) {
      if (e instanceof Failure) {
        return this.declared.has(e.code)
          ? failed(e.code, e.message)
          : failed(
              'agent_crashed',
              `the agent failed with \`${e.code}\`, which is not declared in \`interface.errors\`: ${e.message}`,
            );
      }
      return failed('agent_crashed', `the agent threw ${oneLine(e)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A server instance: the SDK makes one for each request, from the same definition. */
  server(): Server {
    const { name, version } = this.manifest;
    const instance = new Server({ name, version: String(version) }, { capabilities: { tools: {} } });
    // The answers that open an era say which manifest this server was built from.
    const opening = instance as unknown as {
      _oninitialize(request: unknown): Promise<Record<string, unknown>>;
      _ondiscover(): Record<string, unknown>;
    };
    const initialize = opening._oninitialize.bind(instance);
    const discover = opening._ondiscover.bind(instance);
    opening._oninitialize = async (request) => ({ ...(await initialize(request)), _meta: this.meta });
    opening._ondiscover = () => ({ ...discover(), _meta: this.meta });
    instance.setRequestHandler('tools/list', () => ({ tools: [this.tool] }));
    instance.setRequestHandler('tools/call', async (request) => {
      if (request.params.name !== this.tool.name) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `unknown tool \`${request.params.name}\`: this server has one tool, \`${this.tool.name}\``,
        );
      }
      const files = new Files(linksFromMeta(request.params._meta?.[FILES_META_KEY]));
      return instance.projectCallToolResult(await this.call(request.params.arguments ?? {}, files), this.tool.outputSchema);
    });
    return instance;
  }

  /** The MCP server on `host:port`. */
  listen(host: string, port: number): void {
    // Room for the largest input the gateway admits, and the request around it.
    const maxRequestBodySize = Math.max(4 * 1024 * 1024, 2 * this.maxInputBytes + 64 * 1024);
    const handler = toNodeHandler(createMcpHandler(() => this.server(), { maxRequestBodySize }), { maxRequestBodySize });
    const loopback = ['127.0.0.1', 'localhost', '::1'].includes(host);
    const validHost = localhostHostValidation();
    const validOrigin = localhostOriginValidation();
    const http = createServer((req, res) => {
      if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      // On loopback, a browser page must not reach the server through DNS rebinding; elsewhere
      // the gateway sits in front. A browser's foreign origin is refused everywhere.
      if ((loopback && !validHost(req, res)) || !validOrigin(req, res)) {
        return;
      }
      void handler(req, res);
    });
    http.listen(port, host, () => {
      const shown = host.includes(':') ? `[${host}]` : host;
      console.error(`${this.manifest.name} ${this.manifest.version}: listening on http://${shown}:${port}/mcp`);
    });
    process.on('SIGTERM', () => {
      http.close(() => process.exit(0));
      http.closeIdleConnections();
      setTimeout(() => process.exit(0), (this.timeoutS + 5) * 1000).unref();
    });
  }
}

function fromEnv(name: string, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

/** `holon.yaml` beside the program Node runs (`node agent.ts`), or in the working folder. */
function besideProgram(): string {
  const program = process.argv[1];
  if (program === undefined) return 'holon.yaml';
  try {
    return join(dirname(realpathSync(program)), 'holon.yaml');
  } catch {
    return 'holon.yaml';
  }
}

/**
 * Serves `run` as the agent's MCP server, on `HOST` and `PORT`; with `--function` on the command
 * line, as the function mode `holon-test` calls it through. The manifest is `HOLON_MANIFEST`,
 * else `options.manifest`, else `holon.yaml` beside the program.
 */
export function serve<Input, Output, Code extends string>(
  run: Run<Input, Output, Code>,
  options: ServeOptions = {},
): void {
  const manifest = load(fromEnv('HOLON_MANIFEST', '') || (options.manifest ?? besideProgram()));
  const host = fromEnv('HOST', '127.0.0.1');
  const port = Number(fromEnv('PORT', '8080'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`error: \`PORT\` is not a port number: ${JSON.stringify(process.env.PORT)}`);
    process.exit(1);
  }
  const untyped = run as unknown as (input: unknown, ctx: Ctx) => unknown;
  if (process.argv.slice(2).includes('--function')) {
    functionMode(manifest.name, String(manifest.version), untyped as never, host, port);
  } else {
    new Agent(manifest, untyped).listen(host, port);
  }
}

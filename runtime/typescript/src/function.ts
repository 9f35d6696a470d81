// The function mode, protocol version 1 (the kit's own; `holon-harness`'s `adapter` module
// specifies it): `run` alone, with no MCP in between, for `holon-test`'s `function::` trials.
//
// On each connection to `HOST:PORT`, JSON lines. This side speaks first, a greeting that names
// the protocol, the package's version and Node's; then `{"id", "input"}` is answered by `{"id",
// "output"}`, `{"id", "fail": {code, message}}` or `{"id", "crash": "TypeError: boom"}` (one line,
// no stack); `{"id", "cancel"}` aborts the call's `ctx.signal`; `{"id", "ping"}` is answered
// `{"id", "pong"}` from the event loop the calls run on, so a loop a call blocks answers none.
// What `run` prints never touches the connection. `ctx.download("holon://files/NAME")` reads
// `NAME` in the folder `HOLON_FILES` names.

import { createServer } from 'node:net';

import { type Ctx, ctxOf, Failure, oneLine } from './ctx.ts';
import { Files } from './files.ts';
import { VERSION } from './version.ts';

export const PROTOCOL = 1;

export function greeting(): object {
  return { holon: 'function', protocol: PROTOCOL, runtime: `holon-kit ${VERSION}`, language: `Node ${process.versions.node}` };
}

type Run = (input: never, ctx: Ctx<never>) => unknown;

/** One call: `run` alone, its end as it came (`holon-test` judges it). */
async function direct(run: Run, id: unknown, input: unknown, signal: AbortSignal): Promise<object> {
  try {
    const output = await run(input as never, ctxOf<never>(Files.ofFunctionMode(), signal));
    return { id, output };
  } catch (e) {
    if (e instanceof Failure) return { id, fail: { code: e.code, message: e.message } };
    return { id, crash: oneLine(e) };
  }
}

export function functionMode(name: string, version: string, run: Run, host: string, port: number): void {
  const listener = createServer((socket) => {
    const running = new Map<unknown, AbortController>();
    const send = (message: object) => socket.write(`${JSON.stringify(message)}\n`);
    let pending = '';
    socket.setEncoding('utf8');
    socket.setNoDelay(true);
    send(greeting());
    socket.on('data', (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        let request: { id?: unknown; input?: unknown; cancel?: boolean; ping?: boolean };
        try {
          request = JSON.parse(line);
        } catch {
          continue;
        }
        if (request.ping === true) {
          send({ id: request.id, pong: true });
        } else if (request.cancel === true) {
          running.get(request.id)?.abort();
        } else {
          const controller = new AbortController();
          running.set(request.id, controller);
          void direct(run, request.id, request.input ?? {}, controller.signal).then((reply) => {
            running.delete(request.id);
            try {
              send(reply);
            } catch (e) {
              // An output that is not JSON is the agent's crash, said as one.
              send({ id: request.id, crash: `the output is not JSON: ${oneLine(e)}` });
            }
          });
        }
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      for (const controller of running.values()) controller.abort();
    });
  });
  listener.listen(port, host, () => {
    console.error(`${name} ${version}: function mode on ${host}:${port}`);
  });
}

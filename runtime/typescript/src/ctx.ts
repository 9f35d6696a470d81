// What the agent function gets beside its input: `ctx.fail`, `ctx.download` and `ctx.signal`.

import type { Files } from './files.ts';

/** A declared failure: `code` is one of `interface.errors`. */
export class Failure extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'Failure';
    this.code = code;
  }
}

/**
 * What `run(input, ctx)` gets beside its input. `holon.types.ts` (`holon-test types`) names it
 * `Ctx<ErrorCode>`, so `ctx.fail` takes only the codes holon.yaml declares.
 */
export interface Ctx<Code extends string = string> {
  /** A declared failure, to throw: `throw ctx.fail('empty_text', 'the text is empty')`. */
  fail(code: Code, message: string): Failure;
  /**
   * The bytes of a `holon://files/NAME` handle of the input, their size and SHA-256 checked; a
   * `DownloadError` (its `kind` says why) otherwise.
   */
  download(handle: string): Promise<Uint8Array>;
  /** Aborted when the run passes `runtime.limits.timeout_s`: stop working then, the call is over. */
  readonly signal: AbortSignal;
}

/** The context of one call. */
export function ctxOf<Code extends string>(files: Files, signal: AbortSignal): Ctx<Code> {
  return {
    fail: (code, message) => new Failure(code, message),
    download: (handle) => files.download(handle, signal),
    signal,
  };
}

/** Anything thrown, in one line and without a stack: `TypeError: boom`. */
export function oneLine(e: unknown): string {
  const said = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return said.split('\n')[0] ?? said;
}

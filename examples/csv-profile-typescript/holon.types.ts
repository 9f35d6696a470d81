// Generated from holon.yaml by `npx holon-test types`: the types of its `interface`,
// for the agent function. Do not edit: run it again when
// holon.yaml changes (a test run says when this file is out of date).

import type { Ctx as RuntimeCtx } from 'holon-kit';

/** The call's arguments: `interface.input`. */
export interface Input {
  /** A CSV file uploaded to Holon, with a header row. */
  file: string;
  /** The field separator. */
  delimiter?: "," | ";" | "\t";
}

/** A successful answer: `interface.output`. */
export interface Output {
  /** Data rows, the header not counted. */
  rows: number;
  /** The columns in header order. */
  columns: {
    /** The header of the column. */
    name: string;
    /** Rows whose cell is empty or only whitespace. */
    missing: number;
  }[];
}

/** The codes `interface.errors` declares: the only codes `ctx.fail` takes. */
export type ErrorCode = 'empty_csv' | 'not_csv' | 'file_unreadable';

/**
 * What the agent function gets beside its input: `ctx.fail` takes only the declared codes,
 * `await ctx.download(handle)` gives a `holon://files/` handle's bytes, `ctx.signal` is aborted
 * at `runtime.limits.timeout_s`.
 */
export type Ctx = RuntimeCtx<ErrorCode>;

// The {{name}} agent: counts the words of a text and finds the longest one. `holon.ts` serves
// `run` as an MCP server; `npm test` runs every example of holon.yaml through it.

import type { Ctx } from './holon.js';

/** The call's arguments, as `interface.input` in holon.yaml describes them. */
export interface Input {
  /** The text to read. */
  text: string;
  /** Words shorter than this many characters are not counted (default 1). */
  min_length?: number;
}

/** The answer, as `interface.output` describes it. */
export interface Output {
  /** How many words of at least `min_length` characters. */
  words: number;
  /** The longest such word, the first one on a tie. */
  longest: string;
}

/** The agent function: called once a call, behind the MCP server. */
export async function run(input: Input, ctx: Ctx): Promise<Output> {
  const minLength = input.min_length ?? 1;
  if (input.text.trim() === '') {
    throw ctx.fail('empty_text', 'the text is empty');
  }
  // A word is a run of letters and digits; its length is counted in characters.
  const words = input.text
    .split(/[^\p{Alphabetic}\p{N}]+/u)
    .filter((word) => [...word].length >= minLength);
  let longest = '';
  for (const word of words) {
    if ([...word].length > [...longest].length) {
      longest = word;
    }
  }
  if (words.length === 0) {
    throw ctx.fail('no_words', `no word has ${minLength} characters or more`);
  }
  return { words: words.length, longest };
}

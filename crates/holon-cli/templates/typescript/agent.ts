// The {{name}} agent: counts the words of a text and finds the longest one. `node agent.ts`
// serves `run` as an MCP server (the `holon-kit` package); `npm test` runs every example of
// holon.yaml through it.

import { serve } from 'holon-kit';

import type { Ctx, Input, Output } from './holon.types.ts';

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

serve(run);

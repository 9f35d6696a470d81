// The {{name}} agent: triages a support ticket (a priority and a one-line summary) by asking a
// chat model through the official `openai` SDK, streamed. The SDK reads the model's base URL
// from `OPENAI_BASE_URL` (default OpenAI's) and its key from `OPENAI_API_KEY`: under
// `holon-test` the first points at the recordings in `recordings/`, so the tests run offline and
// need no key. `node agent.ts` serves `run` as an MCP server (the `holon-kit` package).

import { serve } from 'holon-kit';
import OpenAI from 'openai';

import type { Ctx, Input, Output } from './holon.types.ts';

/** What the model is asked to do. */
const PROMPT =
  'You triage support tickets. Answer with a JSON object and nothing else: ' +
  '{"priority": "low" | "medium" | "high", "summary": one line of at most 200 characters}.';

// One client for the process, its connections kept across calls. A model silent for 5 s is
// given up on, well inside `timeout_s` (30 s), so a stalled model costs the caller a declared
// failure, never a `timeout`. No retries of the SDK's own: a failure of the model is
// `upstream_unavailable`, marked `retryable: true`, so the caller tries again when it chooses,
// and a retry here would spend the call's `timeout_s` twice. (The SDK wants a key to start:
// under `holon-test`'s replay it is given a stand-in.)
const client = new OpenAI({ timeout: 5_000, maxRetries: 0 });

/** The agent function: called once a call, behind the MCP server. */
export async function run(input: Input, ctx: Ctx): Promise<Output> {
  if (input.ticket.trim() === '') {
    throw ctx.fail('empty_ticket', 'the ticket is empty');
  }
  let content = '';
  try {
    const stream = await client.chat.completions.create(
      {
        model: 'gpt-4o-mini',
        stream: true,
        // The tokens each call spends: a measured run reads them (`--upstream live --repeat`).
        stream_options: { include_usage: true },
        temperature: 0,
        messages: [
          { role: 'system', content: PROMPT },
          { role: 'user', content: input.ticket },
        ],
      },
      { signal: ctx.signal },
    );
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
    }
  } catch (e) {
    // A rate limit, an outage, a cut stream, a model that does not answer: the caller may try
    // again later (`retryable: true`).
    const why = e instanceof OpenAI.APIError ? `${e.status ?? 'no status'}: ${e.message}` : String(e);
    throw ctx.fail('upstream_unavailable', `the model could not answer: ${why}`);
  }
  return answer(content, ctx);
}

/** The model's answer as the output, or the declared failure when it is not one. */
function answer(content: string, ctx: Ctx): Output {
  const unreadable = () => ctx.fail('model_answer_unreadable', `the model answered ${JSON.stringify(content.slice(0, 200))}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.trim());
  } catch {
    throw unreadable();
  }
  if (typeof parsed !== 'object' || parsed === null) {
    throw unreadable();
  }
  const { priority, summary } = parsed as Record<string, unknown>;
  if (
    (priority !== 'low' && priority !== 'medium' && priority !== 'high') ||
    typeof summary !== 'string' ||
    [...summary].length > 400
  ) {
    throw unreadable();
  }
  return { priority, summary };
}

serve(run);

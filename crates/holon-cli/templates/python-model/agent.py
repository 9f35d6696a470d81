"""The {{name}} agent: triages a support ticket (a priority and a one-line summary) by asking a
chat model through the official `openai` SDK, streamed. The SDK reads the model's base URL from
`OPENAI_BASE_URL` (default OpenAI's) and its key from `OPENAI_API_KEY`: under `holon-test` the
first points at the recordings in `recordings/`, so the tests run offline and need no key.
`python agent.py` serves `run` as an MCP server (the `holon-kit` package)."""

import json

import openai
from holon_kit import serve

from holon_types import Ctx, Input, Output

PROMPT = (
    "You triage support tickets. Answer with a JSON object and nothing else: "
    '{"priority": "low" | "medium" | "high", "summary": one line of at most 200 characters}.'
)

# One client for the process, its connections kept across calls. A model silent for 5 s is given
# up on, well inside `timeout_s` (30 s), so a stalled model costs the caller a declared failure,
# never a `timeout`. No retries of the SDK's own: a failure of the model is
# `upstream_unavailable`, marked `retryable: true`, so the caller tries again when it chooses, and
# a retry here would spend the call's `timeout_s` twice. (The SDK wants a key to start: under
# `holon-test`'s replay it is given a stand-in.)
CLIENT = openai.AsyncOpenAI(timeout=5, max_retries=0)


async def run(input: Input, ctx: Ctx) -> Output:
    """The agent function, called once a call with the arguments `interface.input` describes."""
    ticket = input["ticket"]
    if not ticket.strip():
        raise ctx.fail("empty_ticket", "the ticket is empty")
    content: list[str] = []
    try:
        stream = await CLIENT.chat.completions.create(
            model="gpt-4o-mini",
            stream=True,
            # The tokens each call spends: a measured run reads them (`--upstream live --repeat`).
            stream_options={"include_usage": True},
            temperature=0,
            messages=[
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": ticket},
            ],
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                content.append(chunk.choices[0].delta.content)
    except openai.APIError as e:
        # A rate limit, an outage, a cut stream, a model that does not answer: the caller may
        # try again later (`retryable: true`).
        raise ctx.fail("upstream_unavailable", f"the model could not answer: {e}") from e
    return answer("".join(content), ctx)


def answer(content: str, ctx: Ctx) -> Output:
    """The model's answer as the output, or the declared failure when it is not one."""
    unreadable = ctx.fail("model_answer_unreadable", f"the model answered {content[:200]!r}")
    try:
        parsed = json.loads(content.strip())
    except ValueError:
        raise unreadable from None
    if not isinstance(parsed, dict):
        raise unreadable
    priority, summary = parsed.get("priority"), parsed.get("summary")
    if not isinstance(summary, str) or len(summary) > 400:
        raise unreadable
    if priority == "low" or priority == "medium" or priority == "high":
        return {"priority": priority, "summary": summary}
    raise unreadable


if __name__ == "__main__":
    serve(run)

"""The {{name}} agent: counts the words of a text and finds the longest one. `python agent.py`
serves `run` as an MCP server (the `holon-kit` package); `holon-test` runs every example of
holon.yaml through it."""

from holon_kit import serve

from holon_types import Ctx, Input, Output


async def run(input: Input, ctx: Ctx) -> Output:
    """The agent function, called once a call with the arguments `interface.input` describes:
    `text`, and `min_length` (words shorter than this many characters are not counted)."""
    min_length = input.get("min_length", 1)
    text = input["text"]
    if not text.strip():
        raise ctx.fail("empty_text", "the text is empty")
    # A word is a run of letters and digits; its length is counted in characters.
    words = [w for w in split_words(text) if len(w) >= min_length]
    longest = ""
    for word in words:
        if len(word) > len(longest):
            longest = word
    if not words:
        raise ctx.fail("no_words", f"no word has {min_length} characters or more")
    return {"words": len(words), "longest": longest}


def split_words(text: str) -> list[str]:
    words: list[str] = []
    word: list[str] = []
    for c in text:
        if c.isalnum():
            word.append(c)
        elif word:
            words.append("".join(word))
            word = []
    if word:
        words.append("".join(word))
    return words


if __name__ == "__main__":
    serve(run)

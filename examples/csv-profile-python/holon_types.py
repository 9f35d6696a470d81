"""Generated from holon.yaml by `uv run holon-test types`: the types of its `interface`,
for the agent function. Do not edit: run it again when
holon.yaml changes (a test run says when this file is out of date)."""


from typing import Literal, NotRequired, TypedDict

from holon_kit import Ctx as RuntimeCtx


class OutputColumnsItem(TypedDict):
    name: str
    """The header of the column."""
    missing: int
    """Rows whose cell is empty or only whitespace."""


class Input(TypedDict):
    """The call's arguments: `interface.input`."""

    file: str
    """A CSV file uploaded to Holon, with a header row."""
    delimiter: NotRequired[Literal[",", ";", "\t"]]
    """The field separator."""


class Output(TypedDict):
    """A successful answer: `interface.output`."""

    rows: int
    """Data rows, the header not counted."""
    columns: list[OutputColumnsItem]
    """The columns in header order."""


ErrorCode = Literal["empty_csv", "not_csv", "file_unreadable"]
"""The codes `interface.errors` declares: the only codes `ctx.fail` takes."""


Ctx = RuntimeCtx[ErrorCode]
"""What the agent function gets beside its input: `ctx.fail` takes only the declared codes,
`await ctx.download(handle)` gives a `holon://files/` handle's bytes."""

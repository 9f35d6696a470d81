"""What the agent function gets beside its input: `ctx.fail` and `ctx.download`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from ._files import Files

Code = TypeVar("Code", bound=str, contravariant=True)


class Failure(Exception):
    """A declared failure: `code` is one of `interface.errors`."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class Ctx(Generic[Code]):
    """What `run(input, ctx)` gets beside its input. `holon_types.py` (`holon-test types`) names
    it `Ctx[ErrorCode]`, so `ctx.fail` takes only the codes holon.yaml declares. A run past
    `runtime.limits.timeout_s` is cancelled (`asyncio.CancelledError` at its next `await`)."""

    def __init__(self, files: Files):
        self._files = files

    def fail(self, code: Code, message: str) -> Failure:
        """A declared failure, to raise: `raise ctx.fail("empty_text", "the text is empty")`."""
        return Failure(code, message)

    async def download(self, handle: str) -> bytes:
        """The bytes of a `holon://files/NAME` handle of the input, their size and SHA-256
        checked; a `DownloadError` (its `kind` says why) otherwise."""
        return await self._files.download(handle)


Run = Callable[[Any, Ctx[Any]], Awaitable[Any]]
"""The agent function: `async def run(input, ctx)`."""

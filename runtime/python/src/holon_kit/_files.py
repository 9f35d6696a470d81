"""`holon://files/` handles and `ctx.download`, as the Rust runtime does them.

With each `tools/call` the gateway passes, in the request's `_meta` under `holon/files`, an
object mapping each handle in the arguments to `{url, size, sha256, expires_at}` (seconds since
the Unix epoch). Only that link is fetched, never a redirect, never after `expires_at`; the read
stops one byte past `size`, and the bytes are returned only when the size and the SHA-256 match.
In the function mode, `holon://files/NAME` is `NAME` in the folder `HOLON_FILES` names (the
`files/` folder beside the manifest), never outside it."""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

HANDLE_PREFIX = "holon://files/"
META_KEY = "holon/files"

Kind = Literal["not_a_handle", "no_link", "expired", "wrong_size", "wrong_hash", "http", "unreachable", "no_test_file"]


class DownloadError(Exception):
    """Why `ctx.download` returned no bytes. `kind` tells the causes apart, so the agent can map
    each to a declared code (`except DownloadError as e: raise ctx.fail("file_unreadable", str(e))`):

    - `not_a_handle`: the string is not a `holon://files/NAME` handle;
    - `no_link`: the call carries no link for this handle;
    - `expired`: the link expired before the download (nothing was fetched);
    - `wrong_size`: the bytes are not the announced size (a longer body is read one byte past it);
    - `wrong_hash`: the bytes do not hash to the announced SHA-256;
    - `http`: the file server answered another status than 200 (`status`; a redirect is one);
    - `unreachable`: the link could not be fetched at all;
    - `no_test_file`: in the function mode, `files/NAME` is missing or leaves the folder.
    """

    def __init__(self, kind: Kind, handle: str, message: str, status: int | None = None):
        super().__init__(message)
        self.kind: Kind = kind
        self.handle = handle
        self.status = status


@dataclass(frozen=True)
class FileLink:
    """One signed link, as the gateway sends it."""

    url: str
    size: int
    sha256: str
    expires_at: int


def links_from_meta(meta: Any) -> dict[str, FileLink]:
    """The links of a request's `_meta["holon/files"]`; a malformed entry gives none, so its
    download says `no_link` rather than guess."""
    links: dict[str, FileLink] = {}
    if not isinstance(meta, dict):
        return links
    for handle, link in meta.items():
        if not isinstance(link, dict) or set(link) != {"url", "size", "sha256", "expires_at"}:
            continue
        url, size, sha256, expires_at = link["url"], link["size"], link["sha256"], link["expires_at"]
        if (
            isinstance(url, str)
            and isinstance(sha256, str)
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (size, expires_at))
        ):
            links[str(handle)] = FileLink(url, size, sha256, expires_at)
    return links


def handle_name(handle: str) -> str:
    """`NAME` of `holon://files/NAME`, or why it is no name inside `files/`."""
    name = handle[len(HANDLE_PREFIX) :]
    if not name:
        raise ValueError("the handle names no file")
    if "\\" in name or "\0" in name:
        raise ValueError("a file name may not contain `\\` or NUL")
    if name.startswith("/") or any(part in ("", ".", "..") for part in name.split("/")):
        raise ValueError("the name leaves the `files/` folder")
    return name


def read_test_file(folder: str | None, handle: str) -> bytes:
    """The function mode's `holon://files/NAME`: `NAME` in `folder`, symlinks resolved, never
    outside it."""

    def fail(message: str) -> DownloadError:
        return DownloadError("no_test_file", handle, f"no test file for `{handle}`: {message}")

    try:
        name = handle_name(handle)
    except ValueError as e:
        raise fail(str(e)) from None
    if not folder:
        raise fail("`HOLON_FILES` names no folder (the function mode is started by `holon-test`)")
    try:
        root = Path(folder).resolve(strict=True)
        path = (root / PurePosixPath(name)).resolve(strict=True)
    except OSError as e:
        raise fail(f"`files/{name}`: {e.strerror or e}") from None
    # A symlink inside `files/` may not lead out of it either.
    if not path.is_relative_to(root):
        raise fail("the file leaves the `files/` folder")
    try:
        return path.read_bytes()
    except OSError as e:
        raise fail(f"`files/{name}`: {e.strerror or e}") from None


async def fetch(handle: str, link: FileLink) -> bytes:
    """The bytes of `link`, checked; streamed, never more than `size + 1` bytes held."""
    if time.time() >= link.expires_at:
        raise DownloadError("expired", handle, f"the link for `{handle}` expired at {link.expires_at}")
    if not link.url.startswith(("http://", "https://")):
        scheme = link.url.split(":", 1)[0]
        raise DownloadError("unreachable", handle, f"cannot fetch `{handle}`: `{scheme}` links are not fetched")
    # The SDK's HTTP client, imported by the first download: the function mode never needs it.
    import httpx2

    limit = link.size + 1
    chunks: list[bytes] = []
    held = 0
    try:
        async with httpx2.AsyncClient(follow_redirects=False, trust_env=False, timeout=None) as client:
            # The bytes as they are: no compression asked for, none undone.
            async with client.stream("GET", link.url, headers={"accept-encoding": "identity"}) as response:
                if response.status_code != 200:
                    moved = " (a redirect, not followed)" if 300 <= response.status_code < 400 else ""
                    raise DownloadError(
                        "http",
                        handle,
                        f"fetching `{handle}` failed with HTTP {response.status_code}{moved}",
                        status=response.status_code,
                    )
                async for chunk in response.aiter_raw():
                    chunk = chunk[: limit - held]
                    chunks.append(chunk)
                    held += len(chunk)
                    if held >= limit:
                        break
    except httpx2.HTTPError as e:
        raise DownloadError("unreachable", handle, f"cannot fetch `{handle}`: {e}") from None
    except (OSError, ValueError) as e:
        raise DownloadError("unreachable", handle, f"cannot fetch `{handle}`: {e}") from None
    data = b"".join(chunks)
    if len(data) != link.size:
        got = f"more than {link.size}" if len(data) > link.size else str(len(data))
        raise DownloadError("wrong_size", handle, f"`{handle}` should be {link.size} bytes, got {got}")
    if hashlib.sha256(data).hexdigest() != link.sha256.lower():
        raise DownloadError("wrong_hash", handle, f"`{handle}` does not match its SHA-256")
    return data


class Files:
    """Where one call's files come from: the call's links, or the function mode's folder."""

    def __init__(self, links: dict[str, FileLink] | None = None, folder: str | None = None):
        self.links = links or {}
        self.folder = folder

    @staticmethod
    def of_function_mode() -> Files:
        return Files(folder=os.environ.get("HOLON_FILES", ""))

    async def download(self, handle: str) -> bytes:
        if not isinstance(handle, str) or not handle.startswith(HANDLE_PREFIX):
            raise DownloadError("not_a_handle", str(handle), f"`{handle}` is not a file handle (`{HANDLE_PREFIX}NAME`)")
        if self.folder is not None:
            return read_test_file(self.folder, handle)
        link = self.links.get(handle)
        if link is None:
            raise DownloadError("no_link", handle, f"the call carries no link for `{handle}`")
        return await fetch(handle, link)

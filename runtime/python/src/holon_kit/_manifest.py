"""The manifest a server runs on, read as the kit's checks read it (YAML 1.2's core schema), and
its identity: the name, the version, the SHA-256 of the document as canonical JSON (RFC 8785)
and `source.commit`, which the server announces under `_meta["holon/manifest"]`."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types

META_KEY = "holon/manifest"


class _Core(yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML reads YAML 1.1 (`yes` is true, `010` is 8, `2024-01-01` a date); the kit reads
    1.2's core schema, and so does this loader: the same document, the same hash."""


_Core.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|[-+]?0o[0-7]+|[-+]?0x[0-9a-fA-F]+|[-+]?0b[01]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", ["<"]),
]:
    _Core.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits, 10)


def _float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node)).lower()
    if text.endswith(".inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text == ".nan":
        return math.nan
    return float(text)


_Core.add_constructor("tag:yaml.org,2002:int", _int)
_Core.add_constructor("tag:yaml.org,2002:float", _float)


def parse(text: str) -> Any:
    """The document of a manifest's text."""
    return yaml.load(text, Loader=_Core)  # noqa: S506 - a SafeLoader with 1.2's resolvers


def _number(x: float) -> str:
    """A double as ECMAScript's `Number.prototype.toString` writes it (RFC 8785, 3.2.2.3)."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        raise ValueError("a manifest number is not finite")
    sign = "-" if x < 0 else ""
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction.rstrip("0")).lstrip("0") or "0"
    # The position of the decimal point after the first digit, as ECMAScript counts it (`n`).
    point = len(whole.lstrip("0")) if whole.lstrip("0") else -(len(fraction) - len(fraction.lstrip("0")))
    n = point + int(exponent or 0)
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    shown = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{shown}e{'+' if e >= 0 else '-'}{abs(e)}"


def _canonical(value: Any, out: list[str]) -> None:
    if value is None or isinstance(value, bool):
        out.append(json.dumps(value))
    elif isinstance(value, int):
        out.append(str(value) if abs(value) <= 2**53 else _number(float(value)))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _canonical(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        # Keys in the order of their UTF-16 code units, as RFC 8785 sorts them.
        entries = sorted(((str(k), v) for k, v in value.items()), key=lambda e: e[0].encode("utf-16-be"))
        for i, (key, item) in enumerate(entries):
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _canonical(item, out)
        out.append("}")
    else:
        out.append(json.dumps(str(value), ensure_ascii=False))


def canonical(document: Any) -> str:
    """The document as canonical JSON (RFC 8785)."""
    out: list[str] = []
    _canonical(document, out)
    return "".join(out)


def identity(document: Any) -> dict[str, str]:
    """The value announced under `holon/manifest`: `{name, version, sha256, commit?}`."""
    sha256 = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
    announced = {"name": str(document["name"]), "version": str(document["version"]), "sha256": sha256}
    commit = (document.get("source") or {}).get("commit")
    if isinstance(commit, str):
        announced["commit"] = commit
    return announced


def read(path: Path) -> Any:
    """The document of the manifest at `path`; the process ends, saying why, when it cannot be
    read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        sys.exit(f"error: cannot read the manifest `{path}`: {e.strerror or e}")
    return parse(text)


def locate(beside: Path | None) -> Path:
    """The manifest to serve: `HOLON_MANIFEST`, else `holon.yaml` beside the agent's file."""
    named = os.environ.get("HOLON_MANIFEST")
    if named:
        return Path(named)
    if beside is None:
        beside = Path(sys.argv[0]).resolve().parent if sys.argv and sys.argv[0] else Path.cwd()
    return beside / "holon.yaml"

"""Text that cannot be encoded as UTF-8, made safe where it crosses into the native core.

Python strings may hold lone surrogates (``"\\ud800"``): ``os.listdir`` and ``sys.argv``
decode undecodable bytes with ``surrogateescape`` (``b"bad\\xff"`` is ``"bad\\udcff"``),
providers emit ``\\ud800`` escapes in JSON, and a truncated emoji leaves half a pair. Rust
strings are UTF-8 only, so such text makes every native call (the loop machine, the
redactor, the command matcher) fail. Each boundary passes text through :func:`scrub_text`:
every lone surrogate becomes U+FFFD, a high/low pair written as two code points becomes the
character it encodes, and anything else is kept as it is.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["has_surrogates", "scrub", "scrub_item", "scrub_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (which UTF-8 cannot encode)."""
    return _SURROGATE.search(text) is not None


def scrub_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (``text`` itself when it has none).

    Example:
        >>> scrub_text("a\\ud800b") == "a\\ufffdb"
        True
        >>> scrub_text("\\ud83d\\ude00") == "\\U0001f600"
        True
    """
    if not has_surrogates(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def scrub(value: _T) -> _T:
    """``value`` with :func:`scrub_text` applied to every string in it (dict keys too).

    Walks dicts, lists and tuples; returns ``value`` itself (the same object) when nothing
    needed replacing, so the common case allocates nothing.
    """
    out: Any
    if isinstance(value, str):
        out = scrub_text(value)
    elif isinstance(value, dict):
        items = [(scrub(k), scrub(v)) for k, v in value.items()]
        pairs = zip(items, value.items(), strict=True)
        changed = any(k2 is not k or v2 is not v for (k2, v2), (k, v) in pairs)
        out = dict(items) if changed else value
    elif isinstance(value, list | tuple):
        new = [scrub(v) for v in value]
        if all(a is b for a, b in zip(new, value, strict=True)):
            out = value
        else:
            out = new if isinstance(value, list) else tuple(new)
    else:
        out = value
    return out  # type: ignore[no-any-return]


def scrub_item(item: _M) -> _M:
    """A pydantic item (model text, a tool call and its arguments) with :func:`scrub`
    applied to its fields; ``item`` itself when nothing needed replacing."""
    dumped = item.model_dump()
    cleaned = scrub(dumped)
    if cleaned is dumped:
        return item
    return type(item).model_validate(cleaned)

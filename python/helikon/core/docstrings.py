"""Split a Google-style docstring into the tool description and per-argument descriptions."""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Returns|Return|Yields|Raises|Examples?|Notes?|Attributes)\s*:\s*$"
)
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Return ``(description, {arg: description})`` from a Google-style docstring.

    The description is everything before the first section header, with its lines joined
    as written. Argument descriptions come from the ``Args:`` section; a continuation line
    (indented deeper than the argument name) is joined with a space.

    Example:
        >>> parse_docstring('''Add.
        ...
        ... Args:
        ...     a: first.
        ...     b: second,
        ...         continued.
        ... ''')
        ('Add.', {'a': 'first.', 'b': 'second, continued.'})
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent = -1
    for raw in lines:
        stripped = raw.strip()
        m = _SECTION.match(stripped)
        if m and len(raw) - len(raw.lstrip()) == 0:
            section = m.group(1).lower()
            current = None
            arg_indent = -1
            continue
        if section is None:
            desc.append(raw)
            continue
        if section not in ("args", "arguments", "parameters") or not stripped:
            continue
        indent = len(raw) - len(raw.lstrip())
        am = _ARG.match(stripped)
        if am and (arg_indent < 0 or indent <= arg_indent):
            arg_indent = indent
            current = am.group(1).lstrip("*")
            args[current] = am.group(2).strip()
        elif current is not None:
            args[current] = (args[current] + " " + stripped).strip()
    return "\n".join(desc).strip(), args

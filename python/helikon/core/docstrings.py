"""Split a docstring into the tool description and per-argument descriptions.

Three styles are read: Google (``Args:`` then ``name: text``), Sphinx (``:param name: text``,
``:param str name: text``) and NumPy (``Parameters`` underlined with dashes, then
``name : type`` with the text indented below). The description is the text before the first
section, field list or underlined header.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Returns|Return|Yields|Raises|Examples?|Notes?|Attributes)\s*:\s*$"
)
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)$")
_SPHINX_FIELD = re.compile(r"^:\w+[^:]*:")
_NUMPY_RULE = re.compile(r"^-{3,}$")
_NUMPY_ARG = re.compile(r"^(\*{0,2}\w+)(?:\s*:.*)?$")


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
    for i, raw in enumerate(lines):
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        below = lines[i + 1].strip() if i + 1 < len(lines) else ""
        m = _SECTION.match(stripped)
        if m and indent == 0:
            section, current, arg_indent = m.group(1).lower(), None, -1
            continue
        if indent == 0 and stripped and _NUMPY_RULE.match(below):  # a NumPy header
            section, current, arg_indent = "numpy-" + stripped.lower(), None, -1
            continue
        if section is not None and section.startswith("numpy-") and _NUMPY_RULE.match(stripped):
            continue
        sphinx = _SPHINX_PARAM.match(stripped) if indent == 0 else None
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            args[current] = sphinx.group(2).strip()
            continue
        if indent == 0 and _SPHINX_FIELD.match(stripped):  # :returns:, :type x:, :raises:
            section, current = "sphinx-other", None
            continue
        if section is None:
            desc.append(raw)
            continue
        if not stripped:
            continue
        if section == "sphinx":
            if current is not None and indent > 0:
                args[current] = (args[current] + " " + stripped).strip()
            continue
        if section == "numpy-parameters":
            nm = _NUMPY_ARG.match(stripped) if indent == 0 else None
            if nm:
                current = nm.group(1).lstrip("*")
                args[current] = ""
            elif current is not None:
                args[current] = (args[current] + " " + stripped).strip()
            continue
        if section not in ("args", "arguments", "parameters"):
            continue
        am = _ARG.match(stripped)
        if am and (arg_indent < 0 or indent <= arg_indent):
            arg_indent = indent
            current = am.group(1).lstrip("*")
            args[current] = am.group(2).strip()
        elif current is not None:
            args[current] = (args[current] + " " + stripped).strip()
    return "\n".join(desc).strip(), {k: v for k, v in args.items() if v}

"""A griffe extension for the API reference: read ``Example:`` as an examples section.

helikon's docstrings are Google style and head their doctests with ``Example:``. griffe's
Google parser only knows the plural, ``Examples:``, and renders the singular as an
admonition of plain Markdown, where ``>>> [a, b]`` turns into broken reference links. This
extension renames the heading before the docstring is parsed, so doctests render as code.
It is used by mkdocs.yml only and is not part of the site (see ``exclude_docs``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` section headings to ``Examples:``."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is not None and "Example:" in docstring.value:
            docstring.value = _HEADING.sub(r"\1Examples:", docstring.value)

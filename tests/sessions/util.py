"""Small helpers shared by the sessions tests."""

from __future__ import annotations

from typing import Any

from helikon.core.items import TextPart


def first_text(obj: Any) -> str:
    """The text of the first content part of an item or event ('' when it has none)."""
    content = getattr(obj, "content", None) or []
    part = content[0] if content else None
    return part.text if isinstance(part, TextPart) else ""

"""Handoff naming: the synthetic ``transfer_to_<slug>`` tool the model calls to delegate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TRANSFER_SCHEMA", "HandoffSpec", "handoff_tool_name", "slug"]

#: the parameters of every transfer tool: none
TRANSFER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


def slug(name: str) -> str:
    """Lower-case ASCII letters and digits kept; each run of anything else becomes one ``_``.

    Leading and trailing ``_`` are trimmed, so an all-non-ASCII name gives ``""``.

    Example:
        >>> slug("  Investing specialist!! ")
        'investing_specialist'
    """
    out: list[str] = []
    gap = False
    for ch in name:
        if ch.isascii() and ch.isalnum():
            if gap and out:
                out.append("_")
            out.append(ch.lower())
            gap = False
        else:
            gap = True
    return "".join(out)


def handoff_tool_name(agent_name: str) -> str:
    """``"transfer_to_" + slug(agent_name)``."""
    return "transfer_to_" + slug(agent_name)


@dataclass(frozen=True, slots=True)
class HandoffSpec:
    """What the loop needs to know of a handoff target."""

    tool_name: str
    target: str
    description: str

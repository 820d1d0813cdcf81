"""Handoff naming: the synthetic ``transfer_to_<slug>`` tool the model calls to delegate."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Never

__all__ = ["TRANSFER_SCHEMA", "Handoff", "HandoffSpec", "handoff", "handoff_tool_name", "slug"]

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


@dataclass(frozen=True, slots=True)
class Handoff:
    """A handoff target with its options; made by :func:`handoff`, given in
    ``Agent(handoffs=[...])`` next to plain agents.

    Attributes:
        agent: the target agent.
        tool_name: the transfer tool's name (default ``transfer_to_<slug>``).
        tool_description: the transfer tool's description (default the agent's description).
        on_handoff: called as ``fn(ctx)`` (sync or async) when the handoff happens, before the
            target's first model call; raising fails the run.
        input_filter: ``fn(items) -> items`` (sync), the conversation the target starts from
            (default: the whole transcript so far; its instructions are added after).
    """

    agent: Any
    tool_name: str | None = None
    tool_description: str | None = None
    on_handoff: Callable[[Any], Any] | None = None
    input_filter: Callable[[list[Any]], list[Any]] | None = None


def handoff(
    agent: Any,
    *,
    tool_name: str | None = None,
    tool_description: str | None = None,
    on_handoff: Callable[[Any], Any] | None = None,
    input_filter: Callable[[list[Any]], list[Any]] | None = None,
    **unexpected: Never,
) -> Handoff:
    """A handoff to ``agent`` with options (see :class:`Handoff`).

    Raises:
        ConfigError: ``tool_name`` is not ``[A-Za-z0-9_-]{1,64}``, or ``on_handoff`` /
            ``input_filter`` is not callable; the OpenAI Agents SDK's
            ``tool_name_override=`` / ``tool_description_override=`` (the message gives
            ``tool_name=`` / ``tool_description=``) or ``input_type=`` (not supported).
        TypeError: any other unknown keyword.

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel
        >>> billing = Agent(name="billing", model=MockModel([]))
        >>> handoff(billing, tool_name="to_billing").tool_name
        'to_billing'
    """
    from helikon.errors import ConfigError

    for name in unexpected:
        if name in _PEER_KEYWORDS:
            raise ConfigError(f"handoff({name}=...): {_PEER_KEYWORDS[name]}")
        raise TypeError(f"handoff() got an unexpected keyword argument {name!r}")
    if tool_name is not None and (
        not isinstance(tool_name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool_name)
    ):
        raise ConfigError(
            f"handoff(tool_name=...): {tool_name!r} is not a tool name; use 1 to 64 of "
            "A-Z a-z 0-9 _ -"
        )
    for name, fn in (("on_handoff", on_handoff), ("input_filter", input_filter)):
        if fn is not None and not callable(fn):
            raise ConfigError(f"handoff({name}=...): got {type(fn).__name__}, not a function")
    return Handoff(agent, tool_name, tool_description, on_handoff, input_filter)


_PEER_KEYWORDS = {
    "tool_name_override": "helikon spells it tool_name=: handoff(agent, tool_name=...)",
    "tool_description_override": (
        "helikon spells it tool_description=: handoff(agent, tool_description=...)"
    ),
    "input_type": (
        "helikon's transfer tool takes no arguments and on_handoff gets the run context "
        "only; put what the target needs in the conversation (or the run context)"
    ),
}

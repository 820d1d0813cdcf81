"""Anthropic-specific settings: extended thinking and prompt caching.

:class:`ExtendedThinking` turns on Claude's extended thinking with a token budget;
:class:`CacheStrategy` says where the adapter puts ``cache_control`` breakpoints. Both are
fixed per :class:`~helikon.providers.anthropic.AnthropicModel` instance and validated when
they are built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from helikon.errors import ConfigError

__all__ = ["MAX_CACHE_BREAKPOINTS", "MIN_THINKING_BUDGET", "CacheStrategy", "ExtendedThinking"]

MIN_THINKING_BUDGET = 1024
"""The smallest ``budget_tokens`` the Messages API accepts."""

MAX_CACHE_BREAKPOINTS = 4
"""How many ``cache_control`` breakpoints one Messages request may carry."""


@dataclass(frozen=True, slots=True)
class ExtendedThinking:
    """Extended thinking: the model reasons (up to ``budget_tokens``) before it answers.

    Sent as ``thinking: {"type": "enabled", "budget_tokens": N}``. The thinking arrives as
    :class:`~helikon.core.model.ReasoningDelta` events; each thinking block's signature (or a
    redacted block's opaque data) is carried so the block goes back unchanged, first in the
    assistant turn, on the next request, as the API requires during a tool loop.

    Args:
        budget_tokens: the most tokens the model may spend thinking; at least 1024 and below
            the model's ``max_tokens``.

    Raises:
        ConfigError: ``budget_tokens`` is below 1024.

    Example:
        >>> ExtendedThinking(budget_tokens=2048).to_param()
        {'type': 'enabled', 'budget_tokens': 2048}
    """

    budget_tokens: int

    def __post_init__(self) -> None:
        if isinstance(self.budget_tokens, bool) or not isinstance(self.budget_tokens, int):
            raise ConfigError("ExtendedThinking.budget_tokens must be an int")
        if self.budget_tokens < MIN_THINKING_BUDGET:
            raise ConfigError(
                f"ExtendedThinking.budget_tokens must be at least {MIN_THINKING_BUDGET} "
                f"(got {self.budget_tokens})"
            )

    def to_param(self) -> dict[str, Any]:
        """The request's ``thinking`` field."""
        return {"type": "enabled", "budget_tokens": self.budget_tokens}


@dataclass(frozen=True, slots=True)
class CacheStrategy:
    """Where to put prompt-cache breakpoints (``cache_control: {"type": "ephemeral"}``).

    A breakpoint caches the whole prompt prefix up to and including the marked block, so
    marking the system prompt, the tool list and the latest user turns lets each request
    read what the previous one wrote. The API allows four breakpoints per request.

    Args:
        system: mark the last system block (caches the system prompt).
        tools: mark the last tool definition (caches the tool list, and the system prompt
            before it).
        last_turns: mark the last content block of each of the last ``last_turns`` user
            messages (tool results count: they are sent as user messages). ``1`` caches the
            conversation so far for the next request; ``2`` also keeps a breakpoint on the
            previous turn so a request can read the prefix the one before it wrote.
        ttl: the cache lifetime, ``"5m"`` (the API default, sent without a ``ttl``) or
            ``"1h"``.

    Raises:
        ConfigError: a negative ``last_turns``, an unknown ``ttl``, or more than four
            breakpoints in total.

    Example:
        >>> CacheStrategy().breakpoint()
        {'type': 'ephemeral'}
        >>> CacheStrategy(last_turns=1, ttl="1h").breakpoint()
        {'type': 'ephemeral', 'ttl': '1h'}
    """

    system: bool = True
    tools: bool = True
    last_turns: int = 2
    ttl: Literal["5m", "1h"] = "5m"

    def __post_init__(self) -> None:
        if isinstance(self.last_turns, bool) or not isinstance(self.last_turns, int):
            raise ConfigError("CacheStrategy.last_turns must be an int")
        if self.last_turns < 0:
            raise ConfigError(f"CacheStrategy.last_turns must be >= 0 (got {self.last_turns})")
        if self.ttl not in ("5m", "1h"):
            raise ConfigError(f"CacheStrategy.ttl must be '5m' or '1h' (got {self.ttl!r})")
        total = int(self.system) + int(self.tools) + self.last_turns
        if total > MAX_CACHE_BREAKPOINTS:
            raise ConfigError(
                f"CacheStrategy asks for {total} cache breakpoints; the Messages API allows "
                f"{MAX_CACHE_BREAKPOINTS} (system + tools + last_turns)"
            )

    def breakpoint(self) -> dict[str, Any]:
        """The ``cache_control`` value put on a marked block."""
        if self.ttl == "5m":
            return {"type": "ephemeral"}
        return {"type": "ephemeral", "ttl": self.ttl}

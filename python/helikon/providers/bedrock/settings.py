"""Bedrock-specific request settings: where prompt-cache points go."""

from __future__ import annotations

from dataclasses import dataclass

from helikon.errors import ConfigError

__all__ = ["CachePoints"]


@dataclass(frozen=True, slots=True)
class CachePoints:
    """Where to put Converse ``cachePoint`` blocks (prompt caching on Claude and Nova).

    Everything before a cache point is cached and read back on later requests that share the
    same prefix; the usage then reports ``cacheWriteInputTokens`` / ``cacheReadInputTokens``.

    Args:
        system: a cache point after the system prompt.
        tools: a cache point after the tool specifications.
        last_turns: a cache point at the end of each of the last ``last_turns`` user
            messages (0 for none).

    Raises:
        ConfigError: ``last_turns`` is negative.

    Example:
        >>> CachePoints(last_turns=2).block()
        {'cachePoint': {'type': 'default'}}
    """

    system: bool = True
    tools: bool = True
    last_turns: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.last_turns, bool) or self.last_turns < 0:
            raise ConfigError("CachePoints.last_turns must be an int >= 0")

    def block(self) -> dict[str, dict[str, str]]:
        """One ``cachePoint`` content block."""
        return {"cachePoint": {"type": "default"}}

"""Compaction of a run's conversation while it runs: what to compact with, and the summary.

A :class:`Compaction` on the :class:`~helikon.RunContext` (``ctx.with_compaction(...)``; the
``Runner`` sets one from a :class:`~helikon.sessions.CompactingSession`'s model, threshold,
counter and prompt) makes the loop driver check the conversation before every model call:
over ``threshold`` tokens, the loop machine enters its ``Compacting`` state
(``compaction_started``), everything between the instructions and the open turn is
summarised by ``model``, and the machine goes on with the model call that was due
(``compaction_completed``, the summary call's usage added to the run's). See
:mod:`helikon.core.live_compaction` for which items are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from helikon.core.cancel import CancellationToken
from helikon.core.events import TokenDelta
from helikon.core.items import Item, UserMessage
from helikon.core.model import Model, ModelRequest, ModelSettings
from helikon.core.turn import TurnAccumulator
from helikon.core.usage import Usage
from helikon.errors import ConfigError

__all__ = ["DEFAULT_COMPACTION_PROMPT", "Compaction", "Counter", "summarise"]

DEFAULT_COMPACTION_PROMPT = (
    "Summarise the conversation so far for your own future reference. Keep every fact, "
    "decision, open question, file name, identifier and number that later turns may need, "
    "and what the user is trying to achieve. Write plain prose, as short as it can be "
    "without losing those details. Reply with the summary only."
)
"""The instruction sent (as a trailing user message) with the conversation to summarise."""


@runtime_checkable
class Counter(Protocol):
    """Counts a conversation's tokens (e.g. :class:`~helikon.sessions.HeuristicTokenCounter`)."""

    def count(self, items: Sequence[Item]) -> int:
        """The token count of ``items``."""
        ...


@dataclass(frozen=True, slots=True)
class Compaction:
    """When and how a run compacts its conversation before a model call.

    Attributes:
        model: the model that writes the summary.
        threshold: compact when the conversation (instructions included) counts more than
            this many tokens (> 0).
        counter: how tokens are counted.
        prompt: the summarisation instruction.
        settings: settings of the summarisation call.

    Raises:
        ConfigError: ``model`` has no ``invoke()``, ``threshold`` is not a positive int or
            ``counter`` has no ``count()``.
    """

    model: Model
    threshold: int
    counter: Counter
    prompt: str = DEFAULT_COMPACTION_PROMPT
    settings: ModelSettings = field(default_factory=ModelSettings)

    def __post_init__(self) -> None:
        if not callable(getattr(self.model, "invoke", None)):
            raise ConfigError(
                "Compaction(model=...) must be a helikon Model (with an invoke() method), got "
                f"{type(self.model).__name__}"
            )
        threshold = self.threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold <= 0:
            raise ConfigError(
                f"Compaction(threshold=...) must be a positive token count, got {threshold!r}"
            )
        if not isinstance(self.counter, Counter):
            raise ConfigError(
                "Compaction(counter=...) must have a count(items) method, e.g. "
                f"HeuristicTokenCounter(), got {type(self.counter).__name__}"
            )


async def summarise(
    compaction: Compaction, items: list[Item], token: CancellationToken
) -> tuple[str | None, Usage]:
    """Ask ``compaction.model`` to summarise ``items`` (followed by the prompt).

    Returns:
        The summary (``None`` when the model failed or answered blank: the caller keeps the
        conversation as it is) and the call's usage.
    """
    request = ModelRequest(
        messages=[*items, UserMessage.text(compaction.prompt)], settings=compaction.settings
    )
    acc = TurnAccumulator()
    parts: list[str] = []
    try:
        async for event in compaction.model.invoke(request, token):
            acc.add(event)
            if isinstance(event, TokenDelta):
                parts.append(event.text)
    except Exception:  # a failed summary skips compaction; the run goes on uncompacted
        return None, acc.usage
    summary = "".join(parts)
    return (summary if summary.strip() else None), acc.usage

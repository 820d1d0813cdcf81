"""The :class:`Session` protocol: conversation persistence as an append-only event log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from helikon.core.items import Item
from helikon.sessions.events import SequenceId, SessionEvent

__all__ = ["Session"]


@runtime_checkable
class Session(Protocol):
    """An append-only log of :data:`SessionEvent` entries for one conversation.

    * ``append`` writes events to the end of the log atomically: all of them or, when it
      raises, none. It returns each event's :data:`SequenceId`, contiguous and increasing.
    * ``events`` reads the log in order; ``since`` is exclusive (``since=n`` returns the
      events strictly after position ``n``), ``None`` returns the whole log.
    * ``snapshot`` is the conversation providers read: :func:`helikon.sessions.project`
      over the whole log.

    Every method raises :class:`helikon.errors.SessionError` (``SessionUnavailable``,
    ``SessionBackendError`` or ``SessionOther``) on failure. Backends must pass the
    conformance suite in :mod:`helikon.sessions.testkit`.

    Example:
        >>> from helikon.sessions import MemorySession
        >>> isinstance(MemorySession(), Session)
        True
    """

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` atomically; return their positions."""
        ...

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The events after ``since`` (exclusive), or all of them."""
        ...

    async def snapshot(self) -> list[Item]:
        """The projected conversation."""
        ...

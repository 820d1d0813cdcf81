"""The one protocol every provider's response decoder speaks.

An adapter's ``invoke`` sends the request, then hands the decoder of that one answer either the
whole (not streamed) response or each stream event in order, and finally asks for the closing
events::

    turn = SomeTurn(...)
    for event in turn.whole(response):      # a whole answer, or:
        yield event
    for event in turn.chunk(raw_event):     # each stream event, until turn.finished
        yield event
    for event in turn.ending():              # usage, provider metadata, one Finish
        yield event

``ending`` raises the mapped :class:`~helikon.errors.ModelError` for an answer that failed,
was refused outright or was cut off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from helikon.core.model import ModelEvent

__all__ = ["TurnDecoder"]


class TurnDecoder(Protocol):
    """Decodes one provider answer into model events."""

    @property
    def finished(self) -> bool:
        """Whether the answer is complete, so the stream need not be read further."""
        ...

    def whole(self, response: Any) -> Iterator[ModelEvent]:
        """The events of a whole (not streamed) answer."""
        ...

    def chunk(self, chunk: Any) -> Iterator[ModelEvent]:
        """The events of one stream event or chunk."""
        ...

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events (usage, metadata, one ``Finish``); raises for a failed,
        refused or cut-off answer."""
        ...

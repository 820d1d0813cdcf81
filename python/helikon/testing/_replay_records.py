"""The values a replay server serves and records: responses, SSE pauses, captured requests.

A :class:`RecordedInteraction` is one response ready for the wire (loaded from a cassette or
built by hand, see ``_replay_cassette``); a :class:`CapturedRequest` is one request the server
received. :class:`Pause` stalls a hand-built stream (:data:`ResponseSpec`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["CapturedRequest", "Pause", "RecordedInteraction", "ResponseSpec", "SseEvent"]


@dataclass(frozen=True, slots=True)
class Pause:
    """A pause inside a hand-built SSE stream: the server waits ``seconds`` before going on.

    Useful for cancellation tests (a stream that stalls after its first events).
    """

    seconds: float


SseEvent: TypeAlias = str | bytes | Mapping[str, Any] | Pause
"""One SSE event of a hand-built stream: raw text, raw bytes, a JSON object (sent as
``data: <json>``) or a :class:`Pause`."""

ResponseSpec: TypeAlias = tuple[
    int, Mapping[str, str], bytes | str | Mapping[str, Any] | Sequence[SseEvent]
]
"""A hand-built response ``(status, headers, body)``; see :meth:`ReplayServer.from_responses`."""


@dataclass(frozen=True, slots=True)
class RecordedInteraction:
    """One request/response pair as stored in a cassette.

    Attributes:
        index: position in the cassette's ``interactions`` list.
        method: HTTP method of the recorded request (upper case).
        path: unquoted URL path of the recorded request (no query string).
        request_body: the recorded request body parsed as JSON, or ``None`` when it was
            absent or not JSON.
        status: recorded response status code.
        headers: recorded response headers as ``(name, value)`` pairs, in stored order.
        body: the response body bytes exactly as they go on the wire.
        sse_events: the body split into SSE events (each ending in a blank line) when the
            response is ``text/event-stream``, else ``None``.
    """

    index: int
    method: str
    path: str
    request_body: Any
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    sse_events: tuple[bytes | Pause, ...] | None = None


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """A request the server received.

    Attributes:
        method: HTTP method.
        path: unquoted path (no query string).
        query: the raw query string ("" when none).
        headers: request headers, names lower-cased.
        body: the body parsed as JSON, or the raw text when it is not JSON, or ``None``.
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any

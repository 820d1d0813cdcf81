"""Shared helpers for the backends: encoding events and mapping errors."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from helikon.errors import ConfigError, SessionOther
from helikon.sessions.events import SequenceId, SessionEvent, event_from_json, event_to_json

_EVENT_TYPES: tuple[type[BaseModel], ...] = get_args(get_args(SessionEvent)[0])
_EXPECTED = (
    "a SessionEvent (UserMessageEvent, AssistantMessageEvent, ToolCalled, ...; build one with "
    'helikon.sessions.user_message("..."), assistant_message(...), tool_called(...), ...)'
)

__all__ = ["EPOCH", "check_events", "check_since", "decode", "encode_all", "ts_nanos"]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def check_events(events: Any) -> None:
    """Check that ``events`` is a list of session events (every backend's ``append``).

    Raises:
        ConfigError: ``events`` is not a list, or an element is not a :data:`SessionEvent`;
            the message names the position and the expected type.
    """
    if isinstance(events, _EVENT_TYPES):
        raise ConfigError(
            f"append(events) takes a list of events; got a single {type(events).__name__}: "
            "pass [event]"
        )
    if isinstance(events, str | bytes) or not isinstance(events, Sequence):
        raise ConfigError(
            f"append(events) takes a list of session events, got {type(events).__name__}"
        )
    for i, event in enumerate(events):
        if not isinstance(event, _EVENT_TYPES):
            hint = ""
            if isinstance(event, BaseModel) and getattr(event, "type", None) in (
                "user_message",
                "assistant_message",
                "tool_call",
                "tool_result",
                "system",
            ):
                hint = " (that is a conversation item; sessions store events)"
            raise ConfigError(
                f"append(events): events[{i}] is a {type(event).__name__}{hint}, not a "
                f"session event; expected {_EXPECTED}"
            )


def encode_all(events: Sequence[SessionEvent]) -> list[str]:
    """Serialize every event up front, so a bad one fails the append before any write.

    Raises:
        ConfigError: ``events`` is not a list of session events (see :func:`check_events`).
        SessionOther: an event cannot be serialized (e.g. ``args`` holds a non-JSON value).
    """
    check_events(events)
    out: list[str] = []
    for i, event in enumerate(events):
        try:
            out.append(event_to_json(event))
        except (PydanticSerializationError, ValueError, TypeError) as exc:
            raise SessionOther(
                f"event {i} ({getattr(event, 'type', '?')}) is not JSON: {exc}"
            ) from exc
    return out


def decode(payload: str | bytes, *, where: str) -> SessionEvent:
    """Parse a stored event.

    Raises:
        SessionOther: the stored payload is not a session event (``where`` names the row).
    """
    try:
        return event_from_json(payload)
    except (ValidationError, ValueError) as exc:
        raise SessionOther(f"stored event at {where} does not parse: {exc}") from exc


_many: TypeAdapter[list[SessionEvent]] = TypeAdapter(list[SessionEvent])


def decode_all(rows: Sequence[tuple[str, str | bytes]]) -> list[SessionEvent]:
    """Parse stored events, ``(where, payload)`` each, with one validation call (about twice
    as fast as one per row on a long log).

    Raises:
        SessionOther: a payload is not a session event (``where`` names the first such row).
    """
    if not rows:
        return []
    texts = [p.decode("utf-8", "surrogateescape") if isinstance(p, bytes) else p for _, p in rows]
    try:
        events = _many.validate_json("[" + ",".join(texts) + "]")
    except (ValidationError, ValueError):
        events = []
    if len(events) == len(rows):
        return events
    # find and name the bad row (one that breaks or splits the joined list's JSON, too)
    return [decode(payload, where=where) for where, payload in rows]


def ts_nanos(ts: datetime) -> int:
    """Nanoseconds since the Unix epoch (naive times are taken as UTC)."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    delta = ts - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def check_since(since: SequenceId | int | None) -> int:
    """``since`` as an int; ``-1`` for ``None`` (everything).

    Raises:
        ConfigError: ``since`` is negative or not an int.
    """
    if since is None:
        return -1
    if isinstance(since, bool) or not isinstance(since, int) or since < 0:
        raise ConfigError(f"events(since=...) must be a SequenceId >= 0 or None, got {since!r}")
    return int(since)

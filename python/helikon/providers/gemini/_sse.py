"""Gemini's stream format: ``data:``-only server-sent events, each one JSON payload.

``streamGenerateContent?alt=sse`` sends one ``GenerateContentResponse`` per event; comment
lines are skipped and the ``data:`` lines of one event are joined with a newline. Malformed
JSON is a :class:`~helikon.errors.TransportError`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from helikon.errors import TransportError

__all__ = ["SseReader", "parse_json"]


class SseReader:
    """Decode ``data:`` SSE events from an ``httpx`` line iterator into parsed JSON."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    async def next(self) -> tuple[bool, Any]:
        """``(True, payload)`` for the next event, ``(False, None)`` at the end."""
        data: list[str] = []
        while True:
            try:
                line = await self._lines.__anext__()
            except StopAsyncIteration:
                if data:
                    return True, parse_json("\n".join(data))
                return False, None
            if not line:
                if data:
                    return True, parse_json("\n".join(data))
                continue
            if line.startswith(":"):
                continue  # an SSE comment
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value[1:] if value.startswith(" ") else value)


def parse_json(text: str) -> Any:
    """``text`` as JSON; malformed data is a :class:`~helikon.errors.TransportError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TransportError(f"Gemini sent malformed stream data: {exc}") from exc

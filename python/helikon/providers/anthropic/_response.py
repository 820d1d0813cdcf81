"""Translate Messages API answers (SSE events or a whole message) into model events.

Stream events, in the order the API sends them:

* ``message_start`` carries the input-side usage: ``input_tokens`` (the uncached part),
  ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
* ``content_block_start`` / ``content_block_delta`` per block: ``text_delta`` ->
  :class:`TokenDelta`; ``thinking_delta`` -> :class:`ReasoningDelta` ``text``;
  ``signature_delta`` -> :class:`ReasoningDelta` ``signature``; a ``redacted_thinking`` block
  -> :class:`ReasoningDelta` ``redacted``; a ``tool_use`` block -> a :class:`ToolCallDelta`
  with its id and name, then one per non-empty ``input_json_delta`` fragment. Citations and
  server-tool blocks are ignored.
* ``message_delta`` carries ``stop_reason`` (and ``stop_details`` for refusals) and the
  cumulative usage: ``output_tokens`` always, input-side counters when present (they replace
  the ``message_start`` values).
* ``message_stop`` ends the message. ``ping`` events are skipped by the SDK; an ``error``
  event is raised by it and mapped in ``_errors``.

The end of a turn: when the response held more than one thinking block, a
:class:`ProviderMetadata` carrying the blocks as received (``anthropic_thinking``) so the next
request can send them back verbatim (the core folds a turn's reasoning into one part); a
``refusal`` stop with ``stop_details`` adds them as ``stop_details``. Then one
:class:`UsageReported` and one :class:`Finish` (raw ``stop_reason`` kept; ``model`` and
``response_id`` from the message's ``model`` and ``id``). A stream that ends
without a ``stop_reason`` raises :class:`~helikon.errors.TransportError`.

Usage: ``input_tokens`` is the uncached input as Anthropic reports it,
``cached_input_tokens`` the cache reads, ``cache_write_input_tokens`` the cache writes,
``reasoning_tokens`` the ``output_tokens_details.thinking_tokens`` when reported, and
``total_tokens`` is input + output (Anthropic reports no total).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from helikon.core.model import (
    Finish,
    FinishReason,
    ModelEvent,
    ProviderMetadata,
    ReasoningDelta,
    TokenDelta,
    ToolCallDelta,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import TransportError
from helikon.providers._answer import latest_text
from helikon.providers.anthropic._request import THINKING_KEY

__all__ = ["FINISH_MAP", "MessageTurn"]

FINISH_MAP: dict[str, FinishReason] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.REFUSAL,
}


def get(obj: Any, name: str) -> Any:
    """``obj[name]`` for a mapping, else ``getattr(obj, name, None)`` (SDK models)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _plain(value: Any) -> Any:
    """An SDK model (or anything nested in one) as plain JSON data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(mode="json", exclude_none=True, warnings=False))
    return value


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class _Block:
    kind: str
    call_id: str | None = None
    thinking: list[str] = field(default_factory=list)
    signature: str = ""
    data: str | None = None


@dataclass
class MessageTurn:
    """What one response accumulated; decides how the event stream ends."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning_tokens: int = 0
    usage_seen: bool = False
    stop_reason: str | None = None
    stop_details: Any = None
    model: str | None = None
    response_id: str | None = None

    def _header(self, message: Any) -> None:
        self.model = latest_text(self.model, get(message, "model"))
        self.response_id = latest_text(self.response_id, get(message, "id"))

    # ------------------------------------------------------------------ usage

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        self.usage_seen = True
        for attr, key in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = _count(get(usage, key))
            if value is not None:
                setattr(self, attr, value)
        thinking = _count(get(get(usage, "output_tokens_details"), "thinking_tokens"))
        if thinking is not None:
            self.reasoning_tokens = thinking

    # ------------------------------------------------------------------ blocks

    def _start(self, index: int, block: Any) -> Iterator[ModelEvent]:
        kind = str(get(block, "type") or "")
        entry = self.blocks[index] = _Block(kind)
        if kind == "text":
            text = get(block, "text")
            if text:
                yield TokenDelta(text=text)
        elif kind == "thinking":
            text = get(block, "thinking") or ""
            signature = get(block, "signature") or ""
            if text:
                entry.thinking.append(text)
                yield ReasoningDelta(text=text)
            if signature:
                entry.signature = signature
                yield ReasoningDelta(signature=signature)
        elif kind == "redacted_thinking":
            entry.data = str(get(block, "data") or "")
            yield ReasoningDelta(redacted=entry.data)
        elif kind == "tool_use":
            entry.call_id = str(get(block, "id") or f"toolu_{index}")
            initial = _plain(get(block, "input"))
            args = json.dumps(initial, ensure_ascii=False) if initial else ""
            yield ToolCallDelta(
                call_id=entry.call_id, name=str(get(block, "name")), args_delta=args
            )

    def _delta(self, index: int, delta: Any) -> Iterator[ModelEvent]:
        entry = self.blocks.get(index)
        kind = get(delta, "type")
        if kind == "text_delta":
            text = get(delta, "text")
            if text:
                yield TokenDelta(text=text)
        elif kind == "thinking_delta":
            text = get(delta, "thinking")
            if text:
                if entry is not None:
                    entry.thinking.append(text)
                yield ReasoningDelta(text=text)
        elif kind == "signature_delta":
            signature = get(delta, "signature")
            if signature:
                if entry is not None:
                    entry.signature += signature
                yield ReasoningDelta(signature=entry.signature if entry else signature)
        elif kind == "input_json_delta":
            fragment = get(delta, "partial_json")
            if fragment and entry is not None and entry.call_id is not None:
                yield ToolCallDelta(call_id=entry.call_id, args_delta=fragment)

    # ------------------------------------------------------------------ entry points

    @property
    def finished(self) -> bool:
        """Never before the stream ends (the closing events come last)."""
        return False

    def chunk(self, event: Any) -> Iterator[ModelEvent]:
        """The model events for one stream event."""
        kind = get(event, "type")
        if kind == "message_start":
            self._header(get(event, "message"))
            self._usage(get(get(event, "message"), "usage"))
        elif kind == "content_block_start":
            yield from self._start(int(get(event, "index") or 0), get(event, "content_block"))
        elif kind == "content_block_delta":
            yield from self._delta(int(get(event, "index") or 0), get(event, "delta"))
        elif kind == "message_delta":
            delta = get(event, "delta")
            reason = get(delta, "stop_reason")
            if reason:
                self.stop_reason = str(reason)
            details = get(delta, "stop_details")
            if details is not None:
                self.stop_details = _plain(details)
            self._usage(get(event, "usage"))

    def whole(self, message: Any) -> Iterator[ModelEvent]:
        """The model events for a whole (non-streamed) message."""
        self._header(message)
        for index, block in enumerate(get(message, "content") or []):
            kind = get(block, "type")
            if kind == "thinking":
                entry = self.blocks[index] = _Block("thinking")
                text = get(block, "thinking") or ""
                entry.thinking.append(text)
                entry.signature = get(block, "signature") or ""
                yield ReasoningDelta(text=text, signature=entry.signature or None)
            elif kind == "tool_use":
                entry = self.blocks[index] = _Block("tool_use", call_id=str(get(block, "id")))
                args = json.dumps(_plain(get(block, "input")) or {}, ensure_ascii=False)
                yield ToolCallDelta(
                    call_id=str(entry.call_id), name=str(get(block, "name")), args_delta=args
                )
            else:
                yield from self._start(index, block)
        reason = get(message, "stop_reason")
        self.stop_reason = str(reason) if reason else None
        details = get(message, "stop_details")
        if details is not None:
            self.stop_details = _plain(details)
        self._usage(get(message, "usage"))

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises TransportError for a cut-off stream."""
        thinking = [
            {"type": "thinking", "thinking": "".join(b.thinking), "signature": b.signature}
            if b.kind == "thinking"
            else {"type": "redacted_thinking", "data": b.data or ""}
            for _, b in sorted(self.blocks.items())
            if b.kind in ("thinking", "redacted_thinking")
        ]
        data: dict[str, Any] = {}
        if len(thinking) > 1:
            data[THINKING_KEY] = thinking
        if self.stop_details is not None:
            data["stop_details"] = self.stop_details
        if data:
            yield ProviderMetadata(data=data)
        if self.usage_seen:
            # Anthropic's input_tokens is the uncached part only; helikon's is the whole prompt
            prompt = self.input_tokens + self.cache_read + self.cache_write
            yield UsageReported(
                usage=Usage(
                    input_tokens=prompt,
                    output_tokens=self.output_tokens,
                    cached_input_tokens=self.cache_read,
                    cache_write_input_tokens=self.cache_write,
                    reasoning_tokens=self.reasoning_tokens,
                    total_tokens=prompt + self.output_tokens,
                )
            )
        if self.stop_reason is None:
            raise TransportError("Anthropic stream ended without a stop_reason (cut off)")
        yield Finish(
            reason=FINISH_MAP.get(self.stop_reason, FinishReason.OTHER),
            raw=self.stop_reason,
            model=self.model,
            response_id=self.response_id,
        )

"""Read Gemini ``GenerateContentResponse`` objects (whole, or one per SSE chunk) as model events.

Per chunk, only the first candidate is read:

* a part with ``thought: true`` -> :class:`ReasoningDelta` (its text);
* a text part -> :class:`TokenDelta` (empty text is skipped);
* a ``functionCall`` part -> one :class:`ToolCallDelta` carrying the name and the whole
  arguments as JSON text (Gemini sends each call complete). Gemini gives no call ids, or
  reuses them, so every call gets a fresh helikon ``call_id`` (``gcall_<hex>``); Gemini's
  own id, when present, and the part's ``thoughtSignature`` follow in a
  :class:`ProviderMetadata` for that call (``gemini_call_id``, ``gemini_thought_signature``),
  so they come back on the next request;
* a ``thoughtSignature`` on a text or thought part -> :class:`ProviderMetadata` for the turn's
  message (``gemini_text_signature``);
* other parts (``inlineData``, ``executableCode``, ``codeExecutionResult``) are ignored.

``usageMetadata`` of the latest chunk wins (earlier chunks may report other prompt counts):
``promptTokenCount`` -> ``input_tokens``, ``candidatesTokenCount`` + ``thoughtsTokenCount``
-> ``output_tokens``, ``totalTokenCount`` -> ``total_tokens``, ``cachedContentTokenCount`` ->
``cached_input_tokens``, ``thoughtsTokenCount`` -> ``reasoning_tokens``. Gemini counts thought
tokens apart from the candidates; helikon's :class:`~helikon.core.usage.Usage` counts
reasoning as part of the output on every provider, so the two are added (candidates 40 and
thoughts 61 report ``output_tokens=101, reasoning_tokens=61``). ``total_tokens`` is Gemini's
total, which already includes both.

``Finish.model`` is the chunk's ``modelVersion`` and ``Finish.response_id`` its ``responseId``
(the last chunk that sent one wins).

The stream ends with one :class:`UsageReported` (when usage was reported), a
:class:`ProviderMetadata` ``{"gemini_safety_blocked": [categories]}`` when a safety rating
says ``blocked``, and one :class:`Finish`:

* ``STOP`` -> ``STOP``, or ``TOOL_CALLS`` when the turn made function calls (Gemini says
  ``STOP`` for those too); ``MAX_TOKENS`` -> ``LENGTH``; ``SAFETY``, ``RECITATION``,
  ``BLOCKLIST``, ``PROHIBITED_CONTENT``, ``SPII`` and the image-safety reasons ->
  ``CONTENT_FILTER``; anything else (``MALFORMED_FUNCTION_CALL``, ``LANGUAGE``, ``OTHER``) ->
  ``OTHER``. ``Finish.raw`` keeps Gemini's value.
* A prompt blocked outright (``promptFeedback.blockReason``, no candidates) raises
  :class:`~helikon.errors.Refused` (after the usage), naming the reason and the blocked
  categories.
* A stream that ends without a ``finishReason`` raises
  :class:`~helikon.errors.TransportError` (it was cut off). A whole (non-streamed) response
  without one finishes ``STOP`` / ``TOOL_CALLS`` with ``raw=None``.
* An ``error`` object inside the stream raises the mapped error
  (``helikon.providers.gemini._errors``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping
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
from helikon.errors import Refused, TransportError
from helikon.providers._answer import latest_text
from helikon.providers.gemini._errors import envelope_of, map_envelope
from helikon.providers.gemini._request import (
    CALL_ID_KEY,
    SIGNATURE_KEY,
    TEXT_SIGNATURE_KEY,
    json_text,
)

__all__ = ["SAFETY_KEY", "GeminiTurn", "new_call_id"]

SAFETY_KEY = "gemini_safety_blocked"
"""``ProviderMetadata`` key: the categories a safety rating marked ``blocked``."""

_FINISH_MAP: dict[str, FinishReason] = {
    "STOP": FinishReason.STOP,
    "MAX_TOKENS": FinishReason.LENGTH,
    "SAFETY": FinishReason.CONTENT_FILTER,
    "RECITATION": FinishReason.CONTENT_FILTER,
    "BLOCKLIST": FinishReason.CONTENT_FILTER,
    "PROHIBITED_CONTENT": FinishReason.CONTENT_FILTER,
    "SPII": FinishReason.CONTENT_FILTER,
    "IMAGE_SAFETY": FinishReason.CONTENT_FILTER,
    "IMAGE_PROHIBITED_CONTENT": FinishReason.CONTENT_FILTER,
    "IMAGE_RECITATION": FinishReason.CONTENT_FILTER,
}


def new_call_id() -> str:
    """A fresh, unique helikon call id for a Gemini function call (``gcall_<24 hex>``)."""
    return f"gcall_{secrets.token_hex(12)}"


def _count(meta: Mapping[str, Any], key: str) -> int:
    value = meta.get(key)
    return value if isinstance(value, int) else 0


def usage_of(meta: Mapping[str, Any]) -> Usage:
    """Helikon usage from a ``usageMetadata`` object."""
    prompt = _count(meta, "promptTokenCount")
    candidates = _count(meta, "candidatesTokenCount")
    thoughts = _count(meta, "thoughtsTokenCount")
    total = _count(meta, "totalTokenCount") or (prompt + candidates + thoughts)
    return Usage(
        input_tokens=prompt,
        output_tokens=candidates + thoughts,
        cached_input_tokens=_count(meta, "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
        total_tokens=total,
    )


def finish_reason(raw: str | None, *, has_calls: bool) -> FinishReason:
    """The normalized finish reason for Gemini's ``finishReason``."""
    reason = _FINISH_MAP.get(raw or "STOP", FinishReason.OTHER)
    if reason is FinishReason.STOP and has_calls:
        return FinishReason.TOOL_CALLS
    return reason


@dataclass
class GeminiTurn:
    """What one response accumulated; decides how the event stream ends.

    Args:
        streamed: the response came as an SSE stream (a missing ``finishReason`` then means
            the stream was cut off).
        credential_hint: what an auth error inside the stream tells the user to check.
        call_ids: makes the helikon call id of each function call (tests may inject one).
    """

    streamed: bool
    credential_hint: str = "the API key"
    call_ids: Callable[[], str] = new_call_id
    content_seen: bool = False
    calls: int = 0
    finish_raw: str | None = None
    usage: Usage | None = None
    blocked: list[str] = field(default_factory=list)
    block_reason: str | None = None
    block_message: str | None = None
    prompt_blocked: list[str] = field(default_factory=list)
    model: str | None = None
    response_id: str | None = None

    @property
    def finished(self) -> bool:
        """Never before the stream ends (the closing events come last)."""
        return False

    def whole(self, response: Any) -> Iterator[ModelEvent]:
        """The events of a whole (not streamed) ``GenerateContentResponse``."""
        return self.chunk(response)

    def chunk(self, chunk: Any) -> Iterator[ModelEvent]:
        """The events of one ``GenerateContentResponse`` (one SSE chunk)."""
        if not isinstance(chunk, Mapping):
            raise TransportError(f"Gemini sent an unexpected stream payload: {str(chunk)[:200]}")
        envelope = envelope_of(chunk)
        if envelope is not None:
            raise map_envelope(envelope, http_status=None, credential_hint=self.credential_hint)
        self.model = latest_text(self.model, chunk.get("modelVersion"))
        self.response_id = latest_text(self.response_id, chunk.get("responseId"))
        meta = chunk.get("usageMetadata")
        if isinstance(meta, Mapping):
            self.usage = usage_of(meta)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            self.block_reason = str(feedback["blockReason"])
            message = feedback.get("blockReasonMessage")
            self.block_message = str(message) if message else None
            self.prompt_blocked = _blocked_categories(feedback.get("safetyRatings"))
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return
        candidate = next(
            (c for c in candidates if isinstance(c, Mapping) and c.get("index", 0) == 0),
            None,
        )
        if candidate is None:
            return
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, Mapping) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, Mapping):
                yield from self._part(part)
        for category in _blocked_categories(candidate.get("safetyRatings")):
            if category not in self.blocked:
                self.blocked.append(category)
        raw = candidate.get("finishReason")
        if isinstance(raw, str) and raw:
            self.finish_raw = raw

    def _part(self, part: Mapping[str, Any]) -> Iterator[ModelEvent]:
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            call_id = self.call_ids()
            self.calls += 1
            self.content_seen = True
            args = call.get("args")
            yield ToolCallDelta(
                call_id=call_id,
                name=str(call.get("name") or ""),
                args_delta=json_text(args if isinstance(args, Mapping) else {}),
            )
            data: dict[str, Any] = {}
            gemini_id = call.get("id")
            if isinstance(gemini_id, str) and gemini_id:
                data[CALL_ID_KEY] = gemini_id
            if isinstance(signature, str) and signature:
                data[SIGNATURE_KEY] = signature
            if data:
                yield ProviderMetadata(call_id=call_id, data=data)
            return
        text = part.get("text")
        if isinstance(text, str) and text:
            self.content_seen = True
            if part.get("thought") is True:
                yield ReasoningDelta(text=text)
            else:
                yield TokenDelta(text=text)
        if isinstance(signature, str) and signature:
            yield ProviderMetadata(data={TEXT_SIGNATURE_KEY: signature})

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises Refused for a blocked prompt, TransportError when cut."""
        if self.usage is not None:
            yield UsageReported(usage=self.usage)
        if self.block_reason is not None and not self.content_seen and self.finish_raw is None:
            detail = f": {self.block_message}" if self.block_message else ""
            categories = self.prompt_blocked or self.blocked
            named = f" (categories: {', '.join(categories)})" if categories else ""
            raise Refused(f"Gemini blocked the prompt ({self.block_reason}){detail}{named}")
        if self.finish_raw is None and self.streamed:
            raise TransportError("Gemini stream ended without a finishReason (cut off)")
        if self.blocked:
            yield ProviderMetadata(data={SAFETY_KEY: list(self.blocked)})
        yield Finish(
            reason=finish_reason(self.finish_raw, has_calls=self.calls > 0),
            raw=self.finish_raw,
            model=self.model,
            response_id=self.response_id,
        )


def _blocked_categories(ratings: Any) -> list[str]:
    if not isinstance(ratings, list):
        return []
    return [
        str(r.get("category"))
        for r in ratings
        if isinstance(r, Mapping) and r.get("blocked") is True and r.get("category")
    ]

"""Translate Converse answers (a ConverseStream event or a whole Converse response) into
model events.

Stream events, as boto3 yields them (one key per event):

* ``contentBlockStart.start.toolUse`` opens a tool call: a :class:`ToolCallDelta` with its id
  and name; ``contentBlockDelta.delta.toolUse.input`` fragments follow as further deltas.
* ``contentBlockDelta.delta.text`` -> :class:`TokenDelta`.
* ``contentBlockDelta.delta.reasoningContent``: ``text`` -> :class:`ReasoningDelta` ``text``;
  ``signature`` -> :class:`ReasoningDelta` ``signature`` (the whole signature so far);
  ``redactedContent`` (bytes) -> :class:`ReasoningDelta` ``redacted`` (base64 text, decoded
  again when sent back).
* ``messageStop.stopReason`` and ``metadata.usage`` are kept for the end; ``messageStart``,
  ``contentBlockStop`` (except for a structured answer) and ``metrics`` carry nothing needed.
  Citations, images and guardrail traces are ignored.

A whole response (``output.message.content``) gives the same events, one per block.

Structured output (a request built with the reserved tool): the reserved tool call is not a
tool call but the answer, so its input is emitted as :class:`TokenDelta` text (streamed
fragment by fragment, or at the block's end when the schema was wrapped in ``{"value":
...}``). Text the model wrote before it (Nova's ``<thinking>`` preamble, say) is held back
and dropped so the answer stays valid JSON; if the model answered in plain text instead, that
text is released at the end. A ``tool_use`` stop caused by the reserved call finishes as
``STOP``.

The end of a turn: with several reasoning blocks, a :class:`ProviderMetadata` holding them as
received (``bedrock_reasoning``), because the core folds a turn's reasoning into one part and
Claude needs each block back unchanged. Then one :class:`UsageReported` (``inputTokens``,
``outputTokens``, ``totalTokens``, ``cacheReadInputTokens`` -> ``cached_input_tokens``,
``cacheWriteInputTokens`` -> ``cache_write_input_tokens``) and one :class:`Finish`
(:data:`FINISH_MAP`; ``raw`` keeps ``stopReason``; ``model`` is the model id the request
named, as Converse does not say which model answered, and ``response_id`` the AWS request id
from the response metadata, the ``x-amzn-RequestId`` header). A stream without
``messageStop`` raises :class:`~helikon.errors.TransportError`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
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
from helikon.providers._json import json_text
from helikon.providers.bedrock._blocks import REASONING_KEY
from helikon.providers.bedrock._request import StructuredAnswer

__all__ = ["FINISH_MAP", "ConverseTurn"]

FINISH_MAP: dict[str, FinishReason] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "guardrail_intervened": FinishReason.CONTENT_FILTER,
    "content_filtered": FinishReason.CONTENT_FILTER,
}
"""Converse ``stopReason`` -> :class:`FinishReason`; anything else (``malformed_model_output``,
``malformed_tool_use``, new values) is ``OTHER``."""


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _b64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


@dataclass
class _Block:
    kind: str  # "text" | "reasoning" | "tool" | "answer"
    call_id: str = ""
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    emitted: bool = False


@dataclass
class ConverseTurn:
    """What one Converse answer accumulated; decides how the event stream ends.

    Args:
        structured: the reserved structured-output tool of the request, if any.
        model: the model id the request named (reported as ``Finish.model``).
    """

    structured: StructuredAnswer | None = None
    model: str | None = None
    response_id: str | None = None
    blocks: dict[int, _Block] = field(default_factory=dict)
    held_text: list[str] = field(default_factory=list)
    answered: bool = False
    tool_calls: int = 0
    usage: Usage | None = None
    stop_reason: str | None = None

    # ------------------------------------------------------------------ pieces

    def _text(self, text: str) -> Iterator[ModelEvent]:
        if not text:
            return
        if self.structured is None:
            yield TokenDelta(text=text)
        elif not self.answered:
            self.held_text.append(text)

    def _open_tool(self, index: int, call_id: str, name: str) -> Iterator[ModelEvent]:
        if self.structured is not None and name == self.structured.name:
            self.blocks[index] = _Block("answer", call_id=call_id)
            self.answered = True
            self.held_text.clear()
            return
        self.blocks[index] = _Block("tool", call_id=call_id)
        self.tool_calls += 1
        yield ToolCallDelta(call_id=call_id, name=name, args_delta="")

    def _answer_text(self, value: Any) -> str:
        if self.structured is not None and self.structured.wrapped:
            value = _map(value).get("value")
        return json_text(value)

    def _close_answer(self, block: _Block) -> Iterator[ModelEvent]:
        if self.structured is not None and self.structured.wrapped:
            raw = "".join(block.text)
            try:
                value = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError:
                yield TokenDelta(text=raw)  # let the loop's validation report it
                return
            yield TokenDelta(text=self._answer_text(value))
        elif not block.emitted:
            yield TokenDelta(text="{}")

    def _reasoning(self, index: int, delta: Mapping[str, Any]) -> Iterator[ModelEvent]:
        block = self.blocks.get(index)
        if block is None or block.kind != "reasoning":
            block = self.blocks[index] = _Block("reasoning")
        text = delta.get("text")
        if isinstance(text, str) and text:
            block.text.append(text)
            yield ReasoningDelta(text=text)
        signature = delta.get("signature")
        if isinstance(signature, str) and signature:
            block.signature = (block.signature or "") + signature
            yield ReasoningDelta(signature=block.signature)
        redacted = delta.get("redactedContent")
        if redacted is not None:
            block.redacted = (block.redacted or "") + _b64(redacted)
            yield ReasoningDelta(redacted=block.redacted)

    def _delta(self, index: int, delta: Mapping[str, Any]) -> Iterator[ModelEvent]:
        if "text" in delta:
            yield from self._text(str(delta.get("text") or ""))
        elif "toolUse" in delta:
            fragment = str(_map(delta.get("toolUse")).get("input") or "")
            block = self.blocks.get(index)
            if not fragment or block is None:
                return
            if block.kind == "tool":
                yield ToolCallDelta(call_id=block.call_id, args_delta=fragment)
            elif block.kind == "answer":
                if self.structured is not None and self.structured.wrapped:
                    block.text.append(fragment)
                else:
                    block.emitted = True
                    yield TokenDelta(text=fragment)
        elif "reasoningContent" in delta:
            yield from self._reasoning(index, _map(delta.get("reasoningContent")))

    def _usage(self, usage: Any) -> None:
        data = _map(usage)
        if not data:
            return
        cache_read = _count(data.get("cacheReadInputTokens")) or 0
        cache_write = _count(data.get("cacheWriteInputTokens")) or 0
        # Bedrock's inputTokens is the uncached part only; helikon's is the whole prompt
        input_tokens = (_count(data.get("inputTokens")) or 0) + cache_read + cache_write
        output_tokens = _count(data.get("outputTokens")) or 0
        total = _count(data.get("totalTokens"))
        self.usage = Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total if total is not None else input_tokens + output_tokens,
            cached_input_tokens=cache_read,
            cache_write_input_tokens=cache_write,
        )

    # ------------------------------------------------------------------ entry points

    @property
    def finished(self) -> bool:
        """Never before the stream ends (the closing events come last)."""
        return False

    def chunk(self, event: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """The model events for one ConverseStream event."""
        if "contentBlockStart" in event:
            body = _map(event["contentBlockStart"])
            index = _count(body.get("contentBlockIndex")) or 0
            tool = _map(_map(body.get("start")).get("toolUse"))
            if tool:
                call_id = str(tool.get("toolUseId") or f"tooluse_{index}")
                yield from self._open_tool(index, call_id, str(tool.get("name") or ""))
        elif "contentBlockDelta" in event:
            body = _map(event["contentBlockDelta"])
            index = _count(body.get("contentBlockIndex")) or 0
            yield from self._delta(index, _map(body.get("delta")))
        elif "contentBlockStop" in event:
            index = _count(_map(event["contentBlockStop"]).get("contentBlockIndex")) or 0
            block = self.blocks.get(index)
            if block is not None and block.kind == "answer":
                yield from self._close_answer(block)
        elif "messageStop" in event:
            reason = _map(event["messageStop"]).get("stopReason")
            self.stop_reason = str(reason) if reason else "unknown"
        elif "metadata" in event:
            self._usage(_map(event["metadata"]).get("usage"))

    def whole(self, response: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """The model events for a whole Converse response."""
        message = _map(_map(response.get("output")).get("message"))
        content = message.get("content")
        for index, block in enumerate(content if isinstance(content, list) else []):
            data = _map(block)
            if "text" in data:
                yield from self._text(str(data.get("text") or ""))
            elif "toolUse" in data:
                tool = _map(data["toolUse"])
                call_id = str(tool.get("toolUseId") or f"tooluse_{index}")
                args = tool.get("input")
                yield from self._open_tool(index, call_id, str(tool.get("name") or ""))
                if self.blocks[index].kind == "answer":
                    yield TokenDelta(text=self._answer_text(args if args is not None else {}))
                else:
                    yield ToolCallDelta(call_id=call_id, args_delta=json_text(args or {}))
            elif "reasoningContent" in data:
                yield from self._whole_reasoning(index, _map(data["reasoningContent"]))
        reason = response.get("stopReason")
        self.stop_reason = str(reason) if reason else "unknown"
        self._usage(response.get("usage"))

    def _whole_reasoning(self, index: int, content: Mapping[str, Any]) -> Iterator[ModelEvent]:
        block = self.blocks[index] = _Block("reasoning")
        if "redactedContent" in content:
            block.redacted = _b64(content["redactedContent"])
            yield ReasoningDelta(redacted=block.redacted)
            return
        reasoning = _map(content.get("reasoningText"))
        text = str(reasoning.get("text") or "")
        signature = reasoning.get("signature")
        block.text.append(text)
        block.signature = signature if isinstance(signature, str) else None
        yield ReasoningDelta(text=text, signature=block.signature)

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises TransportError for a stream cut off before its end."""
        if self.structured is not None and not self.answered and self.held_text:
            yield TokenDelta(text="".join(self.held_text))
        reasoning = [b for _, b in sorted(self.blocks.items()) if b.kind == "reasoning"]
        if len(reasoning) > 1:
            yield ProviderMetadata(
                data={
                    REASONING_KEY: [
                        {"redacted": b.redacted}
                        if b.redacted is not None
                        else {"text": "".join(b.text), "signature": b.signature}
                        for b in reasoning
                    ]
                }
            )
        if self.usage is not None:
            yield UsageReported(usage=self.usage)
        if self.stop_reason is None:
            raise TransportError("Bedrock stream ended without a messageStop event (cut off)")
        reason = FINISH_MAP.get(self.stop_reason, FinishReason.OTHER)
        if reason is FinishReason.TOOL_CALLS and self.answered and self.tool_calls == 0:
            reason = FinishReason.STOP
        yield Finish(
            reason=reason, raw=self.stop_reason, model=self.model, response_id=self.response_id
        )

    def metadata(self, response: Mapping[str, Any]) -> None:
        """Keep the AWS request id of the SDK's ``ResponseMetadata`` (both APIs carry it)."""
        request_id = _map(response.get("ResponseMetadata")).get("RequestId")
        self.response_id = latest_text(self.response_id, request_id)

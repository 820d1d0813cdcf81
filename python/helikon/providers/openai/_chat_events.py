"""How a Chat Completions answer (a stream of chunks, or one completion) becomes model events.

A :class:`TokenDelta` per content fragment, a :class:`ToolCallDelta` per tool-call fragment
(arguments that arrive before the call's name wait for it), one :class:`UsageReported` and one
terminal :class:`Finish`:

    * ``finish_reason`` maps to :class:`FinishReason` (``stop``, ``length``, ``tool_calls`` /
      ``function_call``, ``content_filter``, anything else ``OTHER``); ``Finish.raw`` keeps the
      provider's value, ``Finish.model`` / ``Finish.response_id`` the completion's ``model``
      and ``id``. A ``stop`` that carries tool calls (OpenAI does this when
      ``tool_choice`` forces a named function) is reported as ``TOOL_CALLS``.
    * Refusals (``message.refusal`` / ``delta.refusal``) are not text. When the model
      refused and produced no content and no tool call, the stream ends by raising
      :class:`~helikon.errors.Refused` whose message is the refusal text (after reporting
      usage). When a refusal comes with other output, the output is kept and the finish
      reason is ``REFUSAL``.
    * ``reasoning_content`` / ``reasoning`` deltas, which some OpenAI-compatible servers send,
      become :class:`ReasoningDelta`; OpenAI itself sends no reasoning text on this API.
    * A stream that ends without a ``finish_reason`` raises
      :class:`~helikon.errors.TransportError` (it was cut off).
    * Only the first choice (``index`` 0) is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from helikon.core.model import (
    Finish,
    FinishReason,
    ModelEvent,
    ReasoningDelta,
    TokenDelta,
    ToolCallDelta,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import ModelOther, Refused, TransportError
from helikon.providers._answer import latest_text

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.completion_usage import CompletionUsage

__all__ = ["ChatTurn"]

_FINISH_MAP: dict[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def _usage(usage: CompletionUsage | None) -> Usage | None:
    if usage is None:
        return None
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    cached = getattr(prompt_details, "cached_tokens", None) if prompt_details else None
    reasoning = (
        getattr(completion_details, "reasoning_tokens", None) if completion_details else None
    )
    prompt = usage.prompt_tokens or 0
    completion = usage.completion_tokens or 0
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        cached_input_tokens=cached or 0,
        reasoning_tokens=reasoning or 0,
        total_tokens=usage.total_tokens or (prompt + completion),
    )


def _reasoning_text(obj: Any) -> str:
    extra = getattr(obj, "model_extra", None) or {}
    for name in _REASONING_FIELDS:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _finish_reason(raw: str, *, has_calls: bool, refused: bool) -> FinishReason:
    reason = _FINISH_MAP.get(raw, FinishReason.OTHER)
    if reason is FinishReason.STOP and has_calls:
        return FinishReason.TOOL_CALLS
    if reason is FinishReason.STOP and refused:
        return FinishReason.REFUSAL
    return reason


@dataclass
class ChatTurn:
    """What one response accumulated; decides how the event stream ends.

    Feed it the whole completion (:meth:`whole`) or each stream chunk (:meth:`chunk`), then
    take :meth:`ending`.
    """

    text_seen: bool = False
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, str] = field(default_factory=dict)  # tool-call index -> call id
    names: dict[int, str] = field(default_factory=dict)
    held_args: dict[int, list[str]] = field(default_factory=dict)  # args seen before the name
    finish_raw: str | None = None
    usage: Usage | None = None
    model: str | None = None
    response_id: str | None = None

    def header(self, obj: Any) -> None:
        """Keep the answering model and the completion id (every chunk repeats them)."""
        self.model = latest_text(self.model, getattr(obj, "model", None))
        self.response_id = latest_text(self.response_id, getattr(obj, "id", None))

    def tool_fragment(
        self, index: int, call_id: str | None, name: str | None, args: str | None
    ) -> ToolCallDelta | None:
        if index not in self.calls:
            self.calls[index] = call_id or f"call_{index}"
        if index not in self.names:
            if not name:
                self.held_args.setdefault(index, []).append(args or "")
                return None
            self.names[index] = name
            held = "".join(self.held_args.pop(index, []))
            return ToolCallDelta(
                call_id=self.calls[index], name=name, args_delta=held + (args or "")
            )
        if not args:
            return None
        return ToolCallDelta(call_id=self.calls[index], args_delta=args)

    @property
    def finished(self) -> bool:
        """Never before the stream ends (the last chunks carry the usage)."""
        return False

    def whole(self, completion: Any) -> Iterator[ModelEvent]:
        """The events of a whole (not streamed) ``ChatCompletion``."""
        return _completion_events(self, cast("ChatCompletion", completion))

    def chunk(self, chunk: Any) -> Iterator[ModelEvent]:
        """The events of one ``ChatCompletionChunk``."""
        return _chunk_events(self, cast("ChatCompletionChunk", chunk))

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises Refused for a bare refusal."""
        if self.usage is not None:
            yield UsageReported(usage=self.usage)
        refusal = "".join(self.refusal)
        if refusal and not self.text_seen and not self.names:
            raise Refused(refusal)
        if self.finish_raw is None:
            raise TransportError("OpenAI stream ended without a finish_reason (cut off)")
        yield Finish(
            reason=_finish_reason(
                self.finish_raw, has_calls=bool(self.names), refused=bool(refusal)
            ),
            raw=self.finish_raw,
            model=self.model,
            response_id=self.response_id,
        )


def _text_events(turn: ChatTurn, part: Any) -> Iterator[ModelEvent]:
    """The reasoning and text of a chunk's delta or a whole message; a refusal is noted."""
    reasoning = _reasoning_text(part)
    if reasoning:
        yield ReasoningDelta(text=reasoning)
    if part.content:
        turn.text_seen = True
        yield TokenDelta(text=part.content)
    refusal = getattr(part, "refusal", None)
    if refusal:
        turn.refusal.append(refusal)


def _chunk_events(turn: ChatTurn, chunk: ChatCompletionChunk) -> Iterator[ModelEvent]:
    turn.header(chunk)
    if chunk.usage is not None:
        turn.usage = _usage(chunk.usage)
    for choice in chunk.choices:
        if choice.index != 0:
            continue
        delta = choice.delta
        yield from _text_events(turn, delta)
        for call in delta.tool_calls or []:
            function = call.function
            event = turn.tool_fragment(
                call.index,
                call.id,
                function.name if function is not None else None,
                function.arguments if function is not None else None,
            )
            if event is not None:
                yield event
        if choice.finish_reason:
            turn.finish_raw = choice.finish_reason


def _completion_events(turn: ChatTurn, completion: ChatCompletion) -> Iterator[ModelEvent]:
    turn.header(completion)
    turn.usage = _usage(completion.usage)
    choice = next((c for c in completion.choices if c.index == 0), None)
    if choice is None:
        raise ModelOther("OpenAI returned a completion without choices")
    message = choice.message
    yield from _text_events(turn, message)
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        if function is None:  # custom (non-function) tool calls are not supported
            continue
        event = turn.tool_fragment(index, call.id, function.name, function.arguments)
        if event is not None:
            yield event
    turn.finish_raw = choice.finish_reason

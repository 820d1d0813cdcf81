"""How a Responses API answer (a stream of events, or one response) becomes model events.

:class:`TokenDelta` per ``output_text`` fragment, :class:`ReasoningDelta` per
reasoning-summary (or raw reasoning) fragment, :class:`ToolCallDelta` per function-call
fragment (``call_id`` is the id, not the ``fc_`` item id), one :class:`UsageReported`, one
:class:`ProviderMetadata` and one terminal :class:`Finish`:

    * The raw finish value is the response ``status``: ``completed``, or
      ``incomplete:<reason>``. ``completed`` maps to ``STOP`` (``TOOL_CALLS`` when the turn
      has function calls, ``REFUSAL`` when a refusal came with other output);
      ``incomplete:max_output_tokens`` to ``LENGTH``, ``incomplete:content_filter`` to
      ``CONTENT_FILTER``, anything else to ``OTHER``. ``Finish.model`` and
      ``Finish.response_id`` are the response's ``model`` and ``id``.
    * A refusal with no text and no call raises :class:`~helikon.errors.Refused` carrying the
      refusal text (after usage is reported), as the Chat adapter does.
    * ``response.failed`` and in-band ``error`` events raise the error the HTTP mapping of
      ``helikon.providers.openai._errors`` gives for that error code.
    * Usage: ``input_tokens``, ``output_tokens``, ``total_tokens``,
      ``input_tokens_details.cached_tokens`` (and ``cache_write_tokens`` when sent),
      ``output_tokens_details.reasoning_tokens``.
    * Several summary parts (or reasoning items) are joined with a blank line in the
      reasoning text; the parts themselves travel in ``provider_data``.
    * A stream that ends before ``response.completed`` / ``incomplete`` / ``failed`` raises
      :class:`~helikon.errors.TransportError`.

The turn's :class:`ProviderMetadata` is
``{"openai_response": {"id": ..., "model": ..., "output": [...]}}``: ``model`` is the model
that answered (e.g. ``gpt-4o-2024-08-06``) and ``output`` has one entry per output item, in
order (``reasoning`` with id, summary and encrypted content; ``message`` with id and phase,
plus its own ``text`` when the turn had several messages and its ``refusal`` if any;
``function_call`` with id and call id; unknown item types verbatim).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from helikon.core.model import (
    Finish,
    FinishReason,
    ModelEvent,
    ProviderMetadata,
    ReasoningDelta,
    TokenDelta,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import ModelError, Refused, TransportError
from helikon.providers._answer import latest_text
from helikon.providers.openai._errors import map_inband_error
from helikon.providers.openai._responses_output import Output
from helikon.providers.openai._responses_replay import PROVIDER_DATA_KEY

__all__ = ["ResponsesTurn", "as_dict"]

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_INCOMPLETE_MAP: dict[str, FinishReason] = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def as_dict(obj: Any) -> dict[str, Any]:
    """A wire-shaped dict from an SDK model (or a dict), unknown fields included."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return cast("dict[str, Any]", to_dict(mode="json", warnings=False))
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return cast("dict[str, Any]", dump(mode="json"))
    raise TransportError(f"OpenAI sent an unexpected stream value: {type(obj).__name__}")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    input_details = raw.get("input_tokens_details") or {}
    output_details = raw.get("output_tokens_details") or {}
    prompt, completion = _int(raw.get("input_tokens")), _int(raw.get("output_tokens"))
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        cached_input_tokens=_int(input_details.get("cached_tokens")),
        reasoning_tokens=_int(output_details.get("reasoning_tokens")),
        total_tokens=_int(raw.get("total_tokens")) or prompt + completion,
        cache_write_input_tokens=_int(input_details.get("cache_write_tokens")),
    )


def _inband_error(error: Any, fallback: str) -> ModelError:
    """Map an error reported inside a 200 response (``response.failed``, ``error`` events)."""
    envelope: dict[str, Any] = dict(error) if isinstance(error, Mapping) else {}
    return map_inband_error(envelope, fallback)


@dataclass
class ResponsesTurn:
    """What one response accumulated; decides how the event stream ends.

    Feed it the whole response (:meth:`whole`) or each stream event (:meth:`chunk`), then
    take :meth:`ending`.
    """

    response_id: str | None = None
    model: str | None = None
    outputs: dict[int, Output] = field(default_factory=dict)
    by_item_id: dict[str, int] = field(default_factory=dict)
    reasoning_key: tuple[int, int] | None = None  # (output index, part) of the last fragment
    reasoning_seen: bool = False
    text_seen: bool = False
    status: str | None = None
    incomplete_reason: str | None = None
    error: Any = None
    usage: Usage | None = None

    # ------------------------------------------------------------------ bookkeeping

    def _index(self, event: Mapping[str, Any]) -> int:
        index = event.get("output_index")
        if isinstance(index, int):
            return index
        item_id = event.get("item_id")
        if isinstance(item_id, str) and item_id in self.by_item_id:
            return self.by_item_id[item_id]
        return max(self.outputs) if self.outputs else 0  # the item being streamed

    def _output(self, index: int, item: Mapping[str, Any] | None) -> Output:
        out = self.outputs.get(index)
        if out is None:
            kind = str((item or {}).get("type") or "message")
            out = Output(kind=kind, entry={"type": kind})
            self.outputs[index] = out
        if item is not None:
            out.absorb(item)
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id:
                self.by_item_id[item_id] = index
        return out

    def _reasoning(self, index: int, part: int, text: str) -> Iterator[ModelEvent]:
        if not text:
            return
        key = (index, part)
        if self.reasoning_seen and self.reasoning_key != key:
            yield ReasoningDelta(text="\n\n")
        self.reasoning_key = key
        self.reasoning_seen = True
        self.outputs[index].reasoning_sent = True
        yield ReasoningDelta(text=text)

    # ------------------------------------------------------------------ events

    @property
    def finished(self) -> bool:
        """Whether a terminal event (completed, incomplete, failed) has arrived."""
        return self.status is not None

    def whole(self, response: Any) -> Iterator[ModelEvent]:
        """The events of a whole (not streamed) response."""
        return self.response(as_dict(response))

    def chunk(self, chunk: Any) -> Iterator[ModelEvent]:
        """The events of one stream event."""
        return self.event(as_dict(chunk))

    def event(self, event: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """Fold one stream event in, yielding the model events it produces."""
        kind = event.get("type")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self._response_header(event.get("response"))
        elif kind == "response.output_item.added":
            item = event.get("item")
            if isinstance(item, Mapping):
                index = self._index(event)
                out = self._output(index, item)
                if out.kind == "function_call":
                    yield from out.call_events(
                        index, item.get("name"), str(item.get("arguments") or "")
                    )
        elif kind == "response.output_text.delta":
            index = self._index(event)
            delta = str(event.get("delta") or "")
            if delta:
                self._output(index, None).text.append(delta)
                self.text_seen = True
                yield TokenDelta(text=delta)
        elif kind == "response.refusal.delta":
            self._output(self._index(event), None).refusal.append(str(event.get("delta") or ""))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            index = self._index(event)
            self._output(index, {"type": "reasoning"} if index not in self.outputs else None)
            part = event.get("summary_index", event.get("content_index", 0))
            yield from self._reasoning(
                index, part if isinstance(part, int) else 0, str(event.get("delta") or "")
            )
        elif kind == "response.function_call_arguments.delta":
            index = self._index(event)
            out = self._output(index, None if index in self.outputs else {"type": "function_call"})
            yield from out.call_events(index, None, str(event.get("delta") or ""))
        elif kind == "response.function_call_arguments.done":
            index = self._index(event)
            out = self._output(index, None if index in self.outputs else {"type": "function_call"})
            args = "" if out.args_sent or out.held else str(event.get("arguments") or "")
            if not out.named or args:
                yield from out.call_events(index, event.get("name"), args)
        elif kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, Mapping):
                yield from self._item_done(self._index(event), item)
        elif kind in _TERMINAL:
            yield from self.response(event.get("response"))
        elif kind == "error":
            raise _inband_error(event.get("error", event), "OpenAI reported a stream error")

    def _response_header(self, response: Any) -> None:
        if isinstance(response, Mapping):
            self.response_id = latest_text(self.response_id, response.get("id"))
            self.model = latest_text(self.model, response.get("model"))

    def _item_done(self, index: int, item: Mapping[str, Any]) -> Iterator[ModelEvent]:
        """An output item is final: emit whatever its deltas did not already deliver."""
        out = self._output(index, item)
        if out.done:
            return
        out.done = True
        if out.kind == "function_call":
            args = "" if out.args_sent or out.held else str(item.get("arguments") or "")
            yield from out.call_events(index, item.get("name"), args, final=True)
        elif out.kind == "message":
            for part in item.get("content") or []:
                if not isinstance(part, Mapping):
                    continue
                if part.get("type") == "output_text" and not out.text:
                    text = str(part.get("text") or "")
                    if text:
                        self.text_seen = True
                        yield TokenDelta(text=text)
                        out.entry.setdefault("_text", []).append(text)
                elif part.get("type") == "refusal" and not out.refusal:
                    out.entry.setdefault("_refusal", []).append(str(part.get("refusal") or ""))
        elif out.kind == "reasoning" and not out.reasoning_sent:
            for part_index, summary in enumerate(out.entry.get("summary") or []):
                yield from self._reasoning(index, part_index, str(summary.get("text", "")))

    def response(self, response: Any) -> Iterator[ModelEvent]:
        """Fold in a whole response object (the non-streamed answer or a terminal event)."""
        if not isinstance(response, Mapping):
            raise TransportError("OpenAI sent a terminal event without a response object")
        self._response_header(response)
        for index, item in enumerate(response.get("output") or []):
            if isinstance(item, Mapping) and not (
                index in self.outputs and self.outputs[index].done
            ):
                yield from self._item_done(index, item)
        status = response.get("status")
        self.status = str(status) if status else "completed"
        details = response.get("incomplete_details")
        if isinstance(details, Mapping) and details.get("reason"):
            self.incomplete_reason = str(details["reason"])
        self.error = response.get("error")
        self.usage = _usage(response.get("usage"))

    # ------------------------------------------------------------------ ending

    def provider_data(self) -> dict[str, Any]:
        """The turn's Responses state (see ``_responses_replay``)."""
        ordered = [self.outputs[i] for i in sorted(self.outputs)]
        messages = [o for o in ordered if o.kind == "message"]
        several = len(messages) > 1
        entries = [e for e in (o.provider_entry(several) for o in ordered) if e is not None]
        data: dict[str, Any] = {"output": entries}
        if self.response_id is not None:
            data["id"] = self.response_id
        if self.model is not None:
            data["model"] = self.model
        return {PROVIDER_DATA_KEY: data}

    def finish_raw(self) -> str:
        """The raw finish value: the status, ``incomplete:<reason>`` when incomplete."""
        status = self.status or "completed"
        if status == "incomplete":
            return f"incomplete:{self.incomplete_reason}" if self.incomplete_reason else status
        return status

    def ending(self) -> Iterator[ModelEvent]:
        """The closing events; raises for a failed response or a bare refusal."""
        if self.status is None:
            raise TransportError("OpenAI stream ended before response.completed (cut off)")
        if self.usage is not None:
            yield UsageReported(usage=self.usage)
        if self.status == "failed":
            raise _inband_error(self.error, "OpenAI reported that the response failed")
        yield ProviderMetadata(data=self.provider_data())
        refusal = "".join(o.refusal_text() for o in self.outputs.values())
        has_calls = any(o.kind == "function_call" and o.named for o in self.outputs.values())
        if refusal and not self.text_seen and not has_calls:
            raise Refused(refusal)
        raw = self.finish_raw()
        if self.status == "completed":
            reason = FinishReason.STOP
            if has_calls:
                reason = FinishReason.TOOL_CALLS
            elif refusal:
                reason = FinishReason.REFUSAL
        elif self.status == "incomplete":
            reason = _INCOMPLETE_MAP.get(self.incomplete_reason or "", FinishReason.OTHER)
        else:
            reason = FinishReason.OTHER
        yield Finish(reason=reason, raw=raw, model=self.model, response_id=self.response_id)

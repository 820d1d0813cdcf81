"""Aggregate one streamed model turn into conversation items."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from helikon.core.events import ReasoningDelta, TokenDelta, ToolCallDelta
from helikon.core.items import (
    AssistantMessage,
    ContentPart,
    Item,
    ReasoningPart,
    TextPart,
    ToolCall,
)
from helikon.core.model import Finish, FinishReason, ProviderMetadata, UsageReported
from helikon.core.usage import Usage

__all__ = ["TurnAccumulator"]


@dataclass(slots=True)
class _PendingCall:
    call_id: str
    name: str = ""
    args: list[str] = field(default_factory=list)
    provider_data: dict[str, Any] | None = None


@dataclass(slots=True)
class TurnAccumulator:
    """Collects one model turn's events; :meth:`items` gives the settled items.

    Text fragments join into one text part; reasoning fragments into one reasoning part
    (keeping the last signature seen); tool-call fragments join per ``call_id`` in order of
    first appearance. Calls whose arguments are not valid JSON keep the raw string under
    ``args`` so the tool reports ``InvalidArgs`` instead of the run crashing.
    """

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    calls: dict[str, _PendingCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    finish: FinishReason = FinishReason.STOP
    finish_raw: str | None = None
    model: str | None = None
    """The model that answered (``Finish.model``), when the provider named it."""
    response_id: str | None = None
    """The provider's id of this response (``Finish.response_id``), when it gave one."""
    provider_data: dict[str, Any] | None = None

    def add(self, event: Any) -> None:
        """Fold one model event in."""
        if isinstance(event, TokenDelta):
            self.text.append(event.text)
        elif isinstance(event, ToolCallDelta):
            call = self.calls.get(event.call_id)
            if call is None:
                call = self.calls[event.call_id] = _PendingCall(event.call_id)
            if event.name:
                call.name = event.name
            if event.args_delta:
                call.args.append(event.args_delta)
        elif isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)
            if event.signature is not None:
                self.signature = event.signature
            if event.redacted is not None:
                self.redacted = event.redacted
        elif isinstance(event, UsageReported):
            self.usage = self.usage + event.usage
        elif isinstance(event, Finish):
            self.finish = event.reason
            self.finish_raw = event.raw
            self.model = event.model
            self.response_id = event.response_id
        elif isinstance(event, ProviderMetadata):
            if event.call_id is None:
                self.provider_data = {**(self.provider_data or {}), **event.data}
            else:
                call = self.calls.get(event.call_id)
                if call is None:
                    call = self.calls[event.call_id] = _PendingCall(event.call_id)
                call.provider_data = {**(call.provider_data or {}), **event.data}

    def items(self, agent: str) -> list[Item]:
        """The assistant message (if it has content) then the tool calls, in order."""
        out: list[Item] = []
        content: list[ContentPart] = []
        if self.reasoning or self.signature is not None or self.redacted is not None:
            content.append(
                ReasoningPart(
                    text="".join(self.reasoning), signature=self.signature, redacted=self.redacted
                )
            )
        text = "".join(self.text)
        if text:
            content.append(TextPart(text=text))
        message_data = self.provider_data
        if content or (message_data is not None and not self.calls):
            out.append(AssistantMessage(content=content, agent=agent, provider_data=message_data))
            message_data = None
        for call in self.calls.values():
            raw = "".join(call.args)
            args: Any
            try:
                args = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError:
                args = raw
            data = call.provider_data
            if message_data is not None:
                data = {**message_data, **(data or {})}
                message_data = None
            out.append(
                ToolCall(call_id=call.call_id, name=call.name, args=args, provider_data=data)
            )
        return out

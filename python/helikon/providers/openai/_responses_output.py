"""One output item of a Responses answer, as the decoder folds its events in.

An output item (a reasoning item, a message, a function call, or a type this adapter does not
model) streams as fragments and ends with ``response.output_item.done``. :class:`Output`
keeps what was emitted for it (so the finished item adds only what its deltas did not
deliver) and its entry in the turn's provider data (``_responses_replay``). A function call's
argument fragments that arrive before its name wait for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from helikon.core.model import ModelEvent, ToolCallDelta

__all__ = ["Output"]


@dataclass
class Output:
    """One output item as the turn saw it (keyed by ``output_index``)."""

    kind: str
    entry: dict[str, Any]
    call_id: str | None = None
    named: bool = False  # the function call's name was emitted
    held: list[str] = field(default_factory=list)  # argument fragments seen before the name
    args_sent: bool = False
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning_sent: bool = False
    done: bool = False

    def absorb(self, item: Mapping[str, Any]) -> None:
        """Update the output's provider-data entry from the item's latest state."""
        kind = self.kind
        entry = self.entry
        if kind == "reasoning":
            entry["type"] = "reasoning"
            for key in ("id", "encrypted_content"):
                if item.get(key):
                    entry[key] = item[key]
            summary = item.get("summary")
            if isinstance(summary, list) and (summary or "summary" not in entry):
                entry["summary"] = [
                    {"type": "summary_text", "text": str(s.get("text", ""))}
                    for s in summary
                    if isinstance(s, Mapping)
                ]
        elif kind == "message":
            entry["type"] = "message"
            for key in ("id", "phase"):
                if item.get(key):
                    entry[key] = item[key]
        elif kind == "function_call":
            entry["type"] = "function_call"
            if item.get("id"):
                entry["id"] = item["id"]
            call_id = item.get("call_id") or item.get("id")
            if self.call_id is None and isinstance(call_id, str) and call_id:
                self.call_id = call_id
            if self.call_id is not None:
                entry["call_id"] = self.call_id
        else:
            entry.clear()
            entry.update(item)

    def call_events(
        self, index: int, name: Any, args: str, *, final: bool = False
    ) -> Iterator[ModelEvent]:
        """Tool-call fragments; arguments seen before the name wait for it."""
        if not self.named and not name and not final:
            self.held.append(args)
            return
        if self.call_id is None:
            self.call_id = f"call_{index}"  # only servers that send no call id get here
            self.entry["call_id"] = self.call_id
        if not self.named:
            self.named = True
            args = "".join(self.held) + args
            self.held.clear()
            self.args_sent = self.args_sent or bool(args)
            yield ToolCallDelta(call_id=self.call_id, name=str(name or ""), args_delta=args)
        elif args:
            self.args_sent = True
            yield ToolCallDelta(call_id=self.call_id, args_delta=args)

    def texts(self) -> list[str]:
        """The message's text fragments (streamed, else from the finished item)."""
        return self.text or cast("list[str]", self.entry.get("_text", []))

    def refusal_text(self) -> str:
        """The message's refusal (streamed, else from the finished item)."""
        return "".join(self.refusal or cast("list[str]", self.entry.get("_refusal", [])))

    def provider_entry(self, several_messages: bool) -> dict[str, Any] | None:
        """This item's entry in the turn's ``output`` state (``None``: nothing to send back).

        A message carries its own ``text`` when the turn had ``several_messages``, and its
        ``refusal`` if any.
        """
        entry = {k: v for k, v in self.entry.items() if not k.startswith("_")}
        if self.kind == "message":
            if several_messages:
                entry["text"] = "".join(self.texts())
            refusal = self.refusal_text()
            if refusal:
                entry["refusal"] = refusal
        if self.kind == "function_call" and self.call_id is None:
            return None
        if self.kind == "reasoning" and "id" not in entry:
            return None  # nothing to send back (a server that gives reasoning no id)
        return entry

"""AG-UI <-> helikon: a ``RunAgentInput``'s messages as run items, run events as AG-UI events.

Typed with the ``ag-ui-protocol`` package (extra ``ag-ui``). :func:`input_messages` turns the
conversation an AG-UI client sends into helikon items; :class:`AguiTranslator` turns one
run's recorded events (their JSON form) into AG-UI events:

========================  ==============================================================
helikon event             AG-UI events
========================  ==============================================================
``run_started``           ``RUN_STARTED`` (the input's ``thread_id`` and ``run_id``)
``token_delta``           ``TEXT_MESSAGE_START`` (first delta of a message), ``..._CONTENT``
``message_output``        ``TEXT_MESSAGE_END`` (``START``/``CONTENT`` first when the model
                          streamed no deltas)
``tool_call_delta``       ``TOOL_CALL_START`` (first delta of a call), ``TOOL_CALL_ARGS``
``tool_call_item``        ``TOOL_CALL_END`` (``START``/``ARGS`` first when not streamed)
``tool_output_item``      ``TOOL_CALL_RESULT`` (the result's text)
``run_completed``         ``RUN_FINISHED`` (``result``: the final text)
``run_interrupted``       ``STATE_SNAPSHOT`` (the calls waiting for approval), then
                          ``RUN_FINISHED``
``run_failed``            ``RUN_ERROR`` (``code``: the error's kind)
``turn_started``          nothing (a new turn closes an open text message)
anything else             ``RAW`` (``source="helikon"``, ``event``: the event's JSON)
========================  ==============================================================
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    BaseEvent,
    DeveloperMessage,
    RawEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    SystemMessage,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    UserMessage,
)

__all__ = ["AguiTranslator", "input_messages"]


class InputProblem(ValueError):
    """A message of the input that has no helikon item; ``field`` names it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def _text_content(content: Any, field: str) -> str:
    """The text of a message's ``content`` (a string, or text parts only)."""
    if isinstance(content, str):
        return content
    texts = []
    for i, part in enumerate(content or []):
        if getattr(part, "type", None) != "text":
            raise InputProblem(
                f"{field}[{i}] is a {getattr(part, 'type', '?')!r} part; this endpoint takes "
                "text parts only (send the text, or use POST /agents/{name}/runs with items)",
                f"{field}[{i}]",
            )
        texts.append(part.text)
    return "".join(texts)


def _text_item(kind: str, text: str) -> dict[str, Any]:
    return {"type": kind, "content": [{"type": "text", "text": text}]}


def input_messages(body: RunAgentInput) -> list[dict[str, Any]]:
    """The input's messages as helikon items in their JSON form, oldest first.

    ``user`` becomes a user message, ``system`` and ``developer`` a system message,
    ``assistant`` an assistant message (when it has text) and a tool call per entry of its
    ``tool_calls``, ``tool`` a tool result. ``activity`` and ``reasoning`` messages are
    skipped (they are the client's display, not the conversation).

    Raises:
        InputProblem: a non-text content part, or tool-call arguments that are not JSON.
    """
    items: list[dict[str, Any]] = []
    for i, message in enumerate(body.messages):
        field = f"messages[{i}]"
        if isinstance(message, UserMessage):
            text = _text_content(message.content, f"{field}.content")
            items.append(_text_item("user_message", text))
        elif isinstance(message, SystemMessage | DeveloperMessage):
            items.append(_text_item("system", message.content))
        elif isinstance(message, AssistantMessage):
            if message.content:
                text = _text_content(message.content, f"{field}.content")
                items.append(_text_item("assistant_message", text))
            for j, call in enumerate(message.tool_calls or []):
                try:
                    args = json.loads(call.function.arguments or "{}")
                except ValueError:
                    where = f"{field}.tool_calls[{j}].function.arguments"
                    raise InputProblem(f"{where} is not JSON", where) from None
                items.append(
                    {
                        "type": "tool_call",
                        "call_id": call.id,
                        "name": call.function.name,
                        "args": args,
                    }
                )
        elif isinstance(message, ToolMessage):
            result = _text_item("tool_result", _text_content(message.content, f"{field}.content"))
            result["call_id"] = message.tool_call_id
            result["is_error"] = bool(message.error)
            items.append(result)
    return items


def _parts_text(parts: Any) -> str:
    return "".join(
        p.get("text", "") for p in parts or [] if isinstance(p, dict) and p.get("type") == "text"
    )


class AguiTranslator:
    """Turns one run's events (``{"type": ..., ...}`` dicts, in order) into AG-UI events.

    Args:
        thread_id: the input's ``thread_id``.
        run_id: the input's ``run_id``.
        server_run: the server's id of the run (named in the ``STATE_SNAPSHOT`` of a run
            paused for approval, to answer at ``POST /agents/{name}/runs/{id}/approvals``).

    Example:
        >>> t = AguiTranslator("t1", "r1")
        >>> [e.type.value for e in t.translate({"type": "token_delta", "text": "hi"})]
        ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT']
    """

    def __init__(self, thread_id: str, run_id: str, server_run: str | None = None) -> None:
        self.thread_id = thread_id
        self.server_run = server_run
        self.run_id = run_id
        self._message: str | None = None  # the open text message's id
        self._count = 0
        self._calls: set[str] = set()  # tool calls started
        self._output = ""  # the last assistant text

    def _new_id(self, kind: str) -> str:
        self._count += 1
        return f"{self.run_id}-{kind}-{self._count}"

    def _close_text(self) -> list[BaseEvent]:
        if self._message is None:
            return []
        done = TextMessageEndEvent(message_id=self._message)
        self._message = None
        return [done]

    def _open_text(self) -> list[BaseEvent]:
        if self._message is not None:
            return []
        self._message = self._new_id("msg")
        return [TextMessageStartEvent(message_id=self._message, role="assistant")]

    def _start_call(self, call_id: str, name: str) -> list[BaseEvent]:
        self._calls.add(call_id)
        return [
            *self._close_text(),
            ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name),
        ]

    def translate(self, event: dict[str, Any]) -> list[BaseEvent]:
        """The AG-UI events for one helikon event (possibly none)."""
        kind = event.get("type")
        if kind == "run_started":
            return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]
        if kind == "turn_started":
            return self._close_text()
        if kind == "token_delta":
            text = event.get("text") or ""
            if not text:
                return []
            return [
                *self._open_text(),
                TextMessageContentEvent(message_id=self._message or "", delta=text),
            ]
        if kind == "message_output":
            text = _parts_text(event.get("item", {}).get("content"))
            self._output = text
            if self._message is None and text:  # the model streamed no deltas
                return [
                    *self._open_text(),
                    TextMessageContentEvent(message_id=self._message or "", delta=text),
                    *self._close_text(),
                ]
            return self._close_text()
        if kind == "tool_call_delta":
            return self._tool_delta(event)
        if kind == "tool_call_item":
            item = event.get("item", {})
            call_id = str(item.get("call_id", ""))
            out: list[BaseEvent] = []
            if call_id not in self._calls:
                out += self._start_call(call_id, str(item.get("name", "")))
                out.append(
                    ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(item.get("args")))
                )
            out.append(ToolCallEndEvent(tool_call_id=call_id))
            return out
        if kind == "tool_output_item":
            item = event.get("item", {})
            return [
                *self._close_text(),
                ToolCallResultEvent(
                    message_id=self._new_id("tool"),
                    tool_call_id=str(item.get("call_id", "")),
                    content=_parts_text(item.get("content")),
                    role="tool",
                ),
            ]
        return self._terminal(kind, event)

    def _tool_delta(self, event: dict[str, Any]) -> list[BaseEvent]:
        call_id = str(event.get("call_id", ""))
        out: list[BaseEvent] = []
        if call_id not in self._calls:
            out += self._start_call(call_id, str(event.get("name") or ""))
        if event.get("args_delta"):
            out.append(ToolCallArgsEvent(tool_call_id=call_id, delta=event["args_delta"]))
        return out

    def _terminal(self, kind: Any, event: dict[str, Any]) -> list[BaseEvent]:
        closed = self._close_text()
        if kind == "run_completed":
            return [*closed, self._finished(self._output)]
        if kind == "run_failed":
            error = event.get("error") or {}
            return [
                *closed,
                RunErrorEvent(message=str(error.get("message", "")), code=error.get("kind")),
            ]
        if kind == "run_interrupted":
            pending = (event.get("state") or {}).get("pending") or []
            snapshot = {"status": "needs_approval", "run_id": self.server_run, "pending": pending}
            return [*closed, StateSnapshotEvent(snapshot=snapshot), self._finished(None)]
        return [*closed, RawEvent(event=event, source="helikon")]

    def _finished(self, result: str | None) -> RunFinishedEvent:
        return RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, result=result)

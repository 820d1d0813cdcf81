"""Folding a history into alternating user and assistant turns: the Messages shape.

The Anthropic Messages API and Bedrock Converse take the same shape of conversation, and
:func:`fold_turns` builds it once; each adapter says how a block is written
(:class:`TurnBlocks`):

* ``system`` items go to a separate list of texts (kept when ``keep_system`` says so);
* a user message's blocks open or extend a user turn (a message with no block is dropped);
* an assistant message's reasoning, text and tool calls open or extend an assistant turn, as
  do the ``tool_call`` items after it; a message with none of them is dropped;
* a tool result goes into a user turn, before that turn's other blocks;
* consecutive items of one role share one turn, its blocks in the order reasoning, tool
  results, other blocks, tool calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from helikon.core.items import (
    AssistantMessage,
    ContentPart,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUsePart,
    UserMessage,
    text_of,
)

__all__ = ["TurnBlocks", "fold_turns", "last_user_turns"]

Block = dict[str, Any]


class TurnBlocks(ABC):
    """How one provider writes the blocks of a turn."""

    def keep_system(self, text: str) -> bool:
        """Whether a system item's text is sent (by default: when it is not empty)."""
        return bool(text)

    @abstractmethod
    def user(self, content: list[ContentPart]) -> list[Block]:
        """The blocks of a user message's content."""

    @abstractmethod
    def reasoning(self, message: AssistantMessage) -> list[Block]:
        """The reasoning blocks an assistant message sends back."""

    @abstractmethod
    def text(self, text: str) -> Block:
        """An assistant text block (``text`` is not empty)."""

    @abstractmethod
    def tool_use(self, call_id: str, name: str, args: Any) -> Block:
        """A tool-call block."""

    @abstractmethod
    def tool_result(self, result: ToolResult) -> Block:
        """A tool-result block."""


@dataclass
class _Turn:
    role: str
    reasoning: list[Block] = field(default_factory=list)
    results: list[Block] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    calls: list[Block] = field(default_factory=list)

    def message(self) -> dict[str, Any]:
        content = [*self.reasoning, *self.results, *self.blocks, *self.calls]
        return {"role": self.role, "content": content}


def fold_turns(items: list[Item], write: TurnBlocks) -> tuple[list[str], list[dict[str, Any]]]:
    """The system texts and the ``{"role", "content"}`` messages of ``items``."""
    system: list[str] = []
    out: list[_Turn] = []

    def turn(role: str) -> _Turn:
        if out and out[-1].role == role:
            return out[-1]
        opened = _Turn(role)
        out.append(opened)
        return opened

    for item in items:
        if isinstance(item, SystemMessage):
            text = text_of(item.content)
            if write.keep_system(text):
                system.append(text)
        elif isinstance(item, UserMessage):
            blocks = write.user(item.content)
            if blocks:
                turn("user").blocks.extend(blocks)
        elif isinstance(item, AssistantMessage):
            reasoning = write.reasoning(item)
            texts = [write.text(p.text) for p in item.content if isinstance(p, TextPart) and p.text]
            calls = [
                write.tool_use(p.call_id, p.name, p.args)
                for p in item.content
                if isinstance(p, ToolUsePart)
            ]
            if not (reasoning or texts or calls):
                continue
            assistant = turn("assistant")
            assistant.reasoning.extend(reasoning)
            assistant.blocks.extend(texts)
            assistant.calls.extend(calls)
        elif isinstance(item, ToolCall):
            turn("assistant").calls.append(write.tool_use(item.call_id, item.name, item.args))
        elif isinstance(item, ToolResult):
            turn("user").results.append(write.tool_result(item))
    return system, [t.message() for t in out]


def last_user_turns(messages: list[dict[str, Any]], n: int) -> Iterator[dict[str, Any]]:
    """The last ``n`` user messages that have content, newest first (where prompt-cache
    marks go)."""
    remaining = n
    for message in reversed(messages):
        if remaining <= 0:
            return
        if message["role"] != "user" or not message["content"]:
            continue
        yield message
        remaining -= 1

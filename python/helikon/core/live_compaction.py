"""The driver's side of live compaction: the machine's ``Compacting`` state around a summary.

Before a model call in the ``CallingModel`` state, :meth:`LiveCompaction.start` counts the
conversation; over the :class:`~helikon.core.compaction.Compaction` threshold it feeds the
machine ``compaction_started`` (the step's event is ``CompactionStarted(tokens_before)``,
its action ``Compact``). :meth:`LiveCompaction.finish` then replaces, in place, everything
between the instructions and the open turn by one user message holding the summary, and
feeds ``compaction_completed`` (``CompactionCompleted(tokens_before, tokens_after)``, then
the model call that was due).

Kept as they are: the instructions (a leading system message) and the open turn: the last
model turn's assistant message and tool calls with the results that follow them, or the
trailing user messages. Nothing is compacted when what would be summarised is empty or a
lone earlier summary, at the model call a compaction just preceded (a conversation still
over the threshold after one does not loop), or when the model
fails, answers blank or with a summary that saves nothing (``tokens_after`` then equals
``tokens_before``).
"""

from __future__ import annotations

from helikon.core.cancel import CancellationToken
from helikon.core.compaction import Compaction, summarise
from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.core.loop_core import LoopCore, NativeStep
from helikon.core.usage import Usage

__all__ = ["SUMMARY_HEADER", "LiveCompaction"]

SUMMARY_HEADER = "[Summary of the conversation so far]\n"
"""How the summary message starts (it is a user message: every provider accepts one after
the instructions)."""


def _split(conversation: list[Item]) -> tuple[int, int]:
    """``(start, end)`` of the part to summarise: after the instructions, before the open
    turn."""
    start = 1 if conversation and isinstance(conversation[0], SystemMessage) else 0
    end = len(conversation)
    while end > start and isinstance(conversation[end - 1], ToolResult):
        end -= 1
    if end < len(conversation):  # results: keep the calls (and their message) before them
        while end > start and isinstance(conversation[end - 1], ToolCall):
            end -= 1
        if end > start and isinstance(conversation[end - 1], AssistantMessage):
            end -= 1
    else:
        while end > start and isinstance(conversation[end - 1], UserMessage):
            end -= 1
    return start, end


def _is_summary(item: Item) -> bool:
    return isinstance(item, UserMessage) and any(
        getattr(p, "text", "").startswith(SUMMARY_HEADER) for p in item.content
    )


class LiveCompaction:
    """Compacts one agent loop's conversation before model calls (see the module doc)."""

    def __init__(self, compaction: Compaction, token: CancellationToken) -> None:
        self.compaction = compaction
        self.token = token
        self.tokens_before = 0
        self.just_finished = False  # the model call right after a compaction is not checked

    def start(self, core: LoopCore, conversation: list[Item]) -> NativeStep | None:
        """The ``compaction_started`` step when the conversation is over the threshold and
        has something to summarise, else ``None`` (call the model)."""
        if self.just_finished or core.machine.state != "CallingModel":
            self.just_finished = False
            return None
        start, end = _split(conversation)
        middle = conversation[start:end]
        if not middle or (len(middle) == 1 and _is_summary(middle[0])):
            return None
        tokens = self.compaction.counter.count(conversation)
        if tokens <= self.compaction.threshold:
            return None
        self.tokens_before = tokens
        return core.compaction_started(tokens)

    async def finish(self, core: LoopCore, conversation: list[Item]) -> NativeStep:
        """Summarise, replace the summarised items in ``conversation`` and return the
        ``compaction_completed`` step (its events, then the due model call)."""
        self.just_finished = True
        start, end = _split(conversation)
        summary, usage = await summarise(self.compaction, conversation[:end], self.token)
        after = self.tokens_before
        if summary is not None:
            compacted = [
                *conversation[:start],
                UserMessage.text(SUMMARY_HEADER + summary),
                *conversation[end:],
            ]
            count = self.compaction.counter.count(compacted)
            if count < after:  # a summary that saves nothing is not used
                conversation[:] = compacted
                after = count
        return core.compaction_completed(after, usage if isinstance(usage, Usage) else Usage())

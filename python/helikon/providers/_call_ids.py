"""Tool-call ids rewritten for one request, with every tool result paired to its call.

Some histories repeat a call id (providers that reuse them, merged conversations), and some
APIs accept fewer characters than others send. Each adapter decides what a valid, unique id
is (:meth:`CallIds.fresh`, :meth:`CallIds.clean`); what they share is the pairing: every call
gets its new id in history order, and each result takes the earliest call of its original id
still waiting for a result (else the latest call of that id, else the cleaned id). The
rewrite is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from helikon.core.items import AssistantMessage, Item, ToolCall, ToolUsePart

__all__ = ["CallIds", "history_call_ids"]


def history_call_ids(items: Iterable[Item], clean: Callable[[str], str] = str) -> set[str]:
    """Every call id the history uses (cleaned), so that rewritten ids cannot collide."""
    ids: set[str] = set()
    for item in items:
        if isinstance(item, ToolCall):
            ids.add(clean(item.call_id))
        elif isinstance(item, AssistantMessage):
            ids.update(clean(p.call_id) for p in item.content if isinstance(p, ToolUsePart))
    return ids


@dataclass
class CallIds:
    """The ids of one request's calls and results.

    Subclasses give :meth:`fresh` (the id of a call, given those already ``used``) and may
    give :meth:`clean` (an id made valid, for a result whose call is not in the request).

    Example:
        >>> class Suffixed(CallIds):
        ...     def fresh(self, original: str) -> str:
        ...         return original if original not in self.used else f"{original}_2"
        >>> ids = Suffixed()
        >>> ids.call("c1"), ids.call("c1"), ids.result("c1"), ids.result("c1")
        ('c1', 'c1_2', 'c1', 'c1_2')
    """

    reserved: set[str] = field(default_factory=set)  # ids the history uses as given
    used: set[str] = field(default_factory=set)
    pending: dict[str, list[str]] = field(default_factory=dict)
    latest: dict[str, str] = field(default_factory=dict)

    def fresh(self, original: str) -> str:
        """The id to send for the next call whose id is ``original``."""
        raise NotImplementedError

    def clean(self, original: str) -> str:
        """``original`` made valid for the API (unchanged by default)."""
        return original

    def call(self, original: str) -> str:
        """The id to send for a call (in history order)."""
        new = self.fresh(original)
        self.used.add(new)
        self.pending.setdefault(original, []).append(new)
        self.latest[original] = new
        return new

    def result(self, original: str) -> str:
        """The id to send for a result of the call ``original``."""
        waiting = self.pending.get(original)
        if waiting:
            return waiting.pop(0)
        return self.latest.get(original, self.clean(original))

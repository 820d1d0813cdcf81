"""Print a run's events as ``helikon run`` and ``helikon repl`` show them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from rich.console import Console
from rich.markup import escape

from helikon.core.events import (
    AgentEvent,
    ConversationRepaired,
    HandoffItem,
    ReasoningDelta,
    RunCompleted,
    RunFailed,
    TokenDelta,
    ToolCallDelta,
    ToolCallItem,
    ToolOutputItem,
)
from helikon.core.items import text_of

__all__ = ["render_events"]


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def render_events(events: AsyncIterator[AgentEvent], out: Console, err: Console) -> int:
    """Stream the answer to ``out``, tool calls and results and handoffs too; usage and
    failures go to ``err``. Returns 0 when the run completed, 1 when it failed.

    On cancellation (Ctrl-C) it ends the partial answer line, prints ``interrupted`` on
    ``err`` and re-raises.
    """
    mid_line = False
    names: dict[str, str] = {}  # call id -> tool name, so parallel results are labelled
    try:
        async for ev in events:
            if isinstance(ev, TokenDelta):
                out.print(ev.text, end="", markup=False, highlight=False, soft_wrap=True)
                mid_line = True
                continue
            if mid_line and not isinstance(ev, ReasoningDelta | ToolCallDelta):
                out.print()
                mid_line = False
            if isinstance(ev, ToolCallItem):
                names[ev.item.call_id] = ev.item.name
                args = escape(_short(ev.item.args))
                out.print(f"[cyan]→ {escape(ev.item.name)}[/cyan]({args})")
            elif isinstance(ev, ToolOutputItem):
                text = text_of(ev.item.content)
                style = "red" if ev.item.is_error else "green"
                label = names.get(ev.item.call_id, ev.item.call_id)
                out.print(f"[{style}]← {escape(label)}: {escape(_short(text))}[/{style}]")
            elif isinstance(ev, HandoffItem):
                out.print(
                    f"[magenta]⇢ handoff {escape(ev.from_agent)} → {escape(ev.to_agent)}[/magenta]"
                )
            elif isinstance(ev, ConversationRepaired):
                note = f"! conversation repaired ({ev.repair}): {ev.detail}"
                err.print(f"[yellow]{escape(note)}[/yellow]")
            elif isinstance(ev, RunCompleted):
                u = ev.usage
                err.print(
                    f"[dim]usage: {u.input_tokens} input, {u.output_tokens} output, "
                    f"{u.total_tokens} total tokens[/dim]"
                )
                return 0
            elif isinstance(ev, RunFailed):
                err.print(f"[red]run failed: {escape(ev.message)}[/red]")
                return 1
    except asyncio.CancelledError:  # Ctrl-C: end the partial answer line, say why it stops
        if mid_line:
            out.print()
        err.print("[yellow]interrupted[/yellow]")
        raise
    return 1

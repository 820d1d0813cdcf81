"""The binding of the native loop machine: its configuration, and what its step tuples mean.

The one module that reaches ``helikon._native`` for the loop. ``LoopRun`` (see
``_native.pyi``) answers each step with small tuples that point at the caller's own items
(an index into this turn's response items or results) instead of copies. This module builds
the ``LoopConfig``, turns those references back into items and events, converts usage
tuples, and shares the immutable events every run emits (``TurnStarted``, ``RunStarted``).
"""

from __future__ import annotations

import functools
import json
from typing import Any, cast

from helikon import _native
from helikon.core.events import (
    AgentEvent,
    MessageOutput,
    RunCompleted,
    RunStarted,
    ToolCallItem,
    ToolOutputItem,
    TurnStarted,
    event_adapter,
)
from helikon.core.items import AssistantMessage, Item, ToolCall, ToolResult
from helikon.core.usage import Usage

__all__ = [
    "LoopConfig",
    "LoopRun",
    "as_machine_sees",
    "call_of",
    "dump_items",
    "event_of",
    "loop_config_json",
    "native_usage",
    "plan_of",
    "run_started",
    "turn_started",
    "usage_of",
]


LoopConfig = _native.LoopConfig
LoopRun = _native.LoopRun


def loop_config_json(
    max_turns: int,
    tools: list[tuple[str, str]],
    handoffs: list[tuple[str, str, str]],
    output_type: tuple[str, dict[str, Any]] | None,
    *,
    output_mode: str = "finalize",
    output_retries: int = 1,
) -> str:
    """The native ``LoopConfig`` JSON.

    Args:
        max_turns: the run's turn limit.
        tools: ``(name, description)`` of each regular tool, in the agent's order.
        handoffs: ``(tool_name, target, description)`` of each transfer tool.
        output_type: ``(name, JSON Schema)`` of the structured output, if any.
        output_mode: ``"finalize"``, ``"native"`` or ``"tool"`` (see
            :mod:`helikon.core.retries`).
        output_retries: repair turns an invalid answer gets.
    """
    out: dict[str, Any] | None = None
    if output_type is not None:
        out = {"name": output_type[0], "schema": output_type[1]}
        if output_mode != "finalize":
            out["mode"] = output_mode
        if output_retries != 1:
            out["retries"] = output_retries
    return json.dumps(
        {
            "max_turns": max_turns,
            "tools": [{"name": n, "description": d} for n, d in tools],
            "handoffs": [{"tool_name": t, "target": g, "description": d} for t, g, d in handoffs],
            "output_type": out,
        }
    )


def dump_items(items: list[Item]) -> list[dict[str, Any]]:
    return [i.model_dump(mode="json", exclude_none=True) for i in items]


_ZERO_USAGE = Usage()
_NO_USAGE = (0, 0, 0, 0, 0, 0)


def usage_of(native: tuple[int, int, int, int, int, int] | None) -> Usage:
    """A native usage tuple (see ``LoopRun.usage``) as :class:`Usage`."""
    if native is None or native == _NO_USAGE:
        return _ZERO_USAGE
    i, o, c, r, t, w = native
    return Usage(
        input_tokens=i,
        output_tokens=o,
        cached_input_tokens=c,
        reasoning_tokens=r,
        total_tokens=t,
        cache_write_input_tokens=w,
    )


def native_usage(u: Usage) -> tuple[int, int, int, int, int, int]:
    return (
        u.input_tokens,
        u.output_tokens,
        u.cached_input_tokens,
        u.reasoning_tokens,
        u.total_tokens,
        u.cache_write_input_tokens,
    )


# Events without per-run content are immutable, so runs share them.
_turn_started: list[TurnStarted] = []


def turn_started(turn: int) -> TurnStarted:
    if turn < len(_turn_started):
        return _turn_started[turn]
    ev = TurnStarted(turn=turn)
    if turn == len(_turn_started) and turn < 1024:
        _turn_started.append(ev)
    return ev


_run_started_by_agent: dict[str, RunStarted] = {}


def run_started(agent: str) -> RunStarted:
    ev = _run_started_by_agent.get(agent)
    if ev is None:
        if len(_run_started_by_agent) >= 256:
            _run_started_by_agent.clear()
        ev = _run_started_by_agent[agent] = RunStarted(agent=agent)
    return ev


def as_machine_sees(call: ToolCall) -> ToolCall:
    """``call`` as the machine holds it: missing (``None``) arguments read as ``{}``."""
    return call if call.args is not None else call.model_copy(update={"args": {}})


@functools.lru_cache(maxsize=64)
def plan_of(plan_json: str) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(plan_json)
    return plan


def call_of(items: list[Item], ref: int | str) -> ToolCall:
    """A call of an ``ExecuteTools`` step: a response item's position, or its JSON."""
    if isinstance(ref, int):
        return as_machine_sees(cast(ToolCall, items[ref]))
    return ToolCall.model_validate_json(ref)


def event_of(
    ref: tuple[str, Any],
    items: list[Item],
    results: list[ToolResult],
    answered: tuple[str | None, str | None] = (None, None),
) -> AgentEvent:
    """The event a native step reference stands for (see ``LoopRun`` in ``_native.pyi``).

    ``answered`` is the model and response id of the turn ``items`` came from; the events of
    those items carry them, and ``RunCompleted`` those of the last turn.
    """
    tag, value = ref
    if tag == "turn_started":
        return turn_started(value)
    if tag == "tool_call_item":
        call = as_machine_sees(cast(ToolCall, items[value]))
        if answered == (None, None):
            return ToolCallItem(item=call)
        return ToolCallItem(item=call, model=answered[0], response_id=answered[1])
    if tag == "tool_output_item":
        return ToolOutputItem(item=results[value])
    if tag == "message_output":
        message = cast(AssistantMessage, items[value])
        if answered == (None, None):
            return MessageOutput(item=message)
        return MessageOutput(item=message, model=answered[0], response_id=answered[1])
    if tag == "run_completed":
        return RunCompleted(usage=usage_of(value), model=answered[0], response_id=answered[1])
    return event_adapter.validate_json(value)

"""What runs like an agent, and the run methods' shared bodies.

A *runnable* is anything that runs like an :class:`~helikon.Agent`: it has a ``name``, a
``description`` and ``stream(input, ctx=None, *, run_config=None)``, an async iterator of
:data:`~helikon.AgentEvent` that starts with ``RunStarted`` and ends with exactly one
``RunCompleted`` or ``RunFailed``. An :class:`~helikon.Agent` is one, and so is every pattern
in :mod:`helikon.agents`. This module holds the protocol (:class:`Runnable`), its check, the
input normalization every run starts with (:func:`input_items`) and the bodies of ``run`` and
``run_sync`` that agents and patterns share.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

import pydantic

from helikon.core.context import RunConfig, RunContext
from helikon.core.events import AgentEvent
from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
    item_adapter,
)
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.run_state import RunState
from helikon.errors import ConfigError

__all__ = [
    "AgentInput",
    "Runnable",
    "check_run_args",
    "check_runnable",
    "collect_run",
    "input_items",
    "run_blocking",
]

AgentInput = str | UserMessage | Sequence[Item] | Sequence[dict[str, Any]]


_ITEM_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolCall, ToolResult)

_TEXT = '[{"type": "text", "text": "hi"}]'
_ITEM_SHAPES = {
    "system": '{"type": "system", "content": ' + _TEXT + "}",
    "user_message": '{"type": "user_message", "content": ' + _TEXT + "}",
    "assistant_message": '{"type": "assistant_message", "content": ' + _TEXT + "}",
    "tool_call": '{"type": "tool_call", "call_id": "c1", "name": "lookup", "args": {"q": "x"}}',
    "tool_result": '{"type": "tool_result", "call_id": "c1", "content": ' + _TEXT + "}",
}


def _item_error(i: int, raw: dict[str, Any], exc: pydantic.ValidationError) -> ConfigError:
    """The :class:`ConfigError` for a dict input item pydantic rejected."""
    kind = raw.get("type")
    if not (isinstance(kind, str) and kind in _ITEM_SHAPES):
        got = f"'type': {kind!r}, not an item type" if "type" in raw else "no 'type' key"
        return ConfigError(
            f"agent input[{i}] has {got}; 'type' must be one of "
            f"{', '.join(repr(k) for k in _ITEM_SHAPES)}, e.g. {_ITEM_SHAPES['user_message']}"
        )
    problems = []
    for e in exc.errors(include_url=False)[:3]:
        loc = [str(x) for x in e["loc"]]
        if loc and loc[0] == kind:  # pydantic prefixes the discriminator's tag
            loc = loc[1:]
        problems.append(f"{'.'.join(loc) or '<item>'}: {e['msg']}")
    return ConfigError(
        f"agent input[{i}] is not a valid {kind} item ({'; '.join(problems)}); expected e.g. "
        f"{_ITEM_SHAPES[kind]}"
    )


def input_items(input: AgentInput) -> list[Item]:
    """Normalize an agent input (text, a message, items or their dicts) to items.

    Raises:
        ConfigError: an element is not an item, or a dict element does not have an item's
            shape; the message gives the index, the reason and the expected shape, e.g.
            ``{"type": "user_message", "content": [{"type": "text", "text": "hi"}]}``;
            a :class:`~helikon.RunState` (the OpenAI Agents SDK's ``Runner.run(agent,
            state)``), naming ``Runner.resume``.
    """
    if isinstance(input, str):
        return [UserMessage(content=[TextPart(text=input)])]
    if isinstance(input, UserMessage):
        return [input]
    if isinstance(input, RunState):
        raise ConfigError(
            "a paused run's RunState is not a run input: resume it with await "
            "Runner.resume(agent, state, decisions={call_id: Approve() | Deny(reason) | "
            "Edit(args)}) (Runner.resume_sync(...) in synchronous code); state.pending lists "
            "the waiting calls"
        )
    if isinstance(input, Sequence):
        items: list[Item] = []
        for i, raw in enumerate(input):
            if isinstance(raw, dict):
                try:
                    items.append(item_adapter.validate_python(raw))
                except pydantic.ValidationError as exc:
                    raise _item_error(i, raw, exc) from None
            elif isinstance(raw, _ITEM_TYPES):
                items.append(raw)
            else:
                raise ConfigError(
                    f"agent input[{i}] must be an item (UserMessage, ...) or its dict form, "
                    f"got {type(raw).__name__}"
                )
        return items
    hint = (
        "; wrap a single item in a list: [item]" if isinstance(input, (dict, *_ITEM_TYPES)) else ""
    )
    raise ConfigError(
        f"agent input must be a str, a UserMessage or a list of items, got "
        f"{type(input).__name__}{hint}"
    )


class _Runs(Protocol):
    """What :func:`collect_run` needs: an agent or a pattern."""

    def stream(
        self, input: AgentInput, ctx: Any = None, *, run_config: Any = None
    ) -> AsyncIterator[AgentEvent]: ...

    def typed_result(self, result: RunResult[Any]) -> RunResult[Any]: ...

    async def run(
        self, input: AgentInput, ctx: Any = None, *, run_config: Any = None
    ) -> RunResult[Any]: ...


async def collect_run(
    agent: _Runs, where: str, input: AgentInput, ctx: Any, run_config: Any
) -> RunResult[Any]:
    """``agent.run``'s body, shared by :class:`Agent` and the patterns in ``helikon.agents``:
    check the arguments, drain ``agent.stream`` and type the result.

    Raises:
        ConfigError: ``ctx`` or ``run_config`` has the wrong type (``where`` names the call).
        RunError: the run failed.
    """
    check_run_args(where, ctx, run_config)
    events = agent.stream(input, ctx, run_config=run_config)
    result = await RunResultStreaming(events, agent=agent).collect()
    # the stream has checked the input by now (a bad one raised ConfigError above)
    result._input = input_items(input)
    return result  # collect() typed it with agent.typed_result


def run_blocking(
    agent: _Runs, where: str, input: AgentInput, ctx: Any, run_config: Any
) -> RunResult[Any]:
    """``agent.run_sync``'s body: ``agent.run`` on a new event loop.

    Raises:
        RuntimeError: called from a running event loop (``where`` names the call).
        ConfigError, RunError: as ``agent.run``.
    """
    check_run_args(where, ctx, run_config)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop running: the normal case
    else:
        raise RuntimeError(f"{where}() cannot run inside an event loop; use await agent.run()")
    # outside the except block, so a failure does not chain the RuntimeError above
    return asyncio.run(agent.run(input, ctx, run_config=run_config))


def check_run_args(where: str, ctx: Any, run_config: Any) -> None:
    """Check the ``ctx`` and ``run_config`` arguments of a run method (``where`` names it).

    Raises:
        ConfigError: ``ctx`` is not a :class:`RunContext` or ``run_config`` not a
            :class:`RunConfig` (``None`` is fine for both).
    """
    if ctx is not None and not isinstance(ctx, RunContext):
        raise ConfigError(
            f"{where}(ctx=...) must be a RunContext, got {type(ctx).__name__}; to hand your own "
            "data to tools and hooks pass RunContext.ephemeral(deps) (or "
            "RunContext(user_ctx=deps))"
        )
    if run_config is not None and not isinstance(run_config, RunConfig):
        raise ConfigError(
            f"{where}(run_config=...) must be a RunConfig, got {type(run_config).__name__}; "
            f"pass run_config={_run_config_hint(run_config)}"
        )


def _run_config_hint(value: Any) -> str:
    """``RunConfig(max_turns=2)`` for ``{"max_turns": 2}``; ``RunConfig(...)`` otherwise."""
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        return "RunConfig(" + ", ".join(f"{k}={v!r}" for k, v in value.items()) + ")"
    return "RunConfig(...)"


@runtime_checkable
class Runnable(Protocol):
    """Anything that runs like an :class:`~helikon.Agent` (see the module doc)."""

    name: str
    description: str

    def stream(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """The run's events: ``RunStarted`` first, exactly one terminal event last."""
        ...


def check_runnable(where: str, agent: Any) -> Runnable:
    """``agent`` if it runs like an Agent.

    Raises:
        ConfigError: it has no string ``name`` or no ``stream`` method.
    """
    name = getattr(agent, "name", None)
    streams = callable(getattr(agent, "stream", None))
    if not isinstance(name, str) or not name.strip() or not streams:
        raise ConfigError(
            f"{where}: {agent!r} is not an agent; pass an Agent or a pattern from "
            "helikon.agents (anything with a name and stream(input, ctx, run_config=...))"
        )
    if not isinstance(getattr(agent, "description", ""), str):
        raise ConfigError(f"{where}: agent {name!r} has a description that is not a str")
    return agent  # type: ignore[no-any-return]

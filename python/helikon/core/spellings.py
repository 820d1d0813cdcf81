"""Other SDKs' spellings, answered with helikon's: ``deps=`` and ``context=``.

Code ported from Pydantic AI passes ``deps=`` (to the agent or the run); code ported from the
OpenAI Agents SDK passes ``context=``. helikon calls it the *run context*: a
:class:`~helikon.RunContext` carrying your object as ``user_ctx``, given per run
(``agent.run(input, ctx=RunContext.ephemeral(deps))``) and read by tools through their
first parameter ``ctx: ToolContext[Deps]`` (``ctx.user_ctx``). An unknown keyword that is not
one of these is the usual ``TypeError``, with the closest accepted name. ``max_turns=`` on a
run is answered with ``run_config=RunConfig(max_turns=N)``, ``usage_limits=`` with
``run_config=RunConfig(usage_limits=UsageLimits(...))``, ``message_history=`` with the
history passed as the input.

Attributes and methods the peers have and helikon spells differently (``result.usage()``,
``agent.as_tool(...)``, ``agent.tool_plain``, ``stream_events()``, ...) are answered by
:func:`peer_attribute` with a :class:`~helikon.errors.PeerSpellingError` naming helikon's
spelling; it is an ``AttributeError``, so ``hasattr`` still says no.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from helikon.errors import ConfigError, PeerSpellingError

__all__ = ["PEER_ATTRIBUTES", "peer_attribute", "refuse_other_spellings"]

_RESUME = "Runner.resume(agent, state, decisions={call_id: Approve() | Deny(reason) | Edit(args)})"

PEER_ATTRIBUTES: dict[str, dict[str, str]] = {
    "RunResult": {
        "new_messages": "result.new_items (a property: the items this run added)",
        "all_messages": (
            "result.to_input_list() (the run's input, then the items it added; pass it, plus "
            "the next UserMessage, as the next run's input)"
        ),
        "context_wrapper": "result.usage for the usage; the run context is the ctx you passed",
        "interruptions": (
            "except RunInterruptedError as err: a run that pauses for approval raises it "
            "(with RunConfig(approval=\"defer\")); err.state.pending lists the waiting calls, "
            "resume with " + _RESUME
        ),
        "to_state": (
            "except RunInterruptedError as err: err.state is the paused run's RunState "
            "(state.to_json() to keep it), resumed with " + _RESUME
        ),
    },
    "RunState": {
        "approve": "decisions={call_id: Approve()} given to " + _RESUME,
        "reject": "decisions={call_id: Deny(reason)} given to " + _RESUME,
        "get_interruptions": (
            "state.pending (the waiting calls: call_id, tool, args, reason), answered with "
            + _RESUME
        ),
    },
    "Agent": {
        "as_tool": (
            "AgentAsTool(agent, name=..., description=...) (from helikon import AgentAsTool), "
            "given in another agent's tools=[...]"
        ),
        "tool_plain": (
            "@agent.tool (it takes a function with or without a first ctx: ToolContext parameter)"
        ),
        "run_stream": "agent.stream(q) (async for e in agent.stream(q): e.type, e.text)",
        "iter": "agent.stream(q) (every step of the run is an event)",
        "override": (
            "a new Agent(..., model=MockModel(...)) for a test (helikon.testing.MockModel)"
        ),
    },
    "event stream": {
        "stream_events": (
            "the stream itself: async for e in Runner.run_streamed(agent, q) "
            "(e.type == 'token_delta' for text, e.text)"
        ),
    },
}
"""Per kind of object: another SDK's attribute or method name -> helikon's spelling."""


def peer_attribute(kind: str, name: str, obj: object) -> PeerSpellingError | AttributeError:
    """The error for reading ``name`` on ``obj`` (a ``kind`` in :data:`PEER_ATTRIBUTES`):
    a :class:`PeerSpellingError` naming helikon's spelling when another SDK spells it so,
    else Python's usual ``AttributeError``. Raise it from ``__getattr__``."""
    fix = PEER_ATTRIBUTES.get(kind, {}).get(name)
    if fix is None or name.startswith("__"):
        return AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
    return PeerSpellingError(
        f"{type(obj).__name__}.{name} is another SDK's spelling; in helikon use {fix}"
    )


_RUN_CONTEXT = {"deps", "context", "deps_type", "context_type"}


def refuse_other_spellings(
    where: str, unexpected: Mapping[str, Any], accepted: Iterable[str]
) -> None:
    """Raise for the keywords in ``unexpected`` (none: return).

    Args:
        where: the call, e.g. ``"Agent"`` or ``"Agent.run"``.
        unexpected: the keywords the call does not take.
        accepted: the keywords it does take (for the suggestion).

    Raises:
        ConfigError: ``deps=``/``context=`` (and their ``_type`` forms), naming the run
            context and how to pass it.
        TypeError: any other keyword, naming the closest accepted one.
    """
    for name in unexpected:
        if name in _RUN_CONTEXT:
            if where == "Agent":
                raise ConfigError(
                    f"Agent({name}=...): helikon gives dependencies per run, in the run "
                    "context: agent.run(input, ctx=RunContext.ephemeral(deps)); tools read "
                    "them as ctx.user_ctx through a first parameter ctx: ToolContext[Deps] "
                    "(type it with Agent[Deps, Output])"
                )
            raise ConfigError(
                f"{where}({name}=...): helikon calls it the run context: pass "
                "ctx=RunContext.ephemeral(deps); tools read it as ctx.user_ctx through a first "
                "parameter ctx: ToolContext[Deps]"
            )
        if name == "max_turns" and "run_config" in accepted:
            raise ConfigError(
                f"{where}(max_turns=...): helikon takes it in the run config: "
                "run_config=RunConfig(max_turns=N)"
            )
        if name == "output_retries" and where == "Agent":
            raise ConfigError(
                "Agent(output_retries=...): helikon spells it retries= (it bounds the output "
                "validators' retries; a tool's own bound is @tool(retries=N))"
            )
        if name == "message_history":
            raise ConfigError(
                f"{where}(message_history=...): helikon takes the whole conversation as the "
                "input: pass [*result.to_input_list(), UserMessage.text(question)] (or keep it "
                "in a session: Runner.run(agent, question, session=...))"
            )
        if name == "usage_limits" and "run_config" in accepted:
            raise ConfigError(
                f"{where}(usage_limits=...): helikon takes it in the run config: "
                "run_config=RunConfig(usage_limits=UsageLimits(request_limit=N))"
            )
        close = difflib.get_close_matches(name, list(accepted), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"{where}() got an unexpected keyword argument {name!r}{hint}")

"""Other SDKs' spellings, answered with helikon's: ``deps=`` and ``context=``.

Code ported from Pydantic AI passes ``deps=`` (to the agent or the run); code ported from the
OpenAI Agents SDK passes ``context=``. helikon calls it the *run context*: a
:class:`~helikon.RunContext` carrying your object as ``user_ctx``, given per run
(``agent.run(input, ctx=RunContext.ephemeral(deps))``) and read by tools through their
first parameter ``ctx: ToolContext[Deps]`` (``ctx.user_ctx``). An unknown keyword that is not
one of these is the usual ``TypeError``, with the closest accepted name. ``max_turns=`` on a
run is answered with ``run_config=RunConfig(max_turns=N)``, ``usage_limits=`` with
``run_config=RunConfig(usage_limits=UsageLimits(...))``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from helikon.errors import ConfigError

__all__ = ["refuse_other_spellings"]

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
        if name == "usage_limits" and "run_config" in accepted:
            raise ConfigError(
                f"{where}(usage_limits=...): helikon takes it in the run config: "
                "run_config=RunConfig(usage_limits=UsageLimits(request_limit=N))"
            )
        close = difflib.get_close_matches(name, list(accepted), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"{where}() got an unexpected keyword argument {name!r}{hint}")

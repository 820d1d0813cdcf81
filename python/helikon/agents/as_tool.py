"""AgentAsTool: call an agent like a tool and get its answer back.

The parent's model calls the tool with one string argument, ``input``; the wrapped agent runs
to completion and its final text becomes the tool's result. Control always returns to the
parent (unlike a handoff).

The sub-run is isolated: it starts from ``input`` alone (no parent history, which is what the
spec's "fresh in-memory session" gives), its events do not enter the parent's stream or
session, it has empty run-level hooks and a fresh ``state``, and it runs under its own
:class:`RunConfig` (the parent's ``max_turns`` and ``timeout`` do not cross). What crosses:
the user context, the tracer, the cancel token, the nesting depth (``agent_depth + 1``, still
capped by the parent's ``max_agent_depth``) and the parent's permission configuration (mode,
rules, policy, approval handler), so a Plan mode or a policy decision applies to the wrapped
agent's own tools.

That is also why the tool's own effect is ``READ_ONLY`` by default: calling it does nothing by
itself; every tool the sub-agent calls is authorized on its own under the parent's
permissions. Pass ``effect=`` to gate the call itself.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from typing import Any

from helikon.agents.pause import prepare_resume
from helikon.core.context import RunConfig, RunContext, ToolContext
from helikon.core.driver import calling_run_context
from helikon.core.hooks import HookRegistry
from helikon.core.pause import CALLING_APPROVALS
from helikon.core.permissions import Permissions
from helikon.core.result import RunResultStreaming
from helikon.core.runnable import Runnable, check_runnable
from helikon.core.tool import ToolEffect, ToolOutput, _as_effect
from helikon.core.usage_limits import current_meter
from helikon.errors import (
    ConfigError,
    InvalidArgs,
    RunError,
    RunInterruptedError,
    SubRunPaused,
    ToolOther,
)

__all__ = ["AgentAsTool"]


def _valid_tool_name(name: str) -> bool:
    return bool(name) and name.replace("_", "a").replace("-", "a").isalnum() and name.isascii()


class AgentAsTool:
    """A :class:`~helikon.Tool` that runs an agent (or a pattern) and returns its answer.

    Args:
        agent: the agent to wrap (an :class:`~helikon.Agent` or any pattern).
        name: the tool name; defaults to the agent's name (which must then be a valid tool
            name, ``[A-Za-z0-9_-]+``).
        description: what the model reads; defaults to the agent's description.
        run_config: the sub-run's :class:`RunConfig`; defaults to the agent's own.
        effect: the tool's :class:`ToolEffect` (default ``READ_ONLY``, see the module doc).

    Raises:
        ConfigError: ``agent`` is not an agent, or the name is not a valid tool name (the
            message suggests one).

    Example:
        >>> from helikon import Agent
        >>> from helikon.testing import MockModel, Text
        >>> summarizer = Agent(name="summarizer", model=MockModel([[Text("short")]]))
        >>> AgentAsTool(summarizer).parameters["required"]
        ['input']
    """

    def __init__(
        self,
        agent: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        run_config: RunConfig | None = None,
        effect: ToolEffect | str = ToolEffect.READ_ONLY,
    ) -> None:
        self.agent: Runnable = check_runnable("AgentAsTool(agent)", agent)
        tool_name = name if name is not None else self.agent.name
        if not isinstance(tool_name, str) or not _valid_tool_name(tool_name):
            suggestion = _suggested_name(str(tool_name))
            raise ConfigError(
                f"AgentAsTool: {tool_name!r} is not a valid tool name ([A-Za-z0-9_-]+); pass "
                f"name={suggestion!r}"
            )
        if run_config is not None and not isinstance(run_config, RunConfig):
            raise ConfigError(
                f"AgentAsTool(run_config=...) must be a RunConfig, got {type(run_config).__name__}"
            )
        self.name = tool_name
        self.description = (
            description if description is not None else getattr(self.agent, "description", "")
        )
        self.run_config = run_config
        self.effect: ToolEffect = _as_effect(effect, where=f"AgentAsTool {tool_name!r}")
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "input": {"type": "string", "description": "The request for the agent."}
            },
            "required": ["input"],
            "additionalProperties": False,
        }

    def with_name(self, name: str) -> AgentAsTool:
        """A copy exposed under ``name``."""
        return AgentAsTool(
            self.agent,
            name=name,
            description=self.description,
            run_config=self.run_config,
            effect=self.effect,
        )

    def with_description(self, description: str) -> AgentAsTool:
        """A copy with ``description``."""
        return AgentAsTool(
            self.agent,
            name=self.name,
            description=description,
            run_config=self.run_config,
            effect=self.effect,
        )

    def __repr__(self) -> str:
        return f"<AgentAsTool {self.name} -> {self.agent.name}>"

    def _input(self, args: Any) -> str:
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                raise InvalidArgs([f"arguments are not valid JSON: {exc.msg}"]) from None
        if not isinstance(args, dict):
            raise InvalidArgs([f"arguments must be a JSON object, got {type(args).__name__}"])
        extra = sorted(k for k in args if k != "input")
        problems = [f"{k}: Extra inputs are not permitted" for k in extra]
        value = args.get("input")
        if "input" not in args:
            problems.insert(0, "input: Field required")
        elif not isinstance(value, str):
            problems.insert(0, "input: Input should be a valid string")
        if problems:
            raise InvalidArgs(problems)
        assert isinstance(value, str)
        return value

    def _sub_context(self, ctx: ToolContext[Any]) -> RunContext[Any]:
        parent = calling_run_context()
        sub: RunContext[Any] = RunContext(
            user_ctx=ctx.user_ctx,
            cancel=ctx.cancel,
            agent_depth=ctx.agent_depth + 1,
            hooks=HookRegistry(),
            permissions=Permissions(mode=ctx.permission_mode),
        )
        if parent is not None:
            sub = replace(
                sub,
                tracer=parent.tracer,
                permissions=parent.permissions,
                redaction=parent.redaction,
            )
        return sub

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Run the wrapped agent on ``args["input"]``; its final text is the result.

        Raises:
            InvalidArgs: ``args`` is not ``{"input": "<text>"}``.
            ToolOther: the nesting limit is reached, or the sub-run failed (its error).
        """
        text = self._input(args)
        depth = ctx.agent_depth + 1
        if depth >= ctx.max_agent_depth:
            raise ToolOther(
                f"max agent depth ({ctx.max_agent_depth}) exceeded: agent "
                f"{self.agent.name!r} cannot run as a tool at depth {depth}"
            )
        config = self.run_config or getattr(self.agent, "run_config", None) or RunConfig()
        if config.max_agent_depth > ctx.max_agent_depth:
            config = replace(config, max_agent_depth=ctx.max_agent_depth)
        approvals = CALLING_APPROVALS.get()
        if approvals is not None and approvals.defer:
            config = replace(config, approval="defer")  # an ask inside pauses the caller
        paused = approvals.nested.pop(ctx.call_id, None) if approvals is not None else None
        sub_ctx = self._sub_context(ctx)
        if paused is not None:  # continue the sub-run (an agent's or a pattern's) where it asked
            stream = prepare_resume(self.agent, paused[0], paused[1], config)(sub_ctx)
        else:
            stream = self.agent.stream(text, sub_ctx, run_config=config)
        # the calling run's meter: the sub-run's usage (already counted against the budget
        # as it was spent) is added to the caller's usage after the tool step
        meter = current_meter().get()
        try:
            result = await RunResultStreaming(stream).collect()
        except RunError as exc:
            if meter is not None and exc.usage is not None:
                meter.add_side(exc.usage)
            raise ToolOther(f"agent {self.agent.name!r} failed: {exc.error}") from None
        except RunInterruptedError as exc:
            raise SubRunPaused(exc.state) from None
        if meter is not None:
            meter.add_side(result.usage)
        return ToolOutput.from_value(result.final_output)


def _suggested_name(name: str) -> str:
    """A valid tool name close to ``name``: accents folded (``über`` -> ``uber``), every other
    character outside ``[A-Za-z0-9_-]`` replaced by ``_``; ``"agent"`` if nothing is left."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", folded).strip("_")
    return cleaned[:64] or "agent"

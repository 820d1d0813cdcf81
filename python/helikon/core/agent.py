"""The LLM-driven :class:`Agent`: name, model, instructions, tools, handoffs, output type."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from helikon import _native
from helikon.core.context import RunConfig, RunContext
from helikon.core.driver import run_agent
from helikon.core.events import AgentEvent
from helikon.core.guardrails import Guardrail
from helikon.core.handoff import HandoffSpec, handoff_tool_name
from helikon.core.hooks import Hook
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
from helikon.core.model import Model, ModelSettings
from helikon.core.output import OutputType
from helikon.core.result import RunResult, RunResultStreaming
from helikon.core.tool import Tool
from helikon.errors import AgentOther, ConfigError, RunError

__all__ = ["Agent", "AgentInput", "Instructions", "input_items"]

Instructions = str | Callable[[RunContext[Any]], str]
AgentInput = str | UserMessage | Sequence[Item] | Sequence[dict[str, Any]]


def input_items(input: AgentInput) -> list[Item]:
    """Normalize an agent input (text, a message, items or their dicts) to items.

    Raises:
        ConfigError: an element is not an item.
    """
    if isinstance(input, str):
        return [UserMessage(content=[TextPart(text=input)])]
    if isinstance(input, UserMessage):
        return [input]
    if isinstance(input, Sequence):
        items: list[Item] = []
        for i, raw in enumerate(input):
            if isinstance(raw, dict):
                items.append(item_adapter.validate_python(raw))
            elif isinstance(
                raw, SystemMessage | UserMessage | AssistantMessage | ToolCall | ToolResult
            ):
                items.append(raw)
            else:
                raise ConfigError(
                    f"agent input[{i}] must be an item (UserMessage, ...) or its dict form, "
                    f"got {type(raw).__name__}"
                )
        return items
    raise ConfigError(
        f"agent input must be a str, a UserMessage or a list of items, got {type(input).__name__}"
    )


class Agent:
    """An agent driven by a model: it calls tools until it can answer.

    Args:
        name: the agent's name (shown in events and traces; the handoff tool slug).
        model: any :class:`helikon.Model` (``OpenAIModel.chat(...)``, ``MockModel(...)``).
        instructions: the system prompt: text, or ``fn(ctx) -> str`` rendered per run.
        description: what the agent does; shown to a parent choosing a handoff.
        tools: tools the model may call (``@tool`` functions or any :class:`helikon.Tool`).
        handoffs: agents this one may delegate to (each becomes a ``transfer_to_<slug>`` tool).
        output_type: a type (or :class:`OutputType`) the final answer must validate against.
        model_settings: provider knobs (temperature, tool choice, ...).
        run_config: default :class:`RunConfig` for runs of this agent.
        hooks: agent-level lifecycle hooks (fire before the run-level ones).
        input_guardrails: checks on the user's text, run alongside the first model call.
        output_guardrails: checks on the final answer before it is returned.

    Raises:
        TypeError: ``name`` or ``model`` is missing.
        ConfigError: a bad value (empty name, duplicate tool names, an object that is not a
            model or tool); the message names the argument and the fix.

    Example:
        >>> from helikon.testing import MockModel, Text
        >>> agent = Agent(name="echo", model=MockModel([[Text("hi")]]))
        >>> agent.run_sync("hello").final_output
        'hi'
    """

    def __init__(
        self,
        *,
        name: str,
        model: Model,
        instructions: Instructions | None = None,
        description: str = "",
        tools: Sequence[Tool] = (),
        handoffs: Sequence[Agent] = (),
        output_type: Any = None,
        model_settings: ModelSettings | None = None,
        run_config: RunConfig | None = None,
        hooks: Sequence[Hook] = (),
        input_guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[Guardrail] = (),
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("Agent(name=...) must be a non-empty string")
        if not callable(getattr(model, "invoke", None)):
            raise ConfigError(
                f"Agent(model=...) must implement helikon.Model (an invoke() method); got "
                f"{type(model).__name__}"
            )
        self.name = name
        self.model = model
        self.instructions = instructions
        self.description = description
        self.tools: list[Tool] = list(tools)
        seen: set[str] = set()
        for t in self.tools:
            if not all(hasattr(t, a) for a in ("name", "description", "parameters", "invoke")):
                raise ConfigError(
                    f"Agent(tools=...): {t!r} is not a tool; decorate the function with @tool"
                )
            if t.name in seen:
                raise ConfigError(f"Agent(tools=...): two tools are named {t.name!r}")
            seen.add(t.name)
        self.handoffs: list[Agent] = list(handoffs)
        for h in self.handoffs:
            if not isinstance(h, Agent):
                raise ConfigError(f"Agent(handoffs=...): {h!r} is not an Agent")
        if output_type is None or isinstance(output_type, OutputType):
            self.output_type: OutputType[Any] | None = output_type
        else:
            self.output_type = OutputType(output_type)
        self.model_settings = model_settings or ModelSettings()
        self.run_config = run_config or RunConfig()
        self.hooks: list[Hook] = list(hooks)
        self.input_guardrails: list[Guardrail] = list(input_guardrails)
        self.output_guardrails: list[Guardrail] = list(output_guardrails)
        for name, seq in (
            ("input_guardrails", self.input_guardrails),
            ("output_guardrails", self.output_guardrails),
        ):
            for g in seq:
                if not callable(getattr(g, "check", None)):
                    raise ConfigError(f"Agent({name}=...): {g!r} has no async check() method")
        for hook in self.hooks:
            if not callable(getattr(hook, "on_event", None)):
                raise ConfigError(f"Agent(hooks=...): {hook!r} has no async on_event() method")
        self._native_configs: dict[int, Any] = {}

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={getattr(self.model, 'model', '?')!r})"

    # ------------------------------------------------------------------ internals

    @property
    def handoff_specs(self) -> list[HandoffSpec]:
        """The transfer tools this agent advertises, in handoff order."""
        return [
            HandoffSpec(handoff_tool_name(h.name), h.name, h.description) for h in self.handoffs
        ]

    def handoff_target(self, name: str) -> Agent:
        """The handoff agent whose real name is ``name``."""
        for h in self.handoffs:
            if h.name == name:
                return h
        raise ConfigError(f"agent {self.name!r} has no handoff target {name!r}")

    def collisions(self) -> list[str]:
        """Transfer-tool names that clash with each other or with a real tool."""
        names = [t.name for t in self.tools]
        out: list[str] = []
        for spec in self.handoff_specs:
            if spec.tool_name in names:
                out.append(spec.tool_name)
            names.append(spec.tool_name)
        return out

    def native_config(self, max_turns: int) -> Any:
        """The compiled loop configuration (built once per ``max_turns``)."""
        cfg = self._native_configs.get(max_turns)
        if cfg is None:
            ot = self.output_type
            cfg = _native.LoopConfig(
                json.dumps(
                    {
                        "max_turns": max_turns,
                        "tools": [
                            {"name": t.name, "description": t.description} for t in self.tools
                        ],
                        "handoffs": [
                            {
                                "tool_name": s.tool_name,
                                "target": s.target,
                                "description": s.description,
                            }
                            for s in self.handoff_specs
                        ],
                        "output_type": None
                        if ot is None
                        else {"name": ot.name, "schema": ot.schema},
                    }
                )
            )
            self._native_configs[max_turns] = cfg
        return cfg

    def render_instructions(self, ctx: RunContext[Any]) -> str:
        """The system prompt for a run (calls the instructions function if there is one)."""
        ins = self.instructions
        if ins is None:
            return ""
        if isinstance(ins, str):
            return ins
        text = ins(ctx)
        if inspect.isawaitable(text):
            raise ConfigError(
                f"agent {self.name!r}: instructions must return str synchronously, got a coroutine"
            )
        return str(text)

    # ------------------------------------------------------------------ running

    def stream(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the agent, yielding every :data:`AgentEvent` as it happens.

        The stream starts with ``RunStarted`` and ends with exactly one ``RunCompleted`` or
        ``RunFailed``; failures never raise out of the iterator. Nothing runs until the
        first event is requested; a bad ``input`` raises :class:`ConfigError` then.

        Example:
            >>> # async for event in agent.stream("How am I doing?"):
            >>> #     if event.type == "token_delta": print(event.text, end="")
        """
        ctx = ctx if ctx is not None else RunContext.ephemeral(None)
        return run_agent(self, input, ctx, run_config or self.run_config)

    async def run(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """Run to completion.

        Returns:
            A :class:`RunResult`; ``final_output`` is the answer text, or the validated
            ``output_type`` value when the agent has one.

        Raises:
            RunError: the run failed; ``.error`` is the cause (``MaxTurnsExceeded``,
                ``InvalidStructuredOutput``, ``Cancelled``, ``RunTimeout``, ...).
        """
        stream = RunResultStreaming(self.stream(input, ctx, run_config=run_config))
        return self.typed_result(await stream.collect())

    def typed_result(self, result: RunResult[Any]) -> RunResult[Any]:
        """``result`` with ``final_output`` validated as ``output_type`` (if the agent has one).

        Raises:
            RunError: the final text does not validate.
        """
        if self.output_type is not None:
            value, errors = self.output_type.validate_text(result.final_output)
            if errors:
                raise RunError(
                    AgentOther("; ".join(errors)), events=result.events, usage=result.usage
                )
            result.final_output = value
        return result

    def run_sync(
        self,
        input: AgentInput,
        ctx: RunContext[Any] | None = None,
        *,
        run_config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code (starts an event loop; not from inside one).

        Raises:
            RunError: as :meth:`run`.
            RuntimeError: called from a running event loop (use ``await agent.run``).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(input, ctx, run_config=run_config))
        raise RuntimeError(
            "Agent.run_sync() cannot run inside an event loop; use await agent.run()"
        )

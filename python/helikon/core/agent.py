"""The LLM-driven :class:`Agent`: name, model, instructions, tools, handoffs, output type."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Never, overload

from typing_extensions import TypeVar

from helikon.core.context import RunConfig, RunContext
from helikon.core.driver import run_agent
from helikon.core.events import AgentEvent
from helikon.core.guardrails import Guardrail, as_guardrail
from helikon.core.handoff import Handoff, HandoffSpec, handoff_tool_name
from helikon.core.hooks import Hook, check_hook
from helikon.core.instructions import InstructionPart, check_part, render_parts
from helikon.core.loop_native import LoopConfig, loop_config_json
from helikon.core.model import Model, ModelSettings
from helikon.core.model_ref import resolve_model
from helikon.core.output import OutputType
from helikon.core.result import RunResult
from helikon.core.retries import (
    DEFAULT_OUTPUT_TOOL,
    OutputMode,
    OutputValidator,
    RetryRules,
    check_output_mode,
    check_retries,
    check_validator,
    resolve_output_mode,
)
from helikon.core.runnable import AgentInput, check_run_args, collect_run, run_blocking
from helikon.core.spellings import peer_attribute, refuse_other_spellings
from helikon.core.tool import FunctionTool, NeedsApproval, Tool, ToolEffect
from helikon.errors import AgentOther, ConfigError, RunError

__all__ = ["Agent", "Instructions"]

Instructions = InstructionPart
"""Text, or a (sync or async) function ``fn(ctx)`` / ``fn()`` returning text."""

CtxT = TypeVar("CtxT", default=Any)
"""The type of ``RunContext.user_ctx`` the agent's runs carry (``Agent[Deps, Out]``)."""
OutT = TypeVar("OutT", default=Any)
"""The type of ``RunResult.final_output`` (``str`` without an ``output_type``)."""

_F = TypeVar("_F", bound=Callable[..., Any])
_RUN_KWARGS = ("ctx", "run_config")


def _is_guardrail(value: Any) -> bool:
    return callable(getattr(value, "check", None)) or inspect.isroutine(value)


def _is_tool(value: Any) -> bool:
    return all(hasattr(value, a) for a in ("name", "description", "parameters", "invoke"))


def _as_list(arg: str, value: Any, one: str, is_one: Callable[[Any], bool]) -> list[Any]:
    """``value`` as a list, or a :class:`ConfigError` when it is a single item or no list."""
    if is_one(value):
        name = getattr(value, "name", None)
        label = f"{one} {name!r}" if isinstance(name, str) else f"{one} ({type(value).__name__})"
        ref = name if isinstance(name, str) and name.isidentifier() else one
        raise ConfigError(
            f"Agent({arg}=...) must be a list of {one}s; got a single {label}: pass {arg}=[{ref}]"
        )
    if isinstance(value, str | bytes | dict) or not isinstance(value, Iterable):
        raise ConfigError(f"Agent({arg}=...) must be a list of {one}s, got {type(value).__name__}")
    return list(value)


def _never(_: Any) -> bool:
    return False


def _check_tool(i: int, t: Any) -> None:
    if _is_tool(t):
        effect = getattr(t, "effect", ToolEffect.SIDE_EFFECT)
        if not isinstance(effect, ToolEffect):
            raise ConfigError(
                f"Agent(tools=...): tool {t.name!r} has effect {effect!r}; it must be a "
                f"ToolEffect ({', '.join(f'ToolEffect.{e.name}' for e in ToolEffect)})"
            )
        return
    if inspect.isroutine(t):
        raise ConfigError(
            f"Agent(tools=...): tools[{i}] is the plain function {t.__name__!r}, not a tool; "
            "decorate the function with @tool"
        )
    raise ConfigError(
        f"Agent(tools=...): tools[{i}] is a {type(t).__name__} ({t!r}), not a tool; pass @tool "
        "functions or helikon.Tool objects"
    )


class Agent(Generic[CtxT, OutT]):
    """An agent driven by a model: it calls tools until it can answer.

    ``Agent[Deps, Out]`` tells a type checker what the runs' context carries (``Deps``, the
    ``user_ctx`` of :class:`RunContext` and :class:`ToolContext`) and what ``final_output``
    is (``Out``); both default to ``Any``, and nothing is checked at run time from them.

    Args:
        name: the agent's name (shown in events and traces; the handoff tool slug).
        model: any :class:`helikon.Model` (``OpenAIModel.chat(...)``, ``MockModel(...)``), or
            a model string ``"PROVIDER:MODEL_ID"`` (``"openai:gpt-5-mini"``,
            ``"anthropic:..."``, ``"gemini:..."``, ``"bedrock:..."``; see
            :mod:`helikon.providers.infer`), read when the agent is built.
        instructions: the system prompt: text, or a function ``fn(ctx) -> str`` (or
            ``fn() -> str``; sync or async) rendered per run. More parts can be added with
            the :meth:`instructions` decorator; the parts are joined with a blank line.
        description: what the agent does; shown to a parent choosing a handoff.
        tools: tools the model may call (``@tool`` functions or any :class:`helikon.Tool`).
        handoffs: agents this one may delegate to (each becomes a ``transfer_to_<slug>`` tool),
            or :func:`~helikon.handoff` specs (``handoff(agent, tool_name=, tool_description=,
            on_handoff=, input_filter=)``) next to them.
        output_type: a type (or :class:`OutputType`) the final answer must validate against.
        model_settings: provider knobs (temperature, tool choice, ...).
        run_config: default :class:`RunConfig` for runs of this agent.
        hooks: agent-level lifecycle hooks (fire before the run-level ones).
        input_guardrails: checks on the run's input (its items and the user's text), run
            alongside the first model call: objects with ``async def check(self, ctx,
            input)`` or plain functions, sync or async, ``fn(input)`` / ``fn(ctx, input)``,
            returning ``Pass()`` or ``Tripwire(...)`` (see :mod:`helikon.core.guardrails`).
            A trip fails the run with :class:`~helikon.InputGuardrailTripwire`.
        output_guardrails: the same kinds of checks on the final answer before it is
            returned; ``input.value`` is the typed value with an ``output_type``. A trip fails
            the run with :class:`~helikon.OutputGuardrailTripwire`. An answer given after a
            handoff passes the answering agent's output guardrails, then those of every
            agent that handed off on the way (this one's included).
        output_mode: how a run with tools gets its typed answer: ``"tool"`` (an output tool
            the model calls to finish), ``"native"`` (the schema as response format alongside
            the tools) or ``"finalize"`` (alias ``"prompted"``: one more call without tools);
            ``None`` takes the model's default (see :mod:`helikon.core.retries`).
        output_validators: functions ``fn(output)`` or ``fn(ctx, output)`` (sync or async) run
            on each valid typed answer; raising :class:`~helikon.ModelRetry` sends the model
            back with the reason (also ``@agent.output_validator``).
        retries: repair turns an invalid answer gets (default 1), and the default bound of
            each tool's ``ModelRetry``/invalid-argument rounds (``@tool(retries=)`` overrides).

    Raises:
        TypeError: ``name`` or ``model`` is missing.
        ConfigError: a bad value; the message names the argument and the fix. E.g. an empty
            name; ``deps=`` or ``context=`` (the message says how helikon passes them: the
            run context); a model string with an unknown provider, or whose extra or API key is
            missing (the message names the pip command or the variable); instructions that
            are neither a str nor a function; ``tools`` (or
            ``handoffs``, ``hooks``, guardrails) given a single item instead of a list, or
            holding something that is not a tool (a plain function needs ``@tool``); a tool
            whose ``effect`` is not a :class:`ToolEffect`; duplicate tool names;
            ``output_type`` given an instance instead of a type; ``run_config`` that is not a
            :class:`RunConfig`.

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
        model: Model | str,
        instructions: Instructions | None = None,
        description: str = "",
        tools: Sequence[Tool] = (),
        handoffs: Sequence[Agent | Handoff] = (),
        output_type: Any = None,
        model_settings: ModelSettings | None = None,
        run_config: RunConfig | None = None,
        hooks: Sequence[Hook] = (),
        input_guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[Guardrail] = (),
        output_mode: str | None = None,
        output_validators: Sequence[OutputValidator] = (),
        retries: int = 1,
        **unexpected: Never,
    ) -> None:
        refuse_other_spellings("Agent", unexpected, _AGENT_KWARGS)
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("Agent(name=...) must be a non-empty string")
        resolved: Model = resolve_model("Agent(model=...)", model)
        if not callable(getattr(resolved, "invoke", None)):
            raise ConfigError(
                f"Agent(model=...) must implement helikon.Model (an invoke() method) or be a "
                f"model string such as 'openai:gpt-5-mini'; got {type(model).__name__}"
            )
        self._instruction_parts: list[InstructionPart] = (
            [] if instructions is None else [check_part("Agent(instructions=...)", instructions)]
        )
        self.name = name
        self.model = resolved
        self.description = description
        if inspect.isfunction(tools):
            raise ConfigError(
                f"Agent(tools=...) must be a list of tools; got the plain function "
                f"{tools.__name__!r}: decorate it with @tool and pass tools=[{tools.__name__}]"
            )
        self.tools: list[Tool] = _as_list("tools", tools, "tool", _is_tool)
        seen: set[str] = set()
        for i, t in enumerate(self.tools):
            _check_tool(i, t)
            if t.name in seen:
                raise ConfigError(f"Agent(tools=...): two tools are named {t.name!r}")
            seen.add(t.name)
        given: list[Any] = _as_list(
            "handoffs", handoffs, "handoff", lambda h: isinstance(h, Agent | Handoff)
        )
        for h in given:
            target = h.agent if isinstance(h, Handoff) else h
            if not isinstance(target, Agent):
                raise ConfigError(f"Agent(handoffs=...): {target!r} is not an Agent")
        #: options of handoff(...) specs by target name
        self.handoff_options: dict[str, Handoff] = {}
        #: the handoff targets (agents), in order; appending a handoff(...) spec later (a
        #: triage <-> specialist cycle) keeps its options too
        self.handoffs: list[Agent] = _Handoffs(self, given)
        if output_type is None or isinstance(output_type, OutputType):
            self.output_type: OutputType[Any] | None = output_type
        else:
            self.output_type = OutputType(output_type)
        if model_settings is not None and not isinstance(model_settings, ModelSettings):
            raise ConfigError(
                "Agent(model_settings=...) must be a ModelSettings, got "
                f"{type(model_settings).__name__}"
            )
        self.model_settings = model_settings or ModelSettings()
        check_run_args("Agent", None, run_config)
        self.run_config = run_config or RunConfig()
        self.hooks: list[Hook] = _as_list(
            "hooks", hooks, "hook", lambda h: callable(getattr(h, "on_event", None))
        )
        self.input_guardrails: list[Guardrail] = _as_list(
            "input_guardrails", input_guardrails, "guardrail", _is_guardrail
        )
        self.output_guardrails: list[Guardrail] = _as_list(
            "output_guardrails", output_guardrails, "guardrail", _is_guardrail
        )
        for name, seq in (
            ("input_guardrails", self.input_guardrails),
            ("output_guardrails", self.output_guardrails),
        ):
            seq[:] = [as_guardrail(f"Agent({name}=...): {name}[{i}]", g) for i, g in enumerate(seq)]
        for i, hook in enumerate(self.hooks):
            check_hook(f"Agent(hooks=...): hooks[{i}]", hook)
        self.output_mode = check_output_mode("Agent(output_mode=...)", output_mode)
        self.retries = check_retries("Agent(retries=...)", retries)
        mode = self._output_mode()
        if output_type is not None and mode == "tool" and DEFAULT_OUTPUT_TOOL in seen:
            raise ConfigError(
                f"Agent(tools=...): a tool is named {DEFAULT_OUTPUT_TOOL!r}, the output tool's "
                "name in output_mode='tool'; rename the tool, or pass output_mode='native' or "
                "'finalize'"
            )
        self.output_validators: list[OutputValidator] = [
            check_validator(f"Agent(output_validators=...): output_validators[{i}]", fn)
            for i, fn in enumerate(
                _as_list("output_validators", output_validators, "validator", _never)
            )
        ]
        self._native_configs: dict[tuple[int, str, int], Any] = {}

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={getattr(self.model, 'model', '?')!r})"

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # another SDK's spelling (agent.as_tool, agent.tool_plain, ...) names helikon's
            raise peer_attribute("Agent", name, self)

    # ------------------------------------------------------------------ internals

    @property
    def handoff_specs(self) -> list[HandoffSpec]:
        """The transfer tools this agent advertises, in handoff order."""
        out = []
        for h in self.handoffs:
            opt = self.handoff_options.get(h.name)
            name = opt.tool_name if opt is not None and opt.tool_name else handoff_tool_name(h.name)
            desc = h.description
            if opt is not None and opt.tool_description is not None:
                desc = opt.tool_description
            out.append(HandoffSpec(name, h.name, desc))
        return out

    def handoff_target(self, name: str) -> Agent:
        """The handoff agent whose real name is ``name``."""
        for h in self.handoffs:
            if h.name == name:
                return h
        raise ConfigError(f"agent {self.name!r} has no handoff target {name!r}")

    def collisions(self) -> list[str]:
        """Transfer-tool names that clash with each other or with a real tool, each with
        what clashes, e.g. ``"transfer_to_ (handoff '投资专家' and handoff '日本')"``."""
        owners: dict[str, str] = {t.name: f"tool {t.name!r}" for t in self.tools}
        out: list[str] = []
        for spec in self.handoff_specs:
            mine = f"handoff {spec.target!r}"
            if spec.tool_name in owners:
                out.append(f"{spec.tool_name} ({owners[spec.tool_name]} and {mine})")
            else:
                owners[spec.tool_name] = mine
        return out

    def output_validator(self, fn: OutputValidator) -> OutputValidator:
        """Decorator: add ``fn`` to :attr:`output_validators` (returned unchanged).

        Raises:
            ConfigError: ``fn`` takes neither ``(output)`` nor ``(ctx, output)``.
        """
        self.output_validators.append(check_validator("@agent.output_validator", fn))
        return fn

    def _output_mode(self) -> OutputMode:
        choice = self.model_settings.tool_choice
        return resolve_output_mode(self.output_mode, self.model, choice)

    @property
    def retry_rules(self) -> RetryRules:
        """The output mode (resolved against the model), validators and retry bounds."""
        limits = {
            t.name: r for t in self.tools if isinstance(r := getattr(t, "retries", None), int)
        }
        return RetryRules(
            mode=self._output_mode(),
            retries=self.retries,
            tool_name=DEFAULT_OUTPUT_TOOL,
            validators=tuple(self.output_validators),
            tool_retries={name: n for name, n in limits.items() if isinstance(n, int)},
        )

    def native_config(self, max_turns: int) -> Any:
        """The compiled loop configuration (built once per ``max_turns``, mode and retries)."""
        mode = self._output_mode()
        key = (max_turns, mode, self.retries)
        cfg = self._native_configs.get(key)
        if cfg is None:
            ot = self.output_type
            cfg = LoopConfig(
                loop_config_json(
                    max_turns,
                    [(t.name, t.description) for t in self.tools],
                    [(s.tool_name, s.target, s.description) for s in self.handoff_specs],
                    None if ot is None else (ot.name, ot.schema),
                    output_mode=mode,
                    output_retries=self.retries,
                )
            )
            self._native_configs[key] = cfg
        return cfg

    @property
    def instruction_parts(self) -> tuple[InstructionPart, ...]:
        """``Agent(instructions=...)`` then each ``@agent.instructions`` function, in order."""
        return tuple(self._instruction_parts)

    async def render_instructions(self, ctx: RunContext[Any]) -> str:
        """The system prompt for a run: every part rendered (functions called, async ones
        awaited), the non-empty ones joined with a blank line.

        Raises:
            ConfigError: a function returned something other than ``str`` or ``None``.
        """
        return await render_parts(self.name, self._instruction_parts, ctx)

    # ------------------------------------------------------------------ decorators

    def instructions(self, fn: _F) -> _F:
        """Decorator: add a part to the system prompt, after those already there.

        The function takes the :class:`RunContext` or nothing, may be ``async``, and returns
        the text (``None`` or ``""`` adds nothing this run). It is returned unchanged.

        Raises:
            ConfigError: ``fn`` is not a function of zero or one argument.

        Example:
            >>> import asyncio
            >>> from helikon.testing import MockModel, Text
            >>> agent = Agent(name="a", model=MockModel([[Text("ok")]]), instructions="Be brief.")
            >>> @agent.instructions
            ... async def today() -> str:
            ...     return "Today is Friday."
            >>> print(asyncio.run(agent.render_instructions(RunContext.ephemeral())))
            Be brief.
            <BLANKLINE>
            Today is Friday.
        """
        self._instruction_parts.append(check_part("@agent.instructions", fn))
        return fn

    @overload
    def tool(self, fn: Callable[..., Any], /) -> FunctionTool: ...

    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        effect: ToolEffect | str = ToolEffect.SIDE_EFFECT,
        retries: int | None = None,
        needs_approval: NeedsApproval = False,
    ) -> Callable[[Callable[..., Any]], FunctionTool]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        effect: ToolEffect | str = ToolEffect.SIDE_EFFECT,
        retries: int | None = None,
        needs_approval: NeedsApproval = False,
    ) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
        """Decorator: make ``fn`` a tool (as :func:`helikon.tool`) and add it to this agent.

        Bare ``@agent.tool`` or ``@agent.tool(name=..., effect=..., retries=...,
        needs_approval=...)`` (the options of :func:`helikon.tool`). A first parameter
        ``ctx: ToolContext[Deps]`` receives the tool context; without one the tool takes only
        its arguments. Returns the :class:`FunctionTool` (calling it calls ``fn``).

        Raises:
            ConfigError: as :func:`helikon.tool`, or another tool of this agent has the name.

        Example:
            >>> from helikon.testing import MockModel, Text
            >>> agent = Agent(name="a", model=MockModel([[Text("ok")]]))
            >>> @agent.tool(effect="read_only")
            ... def roll() -> int:
            ...     '''Roll a die.'''
            ...     return 4
            >>> [t.name for t in agent.tools]
            ['roll']
        """

        def add(f: Callable[..., Any]) -> FunctionTool:
            made = FunctionTool(
                f,
                name=name,
                description=description,
                effect=effect,
                retries=retries,
                needs_approval=needs_approval,
            )
            if any(t.name == made.name for t in self.tools):
                raise ConfigError(
                    f"@agent.tool: agent {self.name!r} already has a tool named {made.name!r}; "
                    "pass name=... to tell them apart"
                )
            self.tools.append(made)
            self._native_configs.clear()  # the compiled loop config lists the tools
            return made

        return add(fn) if fn is not None else add

    # ------------------------------------------------------------------ running

    def stream(
        self,
        input: AgentInput,
        ctx: RunContext[CtxT] | None = None,
        *,
        run_config: RunConfig | None = None,
        **unexpected: Never,
    ) -> AsyncIterator[AgentEvent]:
        """Run the agent, yielding every :data:`AgentEvent` as it happens.

        The stream starts with ``RunStarted`` and ends with exactly one ``RunCompleted`` or
        ``RunFailed``; failures never raise out of the iterator. Nothing runs until the
        first event is requested; a bad ``input`` raises :class:`ConfigError` then.

        Raises:
            ConfigError: ``ctx`` is not a :class:`RunContext` (pass
                ``RunContext.ephemeral(deps)``) or ``run_config`` not a :class:`RunConfig`
                (raised by this call, before any event).

        Example:
            >>> # async for event in agent.stream("How am I doing?"):
            >>> #     if event.type == "token_delta": print(event.text, end="")
        """
        refuse_other_spellings("Agent.stream", unexpected, _RUN_KWARGS)
        check_run_args("Agent.stream", ctx, run_config)
        run_ctx: RunContext[Any] = ctx if ctx is not None else RunContext.ephemeral(None)
        return run_agent(self, input, run_ctx, run_config or self.run_config)

    async def run(
        self,
        input: AgentInput,
        ctx: RunContext[CtxT] | None = None,
        *,
        run_config: RunConfig | None = None,
        **unexpected: Never,
    ) -> RunResult[OutT]:
        """Run to completion.

        Returns:
            A :class:`RunResult`; ``final_output`` is the answer text, or the validated
            ``output_type`` value when the agent has one.

        Raises:
            RunError: the run failed; ``.error`` is the cause (``MaxTurnsExceeded``,
                ``InvalidStructuredOutput``, ``Cancelled``, ``RunTimeout``, ...).
            ConfigError: a bad argument: ``input`` is not text or items, ``ctx`` is not a
                :class:`RunContext` (pass ``RunContext.ephemeral(deps)``), ``run_config``
                is not a :class:`RunConfig` (pass ``RunConfig(max_turns=...)``); ``deps=`` or
                ``context=`` (the message says to pass ``ctx=RunContext.ephemeral(deps)``).
        """
        refuse_other_spellings("Agent.run", unexpected, _RUN_KWARGS)
        return await collect_run(self, "Agent.run", input, ctx, run_config)

    def typed_result(self, result: RunResult[Any]) -> RunResult[Any]:
        """``result`` with ``final_output`` validated as ``output_type`` (if the agent has one).

        Raises:
            RunError: the final text does not validate.
        """
        # The agent that answered owns the output type: after a handoff that is the target.
        answering = result.last_agent if isinstance(result.last_agent, Agent) else self
        output_type = answering.output_type
        if output_type is not None and isinstance(result.final_output, str):
            value, errors = output_type.validate_text(result.final_output)
            if errors:
                raise RunError(
                    AgentOther("; ".join(errors)), events=result.events, usage=result.usage
                )
            result.final_output = value
        return result

    def run_sync(
        self,
        input: AgentInput,
        ctx: RunContext[CtxT] | None = None,
        *,
        run_config: RunConfig | None = None,
        **unexpected: Never,
    ) -> RunResult[OutT]:
        """:meth:`run` for synchronous code (starts an event loop; not from inside one).

        Raises:
            RunError: as :meth:`run`.
            ConfigError: as :meth:`run`.
            RuntimeError: called from a running event loop (use ``await agent.run``).
        """
        refuse_other_spellings("Agent.run_sync", unexpected, _RUN_KWARGS)
        return run_blocking(self, "Agent.run_sync", input, ctx, run_config)


class _Handoffs(list):  # type: ignore[type-arg]
    """``Agent.handoffs``: a list of agents that also takes :func:`~helikon.handoff` specs
    (``agent.handoffs.append(handoff(other, tool_name=...))``), keeping their options on the
    agent and refusing anything else with a :class:`ConfigError`."""

    def __init__(self, owner: Agent[Any, Any], given: Iterable[Any]) -> None:
        self._owner = owner
        super().__init__(self._take(h) for h in given)

    def _take(self, h: Any) -> Agent[Any, Any]:
        target = h.agent if isinstance(h, Handoff) else h
        if not isinstance(target, Agent):
            raise ConfigError(
                f"agent {self._owner.name!r}: a handoff must be an Agent or handoff(agent, ...), "
                f"got {type(h).__name__}"
            )
        if isinstance(h, Handoff):
            self._owner.handoff_options[target.name] = h
        configs = getattr(self._owner, "_native_configs", None)
        if configs is not None:
            configs.clear()  # the compiled loop config lists the transfer tools
        return target

    def append(self, h: Any) -> None:
        super().append(self._take(h))

    def insert(self, index: Any, h: Any) -> None:
        super().insert(index, self._take(h))

    def extend(self, hs: Iterable[Any]) -> None:
        super().extend([self._take(h) for h in hs])

    def __iadd__(self, hs: Iterable[Any]) -> _Handoffs:  # type: ignore[misc]
        self.extend(hs)
        return self


_AGENT_KWARGS = tuple(p for p in inspect.signature(Agent.__init__).parameters if p != "self")

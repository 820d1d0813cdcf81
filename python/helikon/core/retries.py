"""Structured-output modes, output validators and retry bounds: the agent's :class:`RetryRules`.

How a run with tools gets its typed answer (``Agent(output_mode=...)``):

- ``"finalize"`` (alias ``"prompted"``): tool turns ask for nothing; once the model answers
  without calling a tool, one more *finalizing* call asks for the JSON (no tools, the schema
  as the response format). Works with every model; one extra call per run.
- ``"native"``: every turn sends the schema as the response format alongside the tools; an
  answer without tool calls is the output. One call fewer; needs a provider that accepts a
  response format together with tools (OpenAI chat completions and Responses).
- ``"tool"``: every turn also offers an *output tool* (``final_result``; its parameters are
  the schema); the model calls it to finish, its arguments are the output. A plain-text answer
  that already validates ends the run too; any other text falls back to the finalizing turn.

``None`` (the default) takes the model's ``output_mode`` attribute (each adapter declares
one, see ``docs/guides/structured-output.md``), else ``"finalize"``. Without tools the first
call is already the constrained one, whatever the mode.

An invalid answer (schema errors, or an output validator raising
:class:`~helikon.errors.ModelRetry`) gets a repair turn, at most ``retries`` of them (default
one), then the run fails with :class:`~helikon.errors.InvalidStructuredOutput` (or
:class:`~helikon.errors.OutputRetriesExceeded`, naming the validator). Tools that raise
``ModelRetry`` or get invalid arguments are bounded the same way per tool (``@tool(retries=)``,
else the agent's ``retries``), then :class:`~helikon.errors.ToolRetriesExceeded`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from helikon.core.items import AssistantMessage, Item, ToolCall, text_of
from helikon.core.model import ToolDef
from helikon.core.output import OutputType
from helikon.errors import AgentOther, ConfigError, ModelRetry

__all__ = [
    "DEFAULT_OUTPUT_TOOL",
    "OUTPUT_MODES",
    "OutputMode",
    "OutputValidator",
    "RetryRules",
    "Verdict",
    "check_output_mode",
    "check_retries",
    "check_validator",
    "judge_output",
    "output_tool_def",
    "resolve_output_mode",
    "validator_name",
]

OutputMode = Literal["finalize", "native", "tool"]
#: the modes, and the aliases accepted for them
OUTPUT_MODES: dict[str, OutputMode] = {
    "finalize": "finalize",
    "prompted": "finalize",
    "native": "native",
    "tool": "tool",
}
DEFAULT_OUTPUT_TOOL = "final_result"

#: ``fn(output)`` or ``fn(ctx, output)``, sync or async; raises ModelRetry to retry.
OutputValidator = Callable[..., Any] | Callable[..., Awaitable[Any]]


def check_output_mode(where: str, mode: str | None) -> OutputMode | None:
    """``mode`` as one of :data:`OUTPUT_MODES`' values (``None`` stays ``None``).

    Raises:
        ConfigError: an unknown mode (the message lists the valid ones).
    """
    if mode is None:
        return None
    found = OUTPUT_MODES.get(mode) if isinstance(mode, str) else None
    if found is None:
        raise ConfigError(
            f"{where}: output_mode={mode!r} is not a mode; use 'tool', 'native' or "
            "'finalize' (alias 'prompted'), or None for the model's default"
        )
    return found


def check_retries(where: str, retries: Any) -> int:
    """``retries`` as a count.

    Raises:
        ConfigError: not an ``int`` >= 0.
    """
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"{where}: retries={retries!r} must be an int >= 0 (default 1)")
    return retries


def resolve_output_mode(mode: OutputMode | None, model: Any, tool_choice: Any = None) -> OutputMode:
    """The mode a run uses: ``mode``, else the model's declared ``output_mode``, else
    ``"finalize"``. A declared ``"native"`` becomes ``"tool"`` when the settings' tool choice
    is ``required`` (the model could never answer without a tool call; it can call the
    output tool)."""
    if mode is not None:
        return mode
    declared = getattr(model, "output_mode", None)
    found = OUTPUT_MODES.get(declared, "finalize") if isinstance(declared, str) else "finalize"
    if found == "native" and getattr(tool_choice, "mode", None) == "required":
        return "tool"
    return found


def check_validator(where: str, fn: Any) -> OutputValidator:
    """``fn`` if it is a callable taking ``(output)`` or ``(ctx, output)``.

    Raises:
        ConfigError: not callable, or its signature takes neither one nor two arguments.
    """
    if not callable(fn):
        raise ConfigError(f"{where}: {fn!r} is not callable; pass fn(output) or fn(ctx, output)")
    if _arity(fn) not in (1, 2):
        raise ConfigError(
            f"{where}: {validator_name(fn)} must take (output) or (ctx, output), "
            f"got {inspect.signature(fn)}"
        )
    return fn  # type: ignore[no-any-return]


def _arity(fn: Any) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume (output)
        return 1
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(positional)


def validator_name(fn: Any) -> str:
    """How errors name a validator: its ``__qualname__`` (or its type's name)."""
    return str(getattr(fn, "__qualname__", None) or type(fn).__name__)


@dataclass(frozen=True, slots=True)
class RetryRules:
    """What bounds and judges an agent's answers and tool retries.

    Attributes:
        mode: the resolved output mode (see the module docstring).
        retries: repair turns an invalid answer gets; the default bound of each tool.
        tool_name: the output tool's name in ``"tool"`` mode.
        validators: the output validators, run in order on a valid typed answer.
        tool_retries: per-tool bounds that override ``retries`` (``@tool(retries=)``).
    """

    mode: OutputMode = "finalize"
    retries: int = 1
    tool_name: str = DEFAULT_OUTPUT_TOOL
    validators: tuple[OutputValidator, ...] = ()
    tool_retries: Mapping[str, int] = field(default_factory=dict)

    def tool_limit(self, tool: str) -> int:
        """How many retry rounds ``tool`` gets."""
        return self.tool_retries.get(tool, self.retries)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The driver's judgement of one model turn's answer.

    Attributes:
        errors: the problems (``[]``: valid); ``None`` when there is no answer to judge.
        validator: the output validator that asked for a retry, else ``None``.
    """

    errors: list[str] | None
    validator: str | None = None


def output_tool_def(output_type: OutputType[Any], name: str) -> ToolDef:
    """The output tool offered in ``"tool"`` mode: parameters = the output type's schema."""
    return ToolDef(
        name,
        f"Call this to give the final answer, as a `{output_type.name}`; it ends the run.",
        dict(output_type.schema),
    )


def answer_text(items: Sequence[Item], policy: RetryRules) -> str | None:
    """The JSON text a model turn answers with: the output tool's arguments (``"tool"``
    mode), else the last assistant message's text; ``None`` when the turn called a regular
    tool (the machine reports that itself)."""
    calls = [i for i in items if isinstance(i, ToolCall)]
    if policy.mode == "tool":
        for call in calls:
            if call.name == policy.tool_name:
                return json.dumps(call.args if call.args is not None else {})
    if calls:
        return None
    last = next((i for i in reversed(items) if isinstance(i, AssistantMessage)), None)
    return text_of(last.content) if last else ""


class _Judged(Protocol):
    """What :func:`judge_output` reads of the loop core."""

    @property
    def policy(self) -> RetryRules: ...
    @property
    def validating(self) -> bool: ...


async def judge_output(
    output_type: OutputType[Any] | None,
    core: _Judged,
    ctx: Any,
    items: Sequence[Item],
) -> Verdict:
    """Validate a turn's answer by the type, then by each output validator in order (only
    when ``core.validating``: the machine judges this turn's answer).

    A validator is called as ``fn(output)`` or ``fn(ctx, output)`` (``ctx`` is the run's
    :class:`~helikon.RunContext`); awaited when it returns an awaitable; its return value is
    ignored. :class:`~helikon.errors.ModelRetry` makes its reason the verdict's one error.

    Raises:
        AgentOther: a validator raised anything but ``ModelRetry`` (the run fails with it;
            the message names the validator and the exception).
    """
    if output_type is None or not core.validating:
        return Verdict(None)
    policy = core.policy
    text = answer_text(items, policy)
    if text is None:
        return Verdict(None)
    value, errors = output_type.validate_text(text)
    if errors or not policy.validators:
        return Verdict(errors)
    for fn in policy.validators:
        try:
            result = fn(ctx, value) if _arity(fn) == 2 else fn(value)
            if inspect.isawaitable(result):
                await result
        except ModelRetry as retry:
            return Verdict([retry.reason], validator_name(fn))
        except Exception as exc:
            raise AgentOther(
                f"output validator {validator_name(fn)!r} raised {type(exc).__name__}: {exc}"
            ) from exc
    return Verdict([])

"""MockModel: a deterministic scripted :class:`helikon.Model` for tests, examples and evals."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from helikon.core.cancel import CancellationToken
from helikon.core.events import ReasoningDelta, TokenDelta, ToolCallDelta
from helikon.core.model import (
    CALLING_AGENT,
    FinishReason,
    ModelCapabilities,
    ModelEvent,
    ModelRequest,
    UsageReported,
)
from helikon.core.model import Finish as FinishEvent
from helikon.core.usage import Usage as UsageModel
from helikon.errors import (
    ConfigError,
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    Refused,
    TransportError,
)
from helikon.providers.scripted.script import (
    Call,
    Delay,
    Fail,
    Finish,
    Reasoning,
    Script,
    ScriptFile,
    Step,
    Text,
    Usage,
)

__all__ = ["MockModel"]

_ERRORS: dict[str, type[ModelError]] = {
    "Unavailable": ModelUnavailable,
    "ContextLengthExceeded": ContextLengthExceeded,
    "Refused": Refused,
    "Transport": TransportError,
    "Other": ModelOther,
}


class MockModel:
    """A model that plays back one script per call, in order.

    Each :meth:`invoke` pops the next script. Running out raises
    :class:`helikon.errors.ModelOther` rather than looping. Every request is recorded in
    :attr:`requests`; :meth:`assert_exhausted` checks that every script was used.

    Args:
        scripts: a list of turns, one per model call, each a list of steps (see
            :mod:`helikon.providers.scripted.script`): ``MockModel([[Text("x")]])`` answers
            ``x`` once.
        model: the model id reported to traces (default ``"mock"``).

    Raises:
        ConfigError: ``scripts`` is not a list of lists of steps (e.g. ``[Text("x")]``
            without the inner list); the message shows the expected nesting.

    Example:
        >>> from helikon.testing import Call, MockModel, Text
        >>> m = MockModel([[Call("c1", "lookup", {"q": "x"})], [Text("done")]])
        >>> m.remaining
        2
    """

    def __init__(self, scripts: Iterable[Script] = (), *, model: str = "mock") -> None:
        if isinstance(scripts, (str, bytes, *_STEP_TYPES)) or not isinstance(scripts, Iterable):
            raise ConfigError(
                f"MockModel(scripts) must be a list of turns, each a list of steps, got "
                f"{type(scripts).__name__}: {_NESTING}"
            )
        self._queue: deque[Script] = deque(
            _check_script(s, f"scripts[{i}]") for i, s in enumerate(scripts)
        )
        self._model = model
        self._calls = 0
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_script_file(cls, path: str | Path, *, case: str | None = None) -> MockModel:
        """Load scripts from a script file (``case`` selects a per-case set).

        Raises:
            ConfigError: the file is missing or invalid.
        """
        return cls(ScriptFile.load(path).scripts_for(case))

    @property
    def provider(self) -> str:
        return "mock"

    @property
    def model(self) -> str:
        return self._model

    @property
    def remaining(self) -> int:
        """Scripts not yet played."""
        return len(self._queue)

    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities(
            streaming=True,
            tools=True,
            parallel_tool_calls=True,
            structured_output=True,
            reasoning=True,
        )

    def push(self, script: Script) -> None:
        """Queue one more script.

        Raises:
            ConfigError: ``script`` is not a list of steps.
        """
        self._queue.append(_check_script(script, "push(script)"))

    def assert_exhausted(self) -> None:
        """Raise ``AssertionError`` if scripts are left over."""
        if self._queue:
            raise AssertionError(f"MockModel has {len(self._queue)} unused script(s)")

    def invoke(self, request: ModelRequest, cancel: CancellationToken) -> AsyncIterator[ModelEvent]:
        """Play the next script as model events.

        Raises:
            ModelOther: no script is left (the message names the calling agent, and says
                when the call is the finalizing turn of an agent with an ``output_type``).
            ModelError: the script has a ``Fail`` step (its ``kind`` picks the subclass).
        """
        return self._play(request, cancel, CALLING_AGENT.get())

    async def _play(
        self, request: ModelRequest, cancel: CancellationToken, agent: str | None
    ) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        self._calls += 1
        if not self._queue:
            raise ModelOther(_exhausted(request, agent, self._calls))
        script = self._queue.popleft()
        finished = False
        made_call = False
        for step in script:
            if cancel.cancelled:
                return
            ev = _event(step)
            if isinstance(step, Delay):
                await _sleep(step.seconds, cancel)
                continue
            if isinstance(step, Fail):
                raise _error(step)
            if isinstance(step, Call):
                made_call = True
            if isinstance(step, Finish):
                finished = True
            if ev is not None:
                yield ev
        if not finished and not cancel.cancelled:
            reason = FinishReason.TOOL_CALLS if made_call else FinishReason.STOP
            yield FinishEvent(reason=reason, raw=reason.value)


def _exhausted(request: ModelRequest, agent: str | None, calls: int) -> str:
    """The "script exhausted" message: which call, whose, and whether it is the finalizing
    turn (a structured answer asked for with no tools on offer)."""
    whose = f" of agent {agent!r}" if agent else ""
    text = f"MockModel script exhausted: call {calls}{whose} has no script ({calls - 1} played)"
    if request.settings.response_format is not None and not request.tools:
        text += (
            "; this call is the finalizing turn, where the agent's output_type is asked for "
            "as JSON after its tools ran (output_mode='finalize'): script one more turn "
            "answering the JSON, or answer it in the last turn with output_mode='tool' or "
            "'native'"
        )
    return text


_STEP_TYPES = (Text, Reasoning, Call, Usage, Finish, Delay, Fail)
_NESTING = (
    'MockModel([[Text("x")]]) plays one turn answering x; '
    'MockModel([[Call("c1", "tool", {})], [Text("done")]]) plays two'
)


def _check_script(script: Any, where: str) -> Script:
    """``script`` as a list of steps.

    Raises:
        ConfigError: ``script`` is a single step, not a list, or holds a non-step.
    """
    if isinstance(script, _STEP_TYPES):
        raise ConfigError(
            f"MockModel {where} is a single {type(script).__name__} step, but each turn must "
            f"be a list of steps (scripts are a list of turns, each a list of steps): {_NESTING}"
        )
    if isinstance(script, str | bytes) or not isinstance(script, Iterable):
        raise ConfigError(
            f"MockModel {where} must be a list of steps, got {type(script).__name__} "
            f"{script!r} (scripts are a list of turns, each a list of steps): {_NESTING}"
        )
    steps = list(script)
    for j, step in enumerate(steps):
        if not isinstance(step, _STEP_TYPES):
            raise ConfigError(
                f"MockModel {where}[{j}] is a {type(step).__name__}, not a step; use Text, "
                f"Call, Reasoning, Usage, Finish, Delay or Fail from helikon.testing: {_NESTING}"
            )
    return steps


def _event(step: Step) -> Any:
    if isinstance(step, Text):
        return TokenDelta(text=step.text)
    if isinstance(step, Reasoning):
        return ReasoningDelta(text=step.text, signature=step.signature)
    if isinstance(step, Call):
        args = (
            step.args if isinstance(step.args, str) else json.dumps(step.args, ensure_ascii=False)
        )
        return ToolCallDelta(call_id=step.call_id, name=step.name or None, args_delta=args)
    if isinstance(step, Usage):
        return UsageReported(
            usage=UsageModel(
                input_tokens=step.input,
                output_tokens=step.output,
                cached_input_tokens=step.cached_input,
                reasoning_tokens=step.reasoning,
                total_tokens=step.input + step.output,
            )
        )
    if isinstance(step, Finish):
        return FinishEvent(reason=FinishReason(step.reason), raw=step.reason)
    return None


def _error(step: Fail) -> ModelError:
    if step.kind == "RateLimited":
        return RateLimited(step.message, retry_after=step.retry_after)
    return _ERRORS.get(step.kind, ModelOther)(step.message)


async def _sleep(seconds: float, cancel: CancellationToken) -> None:
    if seconds <= 0:
        return
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({waiter}, timeout=seconds)
    finally:
        waiter.cancel()

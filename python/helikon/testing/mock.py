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
from helikon.core.model import Finish as FinishEvent
from helikon.core.model import (
    FinishReason,
    ModelCapabilities,
    ModelEvent,
    ModelRequest,
    UsageReported,
)
from helikon.core.usage import Usage as UsageModel
from helikon.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    Refused,
    TransportError,
)
from helikon.testing.script import (
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
        scripts: one list of steps per model call (see :mod:`helikon.testing.script`).
        model: the model id reported to traces (default ``"mock"``).

    Example:
        >>> from helikon.testing import Call, MockModel, Text
        >>> m = MockModel([[Call("c1", "lookup", {"q": "x"})], [Text("done")]])
        >>> m.remaining
        2
    """

    def __init__(self, scripts: Iterable[Script] = (), *, model: str = "mock") -> None:
        self._queue: deque[Script] = deque(list(s) for s in scripts)
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
        """Queue one more script."""
        self._queue.append(list(script))

    def assert_exhausted(self) -> None:
        """Raise ``AssertionError`` if scripts are left over."""
        if self._queue:
            raise AssertionError(f"MockModel has {len(self._queue)} unused script(s)")

    async def invoke(
        self, request: ModelRequest, cancel: CancellationToken
    ) -> AsyncIterator[ModelEvent]:
        """Play the next script as model events.

        Raises:
            ModelOther: no script is left.
            ModelError: the script has a ``Fail`` step (its ``kind`` picks the subclass).
        """
        self.requests.append(request)
        self._calls += 1
        if not self._queue:
            raise ModelOther(
                f"MockModel script exhausted: call {self._calls} has no script "
                f"({self._calls - 1} played)"
            )
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

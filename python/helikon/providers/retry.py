"""Retrying transient model errors: :class:`RetryingModel` wraps any model.

The agent loop never retries a failed model call; retrying is opt-in, by wrapping the model::

    from helikon.providers import RetryingModel, RetryPolicy

    model = RetryingModel(OpenAIModel.chat("gpt-5-mini"), RetryPolicy(max_attempts=4))

Behaviour:
    * A call is retried when it raises one of ``RetryPolicy.retry_on`` (by default
      :class:`~helikon.errors.RateLimited`, :class:`~helikon.errors.ModelUnavailable` and
      :class:`~helikon.errors.TransportError`) **before any content has streamed**. Once a
      text, reasoning or tool-call delta has been passed on, a later error propagates: output
      cannot be taken back. Non-content events (usage, provider metadata) that arrive before
      the first delta are held back and released with it (or at the end of the stream, or
      before an error that is not retried), so an attempt that is retried leaves no trace.
    * Attempt ``n`` (1-based) that fails waits ``min(max_delay, base_delay * multiplier **
      (n - 1))``, spread by ``± jitter`` (a fraction), then capped at ``max_delay``; a
      :class:`~helikon.errors.RateLimited` with ``retry_after`` waits at least that long
      (even beyond ``max_delay``: the provider's hint wins).
    * After ``max_attempts`` attempts the last error propagates unchanged.
    * A backoff sleep ends at once when the call's cancellation token fires; the iterator then
      ends without a ``Finish``, like a cancelled model call.
    * ``provider``, ``model`` and ``capabilities()`` are the wrapped model's.

Test strategy: the sleep function and the random source are injectable, so tests assert the
exact delays without sleeping; ``tests/providers/test_retry.py`` also replays the recorded
OpenRouter 429s through the OpenAI adapter.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from helikon.core.events import ReasoningDelta, TokenDelta, ToolCallDelta
from helikon.core.model import Finish, Model, ModelCapabilities, ModelRequest
from helikon.errors import ConfigError, ModelError, ModelUnavailable, RateLimited, TransportError

if TYPE_CHECKING:
    from helikon.core.cancel import CancellationToken

__all__ = ["RetryPolicy", "RetryingModel"]

_COMMITTING = (TokenDelta, ReasoningDelta, ToolCallDelta, Finish)
"""Events that commit an attempt: content deltas, and the terminal ``Finish``."""

Sleep = Callable[[float], Awaitable[None]]
"""An async sleep taking seconds (``asyncio.sleep`` by default)."""
OnRetry = Callable[[int, ModelError, float], None]
"""Called before each backoff with the failed attempt number, its error and the delay."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How :class:`RetryingModel` retries.

    Args:
        max_attempts: total attempts, the first included (``1`` disables retrying).
        base_delay: seconds to wait after the first failed attempt (before jitter).
        max_delay: cap, in seconds, on the backoff (not on a provider's ``retry_after``).
        multiplier: growth of the delay per further attempt.
        jitter: the delay is spread uniformly by up to this fraction either way.
        retry_on: the error classes worth another attempt.

    Raises:
        ConfigError: a value out of range.

    Example:
        >>> policy = RetryPolicy(base_delay=1.0, jitter=0.0)
        >>> [policy.backoff(n, None, 0.5) for n in (1, 2, 3)]
        [1.0, 2.0, 4.0]
        >>> policy.backoff(1, RateLimited("slow down", retry_after=7.5), 0.5)
        7.5
    """

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.2
    retry_on: tuple[type[ModelError], ...] = (RateLimited, ModelUnavailable, TransportError)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError("RetryPolicy.max_attempts must be >= 1 (1 means no retries)")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ConfigError("RetryPolicy.base_delay and max_delay must be >= 0 seconds")
        if self.multiplier < 1:
            raise ConfigError("RetryPolicy.multiplier must be >= 1")
        if not 0 <= self.jitter <= 1:
            raise ConfigError("RetryPolicy.jitter must be a fraction between 0 and 1")
        if not all(isinstance(c, type) and issubclass(c, ModelError) for c in self.retry_on):
            raise ConfigError("RetryPolicy.retry_on must hold helikon ModelError subclasses")

    def retryable(self, error: ModelError) -> bool:
        """Whether ``error`` is worth another attempt under this policy."""
        return isinstance(error, self.retry_on)

    def backoff(self, attempt: int, error: ModelError | None, rand: float) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based).

        Args:
            attempt: the attempt that just failed.
            error: its error; a :class:`RateLimited` ``retry_after`` is a lower bound.
            rand: a number in ``[0, 1)`` choosing the jitter (``0.5`` means none).
        """
        exponent = max(attempt - 1, 0)
        delay = self.base_delay
        for _ in range(exponent):
            delay *= self.multiplier
            if delay >= self.max_delay:
                break
        delay = min(delay, self.max_delay)
        delay = min(delay * (1.0 + self.jitter * (2.0 * rand - 1.0)), self.max_delay)
        delay = max(delay, 0.0)
        if isinstance(error, RateLimited) and error.retry_after is not None:
            delay = max(delay, error.retry_after)
        return delay


class RetryingModel:
    """A model that retries its wrapped model's transient failures (see the module docs).

    Args:
        model: the model to wrap.
        policy: how to retry; ``RetryPolicy()`` by default.
        sleep: an async ``sleep(seconds)`` (for tests); ``asyncio.sleep`` by default. Whatever
            it is, cancellation cuts the wait short.
        rand: a ``() -> float`` in ``[0, 1)`` for the jitter (for tests); ``random.random``
            by default.
        on_retry: called before each backoff with the failed attempt number, the error and
            the delay (for logs and metrics).

    Example:
        >>> from helikon.testing import MockModel
        >>> wrapped = RetryingModel(MockModel([]), RetryPolicy(max_attempts=2))
        >>> (wrapped.provider, wrapped.policy.max_attempts)
        ('mock', 2)
    """

    def __init__(
        self,
        model: Model,
        policy: RetryPolicy | None = None,
        *,
        sleep: Sleep | None = None,
        rand: Callable[[], float] | None = None,
        on_retry: OnRetry | None = None,
    ) -> None:
        if not callable(getattr(model, "invoke", None)):
            raise ConfigError(
                f"RetryingModel needs a helikon Model (with invoke()); got {type(model).__name__}"
            )
        self._inner = model
        self._policy = policy or RetryPolicy()
        self._sleep: Sleep = sleep or asyncio.sleep
        self._rand = rand or random.random
        self._on_retry = on_retry

    @property
    def inner(self) -> Model:
        """The wrapped model."""
        return self._inner

    @property
    def policy(self) -> RetryPolicy:
        """The retry policy."""
        return self._policy

    @property
    def output_mode(self) -> str | None:
        """The wrapped model's default structured-output mode (see helikon.core.retries)."""
        mode = getattr(self._inner, "output_mode", None)
        return mode if isinstance(mode, str) else None

    @property
    def provider(self) -> str:
        """The wrapped model's provider name."""
        return self._inner.provider

    @property
    def model(self) -> str:
        """The wrapped model's model id."""
        return self._inner.model

    def capabilities(self) -> ModelCapabilities:
        """The wrapped model's capabilities."""
        return self._inner.capabilities()

    async def invoke(self, request: ModelRequest, cancel: CancellationToken) -> AsyncIterator[Any]:
        """Stream the wrapped model's answer, retrying transient failures before content.

        Raises:
            ModelError: the wrapped model's error when it is not retryable, came after
                content, or the last attempt failed.
        """
        attempt = 0
        while not cancel.cancelled:
            attempt += 1
            held: list[Any] = []
            committed = False
            stream = self._inner.invoke(request, cancel)
            try:
                async for event in stream:
                    if committed:
                        yield event
                    elif isinstance(event, _COMMITTING):
                        committed = True
                        for earlier in held:
                            yield earlier
                        held.clear()
                        yield event
                    else:
                        held.append(event)
                for earlier in held:
                    yield earlier
                return
            except ModelError as exc:
                final = attempt >= self._policy.max_attempts or cancel.cancelled
                if committed or final or not self._policy.retryable(exc):
                    for earlier in held:  # the failure stands: pass on what came before it
                        yield earlier
                    raise
                error = exc
            finally:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    with suppress(Exception):
                        await aclose()
            delay = self._policy.backoff(attempt, error, self._rand())
            if self._on_retry is not None:
                self._on_retry(attempt, error, delay)
            if not await self._wait(delay, cancel):
                return

    async def aclose(self) -> None:
        """Close the wrapped model when it has an ``aclose()``."""
        aclose = getattr(self._inner, "aclose", None)
        if aclose is not None:
            await aclose()

    def __repr__(self) -> str:
        return f"RetryingModel({self._inner!r}, {self._policy!r})"

    async def _wait(self, delay: float, cancel: CancellationToken) -> bool:
        """Sleep ``delay`` seconds unless cancelled first; True when not cancelled."""
        if cancel.cancelled:
            return False
        if delay <= 0:
            return True
        sleeper = asyncio.ensure_future(self._sleep(delay))
        waiter = asyncio.ensure_future(cancel.wait())
        try:
            await asyncio.wait({sleeper, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeper, waiter):
                if not task.done():
                    task.cancel()
                    with suppress(BaseException):
                        await task
        return not cancel.cancelled

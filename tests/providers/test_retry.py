"""RetryingModel: backoff, the before-content rule, retry-after, cancellation, delegation.

Sleeping and jitter are injected, so every delay is asserted exactly and nothing really
sleeps (the one real-sleep test is cut short by cancellation after 20 ms). The recorded
OpenRouter file (three consecutive 429s) drives the retry loop through the OpenAI adapter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.providers._wire import WIRE, wire_entries

from helikon import Agent
from helikon.core.cancel import CancellationToken
from helikon.core.items import UserMessage
from helikon.core.model import (
    Finish,
    FinishReason,
    ModelCapabilities,
    ModelRequest,
    ProviderMetadata,
    ReasoningDelta,
    TokenDelta,
    ToolCallDelta,
    UsageReported,
)
from helikon.core.usage import Usage
from helikon.errors import (
    ConfigError,
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    Refused,
    RunError,
    TransportError,
)
from helikon.providers import RetryingModel, RetryPolicy
from helikon.providers.openai import OpenAIModel
from helikon.testing import Fail, MockModel, Text
from helikon.testing.replay import ReplayServer

OPENROUTER_429 = WIRE / "openrouter" / "chat_error_429.yaml"

HELLO = ModelRequest(messages=[UserMessage.text("hello")])
DONE = Finish(reason=FinishReason.STOP, raw="stop")
USAGE = UsageReported(usage=Usage(input_tokens=3, output_tokens=1, total_tokens=4))


class Scripted:
    """A model playing one script per call: events, then optionally an error."""

    def __init__(self, *scripts: list[Any]) -> None:
        self.scripts = list(scripts)
        self.calls = 0
        self.closed = False

    @property
    def provider(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return "script-1"

    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities(streaming=True, tools=True)

    async def invoke(self, request: ModelRequest, cancel: CancellationToken) -> AsyncIterator[Any]:
        script = self.scripts[self.calls]
        self.calls += 1
        for step in script:
            if isinstance(step, BaseException):
                raise step
            yield step

    async def aclose(self) -> None:
        self.closed = True


class Sleeps:
    """An injected sleep that records the delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def drain(model: Any, cancel: CancellationToken | None = None) -> list[Any]:
    return [e async for e in model.invoke(HELLO, cancel or CancellationToken())]


def retrying(inner: Any, sleeps: Sleeps, rand: float = 0.5, **policy: Any) -> RetryingModel:
    return RetryingModel(inner, RetryPolicy(**policy), sleep=sleeps, rand=lambda: rand)


# --------------------------------------------------------------------------- the policy


def test_backoff_is_exponential_with_bounded_jitter() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay) == (3, 0.5, 30.0)
    assert (policy.multiplier, policy.jitter) == (2.0, 0.2)
    assert policy.retry_on == (RateLimited, ModelUnavailable, TransportError)
    assert [policy.backoff(n, None, 0.5) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]
    assert policy.backoff(1, None, 0.0) == pytest.approx(0.4)
    assert policy.backoff(2, None, 0.999999) == pytest.approx(1.2, abs=1e-5)
    assert policy.backoff(10, None, 0.5) == 30.0  # capped at max_delay
    assert policy.backoff(10, None, 0.99) == 30.0  # jitter never pushes past the cap
    assert policy.backoff(10, None, 0.0) == pytest.approx(24.0)
    assert policy.backoff(10_000, None, 0.5) == 30.0  # no float overflow on huge attempts


def test_rate_limited_retry_after_is_a_lower_bound() -> None:
    policy = RetryPolicy()
    assert policy.backoff(1, RateLimited("slow", retry_after=2.5), 0.5) == 2.5
    assert policy.backoff(1, RateLimited("slow", retry_after=0.1), 0.5) == 0.5
    assert policy.backoff(1, RateLimited("slow", retry_after=45.0), 0.5) == 45.0
    assert policy.backoff(3, RateLimited("slow"), 0.5) == 2.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"base_delay": -1.0},
        {"max_delay": -0.1},
        {"multiplier": 0.5},
        {"jitter": 1.5},
        {"retry_on": (ValueError,)},
    ],
)
def test_policy_rejects_bad_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)


# --------------------------------------------------------------------------- retrying


async def test_transient_failures_before_content_are_retried() -> None:
    first, second = ModelUnavailable("busy", status_code=503), TransportError("reset")
    inner = Scripted([first], [second], [TokenDelta(text="hi"), USAGE, DONE])
    sleeps = Sleeps()
    seen: list[tuple[int, ModelError, float]] = []
    model = RetryingModel(
        inner,
        RetryPolicy(),
        sleep=sleeps,
        rand=lambda: 0.0,
        on_retry=lambda n, err, delay: seen.append((n, err, delay)),
    )
    assert await drain(model) == [TokenDelta(text="hi"), USAGE, DONE]
    assert inner.calls == 3
    assert sleeps.delays == pytest.approx([0.4, 0.8])
    assert [(n, err) for n, err, _ in seen] == [(1, first), (2, second)]
    assert [d for *_, d in seen] == sleeps.delays


async def test_gives_up_with_the_last_error_after_max_attempts() -> None:
    errors = [RateLimited(f"429 #{k}", retry_after=None) for k in range(4)]
    inner = Scripted(*([e] for e in errors))
    sleeps = Sleeps()
    with pytest.raises(RateLimited) as caught:
        await drain(retrying(inner, sleeps, max_attempts=3))
    assert caught.value is errors[2]
    assert inner.calls == 3
    assert sleeps.delays == [0.5, 1.0]


async def test_one_attempt_means_no_retry() -> None:
    inner = Scripted([ModelUnavailable("busy")], [DONE])
    sleeps = Sleeps()
    with pytest.raises(ModelUnavailable):
        await drain(retrying(inner, sleeps, max_attempts=1))
    assert (inner.calls, sleeps.delays) == (1, [])


@pytest.mark.parametrize(
    "error",
    [ContextLengthExceeded("too long"), Refused("no"), ModelOther("bad request")],
)
async def test_non_transient_errors_are_not_retried(error: ModelError) -> None:
    inner = Scripted([error], [DONE])
    sleeps = Sleeps()
    with pytest.raises(type(error)) as caught:
        await drain(retrying(inner, sleeps))
    assert caught.value is error
    assert (inner.calls, sleeps.delays) == (1, [])


async def test_retry_on_is_configurable() -> None:
    inner = Scripted([ModelOther("flaky gateway")], [DONE])
    sleeps = Sleeps()
    events = await drain(retrying(inner, sleeps, retry_on=(ModelOther,)))
    assert events == [DONE]
    assert inner.calls == 2
    unavailable = Scripted([ModelUnavailable("busy")], [DONE])
    with pytest.raises(ModelUnavailable):
        await drain(retrying(unavailable, Sleeps(), retry_on=(ModelOther,)))


@pytest.mark.parametrize(
    "delta",
    [
        TokenDelta(text="Hal"),
        ReasoningDelta(text="thinking"),
        ToolCallDelta(call_id="c1", name="f", args_delta=""),
    ],
)
async def test_errors_after_content_propagate(delta: Any) -> None:
    inner = Scripted([delta, ModelUnavailable("dropped mid-stream")], [DONE])
    sleeps = Sleeps()
    model = retrying(inner, sleeps)
    received: list[Any] = []

    async def consume() -> None:
        async for event in model.invoke(HELLO, CancellationToken()):
            received.append(event)

    with pytest.raises(ModelUnavailable):
        await consume()
    assert received == [delta]
    assert (inner.calls, sleeps.delays) == (1, [])


async def test_non_content_events_of_a_failed_attempt_are_dropped() -> None:
    meta = ProviderMetadata(data={"id": "attempt-1"})
    inner = Scripted(
        [USAGE, meta, TransportError("reset")],
        [ProviderMetadata(data={"id": "attempt-2"}), TokenDelta(text="ok"), USAGE, DONE],
    )
    events = await drain(retrying(inner, Sleeps()))
    assert events == [
        ProviderMetadata(data={"id": "attempt-2"}),
        TokenDelta(text="ok"),
        USAGE,
        DONE,
    ]


async def test_held_events_come_out_before_an_error_that_is_not_retried() -> None:
    received: list[Any] = []

    async def consume(model: RetryingModel) -> None:
        async for event in model.invoke(HELLO, CancellationToken()):
            received.append(event)

    refused = Scripted([USAGE, Refused("I can't help with that.")])
    with pytest.raises(Refused):
        await consume(retrying(refused, Sleeps()))
    assert received == [USAGE]
    received.clear()
    exhausted = Scripted([USAGE, TransportError("a")], [USAGE, TransportError("b")])
    with pytest.raises(TransportError, match="b"):
        await consume(retrying(exhausted, Sleeps(), max_attempts=2))
    assert received == [USAGE]  # only the last attempt's


async def test_held_events_are_released_when_the_stream_ends_without_content() -> None:
    inner = Scripted([USAGE])
    assert await drain(retrying(inner, Sleeps())) == [USAGE]


async def test_waits_at_least_retry_after() -> None:
    inner = Scripted([RateLimited("slow down", retry_after=7.0)], [DONE])
    sleeps = Sleeps()
    assert await drain(retrying(inner, sleeps)) == [DONE]
    assert sleeps.delays == [7.0]


async def test_backoff_sleep_ends_promptly_on_cancel() -> None:
    inner = Scripted([ModelUnavailable("busy")], [DONE])
    cancel = CancellationToken()
    model = RetryingModel(inner, RetryPolicy(base_delay=30.0, jitter=0.0))  # real asyncio.sleep
    asyncio.get_running_loop().call_later(0.02, cancel.cancel)
    started = time.monotonic()
    events = await drain(model, cancel)
    assert time.monotonic() - started < 1.0
    assert events == []  # ends like a cancelled call: no Finish, no error
    assert inner.calls == 1


async def test_any_injected_sleep_is_cut_short_by_cancel() -> None:
    never = asyncio.Event()

    async def stuck(seconds: float) -> None:
        await never.wait()

    inner = Scripted([TransportError("reset")], [DONE])
    cancel = CancellationToken()
    model = RetryingModel(inner, sleep=stuck)
    asyncio.get_running_loop().call_later(0.02, cancel.cancel)
    assert await asyncio.wait_for(drain(model, cancel), timeout=2.0) == []
    assert inner.calls == 1


async def test_cancelled_before_the_call_makes_no_attempt() -> None:
    inner = Scripted([DONE])
    cancel = CancellationToken()
    cancel.cancel()
    assert await drain(retrying(inner, Sleeps()), cancel) == []
    assert inner.calls == 0


async def test_delegates_identity_capabilities_and_close() -> None:
    inner = Scripted()
    model = RetryingModel(inner)
    assert (model.provider, model.model) == ("scripted", "script-1")
    assert model.capabilities() == ModelCapabilities(streaming=True, tools=True)
    assert model.inner is inner
    assert model.policy == RetryPolicy()
    await model.aclose()
    assert inner.closed
    with pytest.raises(ConfigError, match="invoke"):
        RetryingModel(object())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- with the loop


async def test_the_loop_itself_never_retries_but_a_wrapped_model_does() -> None:
    bare = MockModel([[Fail("Unavailable", "overloaded")], [Text("hello")]])
    with pytest.raises(RunError) as caught:
        await Agent(name="a", model=bare).run("hi")
    assert "overloaded" in str(caught.value.error)
    assert bare.remaining == 1  # one call, no retry

    inner = MockModel([[Fail("Unavailable", "overloaded")], [Text("hello")]])
    sleeps = Sleeps()
    agent = Agent(name="a", model=RetryingModel(inner, sleep=sleeps, rand=lambda: 0.5))
    result = await agent.run("hi")
    assert result.final_output == "hello"
    assert inner.remaining == 0
    assert sleeps.delays == [0.5]


# --------------------------------------------------------------------------- recorded 429s


def test_the_openrouter_file_holds_three_429s() -> None:
    entry = wire_entries(file="openrouter/chat_error_429.yaml")[0]
    assert entry["interactions_used"] == [0, 1, 2]
    assert [i["status"] for i in entry["interactions"]] == [429, 429, 429]


@pytest.mark.parametrize(("attempts", "left"), [(3, 0), (2, 1)])
async def test_recorded_openrouter_429s_exhaust_the_retries(attempts: int, left: int) -> None:
    sleeps = Sleeps()
    with ReplayServer(OPENROUTER_429, interactions=[0, 1, 2]) as server:
        inner = OpenAIModel.chat(
            "google/gemini-2.0-flash-exp:free",
            api_key="test-key",
            base_url=server.base_url + "/api/v1",
            stream=False,
        )
        model = RetryingModel(inner, RetryPolicy(max_attempts=attempts), sleep=sleeps)
        try:
            with pytest.raises(RateLimited) as caught:
                await drain(model)
        finally:
            await model.aclose()
        assert len(server.requests) == attempts
        assert sum(server.remaining().values()) == left
        assert server.unmatched == []
    assert caught.value.status_code == 429
    assert caught.value.message == "Provider returned error"
    assert caught.value.retry_after is None  # OpenRouter sent no retry-after header
    assert len(sleeps.delays) == attempts - 1
    for k, delay in enumerate(sleeps.delays):  # 0.5 s doubling, within the 20 % jitter
        assert 0.8 * 0.5 * 2**k <= delay <= 1.2 * 0.5 * 2**k

"""The provider skeleton (``providers/_base.py``) through the guide's example adapter.

``examples/custom_provider/acme.py`` is a whole adapter for a made-up API on the skeleton
(docs/guides/adding-a-provider.md builds it); here it runs against an in-process
``httpx.MockTransport``. Checked: streamed and whole answers give the same text, usage and
``Finish`` (model and response id), error statuses and network failures come out mapped,
cancellation and a consumer that stops early end the call without a ``Finish`` and close the
HTTP response, and the constructor's checks name the field. The last tests pin that every
built-in adapter is on the skeleton (none defines its own ``invoke``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from helikon import Agent
from helikon.core.cancel import CancellationToken
from helikon.core.events import TokenDelta
from helikon.core.items import UserMessage
from helikon.core.model import Finish, FinishReason, ModelEvent, ModelRequest, UsageReported
from helikon.core.usage import Usage
from helikon.errors import ConfigError, ModelOther, ModelUnavailable, RateLimited, TransportError
from helikon.providers._base import ProviderModel

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_provider"
KEY = "acme-test-key"
HELLO = ModelRequest(messages=[UserMessage.text("hi")])


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_acme_example_{name}", EXAMPLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


acme = _load("acme")
fake_api = _load("fake_api")


def model_on(handler: Callable[[httpx.Request], httpx.Response], *, stream: bool = True) -> Any:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return acme.AcmeModel("acme-1", api_key=KEY, http_client=client, stream=stream)


async def collect(model: Any, cancel: CancellationToken | None = None) -> list[ModelEvent]:
    return [event async for event in model.invoke(HELLO, cancel or CancellationToken())]


CLOSING = [
    UsageReported(usage=Usage(input_tokens=7, output_tokens=3, total_tokens=10)),
    Finish(reason=FinishReason.STOP, raw="end", model="acme-1-2025-01", response_id="cmpl_42"),
]


def test_streamed_answer_events() -> None:
    events = asyncio.run(collect(model_on(fake_api.acme_api)))
    assert events == [
        TokenDelta(text="Hello"),
        TokenDelta(text=", "),
        TokenDelta(text="world."),
        *CLOSING,
    ]


def test_whole_answer_events() -> None:
    events = asyncio.run(collect(model_on(fake_api.acme_api, stream=False)))
    assert events == [TokenDelta(text="Hello, world."), *CLOSING]


def test_request_body_and_key_reach_the_api() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return fake_api.acme_api(request)

    asyncio.run(collect(model_on(handler)))
    assert [r.url.path for r in seen] == ["/v1/complete"]
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert seen[0].read() == (
        b'{"model":"acme-1","messages":[{"role":"user","text":"hi"}],"stream":true}'
    )


def test_an_agent_runs_on_the_example_provider() -> None:
    result = Agent(name="a", model=model_on(fake_api.acme_api)).run_sync("hi")
    assert result.final_output == "Hello, world."
    assert result.usage.input_tokens == 7
    assert result.usage.output_tokens == 3


def _error(status: int, code: str, headers: dict[str, str] | None = None) -> Any:
    body = {"error": {"code": code, "message": f"said {status}"}}
    return lambda request: httpx.Response(status, json=body, headers=headers)


def test_error_statuses_are_mapped() -> None:
    with pytest.raises(RateLimited, match="said 429") as limited:
        asyncio.run(collect(model_on(_error(429, "slow_down", {"retry-after": "2"}))))
    assert (limited.value.retry_after, limited.value.error_code) == (2.0, "slow_down")
    with pytest.raises(ModelUnavailable, match="said 503") as down:
        asyncio.run(collect(model_on(_error(503, "overloaded"))))
    assert down.value.status_code == 503
    model = acme.AcmeModel(
        "acme-1",
        api_key="wrong",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(fake_api.acme_api)),
    )
    with pytest.raises(ModelOther, match=r"unknown key \(check ACME_API_KEY\)") as denied:
        asyncio.run(collect(model))
    assert (denied.value.status_code, denied.value.error_code) == (401, "bad_key")


def test_network_failure_is_a_transport_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(TransportError, match="Acme request failed: connection refused"):
        asyncio.run(collect(model_on(refuse)))


def test_stream_cut_before_its_closing_line() -> None:
    def cut(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text='{"delta": "Hel"}\n')

    with pytest.raises(TransportError, match="ended before its closing line"):
        asyncio.run(collect(model_on(cut)))


class Lines(httpx.AsyncByteStream):
    """A response body that sends ``first`` and then waits until closed."""

    def __init__(self, first: bytes) -> None:
        self.first = first
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        await asyncio.Event().wait()  # never more

    async def aclose(self) -> None:
        self.closed = True


def test_cancel_mid_stream_ends_without_finish_and_closes_the_response() -> None:
    body = Lines(b'{"delta": "Hel"}\n')
    model = model_on(lambda request: httpx.Response(200, stream=body))

    async def run() -> list[ModelEvent]:
        cancel = CancellationToken()
        events: list[ModelEvent] = []
        async for event in model.invoke(HELLO, cancel):
            events.append(event)
            asyncio.get_running_loop().call_later(0.01, cancel.cancel)
        return events

    assert asyncio.run(asyncio.wait_for(run(), 10)) == [TokenDelta(text="Hel")]
    assert body.closed


def test_consumer_that_stops_early_closes_the_response() -> None:
    body = Lines(b'{"delta": "Hel"}\n')
    model = model_on(lambda request: httpx.Response(200, stream=body))

    async def run() -> None:
        events = model.invoke(HELLO, CancellationToken())
        assert await events.__anext__() == TokenDelta(text="Hel")
        await events.aclose()

    asyncio.run(asyncio.wait_for(run(), 10))
    assert body.closed


def test_cancelled_before_the_call_sends_nothing() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return fake_api.acme_api(request)

    cancel = CancellationToken()
    cancel.cancel()
    assert asyncio.run(collect(model_on(handler), cancel)) == []
    assert seen == []


@pytest.mark.parametrize("model_id", ["", "   "])
def test_empty_model_id_is_refused(model_id: str) -> None:
    with pytest.raises(ConfigError, match="AcmeModel: model_id must be a non-empty model name"):
        acme.AcmeModel(model_id, api_key=KEY)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACME_API_KEY", raising=False)
    with pytest.raises(
        ConfigError,
        match=r"AcmeModel: no API key\. Set the ACME_API_KEY environment variable or pass api_key",
    ):
        acme.AcmeModel("acme-1")
    monkeypatch.setenv("ACME_API_KEY", "from-env")
    assert acme.AcmeModel("acme-1")._api_key == "from-env"


def test_repr_and_model() -> None:
    model = acme.AcmeModel("acme-1", api_key=KEY, stream=False)
    assert (repr(model), model.model, model.provider) == (
        "AcmeModel('acme-1', stream=False)",
        "acme-1",
        "acme",
    )


def _adapters() -> list[type[ProviderModel]]:
    from helikon.providers.anthropic import AnthropicModel
    from helikon.providers.bedrock import BedrockModel
    from helikon.providers.gemini import GeminiModel
    from helikon.providers.openai import OpenAIModel
    from helikon.providers.openai.responses import OpenAIResponsesModel

    return [OpenAIModel, OpenAIResponsesModel, AnthropicModel, GeminiModel, BedrockModel]


@pytest.mark.parametrize("adapter", _adapters(), ids=lambda cls: cls.__name__)
def test_every_adapter_is_on_the_skeleton(adapter: type[ProviderModel]) -> None:
    assert issubclass(adapter, ProviderModel)
    owners = [cls for cls in adapter.__mro__ if "invoke" in vars(cls)]
    assert owners == [ProviderModel]


def test_a_responses_model_is_an_openai_model() -> None:
    from helikon.providers.openai import OpenAIModel

    model = OpenAIModel.responses("gpt-5", api_key="k")
    assert isinstance(model, OpenAIModel)
    assert not isinstance(OpenAIModel.chat("gpt-5", api_key="k"), type(model))

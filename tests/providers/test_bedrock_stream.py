"""BedrockModel beyond the recordings, response side: stream details (stop reasons, usage,
reasoning blocks, cut-off and corrupt streams), error mapping for HTTP errors and mid-stream
exception events, and cancellation (the stream's socket is shut down at once).

Responses no recording has are synthesized (see ``test_bedrock_support``); a real boto3
client talks to the local server in every case.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from tests.providers._wire import cancel_after_first_token
from tests.providers.test_bedrock_support import (
    CLAUDE,
    ask,
    client_at,
    converse_body,
    event,
    events_of,
    exception_event,
    offline_aws,
    route,
    stream_response,
    text_stream,
    tool_stream,
    usage_event,
)

from helikon.core.cancel import CancellationToken
from helikon.core.items import (
    TextPart,
    ToolResult,
    UserMessage,
)
from helikon.core.model import (
    FinishReason,
    ModelRequest,
    ProviderMetadata,
    ReasoningDelta,
    TokenDelta,
)
from helikon.core.turn import TurnAccumulator
from helikon.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    TransportError,
)
from helikon.providers.bedrock import BedrockModel
from helikon.testing.replay import ReplayServer


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    offline_aws(monkeypatch)


# --------------------------------------------------------------------------- stream details


async def test_guardrail_stop_is_a_content_filter_and_usage_counts_the_cache() -> None:
    frames = text_stream("Sorry.", stop="guardrail_intervened")
    frames[-1] = usage_event(20, 2, cacheReadInputTokens=7, cacheWriteInputTokens=3, totalTokens=32)
    server = ReplayServer.from_responses([stream_response(frames)], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        events = await events_of(model, ask())
    usage = next(e.usage for e in events if e.type == "usage")
    # input: 20 uncached + 7 read from + 3 written to the cache (Bedrock's total counts them)
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (30, 2, 32)
    assert (usage.cached_input_tokens, usage.cache_write_input_tokens) == (7, 3)
    assert (events[-1].reason, events[-1].raw) == (
        FinishReason.CONTENT_FILTER,
        "guardrail_intervened",
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("max_tokens", FinishReason.LENGTH),
        ("stop_sequence", FinishReason.STOP),
        ("content_filtered", FinishReason.CONTENT_FILTER),
        ("model_context_window_exceeded", FinishReason.LENGTH),
        ("malformed_tool_use", FinishReason.OTHER),
    ],
)
async def test_stop_reasons_map(raw: str, reason: FinishReason) -> None:
    body = converse_body([{"text": "x"}], stop=raw)
    server = ReplayServer.from_responses([(200, {}, body)], path=route(CLAUDE, stream=False))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url), stream=False)
        events = await events_of(model, ask())
    assert (events[-1].reason, events[-1].raw) == (reason, raw)


async def test_redacted_and_multiple_reasoning_blocks_round_trip() -> None:
    secret = b"\x00opaque\xff"
    frames = [
        event("messageStart", {"role": "assistant"}),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "plan"}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "SIG1"}}},
        ),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event(
            "contentBlockDelta",
            {
                "contentBlockIndex": 1,
                "delta": {
                    "reasoningContent": {"redactedContent": base64.b64encode(secret).decode()}
                },
            },
        ),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        *tool_stream(2, "tu_1", "fx", '{"pair": "EURUSD"}'),
        event("messageStop", {"stopReason": "tool_use"}),
        usage_event(),
    ]
    server = ReplayServer.from_responses([stream_response(frames)], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        events = await events_of(model, ask())
    reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
    assert reasoning[-1].redacted == base64.b64encode(secret).decode()
    meta = [e for e in events if isinstance(e, ProviderMetadata)]
    assert meta == [
        ProviderMetadata(
            data={
                "bedrock_reasoning": [
                    {"text": "plan", "signature": "SIG1"},
                    {"redacted": base64.b64encode(secret).decode()},
                ]
            }
        )
    ]
    acc = TurnAccumulator()
    for e in events:
        acc.add(e)
    history = [
        UserMessage.text("hi"),
        *acc.items("a"),
        ToolResult(call_id="tu_1", content=[TextPart(text="1.1")]),
    ]
    params = model.request_params(ModelRequest(messages=history))
    assistant = params["messages"][1]["content"]
    assert assistant == [
        {"reasoningContent": {"reasoningText": {"text": "plan", "signature": "SIG1"}}},
        {"reasoningContent": {"redactedContent": secret}},
        {"toolUse": {"toolUseId": "tu_1", "name": "fx", "input": {"pair": "EURUSD"}}},
    ]
    # a tool-less turn whose history holds calls still declares those tools
    assert [t["toolSpec"]["name"] for t in params["toolConfig"]["tools"]] == ["fx"]


async def test_stream_cut_before_message_stop_is_a_transport_error() -> None:
    frames = text_stream("Hel")[:-2]
    server = ReplayServer.from_responses([stream_response(frames)], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        with pytest.raises(TransportError, match="messageStop"):
            await events_of(model, ask())


async def test_corrupt_frame_is_a_transport_error() -> None:
    frames = text_stream("Hello")
    broken = bytearray(frames[1])
    broken[-1] ^= 0xFF  # message CRC no longer matches
    frames[1] = bytes(broken)
    server = ReplayServer.from_responses([stream_response(frames)], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        with pytest.raises(TransportError):
            await events_of(model, ask())


# --------------------------------------------------------------------------- errors


def _http_error(
    status: int, error_type: str | None, message: str
) -> tuple[int, dict[str, str], Any]:
    headers = {"content-type": "application/json"}
    if error_type:
        headers["x-amzn-ErrorType"] = (
            f"{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/"
        )
    return status, headers, {"message": message}


HTTP_ERRORS = [
    (429, "ThrottlingException", "Too many requests, please wait.", RateLimited),
    (503, "ServiceUnavailableException", "Service unavailable.", ModelUnavailable),
    (429, "ModelNotReadyException", "Model is not ready.", ModelUnavailable),
    (500, "InternalServerException", "Internal error.", ModelUnavailable),
    (502, None, "Bad gateway.", ModelUnavailable),
    (400, "ValidationException", "Input is too long for requested model.", ContextLengthExceeded),
    (
        400,
        "ValidationException",
        "The model returned the following errors: prompt is too long: 210000 tokens > 200000",
        ContextLengthExceeded,
    ),
    (400, "ValidationException", "messages.0: toolResult content must not be empty", ModelOther),
    (400, "ServiceQuotaExceededException", "Too many tokens per day.", RateLimited),
    (404, "ResourceNotFoundException", "Model not found.", ModelOther),
    (424, "ModelErrorException", "Model failed.", ModelOther),
]


@pytest.mark.parametrize(("status", "error_type", "message", "cls"), HTTP_ERRORS)
async def test_http_errors_map(
    status: int, error_type: str | None, message: str, cls: type[ModelError]
) -> None:
    server = ReplayServer.from_responses(
        [_http_error(status, error_type, message)], path=route(CLAUDE, stream=False)
    )
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url), stream=False)
        with pytest.raises(ModelError) as info:
            await events_of(model, ask())
    assert type(info.value) is cls
    assert info.value.message == message
    assert info.value.status_code == status


async def test_access_denied_names_the_credentials() -> None:
    response = _http_error(403, "AccessDeniedException", "You don't have access to the model.")
    server = ReplayServer.from_responses([response], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        with pytest.raises(ModelOther, match="AWS credentials") as info:
            await events_of(model, ask())
    assert "You don't have access to the model." in info.value.message
    assert info.value.status_code == 403


@pytest.mark.parametrize(
    ("kind", "message", "cls"),
    [
        ("throttlingException", "Too many tokens, slow down.", RateLimited),
        ("serviceUnavailableException", "Unavailable.", ModelUnavailable),
        ("internalServerException", "Oops.", ModelUnavailable),
        ("modelStreamErrorException", "Stream error.", ModelUnavailable),
        ("validationException", "Too many input tokens for this model.", ContextLengthExceeded),
        ("validationException", "Bad tool name.", ModelOther),
    ],
)
async def test_mid_stream_exception_events_map(
    kind: str, message: str, cls: type[ModelError]
) -> None:
    frames = [*text_stream("Par")[:2], exception_event(kind, message)]
    server = ReplayServer.from_responses([stream_response(frames)], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        seen: list[Any] = []

        async def drain() -> None:
            async for e in model.invoke(ask(), CancellationToken()):
                seen.append(e)

        with pytest.raises(ModelError) as info:
            await drain()
    assert type(info.value) is cls
    assert info.value.message == message
    assert seen == [TokenDelta(text="Par")]  # what came before the exception was delivered


async def test_connection_refused_is_a_transport_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = BedrockModel.converse(CLAUDE, client=client_at(f"http://127.0.0.1:{port}"))
    with pytest.raises(TransportError, match="connect"):
        await events_of(model, ask())


# --------------------------------------------------------------------------- cancellation


class StallingServer:
    """Answers one ConverseStream request with ``frames``, then holds the connection open
    (a stalled stream) until closed. ``before_headers`` stalls before answering at all."""

    def __init__(self, frames: Sequence[bytes], *, before_headers: bool = False) -> None:
        self.frames = b"".join(frames)
        self.before_headers = before_headers
        self.release = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += conn.recv(65536)
            if self.before_headers:
                self.release.wait(10)
                return
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
                + b"%x\r\n%s\r\n"
                % (len(self.frames), self.frames)
            )
            self.release.wait(10)

    def __enter__(self) -> StallingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.sock.close()
        self.thread.join(5)


def _stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "helikon-bedrock-stream"]


async def test_cancel_mid_stream_closes_the_stream_promptly() -> None:
    frames = [event("messageStart", {"role": "assistant"}), *text_stream("Par")[1:2]]
    with StallingServer(frames) as server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        seen, elapsed = await cancel_after_first_token(model, ask(), delay=0.05)
        assert seen == [TokenDelta(text="Par")]  # no Finish after a cancel
        assert elapsed < 2.0
        deadline = time.monotonic() + 2.0
        while _stream_threads() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        # the worker's blocking read ended with the stream, long before any read timeout
        assert _stream_threads() == []


async def test_cancel_before_the_response_arrives() -> None:
    with StallingServer([], before_headers=True) as server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        token = CancellationToken()
        asyncio.get_running_loop().call_later(0.1, token.cancel)
        started = time.monotonic()
        seen = [e async for e in model.invoke(ask(), token)]
        assert seen == []
        assert time.monotonic() - started < 2.0


async def test_breaking_out_of_the_stream_closes_it() -> None:
    frames = [event("messageStart", {"role": "assistant"}), *text_stream("a", "b")[1:3]]
    with StallingServer(frames) as server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        stream = model.invoke(ask(), CancellationToken())
        async for _ in stream:
            break
        await stream.aclose()  # type: ignore[attr-defined]
        deadline = time.monotonic() + 2.0
        while _stream_threads() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert _stream_threads() == []

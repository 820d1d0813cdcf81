"""AnthropicModel against hand-built traffic: request translation, thinking round trips
(field case BR-05), caching, structured output, error mapping and cancellation."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest
from tests.providers._wire import cancel_after_first_token

from helikon import Agent, ToolEffect, tool
from helikon.core.cancel import CancellationToken
from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ImagePart,
    Item,
    MediaSource,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUsePart,
    UserMessage,
)
from helikon.core.model import (
    Finish,
    FinishReason,
    JsonObjectFormat,
    JsonSchemaFormat,
    ModelRequest,
    ModelSettings,
    ProviderMetadata,
    ReasoningDelta,
    TokenDelta,
    ToolCallDelta,
    ToolChoice,
    ToolDef,
    UsageReported,
)
from helikon.core.turn import TurnAccumulator
from helikon.core.usage import Usage
from helikon.errors import (
    ConfigError,
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    TransportError,
)
from helikon.providers.anthropic import AnthropicModel, CacheStrategy, ExtendedThinking
from helikon.testing.replay import Pause, ReplayServer

MESSAGES = "/v1/messages"

# The SDK warns about model ids it lists as deprecated; that is not what these tests check.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


@pytest.fixture(autouse=True)
def _no_ambient_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/blocked-by-helikon-tests")


# --------------------------------------------------------------------------- SSE builders


def sse(event: dict[str, Any]) -> str:
    """One Messages SSE event (the SDK needs the ``event:`` line)."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}"


def message_start(input_tokens: int = 10, **usage: int) -> str:
    return sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_synth",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1, **usage},
            },
        }
    )


def block_start(index: int, block: dict[str, Any]) -> str:
    return sse({"type": "content_block_start", "index": index, "content_block": block})


def block_delta(index: int, delta: dict[str, Any]) -> str:
    return sse({"type": "content_block_delta", "index": index, "delta": delta})


def block_stop(index: int) -> str:
    return sse({"type": "content_block_stop", "index": index})


def message_end(stop_reason: str, output_tokens: int = 5, **usage: Any) -> list[str]:
    return [
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens, **usage},
            }
        ),
        sse({"type": "message_stop"}),
    ]


def text_block(index: int, *pieces: str) -> list[str]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(block_delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def thinking_block(index: int, text: str, signature: str) -> list[str]:
    events = [block_start(index, {"type": "thinking", "thinking": "", "signature": ""})]
    if text:
        events.append(block_delta(index, {"type": "thinking_delta", "thinking": text}))
    events.append(block_delta(index, {"type": "signature_delta", "signature": signature}))
    events.append(block_stop(index))
    return events


def redacted_block(index: int, data: str) -> list[str]:
    return [block_start(index, {"type": "redacted_thinking", "data": data}), block_stop(index)]


def tool_block(index: int, call_id: str, name: str, *fragments: str) -> list[str]:
    return [
        block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        *(block_delta(index, {"type": "input_json_delta", "partial_json": f}) for f in fragments),
        block_stop(index),
    ]


def text_answer(text: str = "ok") -> list[str]:
    return [message_start(), *text_block(0, text), *message_end("end_turn")]


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_x"}


HELLO = ModelRequest(messages=[UserMessage.text("hello")])


async def run_against(
    responses: list[Any], request: ModelRequest = HELLO, **kw: Any
) -> tuple[list[Any], ModelError | None, list[Any]]:
    with ReplayServer.from_responses(responses, path=MESSAGES) as server:
        model = AnthropicModel.messages(
            "claude-sonnet-4-6", api_key="k", base_url=server.base_url, **kw
        )
        events: list[Any] = []
        error: ModelError | None = None
        try:
            async for event in model.invoke(request, CancellationToken()):
                events.append(event)
        except ModelError as exc:
            error = exc
        finally:
            await model.aclose()
        return events, error, server.requests


def body_of(request: ModelRequest, **kw: Any) -> dict[str, Any]:
    return AnthropicModel.messages("claude-sonnet-4-6", api_key="k", **kw).request_body(request)


# --------------------------------------------------------------------------- BR-05


@tool(effect=ToolEffect.READ_ONLY)
def fx(pair: str) -> str:
    """Return the exchange rate for a currency pair."""
    return {"EURUSD": "1.08"}.get(pair, "unknown")


def _turn_one(thinking: list[str]) -> list[str]:
    return [
        message_start(),
        *thinking,
        *tool_block(5, "tu_1", "fx", '{"pair":', '"EURUSD"}'),
        *message_end("tool_use"),
    ]


BR05_CASES = {
    "signed_thinking": (
        thinking_block(0, "plan", "SIG1"),
        [{"type": "thinking", "thinking": "plan", "signature": "SIG1"}],
    ),
    "signature_only": (
        thinking_block(0, "", "SIG2"),
        [{"type": "thinking", "thinking": "", "signature": "SIG2"}],
    ),
    "redacted": (redacted_block(0, "R1"), [{"type": "redacted_thinking", "data": "R1"}]),
    "redacted_then_signed": (
        [*redacted_block(0, "R1"), *thinking_block(1, "plan", "SIG1")],
        [
            {"type": "redacted_thinking", "data": "R1"},
            {"type": "thinking", "thinking": "plan", "signature": "SIG1"},
        ],
    ),
}


@pytest.mark.parametrize("case", list(BR05_CASES))
async def test_br05_thinking_goes_back_unchanged_and_first(case: str) -> None:
    thinking, expected_blocks = BR05_CASES[case]
    responses: list[Any] = [(200, {}, _turn_one(thinking)), (200, {}, text_answer("1.08 it is"))]
    with ReplayServer.from_responses(responses, path=MESSAGES) as server:
        model = AnthropicModel.messages(
            "claude-sonnet-4-6",
            api_key="k",
            base_url=server.base_url,
            thinking=ExtendedThinking(budget_tokens=1024),
        )
        agent = Agent(name="fx-desk", model=model, tools=[fx])
        try:
            result = await agent.run("EURUSD?")
        finally:
            await model.aclose()
        sent = server.requests
    assert result.final_output == "1.08 it is"
    assert len(sent) == 2
    assert sent[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert sent[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "EURUSD?"}]},
        {
            "role": "assistant",
            "content": [
                *expected_blocks,
                {"type": "tool_use", "id": "tu_1", "name": "fx", "input": {"pair": "EURUSD"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "tu_1", "content": "1.08", "is_error": False}
            ],
        },
    ]


async def test_several_thinking_blocks_are_kept_as_provider_data() -> None:
    stream = [
        message_start(),
        *thinking_block(0, "first", "S1"),
        *redacted_block(1, "R1"),
        *text_block(2, "hi"),
        *message_end("end_turn"),
    ]
    events, error, _ = await run_against([(200, {}, stream)])
    assert error is None
    blocks = [
        {"type": "thinking", "thinking": "first", "signature": "S1"},
        {"type": "redacted_thinking", "data": "R1"},
    ]
    assert ProviderMetadata(data={"anthropic_thinking": blocks}) in events
    acc = TurnAccumulator()
    for event in events:
        acc.add(event)
    items = acc.items("a")
    body = body_of(ModelRequest(messages=[UserMessage.text("q"), *items, UserMessage.text("more")]))
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [*blocks, {"type": "text", "text": "hi"}],
    }


# --------------------------------------------------------------------------- stream reading


async def test_stream_events_usage_and_finish() -> None:
    stream = [
        message_start(input_tokens=12, cache_read_input_tokens=4000, cache_creation_input_tokens=7),
        sse({"type": "ping"}),
        *thinking_block(0, "hmm", "SIG"),
        *text_block(1, "Hel", "lo"),
        *tool_block(2, "toolu_1", "lookup", "", '{"q": ', '"x"}'),
        *message_end("tool_use", output_tokens=40, output_tokens_details={"thinking_tokens": 30}),
    ]
    events, error, sent = await run_against([(200, {}, stream)])
    assert error is None
    assert events == [
        ReasoningDelta(text="hmm"),
        ReasoningDelta(signature="SIG"),
        TokenDelta(text="Hel"),
        TokenDelta(text="lo"),
        ToolCallDelta(call_id="toolu_1", name="lookup", args_delta=""),
        ToolCallDelta(call_id="toolu_1", args_delta='{"q": '),
        ToolCallDelta(call_id="toolu_1", args_delta='"x"}'),
        UsageReported(
            usage=Usage(  # input: 12 uncached + 4000 read from + 7 written to the cache
                input_tokens=4019,
                output_tokens=40,
                cached_input_tokens=4000,
                cache_write_input_tokens=7,
                reasoning_tokens=30,
                total_tokens=4059,
            )
        ),
        Finish(
            reason=FinishReason.TOOL_CALLS,
            raw="tool_use",
            model="claude-sonnet-4-6",
            response_id="msg_synth",
        ),
    ]
    assert sent[0]["stream"] is True


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", FinishReason.STOP),
        ("stop_sequence", FinishReason.STOP),
        ("max_tokens", FinishReason.LENGTH),
        ("model_context_window_exceeded", FinishReason.LENGTH),
        ("refusal", FinishReason.REFUSAL),
        ("pause_turn", FinishReason.OTHER),
    ],
)
async def test_stop_reasons_map(raw: str, reason: FinishReason) -> None:
    stream = [message_start(), *text_block(0, "x"), *message_end(raw)]
    events, error, _ = await run_against([(200, {}, stream)])
    assert error is None
    assert events[-1] == Finish(
        reason=reason, raw=raw, model="claude-sonnet-4-6", response_id="msg_synth"
    )


async def test_message_delta_input_counters_replace_message_start() -> None:
    stream = [
        message_start(input_tokens=3),
        *text_block(0, "x"),
        *message_end("end_turn", output_tokens=9, input_tokens=5, cache_read_input_tokens=2),
    ]
    events, _, _ = await run_against([(200, {}, stream)])
    usage = next(e for e in events if isinstance(e, UsageReported)).usage
    # input: 5 uncached + 2 read from the cache
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (7, 9, 2)


async def test_non_streamed_message() -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "S"},
            {"type": "redacted_thinking", "data": "R"},
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {"a": "本"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 1},
    }
    events, error, sent = await run_against([(200, {}, message)], stream=False)
    assert error is None
    assert sent[0]["stream"] is False
    assert events[:4] == [
        ReasoningDelta(text="t", signature="S"),
        ReasoningDelta(redacted="R"),
        TokenDelta(text="Calling."),
        ToolCallDelta(call_id="toolu_9", name="f", args_delta='{"a": "本"}'),
    ]
    assert isinstance(events[4], ProviderMetadata)  # two thinking blocks, kept verbatim
    assert events[-1] == Finish(
        reason=FinishReason.TOOL_CALLS,
        raw="tool_use",
        model="claude-sonnet-4-6",
        response_id="msg_1",
    )


async def test_stream_without_stop_reason_is_a_transport_error() -> None:
    stream = [message_start(), *text_block(0, "partial")]
    events, error, _ = await run_against([(200, {}, stream)])
    assert isinstance(error, TransportError)
    # the usage of the cut-off turn is still reported (cost tracking), then the error
    assert events == [
        TokenDelta(text="partial"),
        UsageReported(usage=Usage(input_tokens=10, output_tokens=1, total_tokens=11)),
    ]


async def test_malformed_stream_data_is_a_transport_error() -> None:
    stream = [message_start(), "event: content_block_delta\ndata: {not json"]
    _, error, _ = await run_against([(200, {}, stream)])
    assert isinstance(error, TransportError)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({}, None),
    ],
)
async def test_429_is_rate_limited_with_retry_after(
    headers: dict[str, str], retry_after: float | None
) -> None:
    message = "Number of request tokens has exceeded your per-minute rate limit"
    _, error, _ = await run_against([(429, headers, error_body("rate_limit_error", message))])
    assert type(error) is RateLimited
    assert (error.retry_after, error.status_code, error.message) == (retry_after, 429, message)


@pytest.mark.parametrize(
    ("status", "kind", "message", "cls"),
    [
        (529, "overloaded_error", "Overloaded", ModelUnavailable),
        (500, "api_error", "Internal server error", ModelUnavailable),
        (503, "api_error", "Service unavailable", ModelUnavailable),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 208315 tokens > 200000 maximum",
            ContextLengthExceeded,
        ),
        (
            413,
            "request_too_large",
            "Request exceeds the maximum allowed size",
            ContextLengthExceeded,
        ),
        (404, "not_found_error", "model: claude-nope", ModelOther),
        (400, "invalid_request_error", "max_tokens: must be positive", ModelOther),
    ],
)
async def test_status_errors_map_uniformly(
    status: int, kind: str, message: str, cls: type[ModelError]
) -> None:
    for stream in (True, False):
        _, error, _ = await run_against([(status, {}, error_body(kind, message))], stream=stream)
        assert type(error) is cls
        assert (error.status_code, error.message) == (status, message)


async def test_401_names_the_key_variable() -> None:
    body = error_body("authentication_error", "invalid x-api-key")
    _, error, _ = await run_against([(401, {}, body)])
    assert type(error) is ModelOther
    assert error.status_code == 401
    assert "invalid x-api-key" in error.message
    assert "ANTHROPIC_API_KEY" in error.message


@pytest.mark.parametrize(
    ("kind", "cls"),
    [
        ("overloaded_error", ModelUnavailable),
        ("api_error", ModelUnavailable),
        ("rate_limit_error", RateLimited),
        ("invalid_request_error", ModelOther),
    ],
)
async def test_error_event_mid_stream(kind: str, cls: type[ModelError]) -> None:
    stream = [
        message_start(),
        *text_block(0, "Hi"),
        f"event: error\ndata: {json.dumps(error_body(kind, 'Overloaded'))}",
    ]
    events, error, _ = await run_against([(200, {}, stream)])
    assert events == [TokenDelta(text="Hi")]
    assert type(error) is cls
    assert error.message == "Overloaded"


async def test_connection_refused_is_a_transport_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = AnthropicModel.messages(
        "claude-sonnet-4-6", api_key="k", base_url=f"http://127.0.0.1:{port}"
    )
    with pytest.raises(TransportError):
        async for _ in model.invoke(HELLO, CancellationToken()):
            pass
    await model.aclose()


def test_api_keys_are_masked_in_messages() -> None:
    from helikon.providers.anthropic._errors import map_anthropic_error

    mapped = map_anthropic_error(RuntimeError("bad key sk-ant-api03-SECRETSECRETSECRET"))
    assert "SECRETSECRET" not in mapped.message
    assert isinstance(mapped, ModelOther)


# --------------------------------------------------------------------------- request side


def test_system_items_are_hoisted_in_order() -> None:
    history: list[Item] = [
        SystemMessage(content=[TextPart(text="Be brief.")]),
        UserMessage.text("hi"),
        AssistantMessage(content=[TextPart(text="Hello.")]),
        SystemMessage(content=[TextPart(text="Summary: greetings.")]),
        UserMessage(content=[TextPart(text=""), TextPart(text="again")]),
    ]
    body = body_of(ModelRequest(messages=history))
    assert body["system"] == [
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": "Summary: greetings."},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]


def test_tool_results_pair_with_their_tool_use_turn() -> None:
    image = ImagePart(source=MediaSource(type="base64", mime_type="image/jpeg", data="QUJD"))
    history: list[Item] = [
        UserMessage.text("go"),
        AssistantMessage(content=[TextPart(text="Two calls.")]),
        ToolCall(call_id="c1", name="f", args={"x": 1}),
        ToolCall(call_id="c2", name="g", args='{"y": 2}'),
        ToolResult(call_id="c1", content=[TextPart(text="本日 🚀")]),
        ToolResult(call_id="c2", content=[], is_error=True),
        UserMessage.text("and?"),
        ToolCall(call_id="c3", name="h", args=None),
        ToolResult(call_id="c3", content=[TextPart(text="see"), image]),
    ]
    body = body_of(ModelRequest(messages=history))
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Two calls."},
                {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}},
                {"type": "tool_use", "id": "c2", "name": "g", "input": {"y": 2}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": "本日 🚀",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": "(no output)",
                    "is_error": True,
                },
                {"type": "text", "text": "and?"},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c3", "name": "h", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c3",
                    "content": [
                        {"type": "text", "text": "see"},
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/jpeg",
                                "data": "QUJD",
                            },
                        },
                    ],
                    "is_error": False,
                }
            ],
        },
    ]


def test_repeated_and_invalid_call_ids_are_made_unique_and_valid() -> None:
    history: list[Item] = [
        UserMessage.text("status"),
        ToolCall(call_id="call_7", name="disk_usage", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text='{"pct":40}')]),
        ToolCall(call_id="call_7", name="queue_depth", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text='{"n":3}')]),
        ToolCall(call_id="fc.1/x", name="other", args={}),
        ToolResult(call_id="fc.1/x", content=[TextPart(text="ok")]),
    ]
    body = body_of(ModelRequest(messages=history))
    calls = [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    results = [
        (b["tool_use_id"], b["content"])
        for m in body["messages"]
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert calls == ["call_7", "call_7_2", "fc_1_x"]
    assert results == [("call_7", '{"pct":40}'), ("call_7_2", '{"n":3}'), ("fc_1_x", "ok")]
    assert body_of(ModelRequest(messages=history)) == body  # deterministic


def test_reasoning_parts_become_thinking_blocks_first() -> None:
    history: list[Item] = [
        UserMessage.text("q"),
        AssistantMessage(
            content=[
                TextPart(text="Answer."),
                ReasoningPart(text="unsigned, from another provider"),
                ReasoningPart(text="", signature="SIG2"),
                ReasoningPart(redacted="R9"),
                ToolUsePart(call_id="t1", name="f", args={"k": "v"}),
            ]
        ),
        ToolResult(call_id="t1", content=[TextPart(text="v!")]),
    ]
    body = body_of(ModelRequest(messages=history))
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "", "signature": "SIG2"},
        {"type": "redacted_thinking", "data": "R9"},
        {"type": "text", "text": "Answer."},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"k": "v"}},
    ]
    only_unsigned: list[Item] = [
        UserMessage.text("q"),
        AssistantMessage(content=[ReasoningPart(text="x")]),
    ]
    assert body_of(ModelRequest(messages=only_unsigned))["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]}
    ]


def test_images_and_audio() -> None:
    url = ImagePart(source=MediaSource(type="url", url="https://example.com/a.png"))
    body = body_of(ModelRequest(messages=[UserMessage(content=[TextPart(text="see"), url])]))
    assert body["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.com/a.png"},
    }
    audio = AudioPart(source=MediaSource(type="base64", mime_type="audio/wav", data="AAAA"))
    with pytest.raises(ModelOther, match="audio"):
        body_of(ModelRequest(messages=[UserMessage(content=[audio])]))


TOOLS = [
    ToolDef(name="lookup", description="Find.", parameters={"type": "object", "properties": {}}),
    ToolDef(name="calc", description="", parameters={"type": "object"}, strict=True),
]


def test_settings_translation() -> None:
    settings = ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=256,
        tool_choice=ToolChoice.tool("lookup"),
        parallel_tool_calls=False,
        response_format=JsonSchemaFormat(name="out", schema={"type": "object"}),
        previous_response_id="ignored",
        extra={"output_config": {"effort": "high"}, "metadata": {"user_id": "u1"}, "top_k": 5},
    )
    body = body_of(
        ModelRequest(messages=[UserMessage.text("hi")], tools=TOOLS, settings=settings),
        max_tokens=1000,
    )
    assert body == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "tools": [
            {"name": "lookup", "description": "Find.", "input_schema": TOOLS[0].parameters},
            {"name": "calc", "description": "", "input_schema": {"type": "object"}, "strict": True},
        ],
        "tool_choice": {"type": "tool", "name": "lookup", "disable_parallel_tool_use": True},
        "stream": True,
        "temperature": 0.2,
        "top_p": 0.9,
        "output_config": {
            "format": {"type": "json_schema", "schema": {"type": "object"}},
            "effort": "high",
        },
        "metadata": {"user_id": "u1"},
        "top_k": 5,
    }


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (ToolChoice("auto"), None, {"type": "auto"}),
        (ToolChoice("required"), None, {"type": "any"}),
        (ToolChoice("none"), False, {"type": "none"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        (None, None, None),
    ],
)
def test_tool_choice(choice: ToolChoice | None, parallel: bool | None, expected: Any) -> None:
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)
    body = body_of(ModelRequest(messages=[UserMessage.text("hi")], tools=TOOLS, settings=settings))
    assert body.get("tool_choice") == expected
    no_tools = body_of(ModelRequest(messages=[UserMessage.text("hi")], settings=settings))
    assert "tool_choice" not in no_tools and "tools" not in no_tools


def test_json_object_and_text_formats_send_nothing() -> None:
    for fmt in (JsonObjectFormat(), None):
        body = body_of(
            ModelRequest(
                messages=[UserMessage.text("hi")], settings=ModelSettings(response_format=fmt)
            )
        )
        assert "output_config" not in body


async def test_structured_output_round_trip() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    settings = ModelSettings(response_format=JsonSchemaFormat(name="City", schema=schema))
    request = ModelRequest(messages=[UserMessage.text("London?")], settings=settings)
    stream = [message_start(), *text_block(0, '{"city":', '"London"}'), *message_end("end_turn")]
    events, error, sent = await run_against([(200, {}, stream)], request)
    assert error is None
    assert sent[0]["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    assert json.loads("".join(e.text for e in events if isinstance(e, TokenDelta))) == {
        "city": "London"
    }


def test_cache_breakpoints() -> None:
    history: list[Item] = [
        SystemMessage(content=[TextPart(text="sys A")]),
        SystemMessage(content=[TextPart(text="sys B")]),
        UserMessage.text("one"),
        AssistantMessage(content=[TextPart(text="1")]),
        UserMessage.text("two"),
        ToolCall(call_id="c", name="lookup", args={}),
        ToolResult(call_id="c", content=[TextPart(text="r")]),
    ]
    request = ModelRequest(messages=history, tools=TOOLS)
    mark = {"type": "ephemeral"}
    body = body_of(request, cache=CacheStrategy())
    assert [b.get("cache_control") for b in body["system"]] == [None, mark]
    assert [t.get("cache_control") for t in body["tools"]] == [None, mark]
    marks = [[b.get("cache_control") for b in m["content"]] for m in body["messages"]]
    assert marks == [[None], [None], [mark], [None], [mark]]  # the last two user messages
    one_hour = body_of(
        request, cache=CacheStrategy(system=False, tools=False, last_turns=1, ttl="1h")
    )
    assert all("cache_control" not in b for b in one_hour["system"])
    assert one_hour["messages"][-1]["content"][-1]["cache_control"] == {
        "type": "ephemeral",
        "ttl": "1h",
    }
    assert sum("cache_control" in b for m in one_hour["messages"] for b in m["content"]) == 1
    assert "cache_control" not in json.dumps(body_of(request))


# --------------------------------------------------------------------------- construction


def test_settings_validation() -> None:
    with pytest.raises(ConfigError, match="1024"):
        ExtendedThinking(budget_tokens=512)
    with pytest.raises(ConfigError, match="4"):
        CacheStrategy(last_turns=3)
    with pytest.raises(ConfigError, match="last_turns"):
        CacheStrategy(last_turns=-1)
    with pytest.raises(ConfigError, match="ttl"):
        CacheStrategy(ttl="1d")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="below max_tokens"):
        AnthropicModel.messages(
            "claude-sonnet-4-6",
            api_key="k",
            max_tokens=2048,
            thinking=ExtendedThinking(budget_tokens=2048),
        )
    with pytest.raises(ConfigError, match="max_tokens"):
        AnthropicModel.messages("claude-sonnet-4-6", api_key="k", max_tokens=0)
    with pytest.raises(ConfigError, match="max_retries"):
        AnthropicModel.messages("claude-sonnet-4-6", api_key="k", max_retries=-1)


def test_missing_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModel.messages("claude-sonnet-4-6")


async def test_key_and_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with ReplayServer.from_responses([(200, {}, text_answer())], path=MESSAGES) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        model = AnthropicModel.messages("claude-sonnet-4-6")
        events = [e async for e in model.invoke(HELLO, CancellationToken())]
        await model.aclose()
        headers = server.captured[0].headers
    assert headers.get("x-api-key") == "env-key" or headers.get("authorization") == "Bearer env-key"
    assert events[0] == TokenDelta(text="ok")


def test_protocol_surface() -> None:
    model = AnthropicModel.messages("claude-sonnet-4-6", api_key="k")
    assert (model.provider, model.model) == ("anthropic", "claude-sonnet-4-6")
    caps = model.capabilities()
    assert caps.streaming and caps.tools and caps.parallel_tool_calls and caps.structured_output
    assert caps.prompt_caching and caps.vision
    assert not caps.reasoning and not caps.server_managed_state and not caps.audio
    thinking = AnthropicModel.messages(
        "claude-sonnet-4-6",
        api_key="k",
        thinking=ExtendedThinking(budget_tokens=1024),
        stream=False,
    )
    assert thinking.capabilities().reasoning and not thinking.capabilities().streaming
    assert thinking.thinking == ExtendedThinking(budget_tokens=1024)
    assert thinking.cache is None


# --------------------------------------------------------------------------- cancellation


async def test_cancel_mid_stream_ends_the_iterator_quickly() -> None:
    stream: list[Any] = [
        message_start(),
        *text_block(0, "Par"),
        Pause(10.0),
        *message_end("end_turn"),
    ]
    with ReplayServer.from_responses([(200, {}, stream)], path=MESSAGES) as server:
        model = AnthropicModel.messages("claude-sonnet-4-6", api_key="k", base_url=server.base_url)
        seen, elapsed = await cancel_after_first_token(model, HELLO)
        await model.aclose()
    assert seen == [TokenDelta(text="Par")]
    assert elapsed < 2.0


async def test_cancel_before_the_first_event() -> None:
    slow: list[Any] = [Pause(10.0), *text_answer()]
    with ReplayServer.from_responses([(200, {}, slow)], path=MESSAGES) as server:
        model = AnthropicModel.messages("claude-sonnet-4-6", api_key="k", base_url=server.base_url)
        cancel = CancellationToken()
        asyncio.get_running_loop().call_later(0.2, cancel.cancel)
        started = time.monotonic()
        seen = [e async for e in model.invoke(HELLO, cancel)]
        elapsed = time.monotonic() - started
        await model.aclose()
    assert seen == []
    assert elapsed < 2.0


async def test_already_cancelled_sends_nothing() -> None:
    with ReplayServer.from_responses([], path=MESSAGES) as server:
        model = AnthropicModel.messages("claude-sonnet-4-6", api_key="k", base_url=server.base_url)
        cancel = CancellationToken()
        cancel.cancel()
        seen = [e async for e in model.invoke(HELLO, cancel)]
        await model.aclose()
        assert server.requests == []
    assert seen == []

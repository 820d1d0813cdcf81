"""OpenAIModel (Chat Completions) against recorded and synthesized wire traffic.

Every Chat Completions recording in ``shared/wire/INDEX.json`` (OpenAI, plus the OpenRouter
error file) is replayed through ``OpenAIModel`` on a local ``ReplayServer``. For each used
interaction the conversation is rebuilt from the recorded request, sent through the adapter,
and both directions are checked: what the adapter extracted (text, tool calls with ids and
parsed arguments, raw finish reason, usage, error class/status/message) equals the index's
``expected``, and the request it sent matches the recorded request facts and messages.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Any, cast

import pytest
from tests.providers._wire import (
    WIRE,
    Outcome,
    assert_answered_by,
    assert_error,
    assert_error_codes,
    assert_extracted,
    assert_one_finish,
    assert_reasoning_in_output,
    assert_usage,
    cancel_after_first_token,
    cancel_on_first_event,
    collect,
    replaying,
    wire_entries,
)

from helikon.core.cancel import CancellationToken
from helikon.core.items import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Item,
    MediaSource,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from helikon.core.model import (
    Finish,
    FinishReason,
    JsonObjectFormat,
    JsonSchemaFormat,
    ModelRequest,
    ModelSettings,
    TokenDelta,
    ToolCallDelta,
    ToolChoice,
    ToolDef,
)
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
from helikon.providers.openai import OpenAIModel
from helikon.providers.openai.chat import build_chat_body
from helikon.testing.replay import Pause, ReplayServer

CHAT_ENTRIES = wire_entries(api="chat_completions", provider=("openai", "openrouter"))


# --------------------------------------------------------------------------- helpers


def _parts(content: Any) -> list[ContentPart]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(text=content)]
    return [TextPart(text=p["text"]) for p in content if p.get("type") == "text"]


def items_from_recorded(messages: list[dict[str, Any]]) -> list[Item]:
    """Rebuild helikon items from a recorded Chat Completions ``messages`` list."""
    items: list[Item] = []
    for m in messages:
        role = m["role"]
        if role in ("system", "developer"):
            items.append(SystemMessage(content=_parts(m.get("content"))))
        elif role == "user":
            items.append(UserMessage(content=_parts(m.get("content"))))
        elif role == "assistant":
            if m.get("content"):
                items.append(AssistantMessage(content=_parts(m["content"])))
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                items.append(
                    ToolCall(call_id=call["id"], name=fn["name"], args=json.loads(fn["arguments"]))
                )
        elif role == "tool":
            items.append(ToolResult(call_id=m["tool_call_id"], content=_parts(m["content"])))
        else:  # pragma: no cover - the corpus has no other roles
            raise AssertionError(f"unexpected role {role}")
    return items


def request_from_recorded(body: Mapping[str, Any]) -> ModelRequest:
    """The ModelRequest whose translation should reproduce the recorded request."""
    tools = [
        ToolDef(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"].get("parameters", {}),
            strict=t["function"].get("strict"),
        )
        for t in body.get("tools", [])
    ]
    fmt: JsonSchemaFormat | JsonObjectFormat | None = None
    rf = body.get("response_format")
    if rf and rf["type"] == "json_schema":
        js = rf["json_schema"]
        fmt = JsonSchemaFormat(name=js["name"], schema=js["schema"], strict=js.get("strict", True))
    elif rf and rf["type"] == "json_object":
        fmt = JsonObjectFormat()
    choice = body.get("tool_choice")
    extra = {k: body[k] for k in ("prompt_cache_key", "stop", "n") if k in body}
    settings = ModelSettings(
        max_output_tokens=body.get("max_completion_tokens"),
        tool_choice=ToolChoice(mode=cast(Any, choice)) if isinstance(choice, str) else None,
        response_format=fmt,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        extra=extra,
    )
    return ModelRequest(
        messages=items_from_recorded(body["messages"]), tools=tools, settings=settings
    )


def normalize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Compare messages by meaning: text parts joined, tool arguments parsed."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        n: dict[str, Any] = {"role": m["role"], "content": content or None}
        if m.get("tool_calls"):
            n["tool_calls"] = [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in m["tool_calls"]
            ]
        if "tool_call_id" in m:
            n["tool_call_id"] = m["tool_call_id"]
        out.append(n)
    return out


def api_base(server: ReplayServer, path: str) -> str:
    suffix = "/chat/completions"
    assert path.endswith(suffix)
    return server.base_url + path[: -len(suffix)]


ERROR_CLASSES: dict[int, type[ModelError]] = {
    400: ModelOther,
    429: RateLimited,
}


def check_sent_request(sent: dict[str, Any], facts: dict[str, Any], recorded: Any) -> None:
    assert sent["model"] == facts["model"]
    for key in (
        "stream",
        "stream_options",
        "tool_choice",
        "response_format",
        "max_completion_tokens",
        "prompt_cache_key",
    ):
        if key in facts:
            assert sent[key] == facts[key], key
    if "stream" not in facts:
        assert sent["stream"] is False
    if "tools" in facts:
        assert [t["function"]["name"] for t in sent["tools"]] == facts["tools"]
        assert [t["function"] for t in sent["tools"]] == [t["function"] for t in recorded["tools"]]
    else:
        assert "tools" not in sent
    assert len(sent["messages"]) == facts["n_input_items"]
    assert normalize_messages(sent["messages"]) == normalize_messages(recorded["messages"])


def check_outcome(out: Outcome, expected: dict[str, Any]) -> None:
    if "error" in expected:
        err = expected["error"]
        assert_error(out, err, ERROR_CLASSES[err["http_status"]])
        code = err.get("code")
        assert_error_codes(out, err.get("type"), None if code is None else str(code))
        return
    assert_usage(out, expected["usage"])
    assert_reasoning_in_output(out.usages[0].usage, expected["usage"])
    assert_extracted(out, expected)
    if expected.get("refusal"):
        # A refusal with no content surfaces as Refused carrying the refusal text; the raw
        # finish reason ("stop") is not reported because the stream ends with the error.
        assert isinstance(out.error, Refused)
        assert out.error.message == expected["refusal"]
        assert out.finishes == []
        return
    assert out.error is None, out.error
    assert_one_finish(out, expected["finish_reason"])
    assert_answered_by(out, expected["model"], expected["response_id"])


# --------------------------------------------------------------------------- recordings


def test_index_lists_the_chat_recordings() -> None:
    files = {e["file"] for e in CHAT_ENTRIES}
    assert "openrouter/chat_error_429.yaml" in files
    assert len(files) == 10


@pytest.mark.parametrize("entry", CHAT_ENTRIES, ids=[e["file"] for e in CHAT_ENTRIES])
async def test_recording_replays_through_openai_model(entry: dict[str, Any]) -> None:
    with replaying(entry) as (server, exchanges):
        for turn in exchanges:
            facts, body = turn.facts, turn.body
            assert isinstance(body, dict)
            model = OpenAIModel.chat(
                facts["request"]["model"],
                api_key="test-key",
                base_url=api_base(server, facts["path"]),
                stream=bool(facts["stream"]),
            )
            try:
                out = await collect(model, request_from_recorded(body))
            finally:
                await model.aclose()
            check_outcome(out, facts["expected"])
            sent = server.requests[turn.k]
            check_sent_request(sent, facts["request"], body)


async def test_streamed_tool_call_deltas_carry_id_on_every_fragment() -> None:
    path = WIRE / "openai/chat_tool_loop_stream.yaml"
    with ReplayServer(path, interactions=[0]) as server:
        model = OpenAIModel.chat("gpt-4o-mini", api_key="k", base_url=server.base_url + "/v1")
        out = await collect(model, ModelRequest(messages=[UserMessage.text("capital?")]))
        await model.aclose()
    deltas = [e for e in out.events if isinstance(e, ToolCallDelta)]
    assert len(deltas) == 6  # name-only first fragment + 5 argument fragments
    assert {d.call_id for d in deltas} == {"call_ZR5UUuTt3pf61kjwAJIYdVMj"}
    assert [d.name for d in deltas] == ["get_capital"] + [None] * 5
    assert "".join(d.args_delta for d in deltas) == '{"country":"UK"}'
    assert [(f.reason, f.raw) for f in out.finishes] == [(FinishReason.TOOL_CALLS, "tool_calls")]


async def test_parallel_calls_keep_their_own_ids() -> None:
    path = WIRE / "openai/chat_parallel_tools_stream.yaml"
    with ReplayServer(path, interactions=[0]) as server:
        model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        out = await collect(model, ModelRequest(messages=[UserMessage.text("secrets")]))
        await model.aclose()
    ids = [e.call_id for e in out.events if isinstance(e, ToolCallDelta) and e.name]
    assert ids == ["call_M26z19sncd7b4LBgzKRRbaUE", "call_KPXe5NX7IcKkaBUhc6dto2QV"]


# --------------------------------------------------------------------------- synthesized

SYNTH_ANSWER = {"model": "gpt-4o", "response_id": "chatcmpl-synth"}
"""What the synthesized answers below name as the answering model and response id."""


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-synth",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _usage_chunk(prompt: int = 5, completion: int = 2) -> dict[str, Any]:
    return {
        "id": "chatcmpl-synth",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-synth",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }


def _error(message: str, type_: str, code: str | None, param: str | None = None) -> Any:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


HELLO = ModelRequest(messages=[UserMessage.text("hello")])


async def _run_against(responses: list[Any], request: ModelRequest = HELLO, **kw: Any) -> Any:
    with ReplayServer.from_responses(responses) as server:
        model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=server.base_url + "/v1", **kw)
        try:
            out = await collect(model, request)
        finally:
            await model.aclose()
        return out, server.requests


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({}, None),
    ],
)
async def test_429_maps_to_rate_limited_with_retry_after(
    headers: dict[str, str], retry_after: float | None
) -> None:
    message = "Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3."
    body = _error(message, "requests", "rate_limit_exceeded")
    out, _ = await _run_against([(429, headers, body)])
    assert type(out.error) is RateLimited
    assert out.error.retry_after == retry_after
    assert out.error.status_code == 429
    assert out.error.message == message


async def test_400_context_length_exceeded() -> None:
    message = (
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130412 tokens. Please reduce the length of the messages."
    )
    body = _error(message, "invalid_request_error", "context_length_exceeded", "messages")
    out, _ = await _run_against([(400, {}, body)], stream=False)
    assert type(out.error) is ContextLengthExceeded
    assert out.error.status_code == 400
    assert out.error.message == message


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_server_errors_map_to_unavailable(status: int) -> None:
    body = _error("The server is overloaded. Please try again later.", "server_error", None)
    out, _ = await _run_against([(status, {}, body)])
    assert type(out.error) is ModelUnavailable
    assert out.error.status_code == status
    assert out.error.message == "The server is overloaded. Please try again later."


async def test_plain_text_503_keeps_the_body_as_message() -> None:
    out, _ = await _run_against([(503, {"content-type": "text/plain"}, b"upstream connect error")])
    assert type(out.error) is ModelUnavailable
    assert out.error.message == "upstream connect error"


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_name_the_key_variable(status: int) -> None:
    msg = "Incorrect API key provided: sk-abcd1234567890abcdef. You can find your API key at ..."
    out, _ = await _run_against([(status, {}, _error(msg, "invalid_request_error", "x"))])
    assert type(out.error) is ModelOther
    assert out.error.status_code == status
    assert "OPENAI_API_KEY" in out.error.message
    assert "sk-abcd1234567890abcdef" not in out.error.message
    assert "sk-abcd***" in out.error.message


async def test_422_is_other_with_provider_message() -> None:
    out, _ = await _run_against([(422, {}, _error("bad schema", "invalid_request_error", None))])
    assert type(out.error) is ModelOther
    assert (out.error.status_code, out.error.message) == (422, "bad schema")


async def test_connection_refused_is_transport_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
    out = await collect(model, HELLO)
    await model.aclose()
    assert type(out.error) is TransportError
    assert isinstance(out.error, ConnectionError)
    assert out.events == []


async def test_stream_cut_off_before_finish_is_transport_error() -> None:
    events = [_chunk({"role": "assistant", "content": "Hal"})]  # no finish, no [DONE]
    out, _ = await _run_against([(200, {}, events)])
    assert type(out.error) is TransportError
    assert out.text == "Hal"
    assert out.finishes == []


async def test_error_event_mid_stream() -> None:
    events: list[Any] = [
        _chunk({"content": "a"}),
        {"error": {"message": "The server had an error", "type": "server_error"}},
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert type(out.error) is ModelUnavailable
    assert out.error.message == "The server had an error"


async def test_exhausted_replay_fails_loudly() -> None:
    with ReplayServer.from_responses([]) as server:
        model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        out = await collect(model, HELLO)
        await model.aclose()
        assert len(server.unmatched) == 1
    assert out.error is not None
    assert out.error.status_code == 599
    assert "no recorded response left for POST /v1/chat/completions" in out.error.message


async def test_refusal_with_content_finishes_with_refusal() -> None:
    body = _completion({"role": "assistant", "content": "Partly: no.", "refusal": "I can't."})
    out, _ = await _run_against([(200, {}, body)], stream=False)
    assert out.error is None
    assert out.text == "Partly: no."
    assert out.finishes == [Finish(reason=FinishReason.REFUSAL, raw="stop", **SYNTH_ANSWER)]


async def test_stop_with_tool_calls_is_reported_as_tool_calls() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "stop")
    out, _ = await _run_against([(200, {}, body)], stream=False)
    assert out.tool_calls == [{"id": "c1", "name": "f", "arguments": {}}]
    assert out.finishes == [Finish(reason=FinishReason.TOOL_CALLS, raw="stop", **SYNTH_ANSWER)]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("length", FinishReason.LENGTH),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("function_call", FinishReason.TOOL_CALLS),
        ("something_new", FinishReason.OTHER),
    ],
)
async def test_finish_reason_mapping(raw: str, reason: FinishReason) -> None:
    events = [_chunk({"content": "x"}), _chunk({}, raw), _usage_chunk(), "data: [DONE]"]
    out, _ = await _run_against([(200, {}, events)])
    assert out.finishes == [Finish(reason=reason, raw=raw, **SYNTH_ANSWER)]
    assert out.usages[0].usage.total_tokens == 7


async def test_reasoning_content_from_compatible_servers() -> None:
    events = [
        _chunk({"reasoning_content": "think "}),
        _chunk({"content": "answer"}, "stop"),
        "data: [DONE]",
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert [e.type for e in out.events] == ["reasoning_delta", "token_delta", "finish"]


async def test_cached_and_reasoning_tokens_are_reported() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "total_tokens": 150,
        "prompt_tokens_details": {"cached_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 32},
    }
    body = {**_completion({"role": "assistant", "content": "ok"}), "usage": usage}
    out, _ = await _run_against([(200, {}, body)], stream=False)
    u = out.usages[0].usage
    assert (u.input_tokens, u.output_tokens, u.cached_input_tokens, u.reasoning_tokens) == (
        100,
        50,
        64,
        32,
    )
    assert u.total_tokens == 150


# --------------------------------------------------------------------------- request side


def _tool_history(result_parts: list[ContentPart], args: Any) -> ModelRequest:
    return ModelRequest(
        messages=[
            UserMessage.text("price?"),
            ToolCall(call_id="c1", name="notice", args=args),
            ToolResult(call_id="c1", content=result_parts),
        ]
    )


def _no_escapes(text: str) -> None:
    assert "\\u" not in text
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


async def test_br07_non_ascii_tool_output_stays_characters() -> None:
    notice = "本日の価格は ¥1,200 🚀 — 完了"
    request = _tool_history([TextPart(text=notice)], {"city": "東京"})
    done: list[Any] = [_chunk({"content": "ok"}, "stop"), "data: [DONE]"]
    _, requests = await _run_against([(200, {}, done)], request)
    tool_msg = requests[0]["messages"][-1]
    assert tool_msg == {"role": "tool", "tool_call_id": "c1", "content": notice}
    assert "\U0001f680" in tool_msg["content"]  # one code point, not a surrogate pair
    _no_escapes(tool_msg["content"])
    args = requests[0]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert args == '{"city":"東京"}'


async def test_br07_structured_and_non_text_tool_output() -> None:
    as_json = json.dumps({"note": "本日 🚀"}, ensure_ascii=False)
    image = ImagePart(source=MediaSource(type="url", url="https://example.com/a.png"))
    model = OpenAIModel.chat("gpt-4o", api_key="k")
    body = model.request_body(_tool_history([TextPart(text=as_json)], {}))
    assert body["messages"][-1]["content"] == '{"note": "本日 🚀"}'
    mixed = model.request_body(_tool_history([TextPart(text="本日 🚀"), image], {}))
    content = mixed["messages"][-1]["content"]
    _no_escapes(content)
    assert json.loads(content) == [
        {"type": "text", "text": "本日 🚀"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
    ]
    assert "本日 🚀" in content


def _ids(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return calls, results


def test_br08_repeated_ids_across_turns_are_rewritten_consistently() -> None:
    history: list[Item] = [
        UserMessage.text("status"),
        ToolCall(call_id="call_7", name="disk_usage", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text='{"pct":40}')]),
        ToolCall(call_id="call_7", name="queue_depth", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text='{"n":3}')]),
    ]
    model = OpenAIModel.chat("gpt-4o", api_key="k")
    body = model.request_body(ModelRequest(messages=history))
    assert _ids(body) == (["call_7", "call_7_2"], ["call_7", "call_7_2"])
    pairs = [
        (
            m["role"],
            m.get("tool_calls", [{}])[0].get("function", {}).get("name"),
            m.get("tool_call_id"),
            m["content"],
        )
        for m in body["messages"][1:]
    ]
    assert pairs == [
        ("assistant", "disk_usage", None, None),
        ("tool", None, "call_7", '{"pct":40}'),
        ("assistant", "queue_depth", None, None),
        ("tool", None, "call_7_2", '{"n":3}'),
    ]
    assert model.request_body(ModelRequest(messages=history)) == body  # deterministic


def test_br08_repeated_ids_within_one_turn_and_collisions() -> None:
    history: list[Item] = [
        UserMessage.text("go"),
        ToolCall(call_id="a", name="f", args={}),
        ToolCall(call_id="a", name="g", args={}),
        ToolResult(call_id="a", content=[TextPart(text="F")]),
        ToolResult(call_id="a", content=[TextPart(text="G")]),
        ToolCall(call_id="a_2", name="h", args={}),
        ToolResult(call_id="a_2", content=[TextPart(text="H")]),
    ]
    body = OpenAIModel.chat("gpt-4o", api_key="k").request_body(ModelRequest(messages=history))
    calls, results = _ids(body)
    assert calls == ["a", "a_3", "a_2"]
    assert results == ["a", "a_3", "a_2"]
    assert len(set(calls)) == len(calls)
    assert [m["content"] for m in body["messages"] if m["role"] == "tool"] == ["F", "G", "H"]


async def test_br08_rewritten_ids_reach_the_wire() -> None:
    history: list[Item] = [
        UserMessage.text("status"),
        ToolCall(call_id="call_7", name="disk_usage", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text="40")]),
        ToolCall(call_id="call_7", name="queue_depth", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text="3")]),
    ]
    done: list[Any] = [_chunk({"content": "ok"}, "stop"), "data: [DONE]"]
    _, requests = await _run_against([(200, {}, done)], ModelRequest(messages=history))
    assert _ids(requests[0]) == (["call_7", "call_7_2"], ["call_7", "call_7_2"])


def test_message_translation() -> None:
    image = ImagePart(source=MediaSource(type="base64", mime_type="image/jpeg", data="QUJD"))
    history: list[Item] = [
        SystemMessage(content=[TextPart(text="Be brief.")]),
        UserMessage(content=[TextPart(text="What is this?"), image]),
        AssistantMessage(content=[TextPart(text="Let me look.")]),
        ToolCall(call_id="c1", name="lookup", args={"q": "x"}),
        ToolResult(call_id="c1", content=[TextPart(text="a cat")]),
        AssistantMessage(content=[TextPart(text="A cat.")]),
        SystemMessage(content=[TextPart(text="Summary: cats.")]),
        UserMessage.text("thanks"),
    ]
    body = OpenAIModel.chat("gpt-4o", api_key="k").request_body(ModelRequest(messages=history))
    assert body["messages"] == [
        {"role": "system", "content": "Be brief.\n\nSummary: cats."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q":"x"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a cat"},
        {"role": "assistant", "content": "A cat."},
        {"role": "user", "content": "thanks"},
    ]


QSCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
}
QSTRICT: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
    "additionalProperties": False,
}


def test_settings_and_tools_translation() -> None:
    tools = [
        ToolDef(name="lookup", description="Find.", parameters=QSCHEMA, strict=True),
        ToolDef(name="plain", description="", parameters={"type": "object"}),
    ]
    settings = ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=256,
        tool_choice=ToolChoice.tool("lookup"),
        parallel_tool_calls=False,
        response_format=JsonSchemaFormat(name="out", schema=QSCHEMA, strict=True),
        previous_response_id="resp_ignored",
        extra={"seed": 7, "temperature": 0.3},
    )
    model = OpenAIModel.chat("gpt-4o", api_key="k")
    body = model.request_body(
        ModelRequest(messages=[UserMessage.text("hi")], tools=tools, settings=settings)
    )
    assert body == {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Find.",
                    "parameters": QSTRICT,
                    "strict": True,
                },
            },
            {
                "type": "function",
                "function": {"name": "plain", "description": "", "parameters": {"type": "object"}},
            },
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.3,
        "top_p": 0.9,
        "max_completion_tokens": 256,
        "tool_choice": {"type": "function", "function": {"name": "lookup"}},
        "parallel_tool_calls": False,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "out", "schema": QSTRICT, "strict": True},
        },
        "seed": 7,
    }
    no_tools = ModelSettings(
        tool_choice=ToolChoice("required"),
        parallel_tool_calls=True,
        response_format=JsonObjectFormat(),
    )
    plain = OpenAIModel.chat("gpt-4o", api_key="k", stream=False).request_body(
        ModelRequest(messages=[UserMessage.text("hi")], settings=no_tools)
    )
    assert plain == {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
        "response_format": {"type": "json_object"},
    }


# --------------------------------------------------------------------------- construction


def test_missing_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIModel.chat("gpt-4o")


async def test_key_and_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    done: list[Any] = [_chunk({"content": "ok"}, "stop"), "data: [DONE]"]
    with ReplayServer.from_responses([(200, {}, done)]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "env-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/v1")
        model = OpenAIModel.chat("gpt-4o")
        out = await collect(model, HELLO)
        await model.aclose()
        assert server.captured[0].headers["authorization"] == "Bearer env-key"
    assert out.text == "ok"


def test_protocol_surface() -> None:
    model = OpenAIModel.chat("gpt-5-mini", api_key="k")
    assert (model.provider, model.model, model.api) == ("openai", "gpt-5-mini", "chat_completions")
    caps = model.capabilities()
    assert caps.streaming and caps.tools and caps.parallel_tool_calls and caps.structured_output
    assert not caps.server_managed_state and not caps.reasoning
    assert not OpenAIModel.chat("gpt-5-mini", api_key="k", stream=False).capabilities().streaming


# --------------------------------------------------------------------------- cancellation


async def test_cancel_mid_stream_ends_the_iterator_quickly() -> None:
    events: list[Any] = [
        _chunk({"content": "Par"}),
        Pause(10.0),
        _chunk({"content": "tial"}, "stop"),
    ]
    with ReplayServer.from_responses([(200, {}, events)]) as server:
        model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        seen, elapsed = await cancel_after_first_token(model, HELLO)
        await model.aclose()
    assert seen == [TokenDelta(text="Par")]
    assert elapsed < 2.0


async def test_cancel_between_chunks_stops_without_finish() -> None:
    events: list[Any] = [
        _chunk({"content": "a"}),
        _chunk({"content": "b"}),
        _chunk({}, "stop"),
        "data: [DONE]",
    ]
    with ReplayServer.from_responses([(200, {}, events)]) as server:
        model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        seen = await cancel_on_first_event(model, HELLO)
        await model.aclose()
    assert seen == [TokenDelta(text="a")]


async def test_already_cancelled_sends_nothing() -> None:
    with ReplayServer.from_responses([]) as server:
        model = OpenAIModel.chat("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        cancel = CancellationToken()
        cancel.cancel()
        out = await collect(model, HELLO, cancel)
        await model.aclose()
        assert server.requests == []
    assert out.events == [] and out.error is None


def test_strict_falls_back_to_the_original_schema_when_not_expressible() -> None:
    """A free-form object cannot be strict: the original schema goes with strict: false."""
    free = {"type": "object", "properties": {"meta": {"type": "object"}}, "required": ["meta"]}
    request = ModelRequest(
        messages=[UserMessage(content=[TextPart(text="hi")])],
        settings=ModelSettings(response_format=JsonSchemaFormat(name="t", schema=free)),
    )
    body = build_chat_body("gpt-5-mini", request, stream=True)
    assert body["response_format"]["json_schema"] == {"name": "t", "schema": free, "strict": False}

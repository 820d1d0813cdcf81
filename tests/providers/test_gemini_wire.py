"""GeminiModel against recorded and synthesized Gemini wire traffic.

Every Gemini recording in ``shared/wire/INDEX.json`` is replayed through ``GeminiModel`` on a
local ``ReplayServer``. For each used model interaction the conversation is rebuilt from the
recorded request, sent through the adapter, and both directions are checked: what the
adapter extracted (text, tool calls, raw finish reason, usage, thought text, thought-signature
count, blocked safety categories, error class/status/message) equals the index's
``expected``, and the body it sent equals the recorded body (compared by meaning: a
``functionResponse``'s single-key wrapper, ``return_value`` or ``output``, is compared by its
value, and thought signatures by their decoded bytes, since the recording SDK re-encodes them
URL-safe).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Mapping
from typing import Any, Literal

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
    replaying,
    wire_entries,
)
from tests.providers._wire import collect as collect_outcome

from helikon.core.cancel import CancellationToken
from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
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
    TokenDelta,
    ToolCallDelta,
    ToolChoice,
    ToolDef,
)
from helikon.core.turn import TurnAccumulator
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
from helikon.providers.gemini import GeminiModel, build_gemini_body
from helikon.providers.gemini._request import (
    CALL_ID_KEY,
    SIGNATURE_KEY,
    TEXT_SIGNATURE_KEY,
    upper_types,
)
from helikon.providers.gemini._response import SAFETY_KEY
from helikon.schema import gemini as sanitize
from helikon.testing.replay import Pause, ReplayServer, load_cassette

STREAM_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
WHOLE_PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


GEMINI_ENTRIES = wire_entries(provider="gemini")


# --------------------------------------------------------------------------- helpers


class GeminiOutcome(Outcome):
    """What one invoke produced; Gemini sends each tool call whole, in one delta."""

    @property
    def reasoning(self) -> str:
        return self.reasoning_text

    @property
    def calls(self) -> list[ToolCallDelta]:
        return [e for e in self.events if isinstance(e, ToolCallDelta)]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [{"name": c.name, "arguments": json.loads(c.args_delta)} for c in self.calls]

    @property
    def signatures(self) -> list[str]:
        return [
            m.data[k]
            for m in self.metadata
            for k in (SIGNATURE_KEY, TEXT_SIGNATURE_KEY)
            if k in m.data
        ]


async def collect(
    model: GeminiModel, request: ModelRequest, cancel: CancellationToken | None = None
) -> GeminiOutcome:
    out: GeminiOutcome = await collect_outcome(model, request, cancel, GeminiOutcome)
    return out


def _lower_types(schema: Any) -> Any:
    """A recorded (upper-case) Gemini schema as the JSON Schema a tool would declare."""
    if isinstance(schema, dict):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def _response_text(response: Mapping[str, Any]) -> str:
    (value,) = response.values()
    return value if isinstance(value, str) else json.dumps(value)


def _user_parts(parts: list[dict[str, Any]]) -> list[ContentPart]:
    out: list[ContentPart] = []
    for p in parts:
        if "text" in p:
            out.append(TextPart(text=p["text"]))
        elif "inlineData" in p:
            data = p["inlineData"]
            source = MediaSource(type="base64", mime_type=data["mimeType"], data=data["data"])
            is_audio = data["mimeType"].startswith("audio/")
            # helikon has no video part; an inline video rides as a media part with its mime
            out.append(AudioPart(source=source) if is_audio else ImagePart(source=source))
    return out


def items_from_recorded(body: Mapping[str, Any]) -> list[Item]:
    """Rebuild helikon items from a recorded Gemini request body."""
    items: list[Item] = []
    system = body.get("systemInstruction")
    if system:
        items.append(SystemMessage(content=[TextPart(text=p["text"]) for p in system["parts"]]))
    previous_calls: list[ToolCall] = []
    n = 0
    for content in body["contents"]:
        parts = content["parts"]
        if content["role"] == "model":
            previous_calls = []
            texts = [p for p in parts if "text" in p]
            if texts:
                data = (
                    {TEXT_SIGNATURE_KEY: texts[0]["thoughtSignature"]}
                    if ("thoughtSignature" in texts[0])
                    else None
                )
                items.append(
                    AssistantMessage(
                        content=[TextPart(text=p["text"]) for p in texts], provider_data=data
                    )
                )
            for p in parts:
                if "functionCall" not in p:
                    continue
                fc = p["functionCall"]
                extra: dict[str, Any] = {}
                if "id" in fc:
                    extra[CALL_ID_KEY] = fc["id"]
                if "thoughtSignature" in p:
                    extra[SIGNATURE_KEY] = p["thoughtSignature"]
                n += 1
                call = ToolCall(
                    call_id=f"rec_{n}",
                    name=fc["name"],
                    args=fc["args"],
                    provider_data=extra or None,
                )
                previous_calls.append(call)
                items.append(call)
        else:
            responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
            for k, fr in enumerate(responses):
                call = previous_calls[k]
                assert call.name == fr["name"]
                items.append(
                    ToolResult(
                        call_id=call.call_id,
                        content=[TextPart(text=_response_text(fr["response"]))],
                        is_error="error" in fr["response"],
                    )
                )
            rest = _user_parts([p for p in parts if "functionResponse" not in p])
            if rest:
                items.append(UserMessage(content=rest))
    return items


_GENERATION_SETTINGS = {"temperature", "topP", "maxOutputTokens"}


def request_from_recorded(body: Mapping[str, Any]) -> tuple[ModelRequest, str]:
    """The ModelRequest (and schema mode) whose translation should reproduce ``body``."""
    tools = [
        ToolDef(
            name=d["name"],
            description=d.get("description", ""),
            parameters=_lower_types(d.get("parameters", {})),
        )
        for group in body.get("tools", [])
        for d in group.get("functionDeclarations", [])
    ]
    generation = dict(body.get("generationConfig", {}))
    mode = "openapi"
    fmt: JsonSchemaFormat | JsonObjectFormat | None = None
    if "responseJsonSchema" in generation:
        mode = "json_schema"
        fmt = JsonSchemaFormat(name="output", schema=generation.pop("responseJsonSchema"))
        assert generation.pop("responseMimeType") == "application/json"
    extra = {k: v for k, v in generation.items() if k not in _GENERATION_SETTINGS}
    extra.update(
        {k: v for k, v in body.items() if k not in ("contents", "systemInstruction", "tools")}
    )
    extra.pop("generationConfig")
    settings = ModelSettings(
        temperature=generation.get("temperature"),
        top_p=generation.get("topP"),
        max_output_tokens=generation.get("maxOutputTokens"),
        response_format=fmt,
        extra=extra,
    )
    return ModelRequest(messages=items_from_recorded(body), tools=tools, settings=settings), mode


def _signature_bytes(value: str) -> bytes:
    return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_"))


def normalize_body(body: Any) -> Any:
    """Compare bodies by meaning (see the module docstring)."""
    if isinstance(body, list):
        return [normalize_body(v) for v in body]
    if not isinstance(body, dict):
        return body
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key == "thoughtSignature":
            out[key] = _signature_bytes(value)
        elif key == "functionResponse":
            fr = dict(value)
            fr["response"] = _response_text(fr["response"])
            out[key] = fr
        else:
            out[key] = normalize_body(value)
    return out


def check_outcome(out: GeminiOutcome, expected: dict[str, Any]) -> None:
    if "error" in expected:
        assert_error(out, expected["error"], RateLimited)
        assert out.error.retry_after is None  # neither RetryInfo nor Retry-After recorded
        assert_error_codes(out, None, expected["error"]["status"])
        return
    assert out.error is None, out.error
    # Gemini counts thoughts apart from candidatesTokenCount; helikon's output includes them
    as_sent = {k: v for k, v in expected["usage"].items() if k != "output_tokens"}
    assert_usage(out, as_sent)
    assert_reasoning_in_output(out.usages[0].usage, expected["usage"], reported_apart=True)
    assert_extracted(out, expected)
    ids = [c.call_id for c in out.calls]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("gcall_") for i in ids)
    assert out.reasoning == "".join(r["text"] for r in expected.get("reasoning", []))
    assert len(out.signatures) == expected.get("thought_signatures", 0)
    blocked = [m.data[SAFETY_KEY] for m in out.metadata if SAFETY_KEY in m.data]
    want_blocked = expected.get("safety_blocked_categories")
    assert blocked == ([want_blocked] if want_blocked else [])
    finish = assert_one_finish(out, expected["finish_reason"])
    assert_answered_by(out, expected["model"], expected["response_id"])
    want = FinishReason.TOOL_CALLS if expected["tool_calls"] else FinishReason.STOP
    if expected["finish_reason"] == "SAFETY":
        want = FinishReason.CONTENT_FILTER
    assert finish.reason is want


# --------------------------------------------------------------------------- recordings


def test_index_lists_the_gemini_recordings() -> None:
    assert len(GEMINI_ENTRIES) == 8
    assert {e["api"] for e in GEMINI_ENTRIES} == {"gemini"}


def _model_interactions(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The used interactions that call a model (cache management calls are not the model's)."""
    facts = {i["index"]: i for i in entry["interactions"]}
    return [facts[i] for i in entry["interactions_used"] if facts[i]["api"] == "gemini"]


@pytest.mark.parametrize("entry", GEMINI_ENTRIES, ids=[e["file"] for e in GEMINI_ENTRIES])
async def test_recording_replays_through_gemini_model(entry: dict[str, Any]) -> None:
    used = [i["index"] for i in _model_interactions(entry)]
    with replaying(entry, used) as (server, exchanges):
        for turn in exchanges:
            facts, body = turn.facts, turn.body
            assert isinstance(body, dict)
            request, mode = request_from_recorded(body)
            model_id = facts["path"].split("/models/")[1].split(":")[0]
            model = GeminiModel.developer(
                model_id,
                api_key="test-key",
                base_url=server.base_url,
                stream=bool(facts["stream"]),
                schema_mode="json_schema" if mode == "json_schema" else "openapi",
            )
            try:
                out = await collect(model, request)
            finally:
                await model.aclose()
            check_outcome(out, facts["expected"])
            captured = server.captured[turn.k]
            assert captured.path == facts["path"].split("?")[0]
            assert captured.query == ("alt=sse" if facts["stream"] else "")
            assert captured.headers["x-goog-api-key"] == "test-key"
            assert normalize_body(captured.body) == normalize_body(body)


def test_recorded_tool_schemas_round_trip_exactly() -> None:
    """A tool schema as @tool writes it reaches the wire exactly as the SDK recorded it."""
    rec = load_cassette(WIRE / "gemini/gemini_tool_loop_stream.yaml", [0])[0]
    body = rec.request_body
    request, _ = request_from_recorded(body)
    closed = [
        ToolDef(t.name, t.description, {**t.parameters, "additionalProperties": False})
        for t in request.tools
    ]
    sent = build_gemini_body(ModelRequest(messages=request.messages, tools=closed))
    assert sent["tools"] == body["tools"]


async def test_json_schema_recording_in_openapi_mode_sends_a_sanitized_response_schema() -> None:
    path = WIRE / "gemini/gemini_json_schema.yaml"
    rec = load_cassette(path, [0])[0]
    request, _ = request_from_recorded(rec.request_body)
    with ReplayServer(path) as server:
        model = GeminiModel.developer(
            "gemini-2.5-flash", api_key="k", base_url=server.base_url, stream=False
        )
        out = await collect(model, request)
        await model.aclose()
        sent = server.requests[0]
    assert out.text == '{"pet":{"pet_type":"cat","meow_volume":5}}'
    generation = sent["generationConfig"]
    assert "responseJsonSchema" not in generation
    assert generation["responseMimeType"] == "application/json"
    schema = rec.request_body["generationConfig"]["responseJsonSchema"]
    assert generation["responseSchema"] == upper_types(sanitize(schema))
    text = json.dumps(generation["responseSchema"])
    for banned in ("$ref", "$defs", "oneOf", "additionalProperties", '"default"'):
        assert banned not in text
    assert generation["responseSchema"]["properties"]["pet"]["anyOf"][0]["type"] == "OBJECT"


async def test_parallel_calls_carry_the_signature_into_the_next_request() -> None:
    """Turn 1's answer, folded into items, yields turn 2's recorded request."""
    path = WIRE / "gemini/gemini_parallel_tools.yaml"
    recorded = load_cassette(path)
    first, _ = request_from_recorded(recorded[0].request_body)
    with ReplayServer(path) as server:
        model = GeminiModel.developer(
            "gemini-2.5-flash", api_key="k", base_url=server.base_url, stream=False
        )
        out = await collect(model, first)
        acc = TurnAccumulator()
        for event in out.events:
            acc.add(event)
        calls = [i for i in acc.items("agent") if isinstance(i, ToolCall)]
        assert len(calls) == len(acc.items("agent")) == 2
        assert calls[0].provider_data is not None
        assert SIGNATURE_KEY in calls[0].provider_data
        assert calls[1].provider_data is None
        secrets = {"mellon": "Welcome to Moria!", "radiance": "Life before Death"}
        results: list[Item] = [
            ToolResult(call_id=c.call_id, content=[TextPart(text=secrets[c.args["password"]])])
            for c in calls
        ]
        second = ModelRequest(messages=[*first.messages, *calls, *results], tools=first.tools)
        out2 = await collect(model, second)
        await model.aclose()
        sent = server.requests[1]
    assert out2.text.startswith("The secrets have been retrieved.")
    assert normalize_body(sent) == normalize_body(recorded[1].request_body)


async def test_thought_signature_on_text_goes_back_on_the_text_part() -> None:
    path = WIRE / "gemini/gemini_thinking_stream.yaml"
    with ReplayServer(path) as server:
        model = GeminiModel.developer("gemini-2.5-pro", api_key="k", base_url=server.base_url)
        out = await collect(model, ModelRequest(messages=[UserMessage.text("cross?")]))
        await model.aclose()
    acc = TurnAccumulator()
    for event in out.events:
        acc.add(event)
    (message,) = acc.items("agent")
    assert isinstance(message, AssistantMessage)
    assert isinstance(message.content[0], ReasoningPart)
    assert message.content[0].text.startswith("**Clarifying User Goals**")
    assert message.provider_data == {TEXT_SIGNATURE_KEY: out.signatures[0]}
    body = build_gemini_body(
        ModelRequest(messages=[UserMessage.text("cross?"), message, UserMessage.text("thanks")])
    )
    model_turn = body["contents"][1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"] == [
        {"text": out.text, "thoughtSignature": out.signatures[0]}
    ]  # thought text is not sent back; its signature is


# --------------------------------------------------------------------------- synthesized


def _chunk(
    parts: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts or []}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "responseId": "r1", **extra}
    if usage is not None:
        chunk["usageMetadata"] = usage
    return chunk


USAGE = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}
HELLO = ModelRequest(messages=[UserMessage.text("hello")])


async def _run_against(
    responses: list[Any],
    request: ModelRequest = HELLO,
    *,
    stream: bool = True,
    **kw: Any,
) -> tuple[GeminiOutcome, list[Any]]:
    path = STREAM_PATH if stream else WHOLE_PATH
    with ReplayServer.from_responses(responses, path=path) as server:
        model = GeminiModel.developer(
            "gemini-2.5-flash", api_key="k", base_url=server.base_url, stream=stream, **kw
        )
        try:
            out = await collect(model, request)
        finally:
            await model.aclose()
        return out, server.requests


def _error(code: int, status: str, message: str, details: list[Any] | None = None) -> Any:
    envelope: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        envelope["details"] = details
    return {"error": envelope}


RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
QUOTA = {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []}


@pytest.mark.parametrize(
    ("headers", "details", "retry_after"),
    [
        ({}, [QUOTA, RETRY_INFO], 37.0),
        ({}, [{**RETRY_INFO, "retryDelay": "1.5s"}], 1.5),
        ({"retry-after": "4"}, [QUOTA], 4.0),
        ({"retry-after": "4"}, [RETRY_INFO], 37.0),
        ({}, None, None),
    ],
)
async def test_429_maps_to_rate_limited_with_retry_info(
    headers: dict[str, str], details: list[Any] | None, retry_after: float | None
) -> None:
    body = _error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", details)
    out, _ = await _run_against([(429, headers, body)])
    assert type(out.error) is RateLimited
    assert out.error.retry_after == retry_after
    assert out.error.status_code == 429
    assert out.error.message == "You exceeded your current quota."


@pytest.mark.parametrize(
    ("status", "body", "cls", "message"),
    [
        (503, _error(503, "UNAVAILABLE", "The model is overloaded."), ModelUnavailable, None),
        (500, _error(500, "INTERNAL", "An internal error has occurred."), ModelUnavailable, None),
        (504, _error(504, "DEADLINE_EXCEEDED", "Deadline expired."), ModelUnavailable, None),
        (
            400,
            _error(
                400,
                "INVALID_ARGUMENT",
                "The input token count (1200000) exceeds the maximum number of tokens allowed "
                "(1048576).",
            ),
            ContextLengthExceeded,
            None,
        ),
        (
            400,
            _error(
                400,
                "INVALID_ARGUMENT",
                "* GenerateContentRequest.contents: contents is not specified",
            ),
            ModelOther,
            "* GenerateContentRequest.contents: contents is not specified",
        ),
        (404, _error(404, "NOT_FOUND", "models/nope is not found"), ModelOther, None),
        (502, "<html>bad gateway</html>", ModelUnavailable, "<html>bad gateway</html>"),
    ],
)
async def test_http_errors_map_to_model_errors(
    status: int, body: Any, cls: type[ModelError], message: str | None
) -> None:
    out, _ = await _run_against([(status, {}, body)])
    assert type(out.error) is cls
    assert out.error.status_code == status
    if message is not None:
        assert out.error.message == message
    else:
        assert out.error.message == body["error"]["message"]


async def test_auth_errors_name_the_credential_and_mask_keys() -> None:
    body = _error(
        400,
        "INVALID_ARGUMENT",
        "API key not valid: AIzaSyDUMMYDUMMYDUMMYDUMMY. Please pass a valid API key.",
    )
    out, _ = await _run_against([(400, {}, body)])
    assert type(out.error) is ModelOther
    assert "GEMINI_API_KEY" in out.error.message
    assert "AIzaSyDU***" in out.error.message
    assert "DUMMYDUMMYDUMMY" not in out.error.message
    denied = _error(403, "PERMISSION_DENIED", "Permission denied on resource project p.")
    out, _ = await _run_against([(403, {}, denied)])
    assert type(out.error) is ModelOther and out.error.status_code == 403
    assert "authentication failed" in out.error.message


async def test_error_inside_the_stream_is_mapped() -> None:
    events: list[Any] = [
        _chunk([{"text": "Hel"}]),
        _error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert out.text == "Hel"
    assert type(out.error) is ModelUnavailable
    assert out.error.status_code == 503


async def test_connection_refused_is_a_transport_error() -> None:
    model = GeminiModel.developer("gemini-2.5-flash", api_key="k", base_url="http://127.0.0.1:9")
    out = await collect(model, HELLO)
    await model.aclose()
    assert type(out.error) is TransportError
    assert "connection failed" in out.error.message


async def test_cut_off_stream_and_malformed_data_are_transport_errors() -> None:
    out, _ = await _run_against([(200, {}, [_chunk([{"text": "Par"}])])])
    assert out.text == "Par"
    assert type(out.error) is TransportError
    assert "without a finishReason" in out.error.message
    out, _ = await _run_against([(200, {}, ["data: {not json"])])
    assert type(out.error) is TransportError
    assert "malformed" in out.error.message


async def test_prompt_block_raises_refused_after_usage() -> None:
    blocked = {
        "promptFeedback": {
            "blockReason": "PROHIBITED_CONTENT",
            "safetyRatings": [
                {
                    "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                    "probability": "HIGH",
                    "blocked": True,
                }
            ],
        },
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
    }
    for stream in (True, False):
        body: Any = [blocked] if stream else blocked
        out, _ = await _run_against([(200, {}, body)], stream=stream)
        assert type(out.error) is Refused
        assert "PROHIBITED_CONTENT" in out.error.message
        assert "HARM_CATEGORY_DANGEROUS_CONTENT" in out.error.message
        assert [u.usage.input_tokens for u in out.usages] == [9]
        assert out.finishes == []


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("MAX_TOKENS", FinishReason.LENGTH),
        ("RECITATION", FinishReason.CONTENT_FILTER),
        ("BLOCKLIST", FinishReason.CONTENT_FILTER),
        ("PROHIBITED_CONTENT", FinishReason.CONTENT_FILTER),
        ("SPII", FinishReason.CONTENT_FILTER),
        ("MALFORMED_FUNCTION_CALL", FinishReason.OTHER),
        ("OTHER", FinishReason.OTHER),
        ("STOP", FinishReason.STOP),
    ],
)
async def test_finish_reasons(raw: str, reason: FinishReason) -> None:
    out, _ = await _run_against([(200, {}, [_chunk([{"text": "x"}], raw, USAGE)])])
    assert out.finishes == [Finish(reason=reason, raw=raw, response_id="r1")]


async def test_streamed_calls_ids_signatures_and_usage() -> None:
    events: list[Any] = [
        _chunk(
            [{"text": "thinking it over", "thought": True, "thoughtSignature": "c2lnMA=="}],
            usage={"promptTokenCount": 50, "totalTokenCount": 50},
        ),
        _chunk([{"text": "Checking."}]),
        _chunk(
            [
                {
                    "functionCall": {"id": "call_7", "name": "lookup", "args": {"city": "東京"}},
                    "thoughtSignature": "c2lnMQ==",
                },
                {"functionCall": {"name": "lookup", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "ping"}},
            ],
            "STOP",
            {
                "promptTokenCount": 40,
                "candidatesTokenCount": 12,
                "totalTokenCount": 80,
                "cachedContentTokenCount": 30,
                "thoughtsTokenCount": 28,
            },
        ),
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert out.error is None
    assert out.reasoning == "thinking it over"
    assert out.text == "Checking."
    calls = out.calls
    assert [(c.name, c.args_delta) for c in calls] == [
        ("lookup", '{"city":"東京"}'),
        ("lookup", '{"city":"Paris"}'),
        ("ping", "{}"),
    ]
    assert len({c.call_id for c in calls}) == 3
    assert out.metadata == [
        ProviderMetadata(data={TEXT_SIGNATURE_KEY: "c2lnMA=="}),
        ProviderMetadata(
            call_id=calls[0].call_id, data={CALL_ID_KEY: "call_7", SIGNATURE_KEY: "c2lnMQ=="}
        ),
    ]
    assert out.usages[0].usage.model_dump() == {
        "input_tokens": 40,
        "output_tokens": 40,  # 12 candidates + 28 thoughts: reasoning is part of the output
        "cached_input_tokens": 30,
        "reasoning_tokens": 28,
        "total_tokens": 80,
        "cache_write_input_tokens": 0,
        "requests": 0,  # a provider turn's usage; the run counts its requests
    }
    assert out.finishes == [Finish(reason=FinishReason.TOOL_CALLS, raw="STOP", response_id="r1")]


async def test_whole_response_without_finish_reason_still_finishes() -> None:
    out, _ = await _run_against([(200, {}, _chunk([{"text": "ok"}], usage=USAGE))], stream=False)
    assert out.text == "ok"
    assert out.finishes == [Finish(reason=FinishReason.STOP, raw=None, response_id="r1")]


# --------------------------------------------------------------------------- conflict


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
}
LOOKUP = ToolDef(name="lookup", description="Find.", parameters=SCHEMA)


@pytest.mark.parametrize(
    ("tools", "choice", "fmt"),
    [
        ([LOOKUP], None, JsonSchemaFormat(name="out", schema=SCHEMA)),
        ([LOOKUP], ToolChoice("none"), JsonObjectFormat()),
        ([], ToolChoice("required"), JsonSchemaFormat(name="out", schema=SCHEMA)),
        ([], ToolChoice.tool("lookup"), JsonObjectFormat()),
    ],
)
async def test_structured_output_with_tools_fails_before_sending(
    tools: list[ToolDef], choice: ToolChoice | None, fmt: Any
) -> None:
    request = ModelRequest(
        messages=[UserMessage.text("hi")],
        tools=tools,
        settings=ModelSettings(tool_choice=choice, response_format=fmt),
    )
    out, sent = await _run_against([(200, {}, [_chunk([{"text": "x"}], "STOP")])], request)
    assert type(out.error) is ModelOther
    assert "structured output" in out.error.message
    assert "Nothing was sent" in out.error.message
    assert sent == []
    assert out.events == []


async def test_structured_output_without_active_tools_is_sent() -> None:
    request = ModelRequest(
        messages=[UserMessage.text("hi")],
        settings=ModelSettings(
            tool_choice=ToolChoice("none"), response_format=JsonSchemaFormat("out", SCHEMA)
        ),
    )
    out, sent = await _run_against([(200, {}, [_chunk([{"text": '{"q":"x"}'}], "STOP")])], request)
    assert out.error is None
    assert sent[0]["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseSchema": {
            "type": "OBJECT",
            "properties": {"q": {"type": "STRING"}},
            "required": ["q"],
        },
    }
    assert "toolConfig" not in sent[0] and "tools" not in sent[0]


# --------------------------------------------------------------------------- translation


def test_message_translation() -> None:
    history: list[Item] = [
        SystemMessage(content=[TextPart(text="Be brief.")]),
        UserMessage(
            content=[
                TextPart(text="What is this?"),
                ImagePart(source=MediaSource(type="base64", mime_type="image/jpeg", data="QUJD")),
                ImagePart(source=MediaSource(type="url", url="https://example.com/cat.png?s=1")),
                ImagePart(source=MediaSource(type="url", url="gs://bucket/photo")),
                AudioPart(source=MediaSource(type="base64", mime_type="audio/mp3", data="SUQz")),
                ReasoningPart(text="not for the user turn"),
            ]
        ),
        AssistantMessage(
            content=[ReasoningPart(text="hmm"), TextPart(text="Let me look.")],
            provider_data={TEXT_SIGNATURE_KEY: "c2ln"},
        ),
        ToolCall(
            call_id="c1",
            name="lookup",
            args={"q": "x"},
            provider_data={SIGNATURE_KEY: "c2lnMQ==", CALL_ID_KEY: "g1"},
        ),
        ToolCall(call_id="c2", name="fetch", args='{"u": 1}'),
        ToolResult(call_id="c2", content=[TextPart(text="fetched")]),
        ToolResult(
            call_id="c1",
            content=[
                TextPart(text="a cat"),
                ImagePart(source=MediaSource(type="base64", mime_type="image/png", data="UE5H")),
            ],
        ),
        AssistantMessage(content=[TextPart(text="A cat.")]),
        SystemMessage(content=[TextPart(text="Summary: cats.")]),
        UserMessage.text("thanks"),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    assert body == {
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief.\n\nSummary: cats."}]},
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "What is this?"},
                    {"inlineData": {"mimeType": "image/jpeg", "data": "QUJD"}},
                    {
                        "fileData": {
                            "fileUri": "https://example.com/cat.png?s=1",
                            "mimeType": "image/png",
                        }
                    },
                    {"fileData": {"fileUri": "gs://bucket/photo"}},
                    {"inlineData": {"mimeType": "audio/mp3", "data": "SUQz"}},
                ],
            },
            {
                "role": "model",
                "parts": [
                    {"text": "Let me look.", "thoughtSignature": "c2ln"},
                    {
                        "functionCall": {"name": "lookup", "args": {"q": "x"}, "id": "g1"},
                        "thoughtSignature": "c2lnMQ==",
                    },
                    {"functionCall": {"name": "fetch", "args": {"u": 1}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "lookup",
                            "response": {"output": "a cat\n[1 image part(s) follow this response]"},
                            "id": "g1",
                        }
                    },
                    {"functionResponse": {"name": "fetch", "response": {"output": "fetched"}}},
                    {"inlineData": {"mimeType": "image/png", "data": "UE5H"}},
                ],
            },
            {"role": "model", "parts": [{"text": "A cat."}]},
            {"role": "user", "parts": [{"text": "thanks"}]},
        ],
        "generationConfig": {},
    }


def test_tool_result_edge_cases() -> None:
    history: list[Item] = [
        UserMessage.text("go"),
        AssistantMessage(content=[ToolUsePart(call_id="u1", name="inline", args=None)]),
        ToolCall(call_id="c1", name="broken", args={}),
        ToolResult(call_id="u1", content=[TextPart(text="bad")], is_error=True),
        ToolResult(call_id="zz", content=[TextPart(text="stray")]),
        UserMessage(
            content=[TextPart(text="and?"), ImagePart(source=MediaSource(type="url", url="u"))]
        ),
        ToolCall(call_id="c9", name="pending", args={}),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "inline", "args": {}}},
                {"functionCall": {"name": "broken", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "inline", "response": {"error": "bad"}}},
                {
                    "functionResponse": {
                        "name": "broken",
                        "response": {"error": "no result was recorded for this call"},
                    }
                },
                {"text": "[tool result for call zz]\nstray"},
                {"text": "and?"},
                {"fileData": {"fileUri": "u"}},
            ],
        },
        {"role": "model", "parts": [{"functionCall": {"name": "pending", "args": {}}}]},
    ]


def test_non_text_tool_output_is_noted_not_silently_dropped() -> None:
    history: list[Item] = [
        UserMessage.text("go"),
        ToolCall(call_id="c1", name="snap", args={}),
        ToolResult(
            call_id="c1",
            content=[
                TextPart(text="本日 🚀"),
                ImagePart(source=MediaSource(type="url", url="https://x/y.png")),
                AudioPart(source=MediaSource(type="base64", mime_type="audio/wav", data="UklG")),
            ],
        ),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    response = body["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response == {
        "output": "本日 🚀\n[2 non-text part(s) of this result could not be sent to Gemini]"
    }
    assert "\\u" not in json.dumps(body, ensure_ascii=False)


def test_settings_tools_and_extra_translation() -> None:
    tools = [
        ToolDef(name="lookup", description="Find.", parameters=SCHEMA),
        ToolDef(name="plain", description="", parameters={"type": "object"}),
    ]
    settings = ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=256,
        tool_choice=ToolChoice.tool("lookup"),
        parallel_tool_calls=False,
        previous_response_id="ignored",
        extra={
            "thinkingConfig": {"thinkingBudget": 128},
            "stopSequences": ["END"],
            "safetySettings": [
                {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}
            ],
            "generationConfig": {"topK": 3},
            "toolConfig": {"retrievalConfig": {"languageCode": "en"}},
        },
    )
    body = build_gemini_body(
        ModelRequest(messages=[UserMessage.text("hi")], tools=tools, settings=settings)
    )
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "lookup",
                        "description": "Find.",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {"q": {"type": "STRING"}},
                            "required": ["q"],
                        },
                    },
                    {"name": "plain", "description": "", "parameters": {"type": "OBJECT"}},
                ]
            }
        ],
        "toolConfig": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]},
            "retrievalConfig": {"languageCode": "en"},
        },
        "generationConfig": {
            "temperature": 0.2,
            "topP": 0.9,
            "maxOutputTokens": 256,
            "thinkingConfig": {"thinkingBudget": 128},
            "stopSequences": ["END"],
            "topK": 3,
        },
        "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
    }
    choices: tuple[Literal["auto", "none", "required"], ...] = ("auto", "none", "required")
    modes = {
        mode: build_gemini_body(
            ModelRequest(
                messages=[UserMessage.text("hi")],
                tools=tools,
                settings=ModelSettings(tool_choice=ToolChoice(mode)),
            )
        )["toolConfig"]["functionCallingConfig"]
        for mode in choices
    }
    assert modes == {
        "auto": {"mode": "AUTO"},
        "none": {"mode": "NONE"},
        "required": {"mode": "ANY"},
    }
    no_tools = build_gemini_body(
        ModelRequest(
            messages=[UserMessage.text("hi")],
            settings=ModelSettings(response_format=JsonObjectFormat()),
        )
    )
    assert no_tools == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"responseMimeType": "application/json"},
    }
    with pytest.raises(ConfigError, match="needs a tool name"):
        build_gemini_body(
            ModelRequest(
                messages=[UserMessage.text("hi")],
                tools=tools,
                settings=ModelSettings(tool_choice=ToolChoice(mode="tool")),
            )
        )


def test_json_schema_mode_sends_schemas_unchanged() -> None:
    raw = {
        "$defs": {"F": {"type": "object", "properties": {"v": {"type": "string"}}}},
        "type": "object",
        "properties": {"f": {"$ref": "#/$defs/F"}},
        "additionalProperties": False,
    }
    model = GeminiModel.developer("gemini-2.5-flash", api_key="k", schema_mode="json_schema")
    body = model.request_body(
        ModelRequest(messages=[UserMessage.text("hi")], tools=[ToolDef("t", "d", raw)])
    )
    assert body["tools"][0]["functionDeclarations"][0] == {
        "name": "t",
        "description": "d",
        "parametersJsonSchema": raw,
    }
    with pytest.raises(ConfigError, match="schema_mode"):
        GeminiModel.developer("gemini-2.5-flash", api_key="k", schema_mode="yaml")  # type: ignore[arg-type]


def test_upper_types_leaves_property_names_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["a"]},
            "items": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        },
    }
    assert upper_types(schema) == {
        "type": "OBJECT",
        "properties": {
            "type": {"type": "STRING", "enum": ["a"]},
            "items": {"type": "ARRAY", "items": {"anyOf": [{"type": "INTEGER"}, {"type": "NULL"}]}},
        },
    }


# --------------------------------------------------------------------------- BR-08


def _pairs(body: dict[str, Any]) -> list[tuple[str, str, str | None, Any]]:
    out = []
    for content in body["contents"]:
        for part in content["parts"]:
            for kind in ("functionCall", "functionResponse"):
                if kind in part:
                    p = part[kind]
                    out.append((content["role"], p["name"], p.get("id"), p.get("response")))
    return out


def test_br08_reused_gemini_ids_pair_by_turn() -> None:
    """Gemini's own ids repeat ("call_7" twice); helikon ids are unique and pair the results."""
    history: list[Item] = [
        UserMessage.text("status"),
        ToolCall(call_id="h1", name="disk_usage", args={}, provider_data={CALL_ID_KEY: "call_7"}),
        ToolResult(call_id="h1", content=[TextPart(text='{"pct":40}')]),
        ToolCall(call_id="h2", name="queue_depth", args={}, provider_data={CALL_ID_KEY: "call_7"}),
        ToolResult(call_id="h2", content=[TextPart(text='{"n":3}')]),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "model", "user"]
    assert _pairs(body) == [
        ("model", "disk_usage", "call_7", None),
        ("user", "disk_usage", "call_7", {"pct": 40}),
        ("model", "queue_depth", "call_7", None),
        ("user", "queue_depth", "call_7", {"n": 3}),
    ]


@pytest.mark.parametrize(
    ("content", "is_error", "response"),
    [
        ('{"city": "Paris", "temp_c": 21.5, "tags": ["a"]}', False, None),
        ('  {"nested": {"deep": [1, {"x": null}]}}\n', False, None),
        ("{}", False, {}),
        ('{"output": "already named"}', False, {"output": "already named"}),
        ("[1, 2, 3]", False, {"output": "[1, 2, 3]"}),
        ("42", False, {"output": "42"}),
        ('"a JSON string"', False, {"output": '"a JSON string"'}),
        ("null", False, {"output": "null"}),
        ("{not json", False, {"output": "{not json"}),
        ('{"a": 1} trailing', False, {"output": '{"a": 1} trailing'}),
        ("plain words", False, {"output": "plain words"}),
        ("", False, {"output": ""}),
        ('{"code": 7}', True, {"error": '{"code": 7}'}),
    ],
)
def test_json_object_tool_result_goes_out_as_the_object(
    content: str, is_error: bool, response: dict[str, Any] | None
) -> None:
    """A result that is one JSON object is ``functionResponse.response`` itself; any other
    value (array, number, string, invalid JSON) and any error result stay wrapped."""
    history: list[Item] = [
        UserMessage.text("go"),
        ToolCall(call_id="c1", name="lookup", args={}),
        ToolResult(call_id="c1", content=[TextPart(text=content)], is_error=is_error),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    want = json.loads(content) if response is None else response
    assert _pairs(body) == [("model", "lookup", None, None), ("user", "lookup", None, want)]


def test_json_object_result_with_an_image_stays_wrapped() -> None:
    """The image note is appended to the text, so the result is no longer one object."""
    image = ImagePart(source=MediaSource(type="base64", mime_type="image/png", data="aGk="))
    history: list[Item] = [
        UserMessage.text("go"),
        ToolCall(call_id="c1", name="shot", args={}),
        ToolResult(call_id="c1", content=[TextPart(text='{"ok": true}'), image]),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    assert _pairs(body)[1][3] == {"output": '{"ok": true}\n[1 image part(s) follow this response]'}


def test_br08_repeated_helikon_ids_pair_with_the_earliest_waiting_call() -> None:
    """A history made elsewhere may repeat helikon ids too; pairing stays per call."""
    history: list[Item] = [
        UserMessage.text("status"),
        ToolCall(call_id="call_7", name="disk_usage", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text="40")]),
        ToolCall(call_id="call_7", name="queue_depth", args={}),
        ToolResult(call_id="call_7", content=[TextPart(text="3")]),
        UserMessage.text("both at once"),
        ToolCall(call_id="a", name="f", args={}),
        ToolCall(call_id="a", name="g", args={}),
        ToolCall(call_id="b", name="h", args={}),
        ToolResult(call_id="b", content=[TextPart(text="H")]),
        ToolResult(call_id="a", content=[TextPart(text="F")]),
        ToolResult(call_id="a", content=[TextPart(text="G")]),
    ]
    body = build_gemini_body(ModelRequest(messages=history))
    assert _pairs(body) == [
        ("model", "disk_usage", None, None),
        ("user", "disk_usage", None, {"output": "40"}),
        ("model", "queue_depth", None, None),
        ("user", "queue_depth", None, {"output": "3"}),
        ("model", "f", None, None),
        ("model", "g", None, None),
        ("model", "h", None, None),
        ("user", "f", None, {"output": "F"}),
        ("user", "g", None, {"output": "G"}),
        ("user", "h", None, {"output": "H"}),
    ]
    assert build_gemini_body(ModelRequest(messages=history)) == body  # deterministic


# --------------------------------------------------------------------------- construction


def test_developer_key_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        GeminiModel.developer("gemini-2.5-flash")
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        GeminiModel.from_env("gemini-2.5-flash")
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert GeminiModel.from_env("gemini-2.5-flash")._api_key == "google-key"
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    assert GeminiModel.from_env("gemini-2.5-flash")._api_key == "gemini-key"
    assert GeminiModel.developer("gemini-2.5-flash", "explicit")._api_key == "explicit"
    with pytest.raises(ConfigError, match="environment only"):
        GeminiModel.from_env("gemini-2.5-flash", api_key="x")
    with pytest.raises(ConfigError, match="non-empty"):
        GeminiModel.developer("", api_key="k")


def test_urls() -> None:
    dev = GeminiModel.developer("gemini-2.5-flash", api_key="k")
    assert dev.url() == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
        ":streamGenerateContent?alt=sse"
    )
    assert dev.url(stream=False).endswith("/v1beta/models/gemini-2.5-flash:generateContent")
    tuned = GeminiModel.developer("tunedModels/mine", api_key="k", base_url="http://h:1/")
    assert tuned.url(stream=False) == "http://h:1/v1beta/tunedModels/mine:generateContent"
    vertex = GeminiModel.vertex("gemini-2.5-flash", "proj", "us-central1", bearer_token="t")
    assert vertex.url(stream=False) == (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1"
        "/publishers/google/models/gemini-2.5-flash:generateContent"
    )
    glob = GeminiModel.vertex(
        "publishers/google/models/gemini-2.5-pro", "p", "global", bearer_token="t"
    )
    assert glob.url(stream=False) == (
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global"
        "/publishers/google/models/gemini-2.5-pro:generateContent"
    )
    assert (vertex.provider, vertex.platform, dev.provider) == (
        "gcp.vertex_ai",
        "vertex",
        "gcp.gemini",
    )


def test_vertex_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION", raising=False)
    with pytest.raises(ConfigError, match="GOOGLE_CLOUD_PROJECT"):
        GeminiModel.vertex("gemini-2.5-flash", bearer_token="t")
    with pytest.raises(ConfigError, match="token_provider"):
        GeminiModel.vertex("gemini-2.5-flash", "p", "us-central1")
    with pytest.raises(ConfigError, match="callable"):
        GeminiModel.vertex("gemini-2.5-flash", "p", token_provider="nope")  # type: ignore[arg-type]
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    model = GeminiModel.vertex("gemini-2.5-flash", bearer_token="t")
    assert "/projects/env-proj/locations/europe-west4/" in model.url()


VERTEX_PATH = (
    "/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    ":streamGenerateContent"
)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_vertex_token_provider_is_called_per_request(kind: str) -> None:
    tokens = iter(["tok-1", "tok-2"])

    def sync_provider() -> str:
        return next(tokens)

    async def async_provider() -> str:
        await asyncio.sleep(0)
        return next(tokens)

    done = [_chunk([{"text": "ok"}], "STOP", USAGE)]
    with ReplayServer.from_responses(
        [(200, {}, done), (200, {}, done)], path=VERTEX_PATH
    ) as server:
        model = GeminiModel.vertex(
            "gemini-2.5-flash",
            "proj",
            "us-central1",
            token_provider=sync_provider if kind == "sync" else async_provider,
            base_url=server.base_url,
        )
        first = await collect(model, HELLO)
        second = await collect(model, HELLO)
        await model.aclose()
        captured = server.captured
    assert first.text == second.text == "ok"
    assert [c.headers["authorization"] for c in captured] == ["Bearer tok-1", "Bearer tok-2"]
    assert all("x-goog-api-key" not in c.headers for c in captured)
    assert [c.query for c in captured] == ["alt=sse", "alt=sse"]


async def test_vertex_token_provider_failure_is_a_model_error() -> None:
    def broken() -> str:
        raise RuntimeError("metadata server unreachable")

    model = GeminiModel.vertex("gemini-2.5-flash", "p", "us-central1", token_provider=broken)
    out = await collect(model, HELLO)
    assert type(out.error) is ModelOther
    assert "metadata server unreachable" in out.error.message


async def test_static_bearer_token_and_auth_hint() -> None:
    body = _error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
    with ReplayServer.from_responses([(401, {}, body)], path=VERTEX_PATH) as server:
        model = GeminiModel.vertex(
            "gemini-2.5-flash",
            "proj",
            "us-central1",
            bearer_token="ya29.abc",
            base_url=server.base_url,
        )
        out = await collect(model, HELLO)
        await model.aclose()
        assert server.captured[0].headers["authorization"] == "Bearer ya29.abc"
    assert type(out.error) is ModelOther
    assert "Vertex AI access token" in out.error.message


def test_protocol_surface() -> None:
    model = GeminiModel.developer("gemini-2.5-flash", api_key="k")
    caps = model.capabilities()
    assert caps.streaming and caps.tools and caps.parallel_tool_calls and caps.structured_output
    assert caps.reasoning and caps.vision and caps.audio and not caps.server_managed_state
    assert not GeminiModel.developer("m", api_key="k", stream=False).capabilities().streaming
    assert repr(model) == "GeminiModel.developer('gemini-2.5-flash', stream=True)"


async def test_given_http_client_is_used_and_left_open() -> None:
    import httpx

    done = [_chunk([{"text": "ok"}], "STOP", USAGE)]
    with ReplayServer.from_responses([(200, {}, done)], path=STREAM_PATH) as server:
        async with httpx.AsyncClient() as client:
            model = GeminiModel.developer(
                "gemini-2.5-flash", api_key="k", base_url=server.base_url, http_client=client
            )
            out = await collect(model, HELLO)
            await model.aclose()
            assert not client.is_closed
    assert out.text == "ok"


# --------------------------------------------------------------------------- cancellation


async def test_cancel_mid_stream_ends_the_iterator_quickly() -> None:
    events: list[Any] = [_chunk([{"text": "Par"}]), Pause(10.0), _chunk([{"text": "tial"}], "STOP")]
    with ReplayServer.from_responses([(200, {}, events)], path=STREAM_PATH) as server:
        model = GeminiModel.developer("gemini-2.5-flash", api_key="k", base_url=server.base_url)
        seen, elapsed = await cancel_after_first_token(model, HELLO)
        await model.aclose()
    assert seen == [TokenDelta(text="Par")]
    assert elapsed < 2.0


async def test_cancel_between_chunks_stops_without_finish() -> None:
    events: list[Any] = [
        _chunk([{"text": "a"}]),
        _chunk([{"text": "b"}]),
        _chunk([], "STOP", USAGE),
    ]
    with ReplayServer.from_responses([(200, {}, events)], path=STREAM_PATH) as server:
        model = GeminiModel.developer("gemini-2.5-flash", api_key="k", base_url=server.base_url)
        seen = await cancel_on_first_event(model, HELLO)
        await model.aclose()
    assert seen == [TokenDelta(text="a")]


async def test_cancel_while_waiting_for_the_token_provider() -> None:
    release = asyncio.Event()

    async def slow_token() -> str:
        await release.wait()
        return "t"

    model = GeminiModel.vertex("gemini-2.5-flash", "p", "us-central1", token_provider=slow_token)
    cancel = CancellationToken()
    asyncio.get_running_loop().call_later(0.05, cancel.cancel)
    started = time.monotonic()
    out = await collect(model, HELLO, cancel)
    assert out.events == [] and out.error is None
    assert time.monotonic() - started < 2.0


async def test_already_cancelled_sends_nothing() -> None:
    with ReplayServer.from_responses([], path=STREAM_PATH) as server:
        model = GeminiModel.developer("gemini-2.5-flash", api_key="k", base_url=server.base_url)
        cancel = CancellationToken()
        cancel.cancel()
        out = await collect(model, HELLO, cancel)
        await model.aclose()
        assert server.requests == []
    assert out.events == [] and out.error is None

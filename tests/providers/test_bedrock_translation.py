"""BedrockModel beyond the recordings, request side: model families and capabilities,
construction, field case BR-04, structured output by forced-tool synthesis, and the
translation rules of ``helikon.providers.bedrock._request``.

Responses no recording has are synthesized (see ``test_bedrock_support``); a real boto3
client talks to the local server in every case.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from pydantic import BaseModel
from tests.providers.test_bedrock_support import (
    CLAUDE,
    LLAMA,
    NOVA,
    client_at,
    converse_body,
    event,
    events_of,
    offline_aws,
    route,
    stream_response,
    text_of_events,
    text_stream,
    tool_stream,
    usage_event,
)

from helikon import Agent, ToolEffect, tool
from helikon.core.items import (
    AssistantMessage,
    ImagePart,
    Item,
    MediaSource,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
    text_of,
)
from helikon.core.model import (
    FinishReason,
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
    ModelOther,
    ToolError,
)
from helikon.providers.bedrock import (
    STRUCTURED_OUTPUT_TOOL,
    BedrockModel,
    CachePoints,
    ModelFamily,
    detect_family,
)
from helikon.testing.replay import ReplayServer, ResponseSpec


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    offline_aws(monkeypatch)


# --------------------------------------------------------------------------- families


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", ModelFamily.ANTHROPIC),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", ModelFamily.ANTHROPIC),
        ("eu.anthropic.claude-sonnet-4-20250514-v1:0", ModelFamily.ANTHROPIC),
        ("apac.anthropic.claude-3-haiku-20240307-v1:0", ModelFamily.ANTHROPIC),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", ModelFamily.ANTHROPIC),
        ("us.anthropic.claude-sonnet-4-6", ModelFamily.ANTHROPIC),
        ("amazon.nova-pro-v1:0", ModelFamily.AMAZON_NOVA),
        ("us.amazon.nova-micro-v1:0", ModelFamily.AMAZON_NOVA),
        ("ap.amazon.nova-lite-v1:0", ModelFamily.AMAZON_NOVA),
        ("amazon.titan-text-express-v1", ModelFamily.AMAZON_TITAN),
        ("amazon.titan-text-premier-v1:0", ModelFamily.AMAZON_TITAN),
        ("meta.llama3-1-70b-instruct-v1:0", ModelFamily.LLAMA),
        ("us.meta.llama3-2-11b-instruct-v1:0", ModelFamily.LLAMA),
        ("mistral.mistral-large-2407-v1:0", ModelFamily.MISTRAL),
        ("eu.mistral.pixtral-large-2502-v1:0", ModelFamily.MISTRAL),
        ("cohere.command-r-plus-v1:0", ModelFamily.COHERE),
        ("ai21.jamba-1-5-large-v1:0", ModelFamily.UNKNOWN),
        ("us.deepseek.r1-v1:0", ModelFamily.UNKNOWN),
        ("amazon.rerank-v1:0", ModelFamily.UNKNOWN),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
            ModelFamily.ANTHROPIC,
        ),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-3-70b-instruct-v1:0",
            ModelFamily.LLAMA,
        ),
        (
            "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5",
            ModelFamily.UNKNOWN,
        ),
        ("US.Anthropic.Claude-3-Haiku", ModelFamily.ANTHROPIC),
        ("claude-sonnet", ModelFamily.UNKNOWN),
        ("", ModelFamily.UNKNOWN),
    ],
)
def test_family_detection(model_id: str, family: ModelFamily) -> None:
    assert detect_family(model_id) is family


@pytest.mark.parametrize(
    ("model_id", "structured", "tools", "vision"),
    [
        (CLAUDE, True, True, True),
        (NOVA, True, True, True),
        ("mistral.mistral-large-2407-v1:0", True, True, False),
        ("amazon.titan-text-express-v1", False, False, False),
        (LLAMA, False, True, False),
        ("cohere.command-r-v1:0", False, True, False),
        ("ai21.jamba-1-5-mini-v1:0", False, True, False),
    ],
)
def test_capabilities_follow_the_family(
    model_id: str, structured: bool, tools: bool, vision: bool
) -> None:
    caps = BedrockModel.converse(model_id, region="us-east-1", stream=False).capabilities()
    assert (caps.structured_output, caps.tools, caps.vision) == (structured, tools, vision)
    assert caps.streaming is False
    assert caps.server_managed_state is False


# --------------------------------------------------------------------------- construction


def test_from_env_takes_the_region_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    model = BedrockModel.from_env("eu.amazon.nova-lite-v1:0")
    assert model.client.meta.region_name == "eu-central-1"
    assert model.model == "eu.amazon.nova-lite-v1:0"
    assert model.provider == "aws.bedrock"


def test_no_region_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="AWS_REGION"):
        BedrockModel.from_env(NOVA)


def test_client_and_region_together_are_refused() -> None:
    client = client_at("http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="client="):
        BedrockModel.converse(NOVA, client=client, region="us-east-1")
    with pytest.raises(ConfigError, match="max_tokens"):
        BedrockModel.converse(NOVA, region="us-east-1", max_tokens=0)
    with pytest.raises(ConfigError, match="model_id"):
        BedrockModel.converse(" ", region="us-east-1")


def test_session_and_endpoint_build_the_client() -> None:
    session = boto3.session.Session(
        aws_access_key_id="a", aws_secret_access_key="b", region_name="ap-southeast-2"
    )
    model = BedrockModel.converse(NOVA, session=session, endpoint_url="http://127.0.0.1:9")
    assert model.client.meta.region_name == "ap-southeast-2"
    assert model.client.meta.endpoint_url == "http://127.0.0.1:9"
    assert model.client.meta.config.retries["total_max_attempts"] == 1


# --------------------------------------------------------------------------- BR-04


@tool(effect=ToolEffect.READ_ONLY)
def open_orders_empty_list(customer: str) -> list[str]:
    """List a customer's open orders."""
    return []


@tool(effect=ToolEffect.READ_ONLY)
def open_orders_empty_text(customer: str) -> str:
    """List a customer's open orders."""
    return ""


@tool(effect=ToolEffect.READ_ONLY)
def open_orders_error(customer: str) -> list[str]:
    """List a customer's open orders."""
    raise ToolError("not found")


BR04 = {
    "empty_list": (open_orders_empty_list, "[]", "[]", "success"),
    "empty_text": (open_orders_empty_text, "", "(no output)", "success"),
    "tool_error": (open_orders_error, None, None, "error"),
}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "converse"])
@pytest.mark.parametrize("variant", list(BR04))
async def test_br04_tool_results_are_never_sent_empty(variant: str, stream: bool) -> None:
    fn, kept, sent_text, status = BR04[variant]
    call = {"toolUse": {"toolUseId": "tu1", "name": "open_orders", "input": {"customer": "c-1"}}}
    turn1: ResponseSpec
    turn2: ResponseSpec
    if stream:
        turn1 = stream_response(
            [
                event("messageStart", {"role": "assistant"}),
                *tool_stream(0, "tu1", "open_orders", '{"customer":', ' "c-1"}'),
                event("messageStop", {"stopReason": "tool_use"}),
                usage_event(),
            ]
        )
        turn2 = stream_response(text_stream("No open orders."))
    else:
        turn1 = (200, {}, converse_body([call], stop="tool_use"))
        turn2 = (200, {}, converse_body([{"text": "No open orders."}]))
    renamed = tool(name="open_orders", effect=ToolEffect.READ_ONLY)(fn.fn)
    server = ReplayServer.from_responses([turn1, turn2], path=route(CLAUDE, stream=stream))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url), stream=stream)
        agent = Agent(name="orders", model=model, tools=[renamed])
        result = await agent.run("Any open orders for c-1?")
        sent = server.requests
    assert result.final_output == "No open orders."
    assert len(sent) == 2
    assistant, user = sent[1]["messages"][1:]
    assert assistant == {"role": "assistant", "content": [call]}
    (block,) = user["content"]
    wire = block["toolResult"]
    assert wire["toolUseId"] == "tu1"
    assert wire["status"] == status
    assert wire["content"], "Converse rejects an empty toolResult.content"
    assert all(c.get("text") for c in wire["content"])
    # the run (and so the session) keeps the real value; only the wire form is padded
    output = next(e.item for e in result.events if e.type == "tool_output_item")
    if kept is not None:
        assert output.content == [TextPart(text=kept)]
        assert wire["content"] == [{"text": sent_text}]
        assert output.is_error is False
    else:
        assert output.is_error is True
        assert "not found" in wire["content"][0]["text"]
        assert wire["content"] == [{"text": text_of(output.content)}]


def test_br04_padding_for_results_with_no_parts_at_all() -> None:
    model = BedrockModel.converse(LLAMA, region="us-east-1")
    params = model.request_params(
        ModelRequest(
            messages=[
                UserMessage.text("go"),
                ToolCall(call_id="a", name="f", args={}),
                ToolCall(call_id="b", name="f", args={}),
                ToolResult(call_id="a", content=[]),
                ToolResult(call_id="b", content=[TextPart(text="")], is_error=True),
            ],
            tools=[ToolDef("f", "", {"type": "object", "properties": {}})],
        )
    )
    results = [b["toolResult"] for b in params["messages"][2]["content"]]
    # Llama takes no ``status``: the text alone says what happened
    assert results == [
        {"toolUseId": "a", "content": [{"text": "(no output)"}]},
        {"toolUseId": "b", "content": [{"text": "(tool error)"}]},
    ]


# --------------------------------------------------------------------------- structured output


class City(BaseModel):
    city: str
    population: int


def _schema_request(schema: dict[str, Any], **settings: Any) -> ModelRequest:
    fmt = JsonSchemaFormat(name="City", schema=schema)
    return ModelRequest(
        messages=[UserMessage.text("Capital of France?")],
        settings=ModelSettings(response_format=fmt, **settings),
    )


async def test_structured_output_is_a_forced_reserved_tool_on_claude() -> None:
    answer = {
        "toolUse": {
            "toolUseId": "t1",
            "name": STRUCTURED_OUTPUT_TOOL,
            "input": {"city": "Paris", "population": 2161000},
        }
    }
    server = ReplayServer.from_responses(
        [(200, {}, converse_body([answer], stop="tool_use"))], path=route(CLAUDE, stream=False)
    )
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url), stream=False)
        events = await events_of(model, _schema_request(City.model_json_schema()))
        sent = server.requests[0]
    assert json.loads(text_of_events(events)) == {"city": "Paris", "population": 2161000}
    assert not any(isinstance(e, ToolCallDelta) for e in events)
    assert events[-1].reason is FinishReason.STOP
    assert events[-1].raw == "tool_use"
    (spec,) = sent["toolConfig"]["tools"]
    assert spec["toolSpec"]["name"] == STRUCTURED_OUTPUT_TOOL
    schema = spec["toolSpec"]["inputSchema"]["json"]
    assert schema["required"] == ["city", "population"]
    assert "$defs" not in schema and "title" in schema  # rewritten by helikon.schema.bedrock
    assert sent["toolConfig"]["toolChoice"] == {"tool": {"name": STRUCTURED_OUTPUT_TOOL}}
    assert "outputConfig" not in sent


async def test_streamed_structured_answer_drops_the_preamble_on_nova() -> None:
    frames = [
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "<thinking>ok"}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "</thinking>"}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        *tool_stream(1, "t1", STRUCTURED_OUTPUT_TOOL, '{"city": "Par', 'is", "population": 1}'),
        event("messageStop", {"stopReason": "tool_use"}),
        usage_event(),
    ]
    server = ReplayServer.from_responses([stream_response(frames)], path=route(NOVA, stream=True))
    with server:
        model = BedrockModel.converse(NOVA, client=client_at(server.base_url))
        events = await events_of(model, _schema_request(City.model_json_schema()))
    deltas = [e.text for e in events if isinstance(e, TokenDelta)]
    assert deltas == ['{"city": "Par', 'is", "population": 1}']  # streamed as it came
    assert events[-1].reason is FinishReason.STOP


async def test_non_object_schema_is_wrapped_and_unwrapped() -> None:
    frames = [
        event("messageStart", {"role": "assistant"}),
        *tool_stream(0, "t1", STRUCTURED_OUTPUT_TOOL, '{"value": [1, ', "2, 3]}"),
        event("messageStop", {"stopReason": "tool_use"}),
        usage_event(),
    ]
    schema = {"type": "array", "items": {"type": "integer"}}
    server = ReplayServer.from_responses([stream_response(frames)], path=route(CLAUDE, stream=True))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url))
        events = await events_of(model, _schema_request(schema))
        sent = server.requests[0]
    assert text_of_events(events) == "[1,2,3]"
    wrapped = sent["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]
    assert wrapped == {"type": "object", "properties": {"value": schema}, "required": ["value"]}


async def test_plain_text_answer_to_a_structured_request_is_kept() -> None:
    body = converse_body([{"text": '{"city": "Paris", "population": 3}'}])
    server = ReplayServer.from_responses([(200, {}, body)], path=route(CLAUDE, stream=False))
    with server:
        model = BedrockModel.converse(CLAUDE, client=client_at(server.base_url), stream=False)
        events = await events_of(model, _schema_request(City.model_json_schema()))
    assert text_of_events(events) == '{"city": "Paris", "population": 3}'
    assert events[-1].reason is FinishReason.STOP


def test_structured_output_tool_choice_variants() -> None:
    schema = City.model_json_schema()
    claude = BedrockModel.converse(CLAUDE, region="us-east-1")
    thinking = {
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    }
    params = claude.request_params(_schema_request(schema, extra=thinking))
    assert params["toolConfig"]["toolChoice"] == {
        "auto": {}
    }  # Claude forbids forcing with thinking
    assert params["additionalModelRequestFields"] == thinking["additionalModelRequestFields"]
    with_tools = _schema_request(schema)
    with_tools.tools = [ToolDef("lookup", "Look up.", {"type": "object", "properties": {}})]
    params = claude.request_params(with_tools)
    assert params["toolConfig"]["toolChoice"] == {"any": {}}
    assert [t["toolSpec"]["name"] for t in params["toolConfig"]["tools"]] == [
        "lookup",
        STRUCTURED_OUTPUT_TOOL,
    ]
    mistral = BedrockModel.converse("mistral.mistral-large-2407-v1:0", region="us-east-1")
    assert mistral.request_params(_schema_request(schema))["toolConfig"]["toolChoice"] == {
        "tool": {"name": STRUCTURED_OUTPUT_TOOL}
    }


@pytest.mark.parametrize(
    "model_id",
    [LLAMA, "amazon.titan-text-express-v1", "cohere.command-r-v1:0", "ai21.jamba-1-5-mini-v1:0"],
)
def test_structured_output_degrades_to_plain_text(model_id: str) -> None:
    model = BedrockModel.converse(model_id, region="us-east-1")
    params = model.request_params(_schema_request(City.model_json_schema()))
    assert "toolConfig" not in params
    assert "outputConfig" not in params
    assert params["messages"] == [{"role": "user", "content": [{"text": "Capital of France?"}]}]


async def test_agent_output_type_over_the_reserved_tool() -> None:
    answer = {
        "toolUse": {
            "toolUseId": "t1",
            "name": STRUCTURED_OUTPUT_TOOL,
            "input": {"city": "Paris", "population": 7},
        }
    }
    server = ReplayServer.from_responses(
        [(200, {}, converse_body([answer], stop="tool_use"))], path=route(NOVA, stream=False)
    )
    with server:
        model = BedrockModel.converse(NOVA, client=client_at(server.base_url), stream=False)
        agent = Agent(name="geo", model=model, output_type=City)
        result = await agent.run("Capital of France?")
    assert result.final_output == City(city="Paris", population=7)


# --------------------------------------------------------------------------- request translation


def test_request_translation_rules() -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    model = BedrockModel.converse(
        CLAUDE, region="us-east-1", max_tokens=512, cache=CachePoints(last_turns=1)
    )
    history: list[Item] = [
        SystemMessage(content=[TextPart(text="Be brief.")]),
        SystemMessage(content=[TextPart(text="  ")]),
        UserMessage(
            content=[
                TextPart(text="What is this?"),
                TextPart(text=""),
                ImagePart(source=MediaSource(type="base64", mime_type="image/png", data=png)),
            ]
        ),
        UserMessage.text("Also: weather?"),
        AssistantMessage(
            content=[ReasoningPart(text="unsigned, from elsewhere"), TextPart(text="Checking.")]
        ),
        ToolCall(call_id="call/1 bad", name="weather", args='{"city": "Paris"}'),
        ToolCall(call_id="call/1 bad", name="weather", args={"city": "Lyon"}),
        ToolResult(call_id="call/1 bad", content=[TextPart(text="20C")]),
        ToolResult(call_id="call/1 bad", content=[TextPart(text="18C")]),
        UserMessage.text("Thanks"),
    ]
    request = ModelRequest(
        messages=history,
        tools=[
            ToolDef(
                "weather",
                "",
                {
                    "$defs": {"City": {"type": "string", "format": "city"}},
                    "type": "object",
                    "properties": {"city": {"$ref": "#/$defs/City"}},
                },
            )
        ],
        settings=ModelSettings(
            temperature=0.2,
            max_output_tokens=100,
            tool_choice=ToolChoice.tool("weather"),
            extra={"inferenceConfig": {"stopSequences": ["END"]}},
        ),
    )
    params = model.request_params(request)
    assert params["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert params["inferenceConfig"] == {
        "maxTokens": 100,
        "temperature": 0.2,
        "stopSequences": ["END"],
    }
    user, assistant, results = params["messages"]
    assert user["content"] == [
        {"text": "What is this?"},
        {"image": {"format": "png", "source": {"bytes": b"\x89PNG fake"}}},
        {"text": "Also: weather?"},
    ]
    assert assistant["content"] == [
        {"text": "Checking."},  # unsigned reasoning cannot be verified and is not sent
        {"toolUse": {"toolUseId": "call_1_bad", "name": "weather", "input": {"city": "Paris"}}},
        {"toolUse": {"toolUseId": "call_1_bad_2", "name": "weather", "input": {"city": "Lyon"}}},
    ]
    # the results lead the next user message, the text that followed them comes after
    assert results == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "call_1_bad",
                    "content": [{"text": "20C"}],
                    "status": "success",
                }
            },
            {
                "toolResult": {
                    "toolUseId": "call_1_bad_2",
                    "content": [{"text": "18C"}],
                    "status": "success",
                }
            },
            {"text": "Thanks"},
            {"cachePoint": {"type": "default"}},
        ],
    }
    spec = params["toolConfig"]["tools"][0]["toolSpec"]
    assert spec == {
        "name": "weather",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    assert params["toolConfig"]["tools"][1] == {"cachePoint": {"type": "default"}}
    assert params["toolConfig"]["toolChoice"] == {"tool": {"name": "weather"}}


def test_tool_choice_none_and_required() -> None:
    model = BedrockModel.converse(NOVA, region="us-east-1")
    tools = [ToolDef("f", "F.", {"type": "object", "properties": {}})]
    plain = ModelRequest(messages=[UserMessage.text("hi")], tools=tools)
    plain.settings = ModelSettings(tool_choice=ToolChoice("none"))
    assert "toolConfig" not in model.request_params(plain)
    plain.settings = ModelSettings(tool_choice=ToolChoice("required"))
    assert model.request_params(plain)["toolConfig"]["toolChoice"] == {"any": {}}


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(source=MediaSource(type="url", url="https://example.com/cat.png")),
        ImagePart(source=MediaSource(type="base64", mime_type="image/tiff", data="AAAA")),
    ],
)
def test_unsendable_images_are_model_errors(part: ImagePart) -> None:
    model = BedrockModel.converse(CLAUDE, region="us-east-1")
    with pytest.raises(ModelOther):
        model.request_params(ModelRequest(messages=[UserMessage(content=[part])]))


def test_s3_images_are_sent_by_location() -> None:
    model = BedrockModel.converse(NOVA, region="us-east-1")
    part = ImagePart(source=MediaSource(type="url", url="s3://bucket/cat.jpg"))
    params = model.request_params(ModelRequest(messages=[UserMessage(content=[part])]))
    assert params["messages"][0]["content"] == [
        {"image": {"format": "jpeg", "source": {"s3Location": {"uri": "s3://bucket/cat.jpg"}}}}
    ]


def _iter_ids(params: dict[str, Any]) -> Iterator[str]:
    for m in params["messages"]:
        for b in m["content"]:
            if "toolUse" in b:
                yield b["toolUse"]["toolUseId"]


def test_long_ids_are_cut_to_the_converse_limit() -> None:
    model = BedrockModel.converse(CLAUDE, region="us-east-1")
    long_id = "x" * 80
    params = model.request_params(
        ModelRequest(
            messages=[
                UserMessage.text("go"),
                ToolCall(call_id=long_id, name="f", args={}),
                ToolCall(call_id=long_id, name="f", args={}),
            ]
        )
    )
    ids = list(_iter_ids(params))
    assert [len(i) for i in ids] == [64, 64]
    assert len(set(ids)) == 2

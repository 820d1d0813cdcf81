"""BedrockModel (Converse) against the recorded Bedrock wire traffic.

Every Bedrock recording in ``shared/wire/INDEX.json`` is replayed through ``BedrockModel`` on a
local ``ReplayServer``, with a real boto3 ``bedrock-runtime`` client pointed at it (region
``us-east-1``, dummy keys: SigV4 is computed, nobody checks it; the binary event streams are
decoded by botocore). For each used interaction the conversation is rebuilt from the recorded
request, sent through the adapter, and both directions are checked: what the adapter extracted
(text, tool calls with ids and parsed arguments, raw stop reason, usage, reasoning with its
signature, error class/status/message) equals the index's ``expected``, and the parameters it
sent equal the recorded request body. A whole agent run replays the recorded streamed tool loop.
"""

from __future__ import annotations

import copy
import json
from typing import Any

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
    assert_signed_reasoning,
    assert_usage,
    collect,
    get_capital,
    get_temperature,
    replaying,
    whole_prompt,
    wire_entries,
)
from tests.providers.test_bedrock_support import client_at, offline_aws

from helikon import Agent, ModelSettings
from helikon.core.items import (
    AssistantMessage,
    ContentPart,
    Item,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
    text_of,
)
from helikon.core.model import (
    ModelRequest,
    ReasoningDelta,
    TokenDelta,
    ToolCallDelta,
    ToolChoice,
    ToolDef,
)
from helikon.errors import ModelOther
from helikon.providers.bedrock import BedrockModel, CachePoints, ModelFamily, detect_family
from helikon.testing.replay import RecordedInteraction, ReplayServer, load_cassette

ENTRIES = wire_entries(provider="bedrock")

USAGE_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "total_tokens": "total_tokens",
    "cache_read_input_tokens": "cached_input_tokens",
    "cache_write_input_tokens": "cache_write_input_tokens",
}


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    offline_aws(monkeypatch)


def client_for(server: ReplayServer) -> Any:
    return client_at(server.base_url)


# --------------------------------------------------------------------------- recorded -> request


def _texts(blocks: list[dict[str, Any]]) -> list[ContentPart]:
    return [TextPart(text=b["text"]) for b in blocks if "text" in b]


def items_from_recorded(body: dict[str, Any]) -> list[Item]:
    """Rebuild helikon items from a recorded Converse request body.

    ``document`` blocks have no helikon content part and are left out (see
    :func:`normalize_messages`).
    """
    items: list[Item] = []
    for block in body.get("system", []):
        if "text" in block:
            items.append(SystemMessage(content=[TextPart(text=block["text"])]))
    for m in body["messages"]:
        blocks = m["content"]
        if m["role"] == "user":
            for b in blocks:
                if "toolResult" in b:
                    r = b["toolResult"]
                    items.append(
                        ToolResult(
                            call_id=r["toolUseId"],
                            content=_texts(r["content"]),
                            is_error=r.get("status") == "error",
                        )
                    )
            texts = _texts(blocks)
            if texts:
                items.append(UserMessage(content=texts))
            continue
        parts: list[ContentPart] = []
        calls: list[Item] = []
        for b in blocks:
            if "reasoningContent" in b:
                r = b["reasoningContent"]["reasoningText"]
                parts.append(ReasoningPart(text=r["text"], signature=r["signature"]))
            elif "text" in b:
                parts.append(TextPart(text=b["text"]))
            elif "toolUse" in b:
                u = b["toolUse"]
                calls.append(ToolCall(call_id=u["toolUseId"], name=u["name"], args=u["input"]))
        if parts:
            items.append(AssistantMessage(content=parts))
        items.extend(calls)
    return items


def _ends_with_cache_point(blocks: list[dict[str, Any]]) -> bool:
    return bool(blocks) and "cachePoint" in blocks[-1]


def cache_from_recorded(body: dict[str, Any]) -> CachePoints | None:
    """The CachePoints that reproduce the recorded trailing ``cachePoint`` blocks."""
    system = _ends_with_cache_point(body.get("system", []))
    tools = _ends_with_cache_point(body.get("toolConfig", {}).get("tools", []))
    turns = sum(
        1 for m in body["messages"] if m["role"] == "user" and _ends_with_cache_point(m["content"])
    )
    if not (system or tools or turns):
        return None
    return CachePoints(system=system, tools=tools, last_turns=turns)


def request_from_recorded(body: dict[str, Any]) -> ModelRequest:
    """The ModelRequest whose translation should reproduce the recorded request."""
    config = body.get("toolConfig") or {}
    tools = [
        ToolDef(
            name=t["toolSpec"]["name"],
            description=t["toolSpec"].get("description", ""),
            parameters=t["toolSpec"]["inputSchema"]["json"],
        )
        for t in config.get("tools", [])
        if "toolSpec" in t
    ]
    choice = config.get("toolChoice")
    tool_choice = None
    if choice is not None:
        assert choice == {"auto": {}}, "the corpus only records toolChoice auto"
        tool_choice = ToolChoice("auto")
    inference = dict(body.get("inferenceConfig") or {})
    temperature = inference.pop("temperature", None)
    top_p = inference.pop("topP", None)
    extra: dict[str, Any] = {}
    if inference:
        extra["inferenceConfig"] = inference  # stopSequences
    for key in ("additionalModelRequestFields", "outputConfig"):
        if key in body:
            extra[key] = body[key]
    settings = ModelSettings(
        temperature=temperature, top_p=top_p, tool_choice=tool_choice, extra=extra
    )
    return ModelRequest(messages=items_from_recorded(body), tools=tools, settings=settings)


def normalize_messages(messages: list[dict[str, Any]], family: ModelFamily) -> list[Any]:
    """Compare messages by meaning.

    ``document`` blocks are dropped (no helikon content part carries them), and so are
    ``cachePoint`` blocks that do not end a message (``CachePoints`` only places trailing
    ones). A ``toolResult`` without ``status`` means ``success``, which is what the families
    that take a status are sent.
    """
    out = []
    for m in copy.deepcopy(messages):
        blocks = [b for b in m["content"] if "document" not in b]
        blocks = [b for i, b in enumerate(blocks) if "cachePoint" not in b or i == len(blocks) - 1]
        for b in blocks:
            if "toolResult" in b and family in (ModelFamily.ANTHROPIC, ModelFamily.AMAZON_NOVA):
                b["toolResult"].setdefault("status", "success")
        out.append({"role": m["role"], "content": blocks})
    return out


def check_sent_request(
    sent: dict[str, Any], facts: dict[str, Any], recorded: Any, model: str
) -> None:
    family = detect_family(model)
    assert len(recorded["messages"]) == facts["n_input_items"]
    assert normalize_messages(sent["messages"], family) == normalize_messages(
        recorded["messages"], family
    )
    assert sent.get("system", []) == recorded.get("system", [])
    assert sent.get("inferenceConfig", {}) == recorded.get("inferenceConfig", {})
    assert sent.get("inferenceConfig", {}) == facts["inferenceConfig"]
    for key in ("additionalModelRequestFields", "outputConfig"):
        assert sent.get(key) == recorded.get(key), key
    if "tools" in facts:
        assert sent["toolConfig"] == recorded["toolConfig"]
        names = [
            t["toolSpec"]["name"] if "toolSpec" in t else "<cachePoint>"
            for t in sent["toolConfig"]["tools"]
        ]
        assert names == facts["tools"]
    else:
        assert "toolConfig" not in sent


def model_id_of(path: str) -> str:
    parts = path.split("/")
    assert parts[1] == "model"
    return parts[2]


def request_id_of(recorded: RecordedInteraction) -> str | None:
    """The recorded ``x-amzn-RequestId`` header (only some recorders kept it)."""
    return next((v for k, v in recorded.headers if k.lower() == "x-amzn-requestid"), None)


def check_outcome(
    out: Outcome, expected: dict[str, Any], model_id: str, request_id: str | None
) -> None:
    if "error" in expected:
        assert_error(out, expected["error"], ModelOther, exact=False)
        # the recorder dropped x-amzn-ErrorType, so boto3's error code is the status
        assert_error_codes(out, None, str(expected["error"]["http_status"]))
        return
    assert out.error is None, out.error
    assert_extracted(out, expected)
    usage = assert_usage(
        out,
        whole_prompt(expected["usage"], "cache_read_input_tokens", "cache_write_input_tokens"),
        USAGE_FIELDS,
    )
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    # Bedrock counts reasoning inside outputTokens and reports no separate count
    assert_reasoning_in_output(usage, expected["usage"])
    assert_one_finish(out, expected["finish_reason"])
    # Converse names no answering model (the requested id stands) and no response id in its
    # body; the AWS request id header is the response id
    assert_answered_by(out, model_id, request_id)
    assert_signed_reasoning(out, expected)


# --------------------------------------------------------------------------- recordings


def test_index_lists_the_bedrock_recordings() -> None:
    files = {e["file"] for e in ENTRIES}
    assert len(files) == 9
    assert "bedrock/converse_tool_loop_stream.yaml" in files
    assert all(e["api"] == "converse" for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
async def test_recording_replays_through_bedrock_model(entry: dict[str, Any]) -> None:
    with replaying(entry) as (server, exchanges):
        for turn in exchanges:
            facts, body = turn.facts, turn.body
            model_id = model_id_of(turn.recorded.path)
            model = BedrockModel.converse(
                model_id,
                client=client_for(server),
                stream=facts["stream"],
                cache=cache_from_recorded(body),
            )
            out = await collect(model, request_from_recorded(body))
            check_outcome(out, facts["expected"], model_id, request_id_of(turn.recorded))
            captured = server.captured[turn.k]
            suffix = "converse-stream" if facts["stream"] else "converse"
            assert captured.path == f"/model/{model_id}/{suffix}"
            assert captured.headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
            check_sent_request(captured.body, facts["request"], body, model_id)


async def test_streamed_tool_use_fragments_keep_their_call_id() -> None:
    path = WIRE / "bedrock/converse_tool_loop_stream.yaml"
    with ReplayServer(path, interactions=[0]) as server:
        model = BedrockModel.converse("us.amazon.nova-micro-v1:0", client=client_for(server))
        out = await collect(model, ModelRequest(messages=[UserMessage.text("temperature?")]))
    deltas = [e for e in out.events if isinstance(e, ToolCallDelta)]
    call = "tooluse_lAG_zP8QRHmSYOwZzzaCqA"
    assert deltas[0] == ToolCallDelta(call_id=call, name="get_temperature", args_delta="")
    assert all(d.call_id == call and d.name is None for d in deltas[1:])
    assert json.loads("".join(d.args_delta for d in deltas)) == {"city": "Paris"}
    kinds = [e.type for e in out.events]
    # the text streamed first, then the tool call, then usage and the finish
    assert kinds.index("tool_call_delta") > max(
        i for i, k in enumerate(kinds) if k == "token_delta"
    )
    assert kinds[-2:] == ["usage", "finish"]
    assert out.finishes[0].reason == "tool_calls"


async def test_reasoning_stream_carries_the_signature_after_the_text() -> None:
    path = WIRE / "bedrock/converse_reasoning_stream.yaml"
    entry = next(e for e in ENTRIES if e["file"].endswith("converse_reasoning_stream.yaml"))
    with ReplayServer(path) as server:
        model = BedrockModel.converse(
            "us.anthropic.claude-sonnet-4-20250514-v1:0", client=client_for(server)
        )
        out = await collect(model, ModelRequest(messages=[UserMessage.text("Hello")]))
    reasoning = [e for e in out.events if isinstance(e, ReasoningDelta)]
    signed = [e for e in reasoning if e.signature]
    assert [e.signature for e in signed] == [entry["expected"]["reasoning"][0]["signature"]]
    assert reasoning[-1] is signed[0]  # the signature closes the reasoning block
    assert "".join(e.text for e in reasoning) == entry["expected"]["reasoning"][0]["text"]
    first_text = next(i for i, e in enumerate(out.events) if isinstance(e, TokenDelta))
    assert all(isinstance(e, ReasoningDelta) for e in out.events[:first_text])


# --------------------------------------------------------------------------- agent run

TOOL_LOOP = WIRE / "bedrock" / "converse_tool_loop_stream.yaml"


def _without_titles(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """helikon's @tool leaves out the pydantic ``title`` of each property; the recorder's
    schemas kept it. Everything else must match."""
    out = copy.deepcopy(tools)
    for t in out:
        for prop in t["toolSpec"]["inputSchema"]["json"]["properties"].values():
            prop.pop("title", None)
    return out


async def test_recorded_tool_loop_runs_as_an_agent() -> None:
    entry = next(e for e in ENTRIES if e["file"] == "bedrock/converse_tool_loop_stream.yaml")
    recorded = load_cassette(TOOL_LOOP)
    with ReplayServer(TOOL_LOOP) as server:
        model = BedrockModel.converse("us.amazon.nova-micro-v1:0", client=client_for(server))
        agent = Agent(
            name="weather",
            model=model,
            instructions="You are a helpful chatbot.",
            tools=[get_capital, get_temperature],
            model_settings=ModelSettings(top_p=0.5),
        )
        result = await agent.run("What is the temperature of the capital of France?")
        sent = server.requests
        assert server.unmatched == []
    turn1, turn2 = (i["expected"] for i in entry["interactions"])
    assert result.final_output == turn2["text"]
    assert (
        result.usage.input_tokens == turn1["usage"]["input_tokens"] + turn2["usage"]["input_tokens"]
    )
    assert (
        result.usage.output_tokens
        == turn1["usage"]["output_tokens"] + turn2["usage"]["output_tokens"]
    )
    assert (
        result.usage.total_tokens == turn1["usage"]["total_tokens"] + turn2["usage"]["total_tokens"]
    )
    call = next(e for e in result.events if e.type == "tool_call_item")
    assert call.item.call_id == "tooluse_lAG_zP8QRHmSYOwZzzaCqA"
    assert call.item.args == {"city": "Paris"}
    output = next(e for e in result.events if e.type == "tool_output_item")
    assert output.item.content == [TextPart(text="30°C")]
    # the turn-1 text (Nova's <thinking> preamble) is a message, not the final answer
    messages = [e.item for e in result.events if e.type == "message_output"]
    assert [text_of(m.content) for m in messages] == [turn1["text"], turn2["text"]]
    assert len(sent) == 2
    for k in (0, 1):
        want = recorded[k].request_body
        assert sent[k]["system"] == want["system"]
        assert sent[k]["inferenceConfig"] == want["inferenceConfig"]
        assert _without_titles(sent[k]["toolConfig"]["tools"]) == _without_titles(
            want["toolConfig"]["tools"]
        )
        assert sent[k]["messages"] == want["messages"]  # status "success" included, as recorded


async def test_cache_writes_and_reads_count_in_the_whole_prompt() -> None:
    """The recorded cache write then read: inputTokens 2 each time, plus 1322 written, then
    1322 read; helikon's input_tokens is the whole prompt (1324), as Bedrock's totalTokens
    (1329) already counts it."""
    entry = next(e for e in ENTRIES if e["file"] == "bedrock/converse_cache_write_read.yaml")
    usages = []
    with replaying(entry) as (server, exchanges):
        for turn in exchanges:
            model = BedrockModel.converse(
                model_id_of(turn.recorded.path),
                client=client_for(server),
                stream=turn.facts["stream"],
                cache=cache_from_recorded(turn.body),
            )
            out = await collect(model, request_from_recorded(turn.body))
            u = out.usages[0].usage
            fields = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens")
            usages.append(tuple(getattr(u, f) for f in (*fields, "output_tokens", "total_tokens")))
    assert usages == [(1324, 0, 1322, 5, 1329), (1324, 1322, 0, 5, 1329)]

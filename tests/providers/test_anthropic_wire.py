"""AnthropicModel (Messages) against the recorded Anthropic wire traffic.

Every Anthropic recording in ``shared/wire/INDEX.json`` is replayed through ``AnthropicModel``
on a local ``ReplayServer``. For each used interaction the conversation is rebuilt from the
recorded request, sent through the adapter, and both directions are checked: what the adapter
extracted (text, tool calls with ids and parsed arguments, raw stop reason, usage, reasoning
with its signature, error class/status/message) equals the index's ``expected``, and the
request it sent equals the recorded request (system, messages, tools, cache breakpoints,
thinking, structured output). A whole agent run replays the recorded thinking tool loop.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.providers._wire import (
    WIRE,
    Outcome,
    assert_answered_by,
    assert_error_codes,
    assert_extracted,
    assert_one_finish,
    assert_reasoning_in_output,
    assert_signed_reasoning,
    assert_usage,
    collect,
    replaying,
    whole_prompt,
    wire_entries,
)

from helikon import Agent, ToolEffect, tool
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
)
from helikon.core.model import (
    JsonSchemaFormat,
    ModelRequest,
    ModelSettings,
    ToolCallDelta,
    ToolChoice,
    ToolDef,
)
from helikon.errors import ModelOther
from helikon.providers.anthropic import AnthropicModel, CacheStrategy, ExtendedThinking
from helikon.testing.replay import ReplayServer, load_cassette

# The SDK warns when a request names a model it lists as deprecated (claude-sonnet-4-5 in
# the recordings); that is the SDK talking to the user, not a test failure.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


ENTRIES = wire_entries(provider="anthropic")

USAGE_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cached_input_tokens",
    "cache_creation_input_tokens": "cache_write_input_tokens",
}


@pytest.fixture(autouse=True)
def _no_ambient_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/blocked-by-helikon-tests")


# --------------------------------------------------------------------------- helpers


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def _result_parts(content: Any) -> list[ContentPart]:
    if isinstance(content, str):
        return [TextPart(text=content)]
    return [TextPart(text=b["text"]) for b in content or [] if b.get("type") == "text"]


def items_from_recorded(body: dict[str, Any]) -> list[Item]:
    """Rebuild helikon items from a recorded Messages request body."""
    items: list[Item] = []
    system = body.get("system")
    if system is not None:
        for block in _blocks(system):
            items.append(SystemMessage(content=[TextPart(text=block["text"])]))
    for m in body["messages"]:
        blocks = _blocks(m["content"])
        if m["role"] == "user":
            for b in blocks:
                if b["type"] == "tool_result":
                    items.append(
                        ToolResult(
                            call_id=b["tool_use_id"],
                            content=_result_parts(b.get("content")),
                            is_error=bool(b.get("is_error")),
                        )
                    )
            texts = [TextPart(text=b["text"]) for b in blocks if b["type"] == "text"]
            if texts:
                items.append(UserMessage(content=list(texts)))
            continue
        parts: list[ContentPart] = []
        calls: list[Item] = []
        for b in blocks:
            if b["type"] == "thinking":
                parts.append(ReasoningPart(text=b["thinking"], signature=b["signature"]))
            elif b["type"] == "redacted_thinking":
                parts.append(ReasoningPart(redacted=b["data"]))
            elif b["type"] == "text":
                parts.append(TextPart(text=b["text"]))
            elif b["type"] == "tool_use":
                calls.append(ToolCall(call_id=b["id"], name=b["name"], args=b["input"]))
        if parts:
            items.append(AssistantMessage(content=parts))
        items.extend(calls)
    return items


def _marked(block: dict[str, Any]) -> bool:
    return block.get("cache_control") is not None


def cache_from_recorded(body: dict[str, Any]) -> CacheStrategy | None:
    """The CacheStrategy whose breakpoints reproduce the recorded ``cache_control`` marks."""
    system = body.get("system")
    system_marked = isinstance(system, list) and any(_marked(b) for b in system)
    tools_marked = any(_marked(t) for t in body.get("tools", []))
    turns = sum(
        1
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list) and _marked(m["content"][-1])
    )
    if not (system_marked or tools_marked or turns):
        return None
    return CacheStrategy(system=system_marked, tools=tools_marked, last_turns=turns)


_HANDLED = {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "thinking"}


def request_from_recorded(body: dict[str, Any]) -> ModelRequest:
    """The ModelRequest whose translation should reproduce the recorded request."""
    tools = [
        ToolDef(name=t["name"], description=t.get("description", ""), parameters=t["input_schema"])
        for t in body.get("tools", [])
    ]
    choice = body.get("tool_choice")
    tool_choice = None
    if choice is not None:
        assert choice == {"type": "auto"}, "the corpus only records tool_choice auto"
        tool_choice = ToolChoice("auto")
    fmt = None
    extra: dict[str, Any] = {}
    config = dict(body.get("output_config") or {})
    if "format" in config:
        spec = config.pop("format")
        assert spec["type"] == "json_schema"
        fmt = JsonSchemaFormat(name="output", schema=spec["schema"])
    if config:
        extra["output_config"] = config
    settings = ModelSettings(tool_choice=tool_choice, response_format=fmt, extra=extra)
    return ModelRequest(messages=items_from_recorded(body), tools=tools, settings=settings)


def model_for(facts: dict[str, Any] | None, server: ReplayServer, body: Any) -> AnthropicModel:
    if facts is None or body is None:  # the body-only refusal fixture has no request
        return AnthropicModel.messages(
            "claude-fable-5", api_key="test-key", base_url=server.base_url
        )
    thinking = facts.get("thinking")
    return AnthropicModel.messages(
        facts["model"],
        api_key="test-key",
        base_url=server.base_url,
        max_tokens=facts["max_tokens"],
        stream=bool(facts.get("stream", False)),
        thinking=ExtendedThinking(budget_tokens=thinking["budget_tokens"]) if thinking else None,
        cache=cache_from_recorded(body),
    )


def api_key_sent(headers: dict[str, str]) -> str | None:
    """The key as the SDK sent it (``x-api-key``, or a bearer token in newer SDKs)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def normalize_block(block: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in block.items() if v is not None}
    if out["type"] == "tool_result":
        out.setdefault("is_error", False)
    return out


def normalize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Compare messages by meaning: string content as one text block, null fields dropped."""
    return [
        {"role": m["role"], "content": [normalize_block(b) for b in _blocks(m["content"])]}
        for m in messages
    ]


def check_sent_request(sent: dict[str, Any], facts: dict[str, Any], recorded: Any) -> None:
    assert sent["model"] == facts["model"]
    assert sent["max_tokens"] == facts["max_tokens"]
    assert sent["stream"] is bool(facts.get("stream", False))
    assert len(recorded["messages"]) == facts["n_input_items"]
    assert normalize_messages(sent["messages"]) == normalize_messages(recorded["messages"])
    for key in ("thinking", "tool_choice", "output_config"):
        assert sent.get(key) == recorded.get(key), key
    if "system" in recorded:
        assert [normalize_block(b) for b in sent["system"]] == [
            normalize_block(b) for b in _blocks(recorded["system"])
        ]
    else:
        assert "system" not in sent
    if "tools" in facts:
        assert [t["name"] for t in sent["tools"]] == facts["tools"]
        assert sent["tools"] == recorded["tools"]
    else:
        assert "tools" not in sent


def check_outcome(out: Outcome, expected: dict[str, Any]) -> None:
    if "error" in expected:
        err = expected["error"]
        assert isinstance(out.error, ModelOther), out.error
        assert out.error.status_code == err["http_status"]
        if err["http_status"] == 401:
            assert err["message"] in out.error.message
            assert "ANTHROPIC_API_KEY" in out.error.message
        else:
            assert out.error.message == err["message"]
        assert out.finishes == []
        assert_error_codes(out, err["type"], None)  # Anthropic's envelope has no code
        return
    assert out.error is None, out.error
    assert_extracted(out, expected)
    usage = assert_usage(
        out,
        whole_prompt(expected["usage"], "cache_read_input_tokens", "cache_creation_input_tokens"),
        USAGE_FIELDS,
    )
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert_one_finish(out, expected["finish_reason"])
    assert_answered_by(out, expected["model"], expected["response_id"])
    # Anthropic counts thinking inside output_tokens and reports no separate count
    assert_reasoning_in_output(usage, expected["usage"])
    assert_signed_reasoning(out, expected)
    if "stop_details" in expected:
        data = [e.data for e in out.events if e.type == "provider_metadata"]
        assert data == [{"stop_details": expected["stop_details"]}]


# --------------------------------------------------------------------------- recordings


def test_index_lists_the_anthropic_recordings() -> None:
    files = {e["file"] for e in ENTRIES}
    assert len(files) == 10
    assert "anthropic/messages_thinking_tool_loop.yaml" in files
    assert "anthropic/messages_refusal_stream.chunks.txt" in files


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
async def test_recording_replays_through_anthropic_model(entry: dict[str, Any]) -> None:
    with replaying(entry) as (server, exchanges):
        for turn in exchanges:
            facts, body = turn.facts, turn.body
            model = model_for(facts.get("request"), server, body)
            request = (
                request_from_recorded(body)
                if body is not None
                else ModelRequest(messages=[UserMessage.text("write malware")])
            )
            try:
                out = await collect(model, request)
            finally:
                await model.aclose()
            check_outcome(out, facts["expected"])
            sent = server.requests[turn.k]
            if body is not None:
                check_sent_request(sent, facts["request"], body)
            assert api_key_sent(server.captured[turn.k].headers) == "test-key"


async def test_streamed_tool_use_fragments_keep_their_call_id() -> None:
    path = WIRE / "anthropic/messages_parallel_tools_stream.yaml"
    with ReplayServer(path, interactions=[0]) as server:
        model = AnthropicModel.messages("claude-sonnet-4-0", api_key="k", base_url=server.base_url)
        out = await collect(model, ModelRequest(messages=[UserMessage.text("secrets")]))
        await model.aclose()
    deltas = [e for e in out.events if isinstance(e, ToolCallDelta)]
    first, second = "toolu_015cUijgET79LXjgeYQerN2h", "toolu_01XZTimPexA7h3EVKesnKt5T"
    # one opening delta per call (id + name), then one per non-empty input_json_delta
    assert [(d.call_id, d.name) for d in deltas] == [
        (first, "secret_retrieval_tool"),
        (first, None),
        (first, None),
        (first, None),
        (second, "secret_retrieval_tool"),
        (second, None),
        (second, None),
        (second, None),
        (second, None),
    ]
    assert [d.args_delta for d in deltas[:4]] == ["", '{"passwo', 'rd": "mellon', '"}']


async def test_thinking_stream_carries_the_signature_delta() -> None:
    path = WIRE / "anthropic/messages_thinking_stream.yaml"
    entry = next(e for e in ENTRIES if e["file"].endswith("messages_thinking_stream.yaml"))
    with ReplayServer(path, interactions=[0]) as server:
        model = AnthropicModel.messages(
            "claude-sonnet-4-0",
            api_key="k",
            base_url=server.base_url,
            max_tokens=4096,
            thinking=ExtendedThinking(budget_tokens=1024),
        )
        out = await collect(model, ModelRequest(messages=[UserMessage.text("cross?")]))
        await model.aclose()
    signed = [e for e in out.events if e.type == "reasoning_delta" and e.signature]
    assert [e.signature for e in signed] == [entry["expected"]["reasoning"][0]["signature"]]
    kinds = [e.type for e in out.events]
    # thinking first, then the signature, then text: the order the API streamed them
    assert kinds.index("token_delta") > out.events.index(signed[0])
    assert all(k == "reasoning_delta" for k in kinds[: out.events.index(signed[0])])


# --------------------------------------------------------------------------- agent run

TOOL_LOOP = WIRE / "anthropic" / "messages_thinking_tool_loop.yaml"


@tool(effect=ToolEffect.READ_ONLY, description="")
def get_user_country() -> str:
    """Return the user's country."""
    return "Mexico"


async def test_recorded_thinking_tool_loop_runs_as_an_agent() -> None:
    entry = next(e for e in ENTRIES if e["file"] == "anthropic/messages_thinking_tool_loop.yaml")
    recorded = load_cassette(TOOL_LOOP)
    with ReplayServer(TOOL_LOOP) as server:
        model = AnthropicModel.messages(
            "claude-sonnet-4-0",
            api_key="test-key",
            base_url=server.base_url,
            max_tokens=4096,
            thinking=ExtendedThinking(budget_tokens=3000),
            stream=False,
        )
        agent = Agent(name="geo", model=model, tools=[get_user_country])
        try:
            result = await agent.run("What is the largest city in the user country?")
        finally:
            await model.aclose()
        sent = server.requests
    turn1, turn2 = (i["expected"] for i in entry["interactions"])
    assert result.final_output == turn2["text"]
    assert (
        result.usage.input_tokens == turn1["usage"]["input_tokens"] + turn2["usage"]["input_tokens"]
    )
    assert (
        result.usage.output_tokens
        == turn1["usage"]["output_tokens"] + turn2["usage"]["output_tokens"]
    )
    call = next(e for e in result.events if e.type == "tool_call_item")
    assert call.item.call_id == "toolu_01YGzqpRE16Vricda3Aqcejo"
    assert call.item.args == {}
    assert len(sent) == 2
    # turn 2 replays the signed thinking block first, then the text and the tool_use, and
    # the tool result follows in the next user message: exactly the recorded request.
    assert normalize_messages(sent[1]["messages"]) == normalize_messages(
        recorded[1].request_body["messages"]
    )
    assistant = sent[1]["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
    assert assistant[0]["signature"] == turn1["reasoning"][0]["signature"]
    assert assistant[0]["thinking"] == turn1["reasoning"][0]["text"]
    assert sent[1]["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01YGzqpRE16Vricda3Aqcejo",
                "content": "Mexico",
                "is_error": False,
            }
        ],
    }
    assert [t["name"] for t in sent[0]["tools"]] == ["get_user_country"]
    assert sent[0]["thinking"] == {"type": "enabled", "budget_tokens": 3000}


PARALLEL = WIRE / "anthropic" / "messages_parallel_tools_stream.yaml"
SECRETS = {"mellon": "Welcome to Moria!", "radiance": "Life before Death"}


@tool(
    effect=ToolEffect.READ_ONLY,
    description="A tool that requires a password to retrieve a secret.",
)
def secret_retrieval_tool(password: str) -> str:
    """Return the secret behind ``password``."""
    return SECRETS[password]


async def test_recorded_parallel_tool_loop_with_cache_breakpoints() -> None:
    recorded = load_cassette(PARALLEL)
    with ReplayServer(PARALLEL) as server:
        model = AnthropicModel.messages(
            "claude-sonnet-4-0",
            api_key="test-key",
            base_url=server.base_url,
            max_tokens=16000,
            cache=CacheStrategy(system=True, tools=True, last_turns=1),
        )
        agent = Agent(
            name="secrets",
            model=model,
            instructions="Use parallel tool calling.",
            tools=[secret_retrieval_tool],
        )
        try:
            result = await agent.run(
                "Please retrieve the secrets associated with each of these passwords: "
                "mellon,radiance"
            )
        finally:
            await model.aclose()
        sent = server.requests
    assert result.final_output.startswith("Here are the secrets retrieved for each password")
    assert len(sent) == 2
    for k in (0, 1):
        want = recorded[k].request_body
        assert sent[k]["system"] == want["system"]
        assert sent[k]["tools"][0]["cache_control"] == {"type": "ephemeral"}
        assert sent[k]["tools"][0]["description"] == want["tools"][0]["description"]
    # turn 2: messages and their breakpoints exactly as recorded; the two tool results share
    # one user message right after the assistant's tool_use turn, the last one is marked
    assert normalize_messages(sent[1]["messages"]) == normalize_messages(
        recorded[1].request_body["messages"]
    )
    # turn 1: the recorder left its only user message unmarked; last_turns=1 marks it
    first = sent[0]["messages"]
    assert first[0]["content"][-1].pop("cache_control") == {"type": "ephemeral"}
    assert normalize_messages(first) == normalize_messages(recorded[0].request_body["messages"])


async def test_cache_writes_and_reads_count_in_the_whole_prompt() -> None:
    """The recorded cache write then read: Anthropic's input_tokens (8, then 12) is the
    uncached part; helikon's is the whole prompt: + 4167 written, then + 4167 read."""
    entry = next(e for e in ENTRIES if e["file"] == "anthropic/messages_cache_write_read.yaml")
    usages = []
    with replaying(entry) as (server, exchanges):
        for turn in exchanges:
            model = model_for(turn.facts.get("request"), server, turn.body)
            try:
                out = await collect(model, request_from_recorded(turn.body))
            finally:
                await model.aclose()
            u = out.usages[0].usage
            fields = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens")
            usages.append(tuple(getattr(u, f) for f in (*fields, "output_tokens", "total_tokens")))
    assert usages == [(8 + 4167, 0, 4167, 204, 4379), (12 + 4167, 4167, 0, 350, 4529)]

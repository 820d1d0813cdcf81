"""OpenAIModel.responses against recorded and synthesized Responses API traffic.

Every Responses recording in ``shared/wire/INDEX.json`` is replayed through the adapter on a
local ``ReplayServer``. The first turn of a recording is rebuilt from its recorded request;
each later turn continues the conversation from what the adapter itself produced (its items
and ``provider_data``) plus the recorded new input (tool outputs, user turns). Both directions
are checked: what the adapter extracted (text, tool calls with call ids and parsed arguments,
raw status, usage, reasoning items, refusal, response id and model, errors) equals the
index's ``expected``, and the request it sent matches the recorded request, item by item.
Two whole agent runs go over the recorded tool loops, statelessly and with server state.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any, cast

import pytest
from tests.providers._wire import (
    WIRE,
    Outcome,
    assert_answered_by,
    assert_error,
    assert_error_codes,
    assert_one_finish,
    assert_reasoning_in_output,
    assert_usage,
    cancel_after_first_token,
    replaying,
    wire_entries,
)
from tests.providers._wire import collect as collect_outcome

from helikon import Agent, ToolEffect, tool
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
    UserMessage,
)
from helikon.core.model import (
    Finish,
    FinishReason,
    JsonObjectFormat,
    JsonSchemaFormat,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
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
from helikon.providers.openai.responses import PROVIDER_DATA_KEY, OpenAIResponsesModel
from helikon.testing.replay import Pause, ReplayServer, load_cassette

ENTRIES = wire_entries(api="responses")
ECHO_TYPES = frozenset({"reasoning", "function_call"})


# --------------------------------------------------------------------------- helpers


class ResponsesOutcome(Outcome):
    """What one invoke produced, with the turn's Responses state."""

    @property
    def turn_data(self) -> dict[str, Any]:
        metas = self.metadata
        assert len(metas) == 1
        assert metas[0].call_id is None
        return cast("dict[str, Any]", metas[0].data[PROVIDER_DATA_KEY])

    def items(self, agent: str = "agent") -> list[Item]:
        return super().items(agent)


async def collect(
    model: OpenAIModel, request: ModelRequest, cancel: CancellationToken | None = None
) -> ResponsesOutcome:
    out: ResponsesOutcome = await collect_outcome(model, request, cancel, ResponsesOutcome)
    return out


def _norm(text: str) -> str:
    """pydantic-ai's recorder NFKC-normalises request strings and makes quotes ASCII."""
    text = unicodedata.normalize("NFKC", text)
    for a, b in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(a, b)
    return text


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(
        p.get("text", "") for p in content if p.get("type") in ("input_text", "output_text")
    )


def _is_system(item: Mapping[str, Any]) -> bool:
    return item.get("role") in ("system", "developer")


def _is_echo(item: Mapping[str, Any]) -> bool:
    return item.get("type") in ECHO_TYPES or item.get("role") == "assistant"


def items_from_input(recorded: list[dict[str, Any]]) -> list[Item]:
    """Helikon items for recorded input items (no echoed assistant output expected)."""
    items: list[Item] = []
    for it in recorded:
        kind = it.get("type", "message")
        if kind == "message" and _is_system(it):
            items.append(SystemMessage(content=[TextPart(text=_text(it["content"]))]))
        elif kind == "message" and it["role"] == "user":
            content = it["content"]
            if isinstance(content, str):
                items.append(UserMessage.text(content))
            else:
                parts: list[ContentPart] = [TextPart(text=p["text"]) for p in content]
                items.append(UserMessage(content=parts))
        elif kind == "message" and it["role"] == "assistant":
            items.append(AssistantMessage(content=[TextPart(text=_text(it["content"]))]))
        elif kind == "function_call":
            args = json.loads(it["arguments"])
            items.append(ToolCall(call_id=it["call_id"], name=it["name"], args=args))
        elif kind == "function_call_output":
            output: list[ContentPart] = [TextPart(text=it["output"])]
            items.append(ToolResult(call_id=it["call_id"], content=output))
        else:  # pragma: no cover - the corpus has no other input items
            raise AssertionError(f"unexpected input item {kind}")
    return items


def first_messages(body: Mapping[str, Any]) -> list[Item]:
    """The conversation whose translation gives the first recorded request ``body``."""
    items = items_from_input(body["input"])
    if body.get("instructions"):
        items.insert(0, SystemMessage(content=[TextPart(text=body["instructions"])]))
    return items


def tools_of(body: Mapping[str, Any]) -> list[ToolDef]:
    return [
        ToolDef(
            name=t["name"],
            description=t.get("description") or "",
            parameters=t["parameters"],
            strict=t.get("strict"),
        )
        for t in body.get("tools", [])
    ]


def settings_of(body: Mapping[str, Any]) -> ModelSettings:
    fmt: JsonSchemaFormat | JsonObjectFormat | None = None
    tf = (body.get("text") or {}).get("format")
    if tf and tf["type"] == "json_schema":
        fmt = JsonSchemaFormat(name=tf["name"], schema=tf["schema"], strict=tf.get("strict", True))
    elif tf and tf["type"] == "json_object":
        fmt = JsonObjectFormat()
    choice = body.get("tool_choice")
    extra = {k: body[k] for k in ("prompt_cache_key", "prompt_cache_options") if k in body}
    return ModelSettings(
        temperature=body.get("temperature"),
        tool_choice=ToolChoice(mode=cast("Any", choice)) if isinstance(choice, str) else None,
        response_format=fmt,
        extra=extra,
    )


def options_of(body: Mapping[str, Any]) -> dict[str, Any]:
    return {"include": body.get("include", ()), "reasoning": body.get("reasoning")}


def _canon(item: Mapping[str, Any], ids: bool) -> Any:
    """An input item by meaning; ``ids`` keeps message / function-call item ids."""
    kind = item.get("type", "message")
    if kind == "message":
        out: dict[str, Any] = {"role": item["role"], "text": _norm(_text(item.get("content")))}
        if item.get("phase"):
            out["phase"] = item["phase"]
    elif kind == "function_call":
        out = {"call_id": item["call_id"], "name": item["name"]}
        out["arguments"] = json.loads(item["arguments"])
    elif kind == "function_call_output":
        out = {"call_id": item["call_id"], "output": _norm(item["output"])}
    elif kind == "reasoning":
        out = {
            "id": item["id"],
            "summary": [_norm(s["text"]) for s in item["summary"]],
            "encrypted_content": item.get("encrypted_content"),
        }
    else:  # pragma: no cover
        raise AssertionError(kind)
    if ids and kind in ("message", "function_call"):
        out["id"] = item.get("id")
    return (kind, out)


def _comparable(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop what the adapter moves (system text to ``instructions``) or never sends (an
    empty assistant message that some clients add before a tool call)."""
    return [
        it
        for it in items
        if not (it.get("type", "message") == "message" and _is_system(it))
        and not (it.get("role") == "assistant" and not _text(it.get("content")))
    ]


def check_sent_request(sent: dict[str, Any], facts: dict[str, Any], recorded: Any) -> None:
    assert sent["model"] == facts["model"]
    assert sent["stream"] is facts["stream"]
    for key in ("tool_choice", "include", "reasoning", "text", "prompt_cache_key", "temperature"):
        if key in facts:
            assert sent[key] == facts[key], key
        else:
            assert key not in sent, key
    if "tools" in facts:
        assert [t["name"] for t in sent["tools"]] == facts["tools"]
        for ours, theirs in zip(sent["tools"], recorded["tools"], strict=True):
            assert ours["type"] == theirs["type"] == "function"
            assert ours["parameters"] == theirs["parameters"]
            assert ours["strict"] == theirs["strict"]
            assert (ours.get("description") or None) == (theirs.get("description") or None)
    else:
        assert "tools" not in sent
    instructions = [recorded.get("instructions") or ""] + [
        _text(it["content"]) for it in recorded["input"] if _is_system(it)
    ]
    assert sent.get("instructions", "") == "\n\n".join(t for t in instructions if t)
    assert len(recorded["input"]) == facts["n_input_items"]
    theirs = _comparable(recorded["input"])
    ours = sent["input"]
    assert len(ours) == len(theirs)
    for mine, rec in zip(ours, theirs, strict=True):
        assert _canon(mine, "id" in rec) == _canon(rec, "id" in rec)


def check_outcome(out: ResponsesOutcome, expected: dict[str, Any]) -> None:
    if "error" in expected:
        assert_error(out, expected["error"], ModelOther)
        assert_error_codes(out, expected["error"]["type"], expected["error"]["code"])
        return
    assert_usage(out, expected["usage"])
    assert_reasoning_in_output(out.usages[0].usage, expected["usage"])
    assert out.text == expected["text"]
    if "text_from_deltas" in expected:
        assert out.text == expected["text_from_deltas"]
    assert out.tool_calls == expected["tool_calls"]
    data = out.turn_data
    assert data["id"] == expected["response_id"]
    assert data["model"] == expected["model"]
    reasoning = [e for e in data["output"] if e["type"] == "reasoning"]
    got_reasoning = []
    for entry, want in zip(reasoning, expected.get("reasoning", []), strict=True):
        got: dict[str, Any] = {"id": entry["id"], "summary": [s["text"] for s in entry["summary"]]}
        if "has_encrypted_content" in want:
            got["has_encrypted_content"] = bool(entry.get("encrypted_content"))
        got_reasoning.append(got)
    assert got_reasoning == expected.get("reasoning", [])
    summaries = [s["text"] for e in reasoning for s in e["summary"]]
    assert out.reasoning_text == "\n\n".join(summaries)
    calls = [e["call_id"] for e in data["output"] if e["type"] == "function_call"]
    assert calls == [c["id"] for c in expected["tool_calls"]]
    if expected.get("refusal"):
        # A refusal with no content surfaces as Refused carrying the refusal text; the raw
        # status ("completed") is not reported because the stream ends with the error.
        assert isinstance(out.error, Refused)
        assert out.error.message == expected["refusal"]
        assert out.finishes == []
        return
    assert out.error is None, out.error
    finish = assert_one_finish(out, expected["finish_reason"])
    assert_answered_by(out, expected["model"], expected["response_id"])
    wanted = FinishReason.TOOL_CALLS if expected["tool_calls"] else FinishReason.STOP
    assert finish.reason is wanted


def api_base(server: ReplayServer) -> str:
    return server.base_url + "/v1"


# --------------------------------------------------------------------------- recordings


def test_index_lists_the_responses_recordings() -> None:
    assert len({e["file"] for e in ENTRIES}) == 10


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
async def test_recording_replays_through_the_responses_adapter(entry: dict[str, Any]) -> None:
    conversation: list[Item] = []
    previous_input: list[dict[str, Any]] | None = None
    with replaying(entry) as (server, exchanges):
        for turn in exchanges:
            facts, body = turn.facts, turn.body
            assert isinstance(body, dict)
            new_input = body["input"]
            if (
                previous_input is not None
                and len(new_input) > len(previous_input)
                and new_input[: len(previous_input)] == previous_input
            ):
                # a later turn: continue from what the adapter produced, then add the
                # recorded new input (tool outputs, a user turn) after the echoed output
                rest = new_input[len(previous_input) :]
                while rest and _is_echo(rest[0]):
                    rest = rest[1:]
                messages = conversation + items_from_input(rest)
            else:
                messages = first_messages(body)
            request = ModelRequest(messages, tools_of(body), settings_of(body))
            model = OpenAIModel.responses(
                facts["request"]["model"],
                api_key="test-key",
                base_url=api_base(server),
                stream=bool(facts["request"]["stream"]),
                **options_of(body),
            )
            try:
                out = await collect(model, request)
            finally:
                await model.aclose()
            check_outcome(out, facts["expected"])
            check_sent_request(server.requests[turn.k], facts["request"], body)
            conversation = request.messages + (out.items() if out.error is None else [])
            previous_input = new_input


async def test_reasoning_turn_round_trips_through_items() -> None:
    """The reasoning item (with its encrypted content from ``output_item.done``), the
    commentary message (id, phase) and the call (id) come back in output order."""
    path = WIRE / "openai/responses_tool_loop_stream_reasoning.yaml"
    recorded = load_cassette(path, [0, 1])
    with ReplayServer(path, interactions=[0]) as server:
        model = OpenAIModel.responses(
            "gpt-5.5",
            api_key="k",
            base_url=api_base(server),
            include=["reasoning.encrypted_content"],
        )
        out = await collect(model, ModelRequest(messages=[UserMessage.text("capital?")]))
        await model.aclose()
    items = out.items()
    assert [type(i) for i in items] == [AssistantMessage, ToolCall]
    message = items[0]
    assert isinstance(message, AssistantMessage)
    assert message.content == [
        TextPart(text="I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d")
    ]
    assert message.provider_data is not None
    history = [UserMessage.text("capital?"), *items]
    history.append(
        ToolResult(call_id="call_LabG58Uhrq9kZvR52BYKjToD", content=[TextPart(text="x")])
    )
    sent = OpenAIModel.responses("gpt-5.5", api_key="k").request_body(ModelRequest(history))
    want = recorded[1].request_body["input"]
    assert [i.get("type", "message") for i in sent["input"]] == [
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert sent["input"][1] == {
        "type": "reasoning",
        "id": want[1]["id"],
        "summary": [],
        "encrypted_content": want[1]["encrypted_content"],
    }
    assert sent["input"][2]["id"] == want[2]["id"]
    assert sent["input"][2]["phase"] == "commentary"
    assert sent["input"][3]["id"] == want[3]["id"]


async def test_parallel_calls_stream_their_own_arguments() -> None:
    path = WIRE / "openai/responses_parallel_tools_stream.yaml"
    with ReplayServer(path, interactions=[0]) as server:
        model = OpenAIModel.responses("gpt-4o", api_key="k", base_url=api_base(server))
        out = await collect(model, ModelRequest(messages=[UserMessage.text("secrets")]))
        await model.aclose()
    deltas = [e for e in out.events if isinstance(e, ToolCallDelta)]
    assert [d.call_id for d in deltas if d.name] == [
        "call_sKC7OABqf2A2PTLCm0CLeRWV",
        "call_OdR3s3xop0vtgkDyWRMLafuH",
    ]
    assert len(deltas) == 2 + 7 + 6  # one name delta per call, then the argument fragments
    assert [(f.reason, f.raw) for f in out.finishes] == [(FinishReason.TOOL_CALLS, "completed")]


# --------------------------------------------------------------------------- agent runs


@tool(effect=ToolEffect.READ_ONLY, description="")
def get_capital(country: str) -> str:
    """Return a country's capital."""
    return {"PotatoLand": "Potato City"}.get(country, "unknown")


AGENT_CASES = [
    (
        "openai/responses_tool_loop.yaml",
        "gpt-4o",
        None,
        False,
        {},
        "The capital of PotatoLand is Potato City.",
    ),
    (
        "openai/responses_tool_loop_stream_reasoning.yaml",
        "gpt-5.5",
        "Briefly narrate what you are about to do before calling each tool.",
        True,
        {"include": ["reasoning.encrypted_content"]},
        "The capital of PotatoLand is **Potato City**.",
    ),
]


@pytest.mark.parametrize("server_state", [False, True], ids=["stateless", "server_state"])
@pytest.mark.parametrize("case", AGENT_CASES, ids=[c[0] for c in AGENT_CASES])
async def test_recorded_tool_loop_runs_as_an_agent(case: Any, server_state: bool) -> None:
    file, model_id, instructions, stream, options, answer = case
    path = WIRE / file
    recorded = load_cassette(path, [0, 1])
    with ReplayServer(path, interactions=[0, 1]) as server:
        model = OpenAIModel.responses(
            model_id,
            api_key="test-key",
            base_url=api_base(server),
            stream=stream,
            server_state=server_state,
            **options,
        )
        agent = Agent(name="capitals", model=model, instructions=instructions, tools=[get_capital])
        try:
            result = await agent.run("What is the capital of PotatoLand?")
        finally:
            await model.aclose()
        sent = server.requests
    assert result.final_output == answer
    entry = next(e for e in ENTRIES if e["file"] == file)
    call = next(e for e in result.events if e.type == "tool_call_item")
    assert call.item.call_id == entry["interactions"][0]["expected"]["tool_calls"][0]["id"]
    assert call.item.args == {"country": "PotatoLand"}
    assert len(sent) == 2
    assert [t["name"] for t in sent[0]["tools"]] == ["get_capital"]
    assert sent[0]["stream"] is stream
    assert sent[1].get("instructions") == instructions
    if server_state:
        first_id = entry["interactions"][0]["expected"]["response_id"]
        assert sent[1]["previous_response_id"] == first_id
        assert sent[1]["input"] == [
            {"type": "function_call_output", "call_id": call.item.call_id, "output": "Potato City"}
        ]
    else:
        assert "previous_response_id" not in sent[1]
        want = _comparable(recorded[1].request_body["input"])
        assert len(sent[1]["input"]) == len(want)
        for mine, rec in zip(sent[1]["input"], want, strict=True):
            assert _canon(mine, "id" in rec) == _canon(rec, "id" in rec)
    assert result.usage.input_tokens == sum(
        facts["expected"]["usage"]["input_tokens"] for facts in entry["interactions"]
    )


# --------------------------------------------------------------------------- synthesized

SYNTH_ANSWER = {"model": "gpt-5-synth", "response_id": "resp_synth"}
"""What the synthesized answers below name as the answering model and response id."""


def _ev(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}"


USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens": 6,
    "output_tokens_details": {"reasoning_tokens": 2},
    "total_tokens": 16,
}


def _response(
    status: str = "completed",
    output: list[dict[str, Any]] | None = None,
    *,
    reason: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": "resp_synth",
        "object": "response",
        "model": "gpt-5-synth",
        "status": status,
        "output": output or [],
        "incomplete_details": {"reason": reason} if reason else None,
        "error": error,
        "usage": USAGE,
    }


def _message(text: str, item_id: str = "msg_1", **extra: Any) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {"type": "message", "id": item_id, "role": "assistant", "content": [part], **extra}


def _text_stream(text: str, terminal: str, response: dict[str, Any]) -> list[Any]:
    return [
        _ev("response.created", response={"id": "resp_synth", "status": "in_progress"}),
        _ev("response.output_item.added", output_index=0, item=_message("", "msg_1")),
        _ev("response.output_text.delta", output_index=0, item_id="msg_1", delta=text),
        _ev(terminal, response=response),
    ]


HELLO = ModelRequest(messages=[UserMessage.text("hello")])


async def _run_against(
    responses: list[Any], request: ModelRequest = HELLO, **kw: Any
) -> tuple[ResponsesOutcome, list[Any]]:
    with ReplayServer.from_responses(responses, path="/v1/responses") as server:
        model = OpenAIModel.responses("gpt-5", api_key="k", base_url=api_base(server), **kw)
        try:
            out = await collect(model, request)
        finally:
            await model.aclose()
        return out, server.requests


@pytest.mark.parametrize(
    ("reason", "mapped"),
    [
        ("max_output_tokens", FinishReason.LENGTH),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("something_new", FinishReason.OTHER),
    ],
)
async def test_incomplete_status_maps_with_its_reason(reason: str, mapped: FinishReason) -> None:
    final = _response("incomplete", [_message("Hal")], reason=reason)
    out, _ = await _run_against([(200, {}, _text_stream("Hal", "response.incomplete", final))])
    assert out.text == "Hal"
    assert out.finishes == [Finish(reason=mapped, raw=f"incomplete:{reason}", **SYNTH_ANSWER)]
    usage = out.usages[0].usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.reasoning_tokens) == (10, 4, 2)
    assert (usage.output_tokens, usage.total_tokens) == (6, 16)


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        ("server_error", ModelUnavailable),
        ("rate_limit_exceeded", RateLimited),
        ("context_length_exceeded", ContextLengthExceeded),
        ("invalid_prompt", ModelOther),
    ],
)
async def test_failed_response_raises_the_mapped_error(
    code: str, error_type: type[ModelError]
) -> None:
    final = _response("failed", error={"code": code, "message": f"boom: {code}"})
    out, _ = await _run_against([(200, {}, _text_stream("", "response.failed", final))])
    assert type(out.error) is error_type
    assert out.error.message == f"boom: {code}"
    assert len(out.usages) == 1  # the tokens were spent all the same
    assert out.finishes == []


async def test_failed_non_streamed_response_raises() -> None:
    body = _response("failed", error={"code": "server_error", "message": "down"})
    out, _ = await _run_against([(200, {}, body)], stream=False)
    assert type(out.error) is ModelUnavailable
    assert out.error.message == "down"


async def test_error_event_mid_stream() -> None:
    events = [
        _ev("response.created", response={"id": "resp_synth"}),
        _ev("error", code="server_error", message="The server had an error", param=None),
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert type(out.error) is ModelUnavailable
    assert out.error.message == "The server had an error"


async def test_error_envelope_mid_stream() -> None:
    events = [{"error": {"message": "Rate limit reached", "type": "requests", "code": None}}]
    out, _ = await _run_against([(200, {}, cast("Any", events))])
    assert type(out.error) is ModelOther
    assert out.error.message == "Rate limit reached"


async def test_stream_cut_off_before_completion_is_transport_error() -> None:
    events = _text_stream("Hal", "response.completed", _response())[:-1]
    out, _ = await _run_against([(200, {}, events)])
    assert type(out.error) is TransportError
    assert out.text == "Hal"
    assert out.finishes == []


@pytest.mark.parametrize(
    ("status", "headers", "body", "error_type", "retry_after"),
    [
        (429, {"retry-after": "3"}, {"code": "rate_limit_exceeded"}, RateLimited, 3.0),
        (503, {}, {"type": "server_error"}, ModelUnavailable, None),
        (400, {}, {"code": "context_length_exceeded"}, ContextLengthExceeded, None),
    ],
)
async def test_http_errors_map_like_chat(
    status: int,
    headers: dict[str, str],
    body: dict[str, Any],
    error_type: type[ModelError],
    retry_after: float | None,
) -> None:
    envelope = {"error": {"message": "nope", "param": None, "type": None, "code": None, **body}}
    out, _ = await _run_against([(status, headers, envelope)])
    assert type(out.error) is error_type
    assert out.error.status_code == status
    assert out.error.message == "nope"
    assert getattr(out.error, "retry_after", None) == retry_after


async def test_refusal_with_text_finishes_with_refusal() -> None:
    message = _message("Partly: ")
    message["content"].append({"type": "refusal", "refusal": "I can't."})
    out, _ = await _run_against([(200, {}, _response("completed", [message]))], stream=False)
    assert out.error is None
    assert out.text == "Partly: "
    assert out.finishes == [Finish(reason=FinishReason.REFUSAL, raw="completed", **SYNTH_ANSWER)]
    assert out.turn_data["output"] == [{"type": "message", "id": "msg_1", "refusal": "I can't."}]


async def test_reasoning_summary_parts_and_raw_reasoning_text() -> None:
    rs = {"type": "reasoning", "id": "rs_1", "summary": []}
    done = {**rs, "summary": [{"type": "summary_text", "text": t} for t in ("A1", "B")]}
    events = [
        _ev("response.created", response={"id": "resp_synth"}),
        _ev("response.output_item.added", output_index=0, item=rs),
        _ev("response.reasoning_summary_text.delta", output_index=0, summary_index=0, delta="A"),
        _ev("response.reasoning_summary_text.delta", output_index=0, summary_index=0, delta="1"),
        _ev("response.reasoning_summary_text.delta", output_index=0, summary_index=1, delta="B"),
        _ev("response.output_item.done", output_index=0, item=done),
        _ev("response.reasoning_text.delta", output_index=1, item_id="rs_2", delta="raw"),
        _ev("response.completed", response=_response("completed", [done])),
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert [e.text for e in out.events if isinstance(e, ReasoningDelta)] == [
        "A",
        "1",
        "\n\n",
        "B",
        "\n\n",
        "raw",
    ]
    items = out.items()
    assert len(items) == 1
    assert isinstance(items[0], AssistantMessage)
    assert items[0].content == [ReasoningPart(text="A1\n\nB\n\nraw")]
    assert out.turn_data["output"][0] == done


async def test_arguments_without_deltas_are_sent_once() -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    full = {**call, "arguments": '{"a":1}'}
    events = [
        _ev("response.output_item.added", output_index=0, item={**call, "arguments": ""}),
        _ev("response.function_call_arguments.done", output_index=0, arguments='{"a":1}'),
        _ev("response.output_item.done", output_index=0, item=full),
        _ev("response.completed", response=_response("completed", [full])),
    ]
    out, _ = await _run_against([(200, {}, events)])
    deltas = [e for e in out.events if isinstance(e, ToolCallDelta)]
    assert deltas == [
        ToolCallDelta(call_id="call_1", name="f", args_delta=""),
        ToolCallDelta(call_id="call_1", args_delta='{"a":1}'),
    ]
    assert out.finishes == [Finish(reason=FinishReason.TOOL_CALLS, raw="completed", **SYNTH_ANSWER)]


async def test_argument_deltas_before_the_name_wait_for_it() -> None:
    full = {"type": "function_call", "id": "fc_9", "call_id": "call_9", "name": "g"}
    full["arguments"] = "{}"
    events = [
        _ev("response.function_call_arguments.delta", output_index=0, item_id="fc_9", delta="{"),
        _ev("response.function_call_arguments.delta", output_index=0, item_id="fc_9", delta="}"),
        _ev("response.output_item.done", output_index=0, item=full),
        _ev("response.completed", response=_response("completed", [full])),
    ]
    out, _ = await _run_against([(200, {}, events)])
    assert out.tool_calls == [{"id": "call_9", "name": "g", "arguments": {}}]


async def test_several_messages_and_unknown_items_round_trip() -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {}}
    output = [
        _message("Looking. ", "msg_a", phase="commentary"),
        search,
        _message("Found it.", "msg_b", phase="final_answer"),
    ]
    out, _ = await _run_against([(200, {}, _response("completed", output))], stream=False)
    assert out.text == "Looking. Found it."
    assert out.turn_data["output"] == [
        {"type": "message", "id": "msg_a", "phase": "commentary", "text": "Looking. "},
        search,
        {"type": "message", "id": "msg_b", "phase": "final_answer", "text": "Found it."},
    ]
    history = [UserMessage.text("q"), *out.items(), UserMessage.text("more")]
    body = OpenAIModel.responses("gpt-5", api_key="k").request_body(ModelRequest(history))
    assert [(i.get("type"), i.get("id"), _text(i.get("content"))) for i in body["input"]] == [
        (None, None, "q"),
        ("message", "msg_a", "Looking. "),
        ("web_search_call", "ws_1", ""),
        ("message", "msg_b", "Found it."),
        (None, None, "more"),
    ]


async def test_cancel_mid_stream_ends_promptly_without_finish() -> None:
    events: list[Any] = [
        *_text_stream("Hal", "response.completed", _response())[:-1],
        Pause(5.0),
        _ev("response.completed", response=_response()),
    ]
    with ReplayServer.from_responses([(200, {}, events)], path="/v1/responses") as server:
        model = OpenAIModel.responses("gpt-5", api_key="k", base_url=api_base(server))
        seen, elapsed = await cancel_after_first_token(model, HELLO, delay=0.05)
        await model.aclose()
    assert [type(e) for e in seen] == [TokenDelta]
    assert elapsed < 2.0


# --------------------------------------------------------------------------- request side


def _turn(
    response_id: str, *entries: dict[str, Any], text: str = "", calls: tuple[str, ...] = ()
) -> list[Item]:
    """The items an earlier turn left: the message (or first call) carries the state."""
    data = {PROVIDER_DATA_KEY: {"id": response_id, "output": list(entries)}}
    out: list[Item] = []
    if text:
        out.append(AssistantMessage(content=[TextPart(text=text)], provider_data=data))
    for k, call_id in enumerate(calls):
        pd = data if not text and k == 0 else None
        out.append(ToolCall(call_id=call_id, name="f", args={"k": k}, provider_data=pd))
    return out


def _fc(call_id: str, item_id: str) -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id}


def _result(call_id: str, text: str = "ok") -> ToolResult:
    return ToolResult(call_id=call_id, content=[TextPart(text=text)])


SYSTEM = SystemMessage(content=[TextPart(text="Be brief.")])


def test_server_state_sends_only_items_after_the_last_response() -> None:
    history: list[Item] = [
        SYSTEM,
        UserMessage.text("go"),
        *_turn("resp_1", _fc("c1", "fc_1"), _fc("c2", "fc_2"), calls=("c1", "c2")),
        _result("c1"),
        _result("c2", "本日 🚀"),
    ]
    model = OpenAIModel.responses("gpt-5", api_key="k", server_state=True)
    body = model.request_body(ModelRequest(history))
    assert body["previous_response_id"] == "resp_1"
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "function_call_output", "call_id": "c2", "output": "本日 🚀"},
    ]
    assert model.capabilities().server_managed_state is True
    stateless = OpenAIModel.responses("gpt-5", api_key="k").request_body(ModelRequest(history))
    assert "previous_response_id" not in stateless
    assert [i.get("type", i.get("role")) for i in stateless["input"]] == [
        "user",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert stateless["input"][1] == {
        "type": "function_call",
        "call_id": "c1",
        "name": "f",
        "arguments": '{"k":0}',
        "id": "fc_1",
    }


def test_server_state_first_turn_and_foreign_turns_send_everything() -> None:
    model = OpenAIModel.responses("gpt-5", api_key="k", server_state=True)
    first = model.request_body(HELLO)
    assert "previous_response_id" not in first
    assert first["input"] == [{"role": "user", "content": "hello"}]
    history: list[Item] = [
        UserMessage.text("a"),
        *_turn("resp_1", {"type": "message", "id": "msg_1"}, text="A"),
        UserMessage.text("b"),
        AssistantMessage(content=[TextPart(text="B from another model")]),
        UserMessage.text("c"),
    ]
    body = model.request_body(ModelRequest(history))
    assert "previous_response_id" not in body
    assert len(body["input"]) == 5


def test_explicit_previous_response_id() -> None:
    history: list[Item] = [
        UserMessage.text("a"),
        *_turn("resp_1", {"type": "message", "id": "msg_1"}, text="A"),
        UserMessage.text("b"),
        *_turn("resp_2", {"type": "message", "id": "msg_2"}, text="B"),
        UserMessage.text("c"),
    ]
    model = OpenAIModel.responses("gpt-5", api_key="k")
    pinned = ModelRequest(history, settings=ModelSettings(previous_response_id="resp_1"))
    body = model.request_body(pinned)
    assert body["previous_response_id"] == "resp_1"
    assert [_text(i.get("content")) for i in body["input"]] == ["b", "B", "c"]
    elsewhere = ModelRequest(
        [UserMessage.text("new")], settings=ModelSettings(previous_response_id="resp_old")
    )
    body = model.request_body(elsewhere)
    assert body["previous_response_id"] == "resp_old"
    assert body["input"] == [{"role": "user", "content": "new"}]


def test_store_false_drops_server_references() -> None:
    history: list[Item] = [
        UserMessage.text("a"),
        *_turn(
            "resp_1",
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "ENC"},
            {"type": "message", "id": "msg_1", "phase": "commentary"},
            _fc("c1", "fc_1"),
            text="checking",
            calls=("c1",),
        ),
        _result("c1"),
    ]
    stored = OpenAIModel.responses("gpt-5", api_key="k").request_body(ModelRequest(history))
    assert [i.get("id") for i in stored["input"]] == [None, "rs_1", "rs_2", "msg_1", "fc_1", None]
    model = OpenAIModel.responses("gpt-5", api_key="k", store=False)
    body = model.request_body(ModelRequest(history))
    assert body["store"] is False
    assert body["input"] == [
        {"role": "user", "content": "a"},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "ENC"},
        {"role": "assistant", "content": "checking", "phase": "commentary"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"k":0}'},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]


def test_constructor_validation() -> None:
    with pytest.raises(ConfigError, match="server_state"):
        OpenAIModel.responses("gpt-5", api_key="k", server_state=True, store=False)
    with pytest.raises(ConfigError, match="include"):
        OpenAIModel.responses("gpt-5", api_key="k", include=cast("Any", "reasoning"))
    with pytest.raises(ConfigError, match="model_id"):
        OpenAIModel.responses("", api_key="k")
    model = OpenAIModel.responses("gpt-5", api_key="k", reasoning={"effort": "low"})
    assert isinstance(model, OpenAIResponsesModel)
    assert isinstance(model, OpenAIModel)
    assert model.api == "responses"
    assert model.capabilities().reasoning is True
    assert model.capabilities().server_managed_state is False
    assert repr(model) == "OpenAIModel.responses('gpt-5', stream=True, server_state=False)"
    assert model.request_body(HELLO)["reasoning"] == {"effort": "low"}


FREE_FORM = {
    "type": "object",
    "title": "Ticket",
    "properties": {"meta": {"type": "object", "additionalProperties": True}},
    "required": ["meta"],
}
OPTIONAL = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["q"],
}


def test_strict_schemas_or_an_honest_fallback() -> None:
    tools = [
        ToolDef("loose", "", FREE_FORM, strict=True),
        ToolDef("tight", "d", OPTIONAL, strict=True),
        ToolDef("plain", "d", OPTIONAL),
    ]
    model = OpenAIModel.responses("gpt-5", api_key="k")
    settings = ModelSettings(response_format=JsonSchemaFormat("Ticket", FREE_FORM))
    body = model.request_body(ModelRequest([UserMessage.text("x")], tools, settings))
    loose, tight, plain = body["tools"]
    assert (loose["parameters"], loose["strict"], "description" in loose) == (
        FREE_FORM,
        False,
        False,
    )
    assert tight["strict"] is True
    assert tight["parameters"]["required"] == ["q", "n"]
    assert tight["parameters"]["properties"]["n"] == {"type": ["integer", "null"]}
    assert (plain["parameters"], plain["strict"]) == (OPTIONAL, False)
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "Ticket", "schema": FREE_FORM, "strict": False}
    }
    strict_fmt = ModelSettings(response_format=JsonSchemaFormat("Q", OPTIONAL))
    fmt = model.request_body(ModelRequest([UserMessage.text("x")], settings=strict_fmt))["text"]
    assert fmt["format"]["strict"] is True
    assert fmt["format"]["schema"]["additionalProperties"] is False


def test_settings_mapping() -> None:
    tools = [ToolDef("f", "d", {"type": "object", "properties": {}})]
    settings = ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=50,
        tool_choice=ToolChoice.tool("f"),
        parallel_tool_calls=False,
        response_format=JsonObjectFormat(),
        extra={"text": {"verbosity": "low"}, "tools": [{"type": "web_search"}], "store": True},
    )
    model = OpenAIModel.responses("gpt-5", api_key="k", include=["reasoning.encrypted_content"])
    body = model.request_body(ModelRequest([UserMessage.text("x")], tools, settings))
    assert [t["type"] for t in body["tools"]] == ["function", "web_search"]
    assert body["tool_choice"] == {"type": "function", "name": "f"}
    assert body["text"] == {"format": {"type": "json_object"}, "verbosity": "low"}
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.2, 0.9, 50)
    assert body["parallel_tool_calls"] is False
    assert body["store"] is True
    assert body["include"] == ["reasoning.encrypted_content"]
    no_tools = model.request_body(
        ModelRequest([UserMessage.text("x")], settings=ModelSettings(tool_choice=ToolChoice()))
    )
    assert "tool_choice" not in no_tools
    assert "tools" not in no_tools
    with pytest.raises(ConfigError, match="tool name"):
        model.request_body(ModelRequest([], tools, ModelSettings(tool_choice=ToolChoice("tool"))))


def test_content_translation() -> None:
    image = ImagePart(source=MediaSource(type="base64", mime_type="image/jpeg", data="QUJD"))
    audio = AudioPart(source=MediaSource(type="base64", mime_type="audio/mpeg", data="TVAz"))
    history: list[Item] = [
        UserMessage(content=[TextPart(text="What is this?"), image, audio]),
        AssistantMessage(content=[TextPart(text="A cat.")]),
        ToolCall(call_id="c1", name="look", args={"q": "東京"}),
        ToolResult(call_id="c1", content=[TextPart(text="本日"), image]),
    ]
    body = OpenAIModel.responses("gpt-5", api_key="k").request_body(ModelRequest(history))
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is this?"},
                {"type": "input_image", "image_url": "data:image/jpeg;base64,QUJD"},
                {"type": "input_audio", "input_audio": {"data": "TVAz", "format": "mp3"}},
            ],
        },
        {"role": "assistant", "content": "A cat."},
        {"type": "function_call", "call_id": "c1", "name": "look", "arguments": '{"q":"東京"}'},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "本日"},
                {"type": "input_image", "image_url": "data:image/jpeg;base64,QUJD"},
            ],
        },
    ]
    by_url = AudioPart(source=MediaSource(type="url", url="https://example.com/a.mp3"))
    with pytest.raises(ModelOther, match="base64"):
        OpenAIModel.responses("gpt-5", api_key="k").request_body(
            ModelRequest([UserMessage(content=[by_url])])
        )

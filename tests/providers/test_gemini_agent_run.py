"""Whole agent runs on GeminiModel: the recorded tool loop, and field cases BR-03 and BR-08."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from tests.conftest import SHARED
from tests.providers._wire import get_capital, get_temperature

from helikon import Agent, ToolEffect, tool
from helikon.core.events import MessageOutput, ToolCallItem, ToolOutputItem
from helikon.core.items import Item, UserMessage
from helikon.providers.gemini import GeminiModel
from helikon.providers.gemini._request import CALL_ID_KEY
from helikon.testing.replay import ReplayServer, load_cassette

CASSETTE = SHARED / "wire" / "gemini" / "gemini_tool_loop_stream.yaml"
STREAM_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


def _without_ids(body: Any) -> Any:
    """The recording SDK sent ids of its own making on calls and responses; helikon sends
    Gemini's own ids only (there were none), so ids are left out of the comparison, and a
    response is compared by its single value (``return_value`` there, ``output`` here)."""
    if isinstance(body, list):
        return [_without_ids(v) for v in body]
    if not isinstance(body, dict):
        return body
    out = {k: _without_ids(v) for k, v in body.items() if k != "id"}
    if "functionResponse" in body:
        (value,) = body["functionResponse"]["response"].values()
        out["functionResponse"]["response"] = value
    return out


async def test_recorded_tool_loop_runs_as_an_agent() -> None:
    if not CASSETTE.exists():
        pytest.fail(f"missing recording {CASSETTE}")
    recorded = load_cassette(CASSETTE)
    with ReplayServer(CASSETTE) as server:
        model = GeminiModel.developer(
            "gemini-2.0-flash", api_key="test-key", base_url=server.base_url
        )
        agent = Agent(
            name="weather",
            model=model,
            instructions="You are a helpful chatbot.",
            tools=[get_capital, get_temperature],
        )
        try:
            result = await agent.run("What is the temperature of the capital of France?")
        finally:
            await model.aclose()
        sent = server.requests
        assert server.remaining() == {}
    assert result.final_output == "The temperature in Paris is 30°C.\n"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (52 + 64 + 79, 5 + 5 + 12)
    assert result.usage.total_tokens == 57 + 69 + 91
    calls = [e.item for e in result.events if isinstance(e, ToolCallItem)]
    assert [(c.name, c.args) for c in calls] == [
        ("get_capital", {"country": "France"}),
        ("get_temperature", {"city": "Paris"}),
    ]
    assert len({c.call_id for c in calls}) == 2
    outputs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    assert [o.call_id for o in outputs] == [c.call_id for c in calls]
    assert len(sent) == 3
    for mine, theirs in zip(sent, recorded, strict=True):
        assert _without_ids(mine) == _without_ids(theirs.request_body)
    assert "id" not in json.dumps(sent[2]["contents"])  # no synthesized id reaches Gemini


# --------------------------------------------------------------------------- BR-03


class Filter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str
    value: str


@tool
def search(filters: list[Filter], limit: int | None = None) -> list[str]:
    """Search the catalogue."""
    return []


def _chunk(parts: list[dict[str, Any]], finish: str = "STOP") -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
    }


async def test_br03_tool_declaration_is_gemini_clean() -> None:
    responses: list[Any] = [(200, {}, [_chunk([{"text": "Nothing found."}])])]
    with ReplayServer.from_responses(responses, path=STREAM_PATH) as server:
        model = GeminiModel.developer("gemini-2.5-flash", api_key="k", base_url=server.base_url)
        agent = Agent(name="shop", model=model, tools=[search])
        result = await agent.run("find red shoes")
        await model.aclose()
        (request,) = server.requests
    assert result.final_output == "Nothing found."
    declaration = request["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "search"
    params = declaration["parameters"]
    text = json.dumps(params)
    for banned in ("additionalProperties", "$schema", "$defs", "$ref", "definitions"):
        assert banned not in text, banned
    assert params["required"] == ["filters"]
    assert params["properties"]["limit"]["nullable"] is True
    assert params["properties"]["limit"]["type"] == "INTEGER"
    item = params["properties"]["filters"]["items"]
    assert item["type"] == "OBJECT"
    assert set(item["properties"]) == {"field", "value"}
    assert item["required"] == ["field", "value"]


# --------------------------------------------------------------------------- BR-08


@tool(effect=ToolEffect.READ_ONLY)
def disk_usage() -> dict[str, int]:
    """Disk usage in percent."""
    return {"pct": 40}


@tool(effect=ToolEffect.READ_ONLY)
def queue_depth() -> dict[str, int]:
    """Jobs waiting."""
    return {"n": 3}


def _call(name: str) -> dict[str, Any]:
    return {"functionCall": {"id": "call_7", "name": name, "args": {}}}


def _exchanges(body: dict[str, Any]) -> list[tuple[str, str, str | None, Any]]:
    out = []
    for content in body["contents"]:
        for part in content["parts"]:
            for kind in ("functionCall", "functionResponse"):
                if kind in part:
                    p = part[kind]
                    # a tool's dict result goes out as the object itself, not as JSON text
                    out.append((content["role"], p["name"], p.get("id"), p.get("response")))
    return out


def _history(events: list[Any]) -> list[Item]:
    items: list[Item] = []
    for e in events:
        if isinstance(e, MessageOutput | ToolCallItem | ToolOutputItem):
            items.append(e.item)
    return items


async def test_br08_reused_call_ids_keep_each_response_after_its_own_call() -> None:
    responses: list[Any] = [
        (200, {}, [_chunk([_call("disk_usage")])]),
        (200, {}, [_chunk([_call("queue_depth")])]),
        (200, {}, [_chunk([{"text": "Disk 40%, 3 jobs queued."}])]),
        (200, {}, [_chunk([{"text": "Still 40% and 3."}])]),
    ]
    pairs = [
        ("model", "disk_usage", "call_7", None),
        ("user", "disk_usage", "call_7", {"pct": 40}),
        ("model", "queue_depth", "call_7", None),
        ("user", "queue_depth", "call_7", {"n": 3}),
    ]
    with ReplayServer.from_responses(responses, path=STREAM_PATH) as server:
        model = GeminiModel.developer("gemini-2.5-flash", api_key="k", base_url=server.base_url)
        agent = Agent(name="ops", model=model, tools=[disk_usage, queue_depth])
        first = await agent.run("status?")
        calls = [e.item for e in first.events if isinstance(e, ToolCallItem)]
        assert [c.name for c in calls] == ["disk_usage", "queue_depth"]
        assert calls[0].call_id != calls[1].call_id  # helikon ids are unique
        assert [(c.provider_data or {}).get(CALL_ID_KEY) for c in calls] == ["call_7", "call_7"]
        history = _history(first.events)
        second = await agent.run(
            [UserMessage.text("status?"), *history, UserMessage.text("and now?")]
        )
        await model.aclose()
        sent = server.requests
    assert first.final_output == "Disk 40%, 3 jobs queued."
    assert second.final_output == "Still 40% and 3."
    assert len(sent) == 4
    assert _exchanges(sent[0]) == []
    assert _exchanges(sent[1]) == pairs[:2]
    assert _exchanges(sent[2]) == pairs
    assert _exchanges(sent[3]) == pairs
    roles = [c["role"] for c in sent[3]["contents"]]
    assert roles == ["user", "model", "user", "model", "user", "model", "user"]
    assert sent[3]["contents"][-1]["parts"] == [{"text": "and now?"}]

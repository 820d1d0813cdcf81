"""Each adapter's default output mode, and what its tool turn then sends on the wire: the
schema as the response format next to the tools (OpenAI chat, Responses), or the output tool
``final_result`` among the tools (Anthropic, Gemini, Bedrock)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from pydantic import BaseModel

from helikon import Agent, RunError, tool
from helikon.core.model import ModelRequest
from helikon.providers.retry import RetryingModel
from helikon.testing import Call, MockModel


class Weather(BaseModel):
    city: str
    celsius: int


@tool
def forecast(city: str) -> str:
    """The forecast for a city."""
    return city


def _default_mode(module: str, cls: str) -> str:
    mod = pytest.importorskip(module)
    mode: str = getattr(mod, cls).output_mode
    return mode


def _tool_turn(mode: str) -> ModelRequest:
    """The first (tool-turn) request a typed agent with a tool sends in ``mode``."""

    class Declared(MockModel):
        output_mode = mode

    model = Declared([[Call("c1", "forecast", {"city": "Oslo"})]])
    agent = Agent(name="w", model=model, tools=[forecast], output_type=Weather)
    with contextlib.suppress(RunError):  # the script runs out: only the request matters
        agent.run_sync("Oslo?")
    return model.requests[0]


def test_openai_chat_sends_the_response_format_with_the_tools() -> None:
    mode = _default_mode("helikon.providers.openai.chat", "OpenAIModel")
    assert mode == "native"
    from helikon.providers.openai._chat_request import build_chat_body

    body = build_chat_body("gpt-5-mini", _tool_turn(mode), stream=False)
    assert [t["function"]["name"] for t in body["tools"]] == ["forecast"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert (fmt["json_schema"]["name"], fmt["json_schema"]["strict"]) == ("Weather", True)


def test_openai_responses_sends_text_format_with_the_tools() -> None:
    mode = _default_mode("helikon.providers.openai.responses", "OpenAIResponsesModel")
    assert mode == "native"
    from helikon.providers.openai._responses_request import build_responses_body

    body = build_responses_body("gpt-5-mini", _tool_turn(mode), stream=False)
    assert [t["name"] for t in body["tools"]] == ["forecast"]
    assert body["text"]["format"]["type"] == "json_schema"
    assert body["text"]["format"]["name"] == "Weather"


def _final_result(tools: list[dict[str, Any]], name_key: str) -> dict[str, Any]:
    names = [t[name_key] for t in tools]
    assert names == ["forecast", "final_result"]
    return tools[1]


def test_anthropic_offers_the_output_tool() -> None:
    mode = _default_mode("helikon.providers.anthropic.messages", "AnthropicModel")
    assert mode == "tool"
    from helikon.providers.anthropic._request import build_messages_body

    body = build_messages_body("claude-sonnet-4-5", _tool_turn(mode), max_tokens=1024, stream=False)
    out = _final_result(body["tools"], "name")
    assert out["input_schema"]["required"] == ["city", "celsius"]
    assert "output_config" not in body


def test_gemini_offers_the_output_tool() -> None:
    mode = _default_mode("helikon.providers.gemini.model", "GeminiModel")
    assert mode == "tool"
    from helikon.providers.gemini._request import build_gemini_body

    body = build_gemini_body(_tool_turn(mode))
    declarations = [d for t in body["tools"] for d in t["functionDeclarations"]]
    out = _final_result(declarations, "name")
    assert set(out["parameters"]["properties"]) == {"city", "celsius"}
    assert "responseSchema" not in body.get("generationConfig", {})


def test_bedrock_offers_the_output_tool() -> None:
    mode = _default_mode("helikon.providers.bedrock.converse", "BedrockModel")
    assert mode == "tool"
    from helikon.providers.bedrock._family import detect_family
    from helikon.providers.bedrock._request import build_converse_params

    built = build_converse_params(
        _tool_turn(mode), family=detect_family("anthropic.claude-sonnet-4-5-v1:0")
    )
    assert built.structured is None  # no forced structured-output tool on a tool turn
    specs = [t["toolSpec"] for t in built.params["toolConfig"]["tools"]]
    out = _final_result(specs, "name")
    assert set(out["inputSchema"]["json"]["properties"]) == {"city", "celsius"}


def test_a_retrying_model_reports_the_wrapped_models_mode() -> None:
    class Native(MockModel):
        output_mode = "native"

    assert RetryingModel(Native([])).output_mode == "native"
    assert RetryingModel(MockModel([])).output_mode is None

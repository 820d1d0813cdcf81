"""examples/provider_swap: one agent definition, five providers, only the model line differs.

Each provider's run replays its recorded tool loop (``shared/wire``) plus one synthesized
finalizing turn. Checked per provider: the typed ``final_output``, the tool calls and their
outputs, the token usage (which proves every recorded turn was consumed), that every tool
turn's request advertised the agent's three tools in the provider's own form and asked for
no structured output, that the finalizing request carried the provider's native
structured-output form and none of the agent's tools, and that the model was closed.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from helikon import RunError
from helikon import schema as hs
from helikon.providers.bedrock import STRUCTURED_OUTPUT_TOOL
from tests.conftest import SHARED

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "provider_swap"
_MODULES = ("agent", "models", "replays", "main")


def _load_example() -> dict[str, ModuleType]:
    """Import the example's flat modules without leaving them (or their generic names) in
    ``sys.modules`` for other tests."""
    saved = {name: sys.modules.pop(name) for name in _MODULES if name in sys.modules}
    sys.path.insert(0, str(EXAMPLE))
    try:
        importlib.import_module("main")
        return {name: sys.modules[name] for name in _MODULES}
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in _MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


_EXAMPLE = _load_example()
main = _EXAMPLE["main"]
example_agent = _EXAMPLE["agent"]
WIRE = SHARED / "wire"
AGENT_TOOLS = ["get_user_country", "get_capital", "get_temperature"]

CityReport = example_agent.CityReport
RAW_SCHEMA: dict[str, Any] = CityReport.model_json_schema()
TEMPERATURE_DOC = "The current temperature in °C, only if the user asked."
REPORT_DOC = "The typed answer: a city, its country and, when the question asks, its temperature."

# OpenAI strict mode: closed, every property required, the optional field nullable, no default.
STRICT_SCHEMA: dict[str, Any] = {
    "description": REPORT_DOC,
    "properties": {
        "city": {"description": "The city the answer is about.", "title": "City", "type": "string"},
        "country": {
            "description": "The country the city is in.",
            "title": "Country",
            "type": "string",
        },
        "temperature_c": {
            "anyOf": [{"type": "number"}, {"type": "null"}],
            "description": TEMPERATURE_DOC,
            "title": "Temperature C",
        },
    },
    "required": ["city", "country", "temperature_c"],
    "title": "CityReport",
    "type": "object",
    "additionalProperties": False,
}

# Gemini responseSchema (OpenAPI subset): upper-case types, `nullable`, no anyOf or default.
GEMINI_SCHEMA: dict[str, Any] = {
    "description": REPORT_DOC,
    "properties": {
        "city": {"description": "The city the answer is about.", "title": "City", "type": "STRING"},
        "country": {
            "description": "The country the city is in.",
            "title": "Country",
            "type": "STRING",
        },
        "temperature_c": {
            "nullable": True,
            "type": "NUMBER",
            "description": TEMPERATURE_DOC,
            "title": "Temperature C",
        },
    },
    "required": ["city", "country"],
    "title": "CityReport",
    "type": "OBJECT",
}

MEXICO = {"city": "Mexico City", "country": "Mexico", "temperature_c": None}
PARIS = {"city": "Paris", "country": "France", "temperature_c": 30.0}

# provider: (answer, [(tool, args)], [tool outputs], (input, output tokens), model calls)
EXPECTED: dict[
    str, tuple[dict[str, Any], list[tuple[str, Any]], list[str], tuple[int, int], int]
] = {
    "openai-chat": (
        MEXICO,
        [("get_user_country", {})],
        ["Mexico"],
        (71 + 92 + 170, 12 + 15 + 19),
        3,
    ),
    "openai-responses": (
        MEXICO,
        [("get_user_country", {})],
        ["Mexico"],
        (66 + 89 + 160, 12 + 16 + 19),
        3,
    ),
    "anthropic": (
        MEXICO,
        [("get_user_country", {})],
        ["Mexico"],
        (398 + 566 + 720, 155 + 126 + 24),
        3,
    ),
    "gemini": (
        PARIS,
        [("get_capital", {"country": "France"}), ("get_temperature", {"city": "Paris"})],
        ["Paris", "30°C"],
        (52 + 64 + 79 + 96, 5 + 5 + 12 + 17),
        4,
    ),
    "bedrock": (
        PARIS,
        [("get_temperature", {"city": "Paris"})],
        ["30°C"],
        (471 + 577 + 640, 91 + 18 + 31),
        3,
    ),
}


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """No AWS profile or instance metadata can be consulted (the example brings its own
    dummy credentials offline)."""
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")


@pytest.fixture
def closed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the providers whose model ``aclose()`` ran (spying on ``make_model``)."""
    done: list[str] = []
    real = main.make_model

    def spy(name: str, endpoint: Any) -> Any:
        model = real(name, endpoint)
        original = model.aclose

        async def aclose() -> None:
            await original()
            done.append(name)

        model.aclose = aclose
        return model

    monkeypatch.setattr(main, "make_model", spy)
    return done


# --------------------------------------------------------------------------- wire forms


def tool_names(provider: str, body: dict[str, Any]) -> list[str]:
    """The tools a request offers, in the provider's own request shape."""
    if provider == "openai-chat":
        return [t["function"]["name"] for t in body.get("tools", [])]
    if provider in ("openai-responses", "anthropic"):
        return [t["name"] for t in body.get("tools", [])]
    if provider == "gemini":
        return [d["name"] for t in body.get("tools", []) for d in t["functionDeclarations"]]
    return [t["toolSpec"]["name"] for t in body.get("toolConfig", {}).get("tools", [])]


def structured_form(provider: str, body: dict[str, Any]) -> Any:
    """The request's native structured-output field, or ``None``."""
    if provider == "openai-chat":
        return body.get("response_format")
    if provider == "openai-responses":
        return body.get("text")
    if provider == "anthropic":
        return body.get("output_config")
    if provider == "gemini":
        return body.get("generationConfig", {}).get("responseSchema")
    config = body.get("toolConfig", {})
    return config if STRUCTURED_OUTPUT_TOOL in tool_names(provider, body) else None


def expected_structured_form(provider: str) -> Any:
    if provider == "openai-chat":
        return {
            "type": "json_schema",
            "json_schema": {"name": "CityReport", "schema": STRICT_SCHEMA, "strict": True},
        }
    if provider == "openai-responses":
        return {
            "format": {
                "type": "json_schema",
                "name": "CityReport",
                "schema": STRICT_SCHEMA,
                "strict": True,
            }
        }
    if provider == "anthropic":
        return {"format": {"type": "json_schema", "schema": RAW_SCHEMA}}
    if provider == "gemini":
        return GEMINI_SCHEMA
    spec = {
        "name": STRUCTURED_OUTPUT_TOOL,
        "description": (
            "Give the final answer by calling this tool: its input is the answer, "
            "a CityReport value."
        ),
        "inputSchema": {"json": hs.bedrock(RAW_SCHEMA)},
    }
    return {"tools": [{"toolSpec": spec}], "toolChoice": {"tool": {"name": STRUCTURED_OUTPUT_TOOL}}}


# --------------------------------------------------------------------------- the runs


@pytest.mark.parametrize("provider", list(EXPECTED))
async def test_same_agent_runs_on_every_provider(provider: str, closed: list[str]) -> None:
    answer, calls, outputs, (tokens_in, tokens_out), n_calls = EXPECTED[provider]
    run = await main.run_offline(provider, WIRE)

    assert run.report == CityReport(**answer)
    assert type(run.result.final_output) is CityReport
    assert run.tool_calls == calls
    tool_outputs = [
        e.item.content[0].text for e in run.result.events if e.type == "tool_output_item"
    ]
    assert tool_outputs == outputs
    usage = run.result.usage
    assert (usage.input_tokens, usage.output_tokens) == (tokens_in, tokens_out)
    assert run.leftover == {} and run.unmatched == 0
    assert closed == [provider]

    *tool_turns, final = run.requests
    assert len(run.requests) == n_calls
    for body in tool_turns:
        assert tool_names(provider, body) == AGENT_TOOLS
        assert structured_form(provider, body) is None
    assert structured_form(provider, final) == expected_structured_form(provider)
    assert not set(tool_names(provider, final)) & set(AGENT_TOOLS)
    if provider == "gemini":  # Gemini cannot combine tools and a response schema
        assert "tools" not in final
        assert final["generationConfig"]["responseMimeType"] == "application/json"


async def test_the_agent_definition_is_shared() -> None:
    models = [main.make_model(p, main.Endpoint("http://127.0.0.1:9")) for p in EXPECTED]
    try:
        agents = [main.build_agent(m) for m in models]
        shapes = {
            (a.name, a.instructions, tuple(t.name for t in a.tools), a.output_type.type_)
            for a in agents
        }
        assert shapes == {
            ("city-facts", example_agent.INSTRUCTIONS, tuple(AGENT_TOOLS), CityReport)
        }
        assert [m.model for m in models] == [
            "gpt-4o",
            "gpt-4o",
            "claude-sonnet-4-0",
            "gemini-2.0-flash",
            "us.amazon.nova-micro-v1:0",
        ]
    finally:
        for m in models:
            await m.aclose()


async def test_model_is_closed_when_the_run_fails(
    closed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    replay = main.REPLAYS["openai-chat"]
    broken = type(replay)(
        question=replay.question,
        cassette=replay.cassette,
        interactions=replay.interactions,
        synthesized=((500, {}, {"error": {"message": "boom", "type": "server_error"}}),),
        route=replay.route,
    )
    monkeypatch.setitem(main.REPLAYS, "openai-chat", broken)
    with pytest.raises(RunError):
        await main.run_offline("openai-chat", WIRE)
    assert closed == ["openai-chat"]


async def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert await main.main(["bedrock", "--wire", str(WIRE)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "== bedrock (us.amazon.nova-micro-v1:0)",
        "   question:     What is the temperature of the capital of France?",
        "   tool calls:   get_temperature({'city': 'Paris'})",
        "   final_output: CityReport(city='Paris', country='France', temperature_c=30.0)",
        "   tokens:       1688 in, 140 out",
    ]
    with pytest.raises(SystemExit):
        await main.main(["mistral"])


async def test_live_endpoint_uses_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "from-env")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    live = main.Endpoint()
    assert (live.api_key, live.url("/v1"), live.aws_session()) == (None, None, None)
    models = [main.make_model(p, live) for p in EXPECTED]
    try:
        assert models[-1].client.meta.region_name == "eu-west-1"
    finally:
        for m in models:
            await m.aclose()


async def test_missing_recordings_say_where_they_come_from(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        await main.run_offline("gemini", tmp_path)
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "gemini" / "gemini_tool_loop_stream.yaml"))
    assert "not in this repository" in message
    assert "HELIKON_SHARED" in message
    assert "--wire PATH" in message

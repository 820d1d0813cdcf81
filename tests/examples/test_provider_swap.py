"""examples/provider_swap: one agent definition, five providers, only the model line differs.

Each provider's run replays the example's scripted conversation (``traffic.py``, each
provider's streaming wire format, built in memory). Checked per provider: the typed
``final_output``, the tool calls and their outputs, the token usage (which proves every
scripted turn was consumed), that every tool
turn's request advertised the agent's three tools in the provider's own form and asked for
no structured output, that the finalizing request carried the provider's native
structured-output form and none of the agent's tools, and that the model was closed.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from helikon import RunError
from helikon import schema as hs
from helikon.providers.bedrock import STRUCTURED_OUTPUT_TOOL
from helikon.testing.replay import ReplayServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "provider_swap"
_MODULES = ("agent", "models", "traffic", "main")


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
traffic = _EXAMPLE["traffic"]
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

PARIS = {"city": "Paris", "country": "France", "temperature_c": 30.0}
CALLS = [
    ("get_user_country", {}),
    ("get_capital", {"country": "France"}),
    ("get_temperature", {"city": "Paris"}),
]
OUTPUTS = ["France", "Paris", "30°C"]
# the script's five turns: 210+245+270+301+180 in, 18+15+16+14+21 out
TOKENS = (1206, 84)
MODEL_CALLS = 5
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"]


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


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_same_agent_runs_on_every_provider(provider: str, closed: list[str]) -> None:
    run = await main.run_offline(provider)

    assert run.report == CityReport(**PARIS)
    assert type(run.result.final_output) is CityReport
    assert run.model == traffic.MODEL_IDS[provider]
    assert run.tool_calls == CALLS
    tool_outputs = [
        e.item.content[0].text for e in run.result.events if e.type == "tool_output_item"
    ]
    assert tool_outputs == OUTPUTS
    usage = run.result.usage
    assert (usage.input_tokens, usage.output_tokens) == TOKENS
    assert run.leftover == {} and run.unmatched == 0
    assert closed == [provider]
    assert len(run.requests) == MODEL_CALLS

    *tool_turns, final = run.requests
    for body in tool_turns:
        assert tool_names(provider, body) == AGENT_TOOLS
        assert structured_form(provider, body) is None
    assert structured_form(provider, final) == expected_structured_form(provider)
    assert not set(tool_names(provider, final)) & set(AGENT_TOOLS)
    if provider == "gemini":  # Gemini cannot combine tools and a response schema
        assert "tools" not in final
        assert final["generationConfig"]["responseMimeType"] == "application/json"


async def test_the_agent_definition_is_shared() -> None:
    models = [main.make_model(p, main.Endpoint("http://127.0.0.1:9")) for p in PROVIDERS]
    try:
        agents = [main.build_agent(m) for m in models]
        shapes = {
            (a.name, a.instruction_parts, tuple(t.name for t in a.tools), a.output_type.type_)
            for a in agents
        }
        assert shapes == {
            ("city-facts", (example_agent.INSTRUCTIONS,), tuple(AGENT_TOOLS), CityReport)
        }
        assert [m.model for m in models] == [
            "gpt-4o",
            "gpt-4o",
            "claude-sonnet-4-5",
            "gemini-2.5-flash",
            "us.amazon.nova-micro-v1:0",
        ]
        assert [traffic.MODEL_IDS[p] for p in PROVIDERS] == [m.model for m in models]
    finally:
        for m in models:
            await m.aclose()


async def test_model_is_closed_when_the_run_fails(
    closed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(provider: str) -> ReplayServer:
        error = {"error": {"message": "boom", "type": "server_error"}}
        return ReplayServer.from_responses([(500, {}, error)], path=traffic.ROUTES[provider])

    monkeypatch.setattr(main, "replay_server", failing)
    with pytest.raises(RunError):
        await main.run_offline("openai-chat")
    assert closed == ["openai-chat"]


async def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert await main.main(["bedrock"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "== bedrock (us.amazon.nova-micro-v1:0)",
        "   question:     What is the temperature in the capital of my country?",
        "   tool calls:   get_user_country({}), get_capital({'country': 'France'}), "
        "get_temperature({'city': 'Paris'})",
        "   final_output: CityReport(city='Paris', country='France', temperature_c=30.0)",
        "   tokens:       1206 in, 84 out",
    ]
    with pytest.raises(SystemExit):
        await main.main(["mistral"])


async def test_live_endpoint_uses_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "from-env")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    live = main.Endpoint()
    assert (live.api_key, live.url("/v1"), live.aws_session()) == (None, None, None)
    models = [main.make_model(p, live) for p in PROVIDERS]
    try:
        assert models[-1].client.meta.region_name == "eu-west-1"
    finally:
        for m in models:
            await m.aclose()


# --------------------------------------------------------------------------- the traffic


@pytest.mark.parametrize("provider", PROVIDERS)
def test_traffic_is_the_providers_streaming_format(provider: str) -> None:
    """Each turn goes out in the provider's streaming content type; the text streams are
    parsed back here to the event kinds the provider's API documents."""
    specs = traffic.responses_for(provider)
    assert len(specs) == len(traffic.SCRIPT)
    first = specs[0]
    if provider == "bedrock":
        assert first[1] == {"content-type": "application/vnd.amazon.eventstream"}
        body = first[2]
        assert isinstance(body, bytes)
        kinds = []
        while body:  # walk the event-stream frames, checking both CRCs
            total, head_len = struct.unpack(">II", body[:8])
            assert struct.unpack(">I", body[8:12])[0] == zlib.crc32(body[:8])
            assert struct.unpack(">I", body[total - 4 : total])[0] == zlib.crc32(body[: total - 4])
            head = body[12 : 12 + head_len]
            name_len = head[0]
            assert head[1 : 1 + name_len] == b":event-type"
            value_len = struct.unpack(">H", head[2 + name_len : 4 + name_len])[0]
            kinds.append(head[4 + name_len : 4 + name_len + value_len].decode())
            body = body[total:]
        assert kinds == [
            "messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
            "contentBlockStart", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
            "messageStop", "metadata",
        ]  # fmt: skip
        return
    assert first[1] == {"content-type": "text/event-stream"}
    events = list(first[2])
    if provider == "openai-chat":
        assert events[-1] == "data: [DONE]"
        assert [e["choices"] for e in events[-2:-1]] == [[]]  # the usage chunk
        assert {e["object"] for e in events[:-1]} == {"chat.completion.chunk"}
    elif provider == "gemini":
        assert [sorted(e) for e in events] == [
            ["candidates", "modelVersion", "responseId"],
            ["candidates", "modelVersion", "responseId"],
            ["candidates", "modelVersion", "responseId", "usageMetadata"],
        ]
    else:
        kinds = [e.split("\n", 1)[0].removeprefix("event: ") for e in events]
        datas = [json.loads(e.split("\ndata: ", 1)[1]) for e in events]
        assert [d["type"] for d in datas] == kinds
        if provider == "anthropic":
            assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
        else:
            assert kinds[0] == "response.created" and kinds[-1] == "response.completed"


def test_the_example_runs_from_a_copy_of_its_folder(tmp_path: Path) -> None:
    """A fresh clone: only the example's own files, nothing beside them, no env pointing
    elsewhere; ``python main.py`` runs all five providers offline."""
    folder = tmp_path / "provider_swap"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HELIKON_", "PYTHON"))}
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE="/dev/null",
        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        PYTHONDONTWRITEBYTECODE="1",
    )
    proc = subprocess.run(
        [sys.executable, "main.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    headers = [line for line in proc.stdout.splitlines() if line.startswith("== ")]
    assert headers == [
        "== openai-chat (gpt-4o)",
        "== openai-responses (gpt-4o)",
        "== anthropic (claude-sonnet-4-5)",
        "== gemini (gemini-2.5-flash)",
        "== bedrock (us.amazon.nova-micro-v1:0)",
    ]
    assert (
        proc.stdout.count(
            "final_output: CityReport(city='Paris', country='France', temperature_c=30.0)"
        )
        == 5
    )


def _third_party_imports(folder: Path) -> set[str]:
    local = {p.stem for p in folder.glob("*.py")}
    names: set[str] = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in local}


def test_the_readme_names_every_extra_the_example_imports() -> None:
    """What ``pip install 'helikon[...]'`` in the README installs covers every third-party
    module the example imports (helikon's own dependencies included)."""
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    named = re.search(r"pip install 'helikon\[([\w,]+)\]'", readme)
    assert named, "the README says what to install"
    extras = set(named.group(1).split(","))
    assert extras == {"openai", "anthropic", "gemini", "bedrock"}
    installed: set[str] = set()
    for requirement in importlib.metadata.requires("helikon") or []:
        name = re.split(r"[ ;<>=\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        marker = re.search(r"extra == ['\"](\w+)['\"]", requirement)
        if marker is None or marker.group(1) in extras:
            installed.add(name)
    providers = importlib.metadata.packages_distributions()
    for module in sorted(_third_party_imports(EXAMPLE)):
        if module == "helikon":
            continue
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        assert dists & installed, f"{module} ({dists}) is not installed by {sorted(extras)}"


def test_no_example_reads_outside_its_folder() -> None:
    """Every folder in examples/ is self-contained in a fresh clone: none names the project's
    shared material (the wire recordings live outside the repository)."""
    for path in sorted((EXAMPLE.parent).rglob("*")):
        if path.is_file() and path.suffix in {".py", ".md", ".toml", ".json", ".jsonl"}:
            text = path.read_text(encoding="utf-8")
            for needle in ("shared/wire", "HELIKON_SHARED", "../shared", "load_cassette"):
                assert needle not in text, f"{path.relative_to(EXAMPLE.parent)} names {needle}"

"""Model strings: ``Agent(model="openai:gpt-5-mini")`` and friends, in Python and agents.toml.

Each prefix builds its provider's model with the id after the first ``:``; an
OpenAI-compatible server is reached through ``OPENAI_BASE_URL`` (or ``base_url=``), checked by
running an agent against a local server; a missing key, a missing extra and a misspelled
prefix each fail with a message naming the fix.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, ConfigError
from helikon.providers import infer_model
from helikon.providers.infer import PREFIXES
from helikon.testing.replay import ReplayServer


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")


@pytest.mark.parametrize(
    ("spec", "cls", "model_id"),
    [
        ("openai:gpt-5-mini", "OpenAIModel", "gpt-5-mini"),
        ("openai-responses:gpt-5", "OpenAIResponsesModel", "gpt-5"),
        ("anthropic:claude-sonnet-4-5", "AnthropicModel", "claude-sonnet-4-5"),
        ("gemini:gemini-2.5-flash", "GeminiModel", "gemini-2.5-flash"),
        ("bedrock:amazon.nova-lite-v1:0", "BedrockModel", "amazon.nova-lite-v1:0"),
        ("bedrock: us.anthropic.claude-3-5-haiku-20241022-v1:0 ", "BedrockModel",
         "us.anthropic.claude-3-5-haiku-20241022-v1:0"),
    ],
)
async def test_each_prefix_builds_its_provider(
    keys: None, spec: str, cls: str, model_id: str
) -> None:
    agent = Agent(name="a", model=spec)
    model: Any = agent.model
    try:
        assert type(model).__name__ == cls
        assert model.model == model_id
    finally:
        await model.aclose()


def test_the_prefixes_are_the_documented_ones() -> None:
    assert PREFIXES == {
        "openai": "openai",
        "openai-responses": "openai",
        "anthropic": "anthropic",
        "gemini": "gemini",
        "bedrock": "bedrock",
    }


def _chat_stream(text: str) -> list[Any]:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "llama3"}
    delta = {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}
    stop = {"index": 0, "delta": {}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    return [
        {**head, "choices": [delta]},
        {**head, "choices": [stop]},
        {**head, "choices": [], "usage": usage},
        "data: [DONE]",
    ]


async def test_an_openai_compatible_server_through_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = ReplayServer.from_responses([(200, {}, _chat_stream("hello from llama"))])
    with server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.base_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "ollama")
        agent = Agent(name="local", model="openai:llama3.2")
        result = await agent.run("hi")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.final_output == "hello from llama"
    [request] = server.requests
    assert request["model"] == "llama3.2"
    assert request["messages"] == [{"role": "user", "content": "hi"}]


async def test_base_url_and_api_key_in_code(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ReplayServer.from_responses([(200, {}, _chat_stream("hi there"))])
    with server:
        model = infer_model("openai:qwen3", api_key="local", base_url=f"{server.base_url}/v1")
        result = await Agent(name="local", model=model).run("hi")
        await model.aclose()  # type: ignore[attr-defined]
    assert result.final_output == "hi there"
    assert server.requests[0]["model"] == "qwen3"


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai:gpt-5-mini", "OPENAI_API_KEY"),
        ("openai-responses:gpt-5", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "GEMINI_API_KEY"),
    ],
)
def test_a_missing_key_names_the_variable(spec: str, variable: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model=spec)
    message = str(caught.value)
    assert message.startswith(f"Agent(model=...): {spec!r}: ")
    assert f"Set the {variable}" in message


def test_openai_missing_key_message_in_full() -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model="openai:gpt-5-mini")
    assert str(caught.value) == (
        "Agent(model=...): 'openai:gpt-5-mini': OpenAIModel.chat: no API key. Set the "
        "OPENAI_API_KEY environment variable or pass api_key=... (or client=AsyncOpenAI(...))."
    )


def test_bedrock_without_a_region_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model="bedrock:amazon.nova-lite-v1:0")
    assert str(caught.value).startswith("Agent(model=...): 'bedrock:amazon.nova-lite-v1:0': ")
    assert "set AWS_REGION" in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "extra", "sdk"),
    [
        ("openai:gpt-5-mini", "openai", "openai"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "anthropic"),
        ("gemini:gemini-2.5-flash", "gemini", "httpx"),
        ("bedrock:amazon.nova-lite-v1:0", "bedrock", "boto3"),
    ],
)
def test_a_missing_extra_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch, keys: None, spec: str, extra: str, sdk: str
) -> None:
    """The SDK is not importable (as in an environment without the extra)."""
    provider = f"helikon.providers.{extra}"
    for name in list(sys.modules):
        if name == provider or name.startswith(provider + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, sdk, None)
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model=spec)
    assert str(caught.value).startswith(
        f"Agent(model=...): {spec!r} needs the '{extra}' extra, which is not installed: "
        f"pip install 'helikon[{extra}]' ("
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("google-gla:gemini-2.5-flash", "unknown provider 'google-gla' in "
         "'google-gla:gemini-2.5-flash'; did you mean 'gemini:gemini-2.5-flash'? "),
        ("opnai:gpt-5-mini", "unknown provider 'opnai' in 'opnai:gpt-5-mini'; did you mean "
         "'openai:gpt-5-mini'? "),
        ("claude:claude-sonnet-4-5", "unknown provider 'claude' in 'claude:claude-sonnet-4-5'; "
         "did you mean 'anthropic:claude-sonnet-4-5'? "),
        ("mistral:large", "unknown provider 'mistral' in 'mistral:large'; "),
    ],
)
def test_an_unknown_prefix_suggests_the_right_one(spec: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model=spec)
    assert str(caught.value) == (
        f"Agent(model=...): {expected}use one of openai:, openai-responses:, anthropic:, "
        "gemini:, bedrock:"
    )


@pytest.mark.parametrize("spec", ["gpt-5-mini", "openai:", ":gpt-5", ""])
def test_a_bare_model_id_is_refused_with_the_spelling(spec: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model=spec)
    assert str(caught.value) == (
        f"Agent(model=...): {spec!r} is not a model string; write PROVIDER:MODEL_ID with "
        "PROVIDER one of openai:, openai-responses:, anthropic:, gemini:, bedrock: (e.g. "
        "'openai:gpt-5-mini'), or pass a Model object"
    )


def test_not_a_model_at_all_names_both_forms() -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model=42)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "Agent(model=...) must implement helikon.Model (an invoke() method) or be a model "
        "string such as 'openai:gpt-5-mini'; got int"
    )


# ----------------------------------------------------------------------------- agents.toml


def _sidecar(tmp_path: Path, model: str) -> Path:
    (tmp_path / "script.json").write_text('{"default": [[{"token": "scripted"}]]}')
    path = tmp_path / "agents.toml"
    path.write_text(f'[agents.helper]\ninstructions = "Be brief."\nmodel = {model}\n')
    return path


def test_agents_toml_takes_the_same_strings(tmp_path: Path, keys: None) -> None:
    from helikon.cli.sidecar import load_sidecar

    sc = load_sidecar(_sidecar(tmp_path, '"anthropic:claude-sonnet-4-5"'))
    agent: Any = sc.build("helper")
    inner = getattr(agent.model, "inner", agent.model)  # wrapped for retries
    assert type(inner).__name__ == "AnthropicModel"
    assert inner.model == "claude-sonnet-4-5"


def test_agents_toml_mock_string_runs(tmp_path: Path) -> None:
    from helikon.cli.sidecar import load_sidecar

    sc = load_sidecar(_sidecar(tmp_path, '"mock:script.json"'))
    assert sc.build("helper").run_sync("hi").final_output == "scripted"


def test_agents_toml_misspelled_string_names_the_key_and_fix(tmp_path: Path) -> None:
    from helikon.cli.sidecar import load_sidecar
    from helikon.cli.sidecar_file import SidecarError

    sc = load_sidecar(_sidecar(tmp_path, '"gemni:gemini-2.5-flash"'))
    with pytest.raises(SidecarError) as caught:
        sc.build("helper")
    assert str(caught.value).endswith(
        "agents.helper.model: unknown provider 'gemni' in 'gemni:gemini-2.5-flash' "
        "(PROVIDER:ID with PROVIDER one of mock, openai, openai-responses, anthropic, gemini, "
        "bedrock). Fix: did you mean 'gemini:gemini-2.5-flash'? e.g. model = "
        '"openai:gpt-5-mini", or a table: model = { provider = "openai", id = "gpt-5-mini" }'
    )


def test_the_cli_and_the_library_know_the_same_providers() -> None:
    from helikon.cli.sidecar_models import _OVERRIDE

    assert set(_OVERRIDE) - {"mock"} == set(PREFIXES)

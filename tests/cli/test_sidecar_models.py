"""Sidecar model tables: every provider of the Python API with its settings, ``--model``
for each, retries by default (a scripted 429 no longer fails ``helikon run``), and one error
line naming the key and the fix for every bad table."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from helikon.errors import RunError
from helikon.providers.retry import RetryingModel
from tests.cli.clihelp import helikon

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MY_KEY")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in KEYS:
        monkeypatch.delenv(k, raising=False)


def _sidecar(tmp_path: Path, model: str) -> Path:
    path = tmp_path / "agents.toml"
    path.write_text(f"[agents.a]\nmodel = {model}\n")
    return path


def _inner(agent_model: object) -> object:
    assert isinstance(agent_model, RetryingModel)
    return agent_model.inner


@pytest.mark.parametrize(
    ("model", "env", "cls", "provider", "model_id"),
    [
        (
            '{ provider = "openai", id = "gpt-5-mini" }',
            "OPENAI_API_KEY",
            "OpenAIModel",
            "openai",
            "gpt-5-mini",
        ),
        (
            '{ provider = "openai", id = "gpt-5", api = "responses", '
            'base_url = "http://127.0.0.1:9/v1", api_key_env = "MY_KEY" }',
            "MY_KEY",
            "OpenAIResponsesModel",
            "openai",
            "gpt-5",
        ),
        (
            '{ provider = "anthropic", id = "claude-sonnet-4-5", max_tokens = 4096, '
            "thinking_budget = 2048, cache = true }",
            "ANTHROPIC_API_KEY",
            "AnthropicModel",
            "anthropic",
            "claude-sonnet-4-5",
        ),
        (
            '{ provider = "gemini", id = "gemini-2.5-flash" }',
            "GOOGLE_API_KEY",
            "GeminiModel",
            "gcp.gemini",
            "gemini-2.5-flash",
        ),
        (
            '{ provider = "bedrock", id = "amazon.nova-lite-v1:0", region = "us-east-1" }',
            None,
            "BedrockModel",
            "aws.bedrock",
            "amazon.nova-lite-v1:0",
        ),
    ],
)
def test_every_provider_builds_with_its_settings(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    env: str | None,
    cls: str,
    provider: str,
    model_id: str,
) -> None:
    if env is not None:
        monkeypatch.setenv(env, "k-test")
    agent = load_sidecar(_sidecar(tmp_path, model)).build()
    inner = _inner(agent.model)
    assert type(inner).__name__ == cls
    assert (agent.model.provider, agent.model.model) == (provider, model_id)


@pytest.mark.parametrize(
    ("api", "path"), [("chat", "/v1/chat/completions"), ("responses", "/v1/responses")]
)
def test_openai_settings_reach_the_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api: str, path: str
) -> None:
    """base_url, api and api_key_env decide where the request goes and with which key."""
    seen: list[tuple[str, str | None]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append((self.path, self.headers.get("Authorization")))
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "seen", "type": "invalid_request_error"}}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("MY_KEY", "k-local")
        model = (
            f'{{ provider = "openai", id = "llama3", api = "{api}", retry = false, '
            f'base_url = "http://127.0.0.1:{server.server_port}/v1", api_key_env = "MY_KEY" }}'
        )
        agent = load_sidecar(_sidecar(tmp_path, model)).build()
        with pytest.raises(RunError, match="seen"):
            agent.run_sync("hi")
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [(path, "Bearer k-local")]


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        (
            '{ provider = "openai", id = "gpt-5-mini" }',
            "agents.a.model: OPENAI_API_KEY is not set. Fix: export OPENAI_API_KEY=... before "
            "running (or name another variable with api_key_env)",
        ),
        (
            '{ provider = "anthropic", id = "claude-sonnet-4-5" }',
            "agents.a.model: ANTHROPIC_API_KEY is not set. Fix: export ANTHROPIC_API_KEY=...",
        ),
        (
            '{ provider = "gemini", id = "gemini-2.5-flash" }',
            "agents.a.model: GEMINI_API_KEY or GOOGLE_API_KEY is not set. Fix: export "
            "GEMINI_API_KEY=...",
        ),
        (
            '{ provider = "openai", id = "x", api_key_env = "MY_KEY" }',
            "agents.a.model: MY_KEY is not set. Fix: export MY_KEY=... before running",
        ),
        (
            '{ provider = "openai", id = "x", bsae_url = "http://h" }',
            "agents.a.model: unknown keys ['bsae_url'] for provider 'openai'. Fix: did you mean "
            "'base_url'? use only ['api', 'api_key_env', 'base_url', 'id', 'organization', "
            "'provider', 'retry', 'timeout']",
        ),
        (
            '{ provider = "anthropic", id = "c", thinking_budget = "lots" }',
            "agents.a.model.thinking_budget: must be a whole number >= 1, got 'lots'. Fix: e.g. "
            "4096",
        ),
        (
            '{ provider = "openai", id = "x", api = "completions" }',
            'agents.a.model.api: unknown API \'completions\'. Fix: api = "chat" or "responses"',
        ),
        (
            '{ provider = "gemni", id = "x" }',
            "agents.a.model.provider: unknown provider 'gemni'. Fix: did you mean \"gemini\"? use "
            'one of "mock", "openai", "anthropic", "gemini", "bedrock"',
        ),
        (
            '{ provider = "bedrock" }',
            'agents.a.model: bedrock model needs id. Fix: model = { provider = "bedrock", id = ',
        ),
        (
            '{ provider = "openai", id = "x", retry = { attempts = 3 } }',
            "agents.a.model.retry: unknown keys ['attempts']. Fix: use only ['max_attempts', ",
        ),
        (
            '{ provider = "openai", id = "x", retry = { max_attempts = 0 } }',
            "agents.a.model.retry: RetryPolicy.max_attempts must be >= 1 (1 means no retries)",
        ),
        (
            '{ provider = "openai", id = "x", retry = "yes" }',
            "agents.a.model.retry: must be a table or true/false, got 'yes'. Fix: retry = {",
        ),
    ],
)
def test_a_bad_model_table_is_one_error_line(tmp_path: Path, model: str, problem: str) -> None:
    sidecar = _sidecar(tmp_path, model)
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(f"{sidecar}: {problem}")
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {sidecar}: {problem}")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_missing_provider_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real = builtins.__import__

    def no_anthropic(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("helikon.providers.anthropic"):
            raise ImportError("helikon.providers.anthropic needs the 'anthropic' extra")
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setattr(builtins, "__import__", no_anthropic)
    sidecar = _sidecar(tmp_path, '{ provider = "anthropic", id = "c" }')
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).endswith("Fix: pip install 'helikon[cli,anthropic]'")


@pytest.mark.parametrize(
    ("flag", "cls", "provider", "env"),
    [
        ("openai:gpt-5-mini", "OpenAIModel", "openai", "OPENAI_API_KEY"),
        ("openai-responses:gpt-5", "OpenAIResponsesModel", "openai", "OPENAI_API_KEY"),
        ("anthropic:claude-haiku-4-5", "AnthropicModel", "anthropic", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-pro", "GeminiModel", "gcp.gemini", "GEMINI_API_KEY"),
        ("bedrock:amazon.nova-pro-v1:0", "BedrockModel", "aws.bedrock", None),
    ],
)
def test_model_override_takes_every_provider(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
    cls: str,
    provider: str,
    env: str | None,
) -> None:
    (tmp_path / "s.json").write_text("[]")
    sidecar = _sidecar(tmp_path, '{ provider = "mock", script = "s.json" }')
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    if env is not None:
        with pytest.raises(SidecarError) as info:
            load_sidecar(sidecar).build(model_override=flag)
        names = env + (" or GOOGLE_API_KEY" if env == "GEMINI_API_KEY" else "")
        assert str(info.value) == (
            f"--model {flag!r}: {names} is not set. Fix: export {env}=... before running"
        )
        monkeypatch.setenv(env, "k")
    agent = load_sidecar(sidecar).build(model_override=flag)
    assert type(_inner(agent.model)).__name__ == cls
    assert (agent.model.provider, agent.model.model) == (provider, flag.split(":", 1)[1])


RATE_LIMITED = {"error": {"kind": "RateLimited", "message": "slow down", "retry_after": 0.01}}


def test_one_scripted_429_is_retried_by_helikon_run(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps([[RATE_LIMITED], [{"token": "after the 429"}]]))
    sidecar = _sidecar(tmp_path, '{ provider = "mock", script = "s.json" }')
    proc = helikon("run", "--agents", str(sidecar), "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "after the 429\n"


def test_retry_settings_and_retry_off(tmp_path: Path) -> None:
    three = [[RATE_LIMITED], [RATE_LIMITED], [{"token": "third time"}]]
    (tmp_path / "s.json").write_text(json.dumps(three))
    two = '{ provider = "mock", script = "s.json", retry = { max_attempts = 2, base_delay = 0 } }'
    proc = helikon("run", "--agents", str(_sidecar(tmp_path, two)), "hi")
    assert proc.returncode == 1
    assert "slow down" in proc.stderr
    model = load_sidecar(_sidecar(tmp_path, two)).build().model
    assert isinstance(model, RetryingModel)
    assert (model.policy.max_attempts, model.policy.base_delay) == (2, 0.0)

    off = '{ provider = "mock", script = "s.json", retry = false }'
    assert not isinstance(load_sidecar(_sidecar(tmp_path, off)).build().model, RetryingModel)
    proc = helikon("run", "--agents", str(_sidecar(tmp_path, off)), "hi")
    assert proc.returncode == 1
    assert "slow down" in proc.stderr
    three_ok = two.replace("max_attempts = 2", "max_attempts = 3")
    proc = helikon("run", "--agents", str(_sidecar(tmp_path, three_ok)), "hi")
    assert (proc.returncode, proc.stdout) == (0, "third time\n"), proc.stderr

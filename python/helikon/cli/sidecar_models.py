"""A sidecar's ``model = {...}`` tables and ``--model PROVIDER:ID``: every provider of the API.

Forms (the key comes from the environment; ``api_key_env`` names another variable)::

    model = "openai:gpt-5-mini"          # a model string, as Agent(model=...) and --model
    model = { provider = "mock", script = "script.json" }
    model = { provider = "openai", id = "gpt-5-mini" }                   # Chat Completions
    model = { provider = "openai", id = "gpt-5", api = "responses" }     # Responses API
    model = { provider = "openai", id = "llama3", base_url = "http://localhost:11434/v1",
              api_key_env = "OLLAMA_KEY" }                               # any compatible server
    model = { provider = "anthropic", id = "claude-sonnet-4-5", max_tokens = 4096,
              thinking_budget = 2048, cache = true }
    model = { provider = "gemini", id = "gemini-2.5-flash" }             # GEMINI_API_KEY
    model = { provider = "bedrock", id = "anthropic.claude-3-5-haiku-20241022-v1:0",
              region = "us-east-1" }                                     # the AWS credential chain

Every model (``mock`` too, so a scripted 429 behaves as a live one) is wrapped in
:class:`~helikon.providers.RetryingModel` (default :class:`~helikon.providers.RetryPolicy`),
so a rate limit or an unavailable provider is
retried before anything streamed; ``retry = { max_attempts = 5, base_delay = 1.0,
max_delay = 30.0 }`` tunes it and ``retry = false`` turns it off.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helikon.cli.sidecar_file import SidecarError, SidecarFile
from helikon.core.model import Model
from helikon.errors import ConfigError

__all__ = ["PROVIDERS", "build_model", "check_model", "override_model"]

_COMMON = ("provider", "retry")
_KEYS: dict[str, tuple[str, ...]] = {
    "mock": ("script",),
    "openai": ("id", "api", "base_url", "api_key_env", "organization", "timeout"),
    "anthropic": (
        "id",
        "base_url",
        "api_key_env",
        "max_tokens",
        "thinking_budget",
        "cache",
        "timeout",
    ),
    "gemini": ("id", "base_url", "api_key_env", "api_version", "timeout"),
    "bedrock": ("id", "region", "endpoint_url", "max_tokens", "timeout"),
}
PROVIDERS = tuple(_KEYS)
"""The providers a sidecar model table may name."""

_EXAMPLE = {
    "mock": 'model = { provider = "mock", script = "script.json" }',
    "openai": 'model = { provider = "openai", id = "gpt-5-mini" }',
    "anthropic": 'model = { provider = "anthropic", id = "claude-sonnet-4-5" }',
    "gemini": 'model = { provider = "gemini", id = "gemini-2.5-flash" }',
    "bedrock": 'model = { provider = "bedrock", id = "amazon.nova-lite-v1:0", '
    'region = "us-east-1" }',
}
_DEFAULT_KEY_ENV = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
_EXTRA = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini", "bedrock": "bedrock"}
_RETRY_KEYS = ("max_attempts", "base_delay", "max_delay", "multiplier", "jitter")
_OVERRIDE = {
    "mock": ("mock", {}),
    "openai": ("openai", {}),
    "openai-responses": ("openai", {"api": "responses"}),
    "anthropic": ("anthropic", {}),
    "gemini": ("gemini", {}),
    "bedrock": ("bedrock", {}),
}


class _Problem(Exception):
    """A model table problem: the key (relative to the table), the problem, the fix."""

    def __init__(self, key: str, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.key, self.problem, self.fix = key, problem, fix


@dataclass(frozen=True)
class _Spec:
    """A checked model table."""

    provider: str
    values: dict[str, Any]
    retry: dict[str, Any] | None
    """RetryPolicy keyword arguments; ``None`` means no retrying."""


def _from_string(value: str) -> _Spec:
    """``PROVIDER:ID`` (the prefixes of :data:`helikon.providers.infer.PREFIXES`, plus
    ``mock:SCRIPT``) as a checked spec with each provider's defaults."""
    provider, sep, ident = value.partition(":")
    if not sep or not ident or provider not in _OVERRIDE:
        close = difflib.get_close_matches(provider, list(_OVERRIDE), n=1)
        hint = f"did you mean '{close[0]}:{ident}'? " if close and sep and ident else ""
        problem = (
            f"unknown provider {provider!r} in {value!r}"
            if sep and ident
            else f"{value!r} is not a model string"
        )
        raise _Problem(
            "",
            f"{problem} (PROVIDER:ID with PROVIDER one of {', '.join(_OVERRIDE)})",
            f'{hint}e.g. model = "openai:gpt-5-mini", or a table: {_EXAMPLE["openai"]}',
        )
    name, extra = _OVERRIDE[provider]
    values: dict[str, Any] = {"script": ident} if name == "mock" else {"id": ident, **extra}
    return _Spec(name, values, {})


def _check(folder: Path, value: Any) -> _Spec:
    if isinstance(value, str):
        return _from_string(value)
    if not isinstance(value, dict) or "provider" not in value:
        raise _Problem("", "missing or not a table", _EXAMPLE["openai"])
    provider = value["provider"]
    if provider not in _KEYS:
        close = difflib.get_close_matches(str(provider), PROVIDERS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise _Problem(
            ".provider",
            f"unknown provider {provider!r}",
            f"{hint}use one of {', '.join(map(repr, PROVIDERS))}".replace("'", '"'),
        )
    allowed = (*_COMMON, *_KEYS[provider])
    extra = sorted(set(value) - set(allowed))
    if extra:
        close = difflib.get_close_matches(extra[0], allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise _Problem(
            "",
            f"unknown keys {extra} for provider {provider!r}",
            f"{hint}use only {sorted(allowed)}",
        )
    values = {k: v for k, v in value.items() if k not in _COMMON}
    if provider == "mock":
        if not isinstance(values.get("script"), str):
            raise _Problem("", "mock model needs script", _EXAMPLE["mock"])
    else:
        _check_provider_values(provider, values)
    return _Spec(provider, values, _check_retry(value.get("retry", True)))


def _check_provider_values(provider: str, values: dict[str, Any]) -> None:
    model_id = values.get("id")
    if not isinstance(model_id, str) or not model_id:
        raise _Problem("", f"{provider} model needs id", _EXAMPLE[provider])
    for url_key in ("base_url", "endpoint_url"):
        url = values.get(url_key)
        if url is not None and not (
            isinstance(url, str) and url.startswith(("http://", "https://"))
        ):
            raise _Problem(
                f".{url_key}", f"not an http(s) URL: {url!r}", f'{url_key} = "https://host/v1"'
            )
    for str_key in ("api_key_env", "organization", "api_version", "region"):
        if str_key in values and (not isinstance(values[str_key], str) or not values[str_key]):
            raise _Problem(f".{str_key}", "must be a non-empty string", f'{str_key} = "..."')
    if "api" in values and values["api"] not in ("chat", "responses"):
        raise _Problem(".api", f"unknown API {values['api']!r}", 'api = "chat" or "responses"')
    for int_key in ("max_tokens", "thinking_budget"):
        v = values.get(int_key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise _Problem(f".{int_key}", f"must be a whole number >= 1, got {v!r}", "e.g. 4096")
    timeout = values.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise _Problem(".timeout", f"must be seconds > 0, got {timeout!r}", "timeout = 60")
    if "cache" in values and not isinstance(values["cache"], bool):
        raise _Problem(".cache", "must be true or false", "cache = true")


def _check_retry(value: Any) -> dict[str, Any] | None:
    if value is True:
        return {}
    if value is False:
        return None
    fix = "retry = { max_attempts = 3, base_delay = 0.5, max_delay = 30.0 } or retry = false"
    if not isinstance(value, dict):
        raise _Problem(".retry", f"must be a table or true/false, got {value!r}", fix)
    extra = sorted(set(value) - set(_RETRY_KEYS))
    if extra:
        raise _Problem(".retry", f"unknown keys {extra}", f"use only {list(_RETRY_KEYS)}")
    from helikon.providers.retry import RetryPolicy

    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise _Problem(f".retry.{k}", f"must be a number, got {v!r}", fix)
    try:
        RetryPolicy(**value)
    except ConfigError as exc:
        raise _Problem(".retry", str(exc), fix) from None
    return dict(value)


def _key_env(provider: str, values: dict[str, Any]) -> tuple[str, ...]:
    if "api_key_env" in values:
        return (values["api_key_env"],)
    return _DEFAULT_KEY_ENV.get(provider, ())


def _make(folder: Path, spec: _Spec, case: str | None, *, in_file: bool = True) -> Model:
    """The live model of a checked table (a client is created; keys must be set)."""
    v = spec.values
    if spec.provider == "mock":
        return _retrying(_mock(folder, v["script"], case), spec.retry)
    # a missing extra first: setting the key would not be enough without it
    try:
        importlib.import_module(f"helikon.providers.{spec.provider}")
    except ImportError as exc:
        raise _not_installed(spec.provider, exc) from None
    envs = _key_env(spec.provider, v)
    key = next((os.environ[e] for e in envs if os.environ.get(e)), None)
    if envs and key is None:
        names = " or ".join(envs)
        raise _Problem(
            "",
            f"{names} is not set",
            f"export {envs[0]}=... before running"
            + (
                " (or name another variable with api_key_env)"
                if in_file and "api_key_env" not in v
                else ""
            ),
        )
    try:
        model = _FACTORIES[spec.provider](v, key)
    except ImportError as exc:
        raise _not_installed(spec.provider, exc) from None
    except ConfigError as exc:
        raise _Problem("", str(exc), _EXAMPLE[spec.provider]) from None
    return _retrying(model, spec.retry)


def _not_installed(provider: str, exc: ImportError) -> _Problem:
    return _Problem(
        "",
        f"the {provider} provider is not installed ({exc})",
        f"pip install 'helikon[cli,{_EXTRA[provider]}]'",
    )


def _mock(folder: Path, script: str, case: str | None) -> Model:
    from helikon.providers.scripted import MockModel

    resolved = (folder / script).resolve()
    try:
        return MockModel.from_script_file(resolved, case=case)
    except ConfigError as exc:
        fix = (
            "correct the script file (its format: docs/guides/testing.md#script-files)"
            if resolved.is_file()
            else f"create {resolved} or point script at an existing file (paths are "
            "relative to the sidecar's folder)"
        )
        raise _Problem(".script", str(exc), fix) from None


def _retrying(model: Model, retry: dict[str, Any] | None) -> Model:
    if retry is None:
        return model
    from helikon.providers.retry import RetryingModel, RetryPolicy

    return RetryingModel(model, RetryPolicy(**retry))


def _openai(v: dict[str, Any], key: str | None) -> Model:
    from helikon.providers.openai import OpenAIModel

    make = OpenAIModel.responses if v.get("api") == "responses" else OpenAIModel.chat
    return make(
        v["id"],
        api_key=key,
        base_url=v.get("base_url"),
        organization=v.get("organization"),
        timeout=v.get("timeout"),
    )


def _anthropic(v: dict[str, Any], key: str | None) -> Model:
    from helikon.providers.anthropic import AnthropicModel, CacheStrategy, ExtendedThinking

    options: dict[str, Any] = {"api_key": key, "base_url": v.get("base_url")}
    if "max_tokens" in v:
        options["max_tokens"] = v["max_tokens"]
    if "thinking_budget" in v:
        options["thinking"] = ExtendedThinking(budget_tokens=v["thinking_budget"])
    if v.get("cache"):
        options["cache"] = CacheStrategy()
    if "timeout" in v:
        options["timeout"] = v["timeout"]
    return AnthropicModel.messages(v["id"], **options)


def _gemini(v: dict[str, Any], key: str | None) -> Model:
    from helikon.providers.gemini import GeminiModel

    options: dict[str, Any] = {"api_key": key, "base_url": v.get("base_url")}
    for k in ("api_version", "timeout"):
        if k in v:
            options[k] = v[k]
    return GeminiModel.developer(v["id"], **options)


def _bedrock(v: dict[str, Any], key: str | None) -> Model:
    from helikon.providers.bedrock import BedrockModel

    return BedrockModel.converse(
        v["id"],
        region=v.get("region"),
        endpoint_url=v.get("endpoint_url"),
        max_tokens=v.get("max_tokens"),
        timeout=v.get("timeout"),
    )


_FACTORIES: dict[str, Callable[[dict[str, Any], str | None], Model]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


def check_model(sc: SidecarFile, key: str, value: Any) -> None:
    """Check a model table without making a client (no key needed).

    Raises:
        SidecarError: naming ``key`` (or the sub-key at fault), the problem and the fix.
    """
    try:
        spec = _check(sc.folder, value)
        if spec.provider == "mock":
            _mock(sc.folder, spec.values["script"], None)
    except _Problem as p:
        raise sc.err(key + p.key, p.problem, p.fix) from None


def build_model(sc: SidecarFile, key: str, value: Any, *, case: str | None = None) -> Model:
    """The model of a ``model = {...}`` table, ready to run (wrapped for retries).

    ``case`` (an eval case id) makes a ``mock`` model play that case's scripts.

    Raises:
        SidecarError: a bad table, a missing extra or API key, naming the fix.
    """
    try:
        return _make(sc.folder, _check(sc.folder, value), case)
    except _Problem as p:
        raise sc.err(key + p.key, p.problem, p.fix) from None


def override_model(override: str) -> Model:
    """The model of ``--model PROVIDER:ID`` (a mock script path is relative to the cwd).

    ``PROVIDER`` is ``openai``, ``openai-responses``, ``anthropic``, ``gemini``, ``bedrock``
    or ``mock``; the settings are each provider's defaults (``OPENAI_BASE_URL`` and the like
    still apply), wrapped for retries.

    Raises:
        SidecarError: a malformed value, an unknown provider, a missing extra or key.
    """
    provider, sep, ident = override.partition(":")
    where = f"--model {override!r}"
    if not sep or not ident or provider not in _OVERRIDE:
        raise SidecarError(
            f"{where}: expected PROVIDER:ID with PROVIDER one of {', '.join(_OVERRIDE)}. "
            "Fix: e.g. --model openai:gpt-5-mini or --model mock:script.json"
        )
    name = _OVERRIDE[provider][0]
    try:
        return _make(Path.cwd(), _from_string(override), None, in_file=False)
    except _Problem as p:
        if name == "mock" and p.key == ".script" and not (Path.cwd() / ident).is_file():
            fix = f"create {(Path.cwd() / ident).resolve()} or pass the path of an existing script"
            raise SidecarError(f"{where}: {p.problem}. Fix: {fix}") from None
        raise SidecarError(f"{where}: {p.problem}. Fix: {p.fix}") from None

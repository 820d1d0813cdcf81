"""Model strings: ``"openai:gpt-5-mini"`` -> a ready :class:`~helikon.Model`.

``Agent(model="anthropic:claude-sonnet-4-5")``, ``agents.toml``'s ``model = "gemini:..."`` and
``helikon run --model bedrock:...`` all read the same ``PROVIDER:MODEL_ID`` spelling:

=====================  ==============================================  ==================
prefix                 model                                           extra
=====================  ==============================================  ==================
``openai``             ``OpenAIModel.chat(id)`` (Chat Completions)     ``helikon[openai]``
``openai-responses``   ``OpenAIModel.responses(id)`` (Responses API)   ``helikon[openai]``
``anthropic``          ``AnthropicModel.messages(id)``                 ``helikon[anthropic]``
``gemini``             ``GeminiModel.developer(id)`` (Gemini API)      ``helikon[gemini]``
``bedrock``            ``BedrockModel.converse(id)`` (Converse API)    ``helikon[bedrock]``
=====================  ==============================================  ==================

Everything else comes from the environment, as each SDK reads it: ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL`` (so ``openai:llama3.2`` with ``OPENAI_BASE_URL=http://localhost:11434/v1``
reaches any OpenAI-compatible server), ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` (or
``GOOGLE_API_KEY``), the AWS credential chain and ``AWS_REGION``. :func:`infer_model` takes
``api_key=`` and ``base_url=`` for code that keeps them elsewhere. Only the first ``:``
separates: Bedrock ids keep theirs (``bedrock:amazon.nova-lite-v1:0``).

The model's SDK is imported when the string is read, never by ``import helikon``. The model
is not wrapped in :class:`~helikon.RetryingModel` (the SDKs retry transport errors); wrap it
yourself for more (``helikon run`` does).
"""

from __future__ import annotations

import difflib

from helikon.core.model import Model
from helikon.errors import ConfigError

__all__ = ["PREFIXES", "infer_model"]

PREFIXES: dict[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "bedrock": "bedrock",
}
"""Each model-string prefix and the pip extra its provider needs."""

_OTHER_SPELLINGS = {
    "openai-chat": "openai",
    "google": "gemini",
    "google-gla": "gemini",
    "google-vertex": "gemini",
    "claude": "anthropic",
    "aws": "bedrock",
    "bedrock-converse": "bedrock",
}


def _split(where: str, spec: str) -> tuple[str, str]:
    if not isinstance(spec, str):
        raise ConfigError(f"{where}: a model string must be a str, got {type(spec).__name__}")
    prefix, sep, model_id = spec.partition(":")
    prefix = prefix.strip()
    model_id = model_id.strip()
    choices = ", ".join(f"{p}:" for p in PREFIXES)
    if not sep or not prefix or not model_id:
        raise ConfigError(
            f"{where}: {spec!r} is not a model string; write PROVIDER:MODEL_ID with PROVIDER "
            f"one of {choices} (e.g. 'openai:gpt-5-mini'), or pass a Model object"
        )
    if prefix not in PREFIXES:
        close = _OTHER_SPELLINGS.get(prefix.lower()) or next(
            iter(difflib.get_close_matches(prefix, list(PREFIXES), n=1)), None
        )
        hint = f"did you mean '{close}:{model_id}'? " if close else ""
        raise ConfigError(
            f"{where}: unknown provider {prefix!r} in {spec!r}; {hint}use one of {choices}"
        )
    return prefix, model_id


def _build(prefix: str, model_id: str, api_key: str | None, base_url: str | None) -> Model:
    if prefix in ("openai", "openai-responses"):
        from helikon.providers.openai import OpenAIModel

        make = OpenAIModel.responses if prefix == "openai-responses" else OpenAIModel.chat
        return make(model_id, api_key=api_key, base_url=base_url)
    if prefix == "anthropic":
        from helikon.providers.anthropic import AnthropicModel

        return AnthropicModel.messages(model_id, api_key=api_key, base_url=base_url)
    if prefix == "gemini":
        from helikon.providers.gemini import GeminiModel

        return GeminiModel.developer(model_id, api_key=api_key, base_url=base_url)
    from helikon.providers.bedrock import BedrockModel

    if api_key is not None:
        raise ConfigError(
            "bedrock: api_key= is not used; Bedrock signs requests with the AWS credential "
            "chain (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)"
        )
    return BedrockModel.converse(model_id, endpoint_url=base_url)


def infer_model(
    spec: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    where: str = "model string",
) -> Model:
    """The model a ``PROVIDER:MODEL_ID`` string names (see the module doc for the prefixes).

    Args:
        spec: e.g. ``"openai:gpt-5-mini"``, ``"bedrock:amazon.nova-lite-v1:0"``.
        api_key: the key to use instead of the provider's environment variable.
        base_url: another endpoint (an OpenAI-compatible server, a proxy; for Bedrock the
            ``endpoint_url``).
        where: how error messages name the value (``"Agent(model=...)"``).

    Returns:
        A ready model; it owns its HTTP client (``await model.aclose()`` or ``async with``).

    Raises:
        ConfigError: not a model string, an unknown prefix (the message suggests the right
            one, e.g. ``google-gla:`` -> ``gemini:``), the provider's extra is not installed
            (naming ``pip install 'helikon[EXTRA]'``), or its key is not set (naming the
            environment variable).

    Example:
        >>> infer_model("openai:gpt-5-mini", api_key="sk-test").model
        'gpt-5-mini'
        >>> infer_model("google-gla:gemini-2.5-flash")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        helikon.errors.ConfigError: ... did you mean 'gemini:gemini-2.5-flash'? ...
    """
    prefix, model_id = _split(where, spec)
    try:
        return _build(prefix, model_id, api_key, base_url)
    except ImportError as exc:
        extra = PREFIXES[prefix]
        raise ConfigError(
            f"{where}: {spec!r} needs the '{extra}' extra, which is not installed: "
            f"pip install 'helikon[{extra}]' ({exc})"
        ) from None
    except ConfigError as exc:
        raise ConfigError(f"{where}: {spec!r}: {exc}") from None


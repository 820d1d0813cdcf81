"""OpenAI provider: :class:`OpenAIModel` over the official ``openai`` SDK.

Install with ``pip install "helikon[openai]"``. ``OpenAIModel.chat(model_id)`` speaks the Chat
Completions API to OpenAI or any OpenAI-compatible server (``base_url``); the API key comes
from ``api_key=`` or ``OPENAI_API_KEY``.

Example:
    >>> from helikon.providers.openai import OpenAIModel
    >>> OpenAIModel.chat("gpt-5-mini", api_key="sk-test").provider
    'openai'
"""

try:  # checked first, so importing any part of this package names the missing extra
    import openai as _sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "helikon.providers.openai needs the 'openai' extra (the openai SDK is missing): "
        "pip install 'helikon[openai]'"
    ) from exc

from helikon.providers.openai.chat import OpenAIModel

__all__ = ["OpenAIModel"]

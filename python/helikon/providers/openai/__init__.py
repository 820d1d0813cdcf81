"""OpenAI provider: :class:`OpenAIModel` over the official ``openai`` SDK.

Install with ``pip install "helikon[openai]"``. ``OpenAIModel.chat(model_id)`` speaks the Chat
Completions API to OpenAI or any OpenAI-compatible server (``base_url``); the API key comes
from ``api_key=`` or ``OPENAI_API_KEY``.

Example:
    >>> from helikon.providers.openai import OpenAIModel
    >>> OpenAIModel.chat("gpt-5-mini", api_key="sk-test").provider
    'openai'
"""

from helikon._extras import require_extra

# checked first, so importing any part of this package names the missing extra
require_extra("helikon.providers.openai", "openai", "openai", "the openai SDK")

from helikon.providers.openai.chat import OpenAIModel  # noqa: E402

__all__ = ["OpenAIModel"]

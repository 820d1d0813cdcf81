"""OpenAI provider: :class:`OpenAIModel` over the official ``openai`` SDK.

Install with ``pip install "helikon[openai]"``. ``OpenAIModel.chat(model_id)`` speaks the Chat
Completions API to OpenAI or any OpenAI-compatible server (``base_url``); the API key comes
from ``api_key=`` or ``OPENAI_API_KEY``.

Example:
    >>> from helikon.providers.openai import OpenAIModel
    >>> OpenAIModel.chat("gpt-5-mini", api_key="sk-test").provider
    'openai'
"""

from helikon.providers.openai.chat import OpenAIModel

__all__ = ["OpenAIModel"]

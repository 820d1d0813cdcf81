"""Anthropic provider: :class:`AnthropicModel` over the official ``anthropic`` SDK.

Install with ``pip install "helikon[anthropic]"``. ``AnthropicModel.messages(model_id)`` speaks
the Messages API; the API key comes from ``api_key=`` or ``ANTHROPIC_API_KEY`` and the API root
from ``base_url=`` or ``ANTHROPIC_BASE_URL``. :class:`ExtendedThinking` turns on extended
thinking and :class:`CacheStrategy` places prompt-cache breakpoints.

Example:
    >>> from helikon.providers.anthropic import AnthropicModel, CacheStrategy, ExtendedThinking
    >>> model = AnthropicModel.messages(
    ...     "claude-sonnet-4-5",
    ...     api_key="sk-ant-test",
    ...     thinking=ExtendedThinking(budget_tokens=2048),
    ...     cache=CacheStrategy(),
    ... )
    >>> model.provider, model.capabilities().reasoning
    ('anthropic', True)
"""

try:  # checked first, so importing any part of this package names the missing extra
    import anthropic as _sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "helikon.providers.anthropic needs the 'anthropic' extra (the anthropic SDK is missing): "
        "pip install 'helikon[anthropic]'"
    ) from exc

from helikon.providers.anthropic.messages import AnthropicModel
from helikon.providers.anthropic.settings import CacheStrategy, ExtendedThinking

__all__ = ["AnthropicModel", "CacheStrategy", "ExtendedThinking"]

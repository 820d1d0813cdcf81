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

from helikon._extras import require_extra

# checked first, so importing any part of this package names the missing extra
require_extra("helikon.providers.anthropic", "anthropic", "anthropic", "the anthropic SDK")

from helikon.providers.anthropic.messages import AnthropicModel  # noqa: E402
from helikon.providers.anthropic.settings import CacheStrategy, ExtendedThinking  # noqa: E402

__all__ = ["AnthropicModel", "CacheStrategy", "ExtendedThinking"]

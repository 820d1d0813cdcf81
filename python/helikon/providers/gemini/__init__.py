"""Gemini provider: :class:`GeminiModel` over Gemini's REST API (``httpx``, no Google SDK).

Install with ``pip install "helikon[gemini]"``. ``GeminiModel.developer(model_id)`` (or
``GeminiModel.from_env(model_id)``) uses the Developer API with a key from ``api_key=``,
``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``; ``GeminiModel.vertex(model_id, project, location,
token_provider=...)`` uses Vertex AI with a bearer token refreshed per request.

Example:
    >>> from helikon.providers.gemini import GeminiModel
    >>> GeminiModel.developer("gemini-2.5-flash", api_key="test-key").provider
    'gcp.gemini'
"""

from helikon._extras import require_extra

# checked first, so importing any part of this package names the missing extra
require_extra("helikon.providers.gemini", "gemini", "httpx", "httpx")

from helikon.providers.gemini._request import build_gemini_body  # noqa: E402
from helikon.providers.gemini.model import GeminiModel, TokenProvider  # noqa: E402

__all__ = ["GeminiModel", "TokenProvider", "build_gemini_body"]

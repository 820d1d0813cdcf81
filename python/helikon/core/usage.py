"""Token and request usage, summed field-wise across model turns."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from pydantic import BaseModel, ConfigDict

from helikon.errors import PeerSpellingError

__all__ = ["Usage"]


class Usage(BaseModel):
    """Token counts and model requests for one model turn or a whole run.

    ``requests`` counts model requests (one per call to the provider, failed calls
    included; a run's total includes its handoff targets'). Every other count is tokens.

    The same on every provider:

    * ``input_tokens`` is the whole prompt, tokens read from or written to a prompt cache
      included (OpenTelemetry GenAI ``gen_ai.usage.input_tokens``, which should include
      cached tokens). OpenAI's ``prompt_tokens`` / ``input_tokens`` and Gemini's
      ``promptTokenCount`` already count them; Anthropic's ``input_tokens`` and Bedrock's
      ``inputTokens`` count only the uncached part, so their adapters add the cache reads and
      writes.
    * ``cached_input_tokens`` (read from a prompt cache; ``gen_ai.usage.cache_read.input_tokens``)
      and ``cache_write_input_tokens`` (written to one, Anthropic and Bedrock;
      ``gen_ai.usage.cache_creation.input_tokens``) are parts of ``input_tokens``.
    * ``reasoning_tokens`` is part of ``output_tokens`` (the whole answer, thinking included).
    * ``total_tokens`` is the provider's total, or input + output when it gives none.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0
    cache_write_input_tokens: int = 0
    requests: int = 0

    if not TYPE_CHECKING:

        def __call__(self, *args: object, **kwargs: object) -> NoReturn:
            raise PeerSpellingError(
                "result.usage is helikon's Usage itself, not a method (Pydantic AI's "
                "result.usage()): write result.usage, e.g. result.usage.total_tokens"
            )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cache_write_input_tokens=self.cache_write_input_tokens + other.cache_write_input_tokens,
            requests=self.requests + other.requests,
        )

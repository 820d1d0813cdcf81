"""Token usage, summed field-wise across model turns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Usage"]


class Usage(BaseModel):
    """Token counts for one model turn or a whole run (all counts are tokens).

    ``cached_input_tokens`` and ``reasoning_tokens`` are subsets of ``input_tokens`` and
    ``output_tokens`` as the provider reports them; ``total_tokens`` is the provider's total
    (or input + output when the provider gives none). ``cache_write_input_tokens`` counts
    tokens written to a prompt cache (Anthropic, Bedrock).
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0
    cache_write_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cache_write_input_tokens=self.cache_write_input_tokens + other.cache_write_input_tokens,
        )

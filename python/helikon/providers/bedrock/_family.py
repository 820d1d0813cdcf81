"""Which model family a Bedrock model id belongs to, and what that family supports.

Bedrock model ids look like ``<provider>.<model>[:<version>]`` (``anthropic.claude-sonnet-4-5-
20250929-v1:0``, ``amazon.nova-pro-v1:0``, ``meta.llama3-1-70b-instruct-v1:0``). A
cross-region inference profile puts a geography in front (``us.``, ``eu.``, ``ap.``,
``apac.``, ``global.``; also ``us-gov.``, ``jp.``, ``au.``, ``ca.``), and ARNs end in
``.../<id>``. Both are peeled off before the provider segment is read. An application
inference profile ARN carries an opaque id and is :attr:`ModelFamily.UNKNOWN`.
"""

from __future__ import annotations

import enum

__all__ = ["FORCED_TOOL_FAMILIES", "TOOL_RESULT_STATUS_FAMILIES", "ModelFamily", "detect_family"]

_GEO_PREFIXES = ("us", "eu", "ap", "apac", "global", "us-gov", "jp", "au", "ca")


class ModelFamily(enum.StrEnum):
    """The model family behind a Bedrock model id.

    Example:
        >>> detect_family("us.anthropic.claude-3-7-sonnet-20250219-v1:0")
        <ModelFamily.ANTHROPIC: 'anthropic'>
    """

    ANTHROPIC = "anthropic"
    AMAZON_NOVA = "amazon_nova"
    AMAZON_TITAN = "amazon_titan"
    LLAMA = "llama"
    MISTRAL = "mistral"
    COHERE = "cohere"
    UNKNOWN = "unknown"


FORCED_TOOL_FAMILIES = frozenset(
    {ModelFamily.ANTHROPIC, ModelFamily.AMAZON_NOVA, ModelFamily.MISTRAL}
)
"""Families that honour a forced ``toolChoice``; structured output is synthesized for them."""

TOOL_RESULT_STATUS_FAMILIES = frozenset({ModelFamily.ANTHROPIC, ModelFamily.AMAZON_NOVA})
"""Families whose ``toolResult`` accepts ``status`` (Bedrock documents it for these only)."""


def detect_family(model_id: str) -> ModelFamily:
    """The :class:`ModelFamily` of a Bedrock model id, inference profile id or ARN.

    Args:
        model_id: e.g. ``"eu.amazon.nova-lite-v1:0"`` or
            ``"arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-70b-instruct-v1:0"``.

    Returns:
        The family; :attr:`ModelFamily.UNKNOWN` for providers without a family of their own
        (AI21, DeepSeek, Writer, ...) and for opaque ids.

    Example:
        >>> [detect_family(m).value for m in
        ...  ("amazon.titan-text-express-v1", "apac.amazon.nova-micro-v1:0", "cohere.command-r-v1:0")]
        ['amazon_titan', 'amazon_nova', 'cohere']
    """  # noqa: E501
    name = model_id.strip().rsplit("/", 1)[-1].lower()
    parts = name.split(".")
    if len(parts) > 2 and parts[0] in _GEO_PREFIXES:
        parts = parts[1:]
    if len(parts) < 2:
        return ModelFamily.UNKNOWN
    provider, model = parts[0], parts[1]
    if provider == "anthropic":
        return ModelFamily.ANTHROPIC
    if provider == "amazon":
        if model.startswith("nova"):
            return ModelFamily.AMAZON_NOVA
        if model.startswith("titan"):
            return ModelFamily.AMAZON_TITAN
        return ModelFamily.UNKNOWN
    if provider == "meta":
        return ModelFamily.LLAMA
    if provider == "mistral":
        return ModelFamily.MISTRAL
    if provider == "cohere":
        return ModelFamily.COHERE
    return ModelFamily.UNKNOWN

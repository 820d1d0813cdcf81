"""Converse content blocks for helikon content parts, and request-wide tool-use ids.

Text, images (base64 as bytes, ``s3://`` URLs), reasoning (signed text or redacted bytes,
exactly as received), and tool results whose content is never empty (field case BR-04).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from helikon.core.items import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    ImagePart,
    MediaSource,
    ReasoningPart,
    TextPart,
    ToolResult,
    ToolUsePart,
)
from helikon.errors import ModelOther
from helikon.providers._call_ids import CallIds
from helikon.providers._json import json_text, tool_input

__all__ = [
    "EMPTY_ERROR_RESULT",
    "EMPTY_TOOL_RESULT",
    "REASONING_KEY",
    "ConverseCallIds",
    "reasoning_blocks",
    "tool_input",
    "tool_result_content",
    "user_blocks",
]

REASONING_KEY = "bedrock_reasoning"
"""The ``provider_data`` key holding a turn's reasoning blocks as received."""

EMPTY_TOOL_RESULT = "(no output)"
EMPTY_ERROR_RESULT = "(tool error)"

_INVALID_ID_CHARS = re.compile(r"[^a-zA-Z0-9_.:-]")
_MAX_ID = 64
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}


# --------------------------------------------------------------------------- ids


def _clean_id(original: str) -> str:
    return (_INVALID_ID_CHARS.sub("_", original) or "tooluse")[:_MAX_ID]


class ConverseCallIds(CallIds):
    """Ids cleaned to Bedrock's characters and length; a repeated id gets ``_2``, ``_3`` ...
    (its base shortened to fit)."""

    def clean(self, original: str) -> str:
        return _clean_id(original)

    def fresh(self, original: str) -> str:
        base = _clean_id(original)
        new = base
        n = 2
        while new in self.used:
            suffix = f"_{n}"
            new = base[: _MAX_ID - len(suffix)] + suffix
            n += 1
        return new


# --------------------------------------------------------------------------- blocks


def _image_format(source: MediaSource) -> str:
    mime = (source.mime_type or "").lower()
    if mime in _IMAGE_FORMATS:
        return _IMAGE_FORMATS[mime]
    if not mime and source.url:
        ext = source.url.rsplit(".", 1)[-1].lower()
        if ext in ("png", "gif", "webp", "jpeg"):
            return ext
        if ext == "jpg":
            return "jpeg"
    raise ModelOther(
        f"Bedrock Converse takes png, jpeg, gif or webp images, not {mime or 'an unknown type'!r}"
    )


def _image_block(source: MediaSource) -> dict[str, Any]:
    fmt = _image_format(source)
    if source.type == "url":
        if not source.url or not source.url.startswith("s3://"):
            raise ModelOther(
                "Bedrock Converse cannot fetch image URLs; pass the image as base64 data "
                "or as an s3:// URL"
            )
        return {"image": {"format": fmt, "source": {"s3Location": {"uri": source.url}}}}
    if not source.data:
        raise ModelOther("image source of type 'base64' has no data")
    try:
        raw = base64.b64decode(source.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ModelOther(f"image data is not valid base64: {exc}") from exc
    return {"image": {"format": fmt, "source": {"bytes": raw}}}


def user_blocks(parts: list[ContentPart]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(_image_block(part.source))
        elif isinstance(part, AudioPart):
            raise ModelOther("helikon's Bedrock adapter does not send audio input")
        # reasoning and tool_use parts have no place in a user message
    return blocks


def _redacted_bytes(value: str) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _reasoning_block(
    text: str, signature: str | None, redacted: str | None
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if signature is not None:
        reasoning = {"text": text, "signature": signature}
        blocks.append({"reasoningContent": {"reasoningText": reasoning}})
    if redacted is not None:
        raw = _redacted_bytes(redacted)
        if raw is not None:
            blocks.append({"reasoningContent": {"redactedContent": raw}})
    return blocks


def reasoning_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    stored = (message.provider_data or {}).get(REASONING_KEY)
    blocks: list[dict[str, Any]] = []
    if isinstance(stored, list) and all(isinstance(b, dict) for b in stored):
        for entry in stored:
            signature = entry.get("signature")
            redacted = entry.get("redacted")
            blocks.extend(
                _reasoning_block(
                    str(entry.get("text") or ""),
                    signature if isinstance(signature, str) else None,
                    redacted if isinstance(redacted, str) else None,
                )
            )
        return blocks
    for part in message.content:
        if isinstance(part, ReasoningPart):
            blocks.extend(_reasoning_block(part.text, part.signature, part.redacted))
    return blocks


def tool_result_content(result: ToolResult) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in result.content:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(_image_block(part.source))
        elif isinstance(part, (AudioPart, ToolUsePart)):
            blocks.append({"text": json_text(part.model_dump(mode="json", exclude_none=True))})
        elif isinstance(part, ReasoningPart) and part.text:
            blocks.append({"text": part.text})
    if not blocks:
        blocks.append({"text": EMPTY_ERROR_RESULT if result.is_error else EMPTY_TOOL_RESULT})
    return blocks

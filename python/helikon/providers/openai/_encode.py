"""What both OpenAI APIs (Chat Completions and Responses) encode the same way.

Tool-call arguments as JSON text (without ASCII escapes), media sources as URLs or ``data:``
URLs, base64 audio as ``input_audio``, and the sampling settings of
:class:`~helikon.core.model.ModelSettings` (``temperature``, ``top_p``, the output cap,
``tool_choice`` and ``parallel_tool_calls``, the last two only when tools are offered).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helikon.core.items import AudioPart, MediaSource
from helikon.core.model import ModelSettings
from helikon.errors import ConfigError, ModelOther
from helikon.providers._json import json_text, sampling

__all__ = ["arguments", "input_audio", "media_url", "sampling_settings"]

_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


def arguments(args: Any) -> str:
    """Tool-call arguments as the JSON text the API expects (raw strings pass through)."""
    if isinstance(args, str):
        return args
    return json_text({} if args is None else args)


def media_url(source: MediaSource, default_mime: str) -> str:
    """The source's URL, or its base64 data as a ``data:`` URL."""
    if source.type == "url":
        if not source.url:
            raise ModelOther("image source of type 'url' has no url")
        return source.url
    if not source.data:
        raise ModelOther("media source of type 'base64' has no data")
    return f"data:{source.mime_type or default_mime};base64,{source.data}"


def input_audio(part: AudioPart, api: str) -> dict[str, Any]:
    """An ``input_audio`` part; ``api`` names the API in the error for audio by URL."""
    if part.source.type != "base64" or not part.source.data:
        raise ModelOther(f"{api} accepts audio only as base64 data, not by URL")
    fmt = _AUDIO_FORMATS.get((part.source.mime_type or "audio/wav").lower(), "wav")
    return {"type": "input_audio", "input_audio": {"data": part.source.data, "format": fmt}}


def sampling_settings(
    settings: ModelSettings,
    has_tools: bool,
    *,
    max_tokens_key: str,
    named_choice: Callable[[str], dict[str, Any]],
) -> dict[str, Any]:
    """The request fields both APIs share, in their usual order.

    Args:
        settings: the request's settings.
        has_tools: whether tools are offered (``tool_choice`` and ``parallel_tool_calls`` are
            sent only then).
        max_tokens_key: the output cap's field name.
        named_choice: the ``tool_choice`` value that forces the named tool.

    Raises:
        ConfigError: ``ToolChoice(mode="tool")`` without a tool name.
    """
    body = sampling(settings, top_p="top_p", max_tokens=max_tokens_key)
    if has_tools and settings.tool_choice is not None:
        choice = settings.tool_choice
        if choice.mode == "tool":
            if not choice.name:
                raise ConfigError(
                    "ToolChoice(mode='tool') needs a tool name: ToolChoice.tool(name)"
                )
            body["tool_choice"] = named_choice(choice.name)
        else:
            body["tool_choice"] = choice.mode
    if has_tools and settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    return body

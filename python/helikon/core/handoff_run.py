"""What a :func:`~helikon.handoff` spec does when the handoff happens: ``on_handoff``, then
``input_filter`` on the transcript the target starts from."""

from __future__ import annotations

import inspect
from typing import Any

from helikon.core.handoff import Handoff
from helikon.errors import ConfigError

__all__ = ["run_handoff_options"]


async def run_handoff_options(
    options: Handoff | None, ctx: Any, transcript: list[Any]
) -> list[Any]:
    """Call ``options.on_handoff(ctx)`` (awaited when async), then return
    ``options.input_filter(transcript)`` (or ``transcript`` unchanged without options).

    Raises:
        ConfigError: ``input_filter`` returned something other than a list.
    """
    if options is None:
        return transcript
    if options.on_handoff is not None:
        out = options.on_handoff(ctx)
        if inspect.isawaitable(out):
            await out
    if options.input_filter is None:
        return transcript
    filtered = options.input_filter(list(transcript))
    if not isinstance(filtered, list):
        raise ConfigError(
            f"handoff(input_filter=...) for {options.agent.name!r} returned "
            f"{type(filtered).__name__}; it must return the list of items the target starts from"
        )
    return filtered

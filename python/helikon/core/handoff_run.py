"""What a :func:`~helikon.handoff` spec does when the handoff happens: ``on_handoff``, then
``input_filter`` on the transcript the target starts from."""

from __future__ import annotations

import inspect
from typing import Any

from helikon.core.handoff import Handoff
from helikon.errors import AgentOther

__all__ = ["run_handoff_options"]


async def run_handoff_options(
    options: Handoff | None, ctx: Any, transcript: list[Any]
) -> list[Any]:
    """Call ``options.on_handoff(ctx)`` (awaited when async), then return
    ``options.input_filter(transcript)`` (or ``transcript`` unchanged without options).

    Raises:
        AgentOther: ``on_handoff`` or ``input_filter`` raised, or ``input_filter`` returned
            something other than a list (the message names the target and the callback).
    """
    if options is None:
        return transcript
    target = options.agent.name
    if options.on_handoff is not None:
        try:
            out = options.on_handoff(ctx)
            if inspect.isawaitable(out):
                await out
        except Exception as exc:
            raise AgentOther(
                f"handoff to {target!r}: on_handoff raised {type(exc).__name__}: {exc}"
            ) from exc
    if options.input_filter is None:
        return transcript
    try:
        filtered = options.input_filter(list(transcript))
    except Exception as exc:
        raise AgentOther(
            f"handoff to {target!r}: input_filter raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(filtered, list):
        raise AgentOther(
            f"handoff to {target!r}: input_filter returned {type(filtered).__name__}; it must "
            "return the list of items the target starts from"
        )
    return filtered

"""The settings both kinds of MCP server handle take, and their checks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from typing_extensions import TypedDict

from helikon.core.model import Model
from helikon.errors import ConfigError
from helikon.mcp._connection import ProgressCallback
from helikon.mcp._tool import DEFAULT_MAX_RESULT_CHARS

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "HandleOptions", "checked_options", "stdio_label"]

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds allowed for start-up, ``initialize`` and ``tools/list`` unless given."""


class HandleOptions(TypedDict, total=False):
    """The keyword arguments ``McpServerHandle.stdio`` and ``.streamable_http`` share; each
    is documented under ``McpServerHandle.stdio``."""

    tool_prefix: str | None
    lazy: bool
    connect_timeout: float
    call_timeout: float | None
    max_result_chars: int
    max_reconnects: int
    reconnect_delay: float
    sampling_model: Model | Literal["agent"] | None
    roots: Sequence[str | Path] | Literal["workspace"] | None
    on_progress: ProgressCallback | None


def checked_options(options: HandleOptions, max_message_bytes: int) -> dict[str, Any]:
    """The handle's own arguments from ``options`` (``call_timeout`` and ``on_progress`` go
    to each connection instead), every value checked.

    Raises:
        ConfigError: a bad value; the message names the argument.
    """
    _check_common(
        options.get("tool_prefix"),
        options.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
        options.get("call_timeout"),
    )
    _check_limits(max_message_bytes, options.get("max_result_chars", DEFAULT_MAX_RESULT_CHARS))
    _check_reconnect(options.get("max_reconnects", 3), options.get("reconnect_delay", 0.5))
    return {k: v for k, v in options.items() if k not in ("call_timeout", "on_progress")}


def stdio_label(command: str, args: list[str]) -> str:
    """``'python server.py'``: the command's file name and its arguments, shortened."""
    label = " ".join([Path(command).name, *args])
    return repr(label if len(label) <= 60 else label[:57] + "...")


def _check_common(prefix: Any, connect_timeout: Any, call_timeout: Any) -> None:
    if prefix is not None and not isinstance(prefix, str):
        raise ConfigError(f"McpServerHandle(tool_prefix=...) must be a str or None, got {prefix!r}")
    if not isinstance(connect_timeout, int | float) or connect_timeout <= 0:
        raise ConfigError(
            f"McpServerHandle(connect_timeout=...) must be > 0 seconds, got {connect_timeout!r}"
        )
    if call_timeout is not None and (
        not isinstance(call_timeout, int | float) or call_timeout <= 0
    ):
        raise ConfigError(
            f"McpServerHandle(call_timeout=...) must be > 0 seconds or None, got {call_timeout!r}"
        )


def _check_limits(max_message_bytes: Any, max_result_chars: Any) -> None:
    for name, value in (
        ("max_message_bytes", max_message_bytes),
        ("max_result_chars", max_result_chars),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"McpServerHandle({name}=...) must be a positive int, got {value!r}")


def _check_reconnect(max_reconnects: Any, delay: Any) -> None:
    if (
        isinstance(max_reconnects, bool)
        or not isinstance(max_reconnects, int)
        or max_reconnects < 0
    ):
        raise ConfigError(
            f"McpServerHandle(max_reconnects=...) must be an int >= 0, got {max_reconnects!r}"
        )
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise ConfigError(
            f"McpServerHandle(reconnect_delay=...) must be >= 0 seconds, got {delay!r}"
        )

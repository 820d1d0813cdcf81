"""Reading ``POST /agents/{name}/runs``: the body (size-limited JSON) and the transport.

The body is ``{"input": "text"}`` or ``{"messages": [item, ...]}`` (items in their JSON form,
e.g. ``{"type": "user_message", "content": [{"type": "text", "text": "hi"}]}``). Any other
top-level key, a blank ``input``, and text that is not valid Unicode (a lone surrogate such as
``"\\ud800"``, legal in JSON but not storable as UTF-8) answer 400 naming the field. The query
picks the transport: nothing for one-shot JSON, ``?stream=sse`` (or ``true`` / ``1``) for
SSE, ``?mode=async`` for 202 Accepted with the run continuing in the background.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from starlette.requests import ClientDisconnect, HTTPConnection, Request

from helikon.core.items import Item
from helikon.core.runnable import input_items
from helikon.errors import ConfigError, ServerError

__all__ = ["Transport", "last_event_id", "parse_run_body", "parse_transport", "read_body"]

log = logging.getLogger("helikon.server")

Transport: TypeAlias = Literal["oneshot", "sse", "async"]

_EXAMPLE = '{"input": "hello"} or {"messages": [{"type": "user_message", "content": [...]}]}'
_STREAM_ON = ("sse", "true", "1")
_STREAM_OFF = ("false", "0", "")
_MODES = ("sync", "oneshot", "async", "")
_KEYS = ("input", "messages")
_NOT_UNICODE = (
    "{field} is not valid Unicode text (it holds a lone surrogate such as \\ud800, which "
    "cannot be stored as UTF-8); send the text as UTF-8 or a complete surrogate pair"
)


def bad_request(message: str, field: str | None) -> ServerError:
    """A 400 ``invalid_request`` naming the offending field (``None``: the whole body)."""
    return ServerError(message, status=400, code="invalid_request", details={"field": field})


def parse_transport(query: Mapping[str, str]) -> Transport:
    """The transport the query asks for.

    Raises:
        ServerError: 400 for an unknown ``stream`` / ``mode`` value or both at once.
    """
    stream = query.get("stream", "").lower()
    mode = query.get("mode", "").lower()
    if stream not in _STREAM_ON + _STREAM_OFF:
        raise bad_request(f"stream={stream!r} is not supported; use stream=sse", "stream")
    if mode not in _MODES:
        raise bad_request(f"mode={mode!r} is not supported; use mode=async", "mode")
    if stream in _STREAM_ON and mode == "async":
        raise bad_request("stream=sse and mode=async exclude each other; pick one", "mode")
    if stream in _STREAM_ON:
        return "sse"
    return "async" if mode == "async" else "oneshot"


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing more than ``limit`` bytes (checked while reading).

    Raises:
        ServerError: 413 ``body_too_large``; 499 ``client_disconnected`` when the client
            went away mid-body (logged at INFO on ``helikon.server``, no traceback).
    """
    declared = request.headers.get("content-length")
    too_large = ServerError(
        f"request body is larger than the {limit}-byte limit",
        status=413,
        code="body_too_large",
        details={"limit": limit},
    )
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise too_large
    except ClientDisconnect:
        log.info(
            "client disconnected while sending the request body of %s %s (%d of %s bytes read)",
            request.method,
            request.url.path,
            len(body),
            declared if declared is not None else "unknown",
        )
        raise ServerError(
            "the client disconnected before its request body was read",
            status=499,
            code="client_disconnected",
        ) from None
    return bytes(body)


def parse_run_body(raw: bytes) -> list[Item]:
    """The run's input items from the JSON body.

    Raises:
        ServerError: 400 ``invalid_request`` whose ``field`` names what is wrong
            (``None`` when the body is not JSON at all).
    """
    try:
        body: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request(
            f"request body is not valid JSON ({exc}); send {_EXAMPLE}", None
        ) from None
    if not isinstance(body, dict):
        raise bad_request(
            f"request body must be a JSON object, got {type(body).__name__}; send {_EXAMPLE}", None
        )
    unknown = [key for key in body if key not in _KEYS]
    if unknown:
        raise bad_request(
            f"unknown key {unknown[0]!r} in the request body; allowed keys: "
            f"{', '.join(map(repr, _KEYS))} (send one of them)",
            unknown[0] if _is_text(unknown[0]) else None,
        )
    has_input, has_messages = "input" in body, "messages" in body
    if has_input and has_messages:
        raise bad_request("send either 'input' or 'messages', not both", "messages")
    if has_input:
        text = body["input"]
        if not isinstance(text, str):
            raise bad_request(f"'input' must be a string, got {_json_type(text)}", "input")
        if not _is_text(text):
            raise bad_request(_NOT_UNICODE.format(field="'input'"), "input")
        if not text.strip():
            raise bad_request(
                "'input' is empty or only whitespace; send the text for the agent", "input"
            )
        return input_items(text)
    if has_messages:
        messages = body["messages"]
        if not isinstance(messages, list) or not messages:
            raise bad_request(
                f"'messages' must be a non-empty list of items, got {_json_type(messages)}",
                "messages",
            )
        bad = _bad_text(messages, "messages")
        if bad is not None:
            raise bad_request(_NOT_UNICODE.format(field=bad), bad)
        try:
            items = input_items(messages)
        except ConfigError as exc:
            index = _index_of(str(exc))
            field = "messages" if index is None else f"messages[{index}]"
            message = str(exc).replace("agent input[", "messages[")
            raise bad_request(message, field) from None
        if all(item.type == "tool_result" for item in items):
            raise bad_request(
                "'messages' holds only tool results: a tool result answers a tool call, and "
                "there is no message for the agent to answer; add the user's message, e.g. "
                '{"type": "user_message", "content": [{"type": "text", "text": "..."}]}, '
                '(with the assistant\'s tool_call before its result) or send {"input": "..."}',
                "messages",
            )
        return items
    raise bad_request(
        f"request body needs 'input' or 'messages' (got no keys); send {_EXAMPLE}", "input"
    )


def _is_text(value: str) -> bool:
    """True when ``value`` can be stored as UTF-8 (JSON allows lone surrogates; UTF-8 not)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bad_text(value: Any, path: str) -> str | None:
    """The path of the first string (key or value) under ``value`` that is not valid Unicode."""
    if isinstance(value, str):
        return None if _is_text(value) else path
    if isinstance(value, list):
        for i, child in enumerate(value):
            found = _bad_text(child, f"{path}[{i}]")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, child in value.items():
            if not _is_text(key):
                return path
            found = _bad_text(child, f"{path}.{key}")
            if found is not None:
                return found
    return None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _index_of(message: str) -> int | None:
    prefix = "agent input["
    if not message.startswith(prefix):
        return None
    digits = message[len(prefix) :].split("]", 1)[0]
    return int(digits) if digits.isdigit() else None


def last_event_id(conn: HTTPConnection) -> int:
    """The ``Last-Event-ID`` header (or ``?last_event_id=``) as an int; -1 when absent.

    Raises:
        ServerError: 400 when it is not a non-negative integer.
    """
    raw = conn.headers.get("last-event-id") or conn.query_params.get("last_event_id")
    if raw is None or raw == "":
        return -1
    if not raw.isdigit():
        raise ServerError(
            f"Last-Event-ID must be an event id (a non-negative integer), got {raw!r}",
            status=400,
            code="invalid_request",
            details={"field": "Last-Event-ID"},
        )
    return int(raw)

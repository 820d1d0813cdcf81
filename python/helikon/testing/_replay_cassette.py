"""Reading responses to replay: vcrpy-style YAML cassettes, ``.chunks.txt`` streams, specs.

* A cassette interaction's body comes from ``parsed_body`` (re-serialized with
  :func:`json.dumps` defaults) or ``body.string`` (text encoded as UTF-8, ``!!binary`` bytes
  unchanged); its recorded request body is parsed as JSON (gzip undone) when it is JSON.
* A ``.chunks.txt`` file (an Anthropic stream, body only) becomes one ``POST /v1/messages``
  answer: each line becomes ``event: <type>`` + ``data: <line>``.
* A hand-built :data:`~helikon.testing._replay_records.ResponseSpec` becomes an interaction
  with a JSON body, a raw body, or SSE events (with :class:`Pause` entries kept).

``text/event-stream`` bodies are split into their events so the server can send one per chunk.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from helikon.testing._replay_records import Pause, RecordedInteraction, ResponseSpec

__all__ = ["GZIP_MAGIC", "from_spec", "is_sse", "load_cassette"]

GZIP_MAGIC = b"\x1f\x8b"


def _yaml() -> Any:
    """PyYAML, imported when a YAML cassette is read (hand-written responses need none)."""
    try:
        import yaml
    except ImportError as exc:
        raise ImportError(
            "reading a YAML cassette needs PyYAML: pip install 'helikon[replay]' "
            "(ReplayServer.from_responses works without it)"
        ) from exc
    return yaml


_EVENT_SPLIT = re.compile(rb"\r?\n\r?\n")


def _header_value(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _header_pairs(headers: Any) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if not isinstance(headers, Mapping):
        return pairs
    for name, values in headers.items():
        seq = values if isinstance(values, list) else [values]
        pairs.extend((str(name), _header_value(v)) for v in seq)
    return pairs


def is_sse(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether the headers declare a ``text/event-stream`` body."""
    return any(
        name.lower() == "content-type" and "text/event-stream" in value.lower()
        for name, value in headers
    )


def _split_events(body: bytes) -> tuple[bytes, ...]:
    events = []
    for piece in _EVENT_SPLIT.split(body):
        if piece.strip():
            events.append(piece + b"\n\n")
    return tuple(events)


def _parse_json(raw: Any) -> Any:
    if raw is None:
        return None
    if isinstance(raw, bytes):
        if raw[:2] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return None
    return raw


def _response_body(response: Mapping[str, Any]) -> bytes:
    if "parsed_body" in response:
        return json.dumps(response["parsed_body"]).encode("utf-8")
    body = response.get("body")
    raw = body.get("string") if isinstance(body, Mapping) else body
    if raw is None:
        return b""
    if isinstance(raw, bytes):
        return raw
    return str(raw).encode("utf-8")


def _status_code(status: Any) -> int:
    if isinstance(status, Mapping):
        return int(status.get("code", 200))
    return int(status)


def _load_chunks(path: Path) -> list[RecordedInteraction]:
    events: list[bytes | Pause] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        kind = json.loads(line).get("type", "message")
        events.append(f"event: {kind}\ndata: {line}\n\n".encode())
    body = b"".join(e for e in events if isinstance(e, bytes))
    headers = (("content-type", "text/event-stream; charset=utf-8"),)
    return [
        RecordedInteraction(
            index=0,
            method="POST",
            path="/v1/messages",
            request_body=None,
            status=200,
            headers=headers,
            body=body,
            sse_events=tuple(events),
        )
    ]


def load_cassette(
    path: str | Path, interactions: Iterable[int] | None = None
) -> list[RecordedInteraction]:
    """Read a cassette into :class:`RecordedInteraction` values, in recorded order.

    Args:
        path: a vcrpy YAML cassette, or a body-only ``*.chunks.txt`` Anthropic stream (served
            as ``POST /v1/messages``).
        interactions: indices to keep (the index's ``interactions_used``); ``None`` keeps all.

    Returns:
        The kept interactions, in the order they were recorded.

    Raises:
        ValueError: the file is not a cassette (no ``interactions`` list).
        ImportError: PyYAML is not installed (extra ``helikon[replay]``).
    """
    path = Path(path)
    if path.name.endswith(".chunks.txt"):
        loaded = _load_chunks(path)
    else:
        yaml = _yaml()
        with path.open("rb") as fh:
            doc = yaml.safe_load(fh)
        if not isinstance(doc, Mapping) or not isinstance(doc.get("interactions"), list):
            raise ValueError(f"{path}: not a cassette (no 'interactions' list)")
        loaded = []
        for index, entry in enumerate(doc["interactions"]):
            request, response = entry["request"], entry["response"]
            headers = tuple(_header_pairs(response.get("headers")))
            body = _response_body(response)
            request_raw = request.get("parsed_body", request.get("body"))
            if isinstance(request_raw, Mapping) and "string" in request_raw:
                request_raw = request_raw["string"]
            loaded.append(
                RecordedInteraction(
                    index=index,
                    method=str(request.get("method", "POST")).upper(),
                    path=unquote(urlsplit(str(request["uri"])).path),
                    request_body=_parse_json(request_raw),
                    status=_status_code(response.get("status", 200)),
                    headers=headers,
                    body=body,
                    sse_events=_split_events(body) if is_sse(headers) else None,
                )
            )
    if interactions is None:
        return loaded
    wanted = set(interactions)
    return [it for it in loaded if it.index in wanted]


def from_spec(index: int, method: str, path: str, spec: ResponseSpec) -> RecordedInteraction:
    """The interaction that answers ``method path`` with a hand-built ``(status, headers,
    body)`` (see :meth:`~helikon.testing.replay.ReplayServer.from_responses`)."""
    status, given_headers, body = spec
    headers = [(str(k), str(v)) for k, v in given_headers.items()]
    names = {k.lower() for k, _ in headers}
    events: tuple[bytes | Pause, ...] | None = None
    if isinstance(body, bytes):
        raw = body
    elif isinstance(body, str):
        raw = body.encode("utf-8")
    elif isinstance(body, Mapping):
        raw = json.dumps(body).encode("utf-8")
        if "content-type" not in names:
            headers.append(("content-type", "application/json"))
    else:
        converted: list[bytes | Pause] = []
        for event in body:
            if isinstance(event, Pause):
                converted.append(event)
                continue
            if isinstance(event, Mapping):
                chunk = b"data: " + json.dumps(event).encode("utf-8")
            elif isinstance(event, str):
                chunk = event.encode("utf-8")
            else:
                chunk = bytes(event)
            converted.append(chunk.rstrip(b"\r\n") + b"\n\n")
        events = tuple(converted)
        raw = b"".join(e for e in events if isinstance(e, bytes))
        if "content-type" not in names:
            headers.append(("content-type", "text/event-stream; charset=utf-8"))
    if events is None and is_sse(headers):
        events = _split_events(raw)
    return RecordedInteraction(
        index=index,
        method=method.upper(),
        path=unquote(path),
        request_body=None,
        status=status,
        headers=tuple(headers),
        body=raw,
        sse_events=events,
    )

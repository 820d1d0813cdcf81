"""ReplayServer: serving the shared wire recordings and hand-built responses faithfully."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from helikon.testing.replay import Pause, ReplayServer, load_cassette

WIRE = (
    Path(os.environ.get("HELIKON_SHARED") or Path(__file__).resolve().parents[2] / "../shared")
    / "wire"
).resolve()


def _raw_exchange(port: int, path: str, body: bytes = b"{}") -> tuple[bytes, list[bytes]]:
    """POST over a bare socket; return the header block and the chunked body's chunks."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (path.encode(), len(body), body)
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    chunks = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        chunks.append(rest[:size])
        rest = rest[size + 2 :]
    return head, chunks


class _Reply:
    def __init__(self, resp: http.client.HTTPResponse) -> None:
        self.status = resp.status
        self.headers = resp.headers
        self.body = resp.read()

    def getheader(self, name: str) -> str | None:
        return self.headers.get(name)

    def read(self) -> bytes:
        return self.body


def _post(port: int, path: str, body: Any = None) -> _Reply:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("POST", path, body=json.dumps(body or {}), headers={"content-type": "x"})
        return _Reply(conn.getresponse())
    finally:
        conn.close()


def test_sse_goes_out_chunked_one_event_per_chunk() -> None:
    path = WIRE / "openai/chat_text_stream.yaml"
    recorded = load_cassette(path)[0]
    assert recorded.sse_events is not None
    with ReplayServer(path) as server:
        head, chunks = _raw_exchange(server.port, "/v1/chat/completions")
    lines = [line.lower() for line in head.split(b"\r\n")]
    assert b"transfer-encoding: chunked" in lines
    assert not any(line.startswith((b"connection:", b"content-length:")) for line in lines)
    assert any(line.startswith(b"openai-version:") for line in lines)  # others kept
    assert len(chunks) == len(recorded.sse_events) == 14
    assert all(c.startswith(b"data: ") and c.endswith(b"\n\n") for c in chunks)
    assert chunks[-1] == b"data: [DONE]\n\n"
    assert b"".join(chunks) == recorded.body


def test_gzip_body_is_sent_unchanged_with_its_encoding() -> None:
    with ReplayServer(WIRE / "openai/chat_refusal.yaml") as server:
        resp = _post(server.port, "/v1/chat/completions")
        raw = resp.read()
    assert resp.status == 200
    assert resp.getheader("content-encoding") == "gzip"
    assert raw[:2] == b"\x1f\x8b"
    assert int(resp.getheader("content-length") or -1) == len(raw)
    assert resp.getheader("transfer-encoding") is None
    body = json.loads(gzip.decompress(raw))
    assert body["choices"][0]["message"]["refusal"].startswith("I'm very sorry")


def test_parsed_body_is_reserialized_with_recomputed_length() -> None:
    path = WIRE / "openai/chat_reasoning_o3mini.yaml"
    with ReplayServer(path) as server:
        resp = _post(server.port, "/v1/chat/completions", {"model": "o3-mini"})
        raw = resp.read()
        assert server.requests == [{"model": "o3-mini"}]
    with path.open("rb") as fh:
        stored = yaml.safe_load(fh)["interactions"][0]["response"]["parsed_body"]
    assert raw == json.dumps(stored).encode()
    assert int(resp.getheader("content-length") or -1) == len(raw)
    assert json.loads(raw)["usage"]["completion_tokens_details"]["reasoning_tokens"] == 64


def test_binary_event_stream_and_quoted_paths() -> None:
    path = WIRE / "bedrock/converse_text_stream.yaml"
    recorded = load_cassette(path)[0]
    assert recorded.path == "/model/us.amazon.nova-micro-v1:0/converse-stream"
    with ReplayServer(path) as server:
        resp = _post(server.port, "/model/us.amazon.nova-micro-v1%3A0/converse-stream?x=1")
        raw = resp.read()
    assert resp.status == 200
    assert resp.getheader("content-type") == "application/vnd.amazon.eventstream"
    assert raw == recorded.body
    assert int(resp.getheader("content-length") or -1) == len(raw)


def test_body_only_chunks_file_becomes_an_sse_stream() -> None:
    path = WIRE / "anthropic/messages_refusal_stream.chunks.txt"
    with ReplayServer(path) as server:
        head, chunks = _raw_exchange(server.port, "/v1/messages?beta=true")
    assert b"text/event-stream" in head.lower()
    kinds = [c.split(b"\n")[0] for c in chunks]
    assert kinds == [
        b"event: message_start",
        b"event: ping",
        b"event: message_delta",
        b"event: message_stop",
    ]
    assert all(c.split(b"\n")[1].startswith(b"data: {") for c in chunks)


def test_fifo_per_route_and_interaction_filter() -> None:
    path = WIRE / "openai/chat_parallel_tools_stream.yaml"
    recorded = load_cassette(path, [0, 1])
    with ReplayServer(path, interactions=[0, 1]) as server:
        assert server.remaining() == {("POST", "/v1/chat/completions"): 2}
        _, first = _raw_exchange(server.port, "/v1/chat/completions")
        _, second = _raw_exchange(server.port, "/v1/chat/completions")
        assert server.remaining() == {}
    assert [r.index for r in recorded] == [0, 1]
    assert b"".join(first) == recorded[0].body
    assert b"".join(second) == recorded[1].body
    assert b"call_M26z19sncd7b4LBgzKRRbaUE" in recorded[0].body


def test_empty_queue_answers_599_with_a_json_error() -> None:
    server = ReplayServer.from_responses([(200, {}, {"n": 1})], path="/v1/a")
    with server:
        assert _post(server.port, "/v1/a").read() == b'{"n": 1}'
        resp = _post(server.port, "/v1/a", {"again": True})
        body = json.loads(resp.read())
        other = _post(server.port, "/v1/b")
        other.read()
        assert [(c.path, c.body) for c in server.unmatched] == [
            ("/v1/a", {"again": True}),
            ("/v1/b", {}),
        ]
    assert resp.status == 599
    assert body["error"]["type"] == "replay_exhausted"
    assert body["error"]["message"] == ("replay server: no recorded response left for POST /v1/a")
    assert other.status == 599


def test_hand_built_responses() -> None:
    responses: list[Any] = [
        (429, {"retry-after": "3"}, {"error": {"message": "slow"}}),
        (200, {"content-encoding": "gzip"}, b"not gzip"),
        (200, {}, [{"a": 1}, "data: [DONE]", b"event: x\ndata: y"]),
    ]
    with ReplayServer.from_responses(responses, path="/p") as server:
        first = _post(server.port, "/p")
        assert json.loads(first.read()) == {"error": {"message": "slow"}}
        second = _post(server.port, "/p")
        assert second.read() == b"not gzip"
        _, chunks = _raw_exchange(server.port, "/p")
    assert (first.status, first.getheader("retry-after")) == (429, "3")
    assert first.getheader("content-type") == "application/json"
    assert second.getheader("content-encoding") is None  # dropped: the body is not gzip
    assert chunks == [b'data: {"a": 1}\n\n', b"data: [DONE]\n\n", b"event: x\ndata: y\n\n"]


def test_close_ends_a_stalled_stream_promptly() -> None:
    server = ReplayServer.from_responses([(200, {}, ["data: 1", Pause(30), "data: 2"])])
    server.start()
    received: list[bytes] = []

    def reader() -> None:
        received.append(_raw_exchange(server.port, "/v1/chat/completions")[0])

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    server.close()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert time.monotonic() - started < 3
    assert received and b"200" in received[0]


async def test_async_context_manager() -> None:
    async with ReplayServer.from_responses([(204, {}, b"")], path="/x") as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}"
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.port


def test_load_cassette_rejects_non_cassettes(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text("a: 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a cassette"):
        load_cassette(bad)

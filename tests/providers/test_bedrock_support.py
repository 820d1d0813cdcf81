"""Shared helpers of the Bedrock tests (no tests here): offline AWS settings, a real boto3
client on a local server, and builders for Converse JSON bodies and binary AWS event-stream
frames (CRCs included), so botocore's own parsing decides what the adapter sees."""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import boto3
import pytest
from botocore.config import Config

from helikon.core.cancel import CancellationToken
from helikon.core.items import UserMessage
from helikon.core.model import (
    ModelRequest,
    ModelSettings,
    TokenDelta,
)
from helikon.providers.bedrock import BedrockModel

CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "us.amazon.nova-micro-v1:0"
LLAMA = "us.meta.llama3-3-70b-instruct-v1:0"


def offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials, no profile, no instance metadata: nothing reaches AWS."""
    for var in list(os.environ):
        if var.startswith("AWS_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDREPLAY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "replay-secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)


def client_at(base_url: str) -> Any:
    """A real client on the local server, without SDK retries (a retry would find no
    response left)."""
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=base_url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",
        config=Config(retries={"total_max_attempts": 1}),
    )


# --------------------------------------------------------------------------- wire builders


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude, prelude CRC, string headers, payload, CRC."""
    encoded = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
        for k, v in headers.items()
    )
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def event(kind: str, body: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, json.dumps(body).encode())


def exception_event(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())


def usage_event(inp: int = 10, out: int = 5, **more: int) -> bytes:
    usage = {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out, **more}
    return event("metadata", {"usage": usage, "metrics": {"latencyMs": 1}})


def text_stream(*texts: str, stop: str = "end_turn") -> list[bytes]:
    frames = [event("messageStart", {"role": "assistant"})]
    frames += [
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in texts
    ]
    frames += [event("contentBlockStop", {"contentBlockIndex": 0})]
    return [*frames, event("messageStop", {"stopReason": stop}), usage_event()]


def tool_stream(index: int, call_id: str, name: str, *fragments: str) -> list[bytes]:
    start = {"toolUse": {"toolUseId": call_id, "name": name}}
    frames = [event("contentBlockStart", {"contentBlockIndex": index, "start": start})]
    frames += [
        event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": f}}})
        for f in fragments
    ]
    return [*frames, event("contentBlockStop", {"contentBlockIndex": index})]


def stream_response(frames: Sequence[bytes]) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "application/vnd.amazon.eventstream"}, b"".join(frames)


def converse_body(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 1},
    }


def route(model_id: str, *, stream: bool) -> str:
    return f"/model/{model_id}/{'converse-stream' if stream else 'converse'}"


async def events_of(model: BedrockModel, request: ModelRequest) -> list[Any]:
    return [e async for e in model.invoke(request, CancellationToken())]


def text_of_events(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TokenDelta))


def ask(text: str = "hi", **settings: Any) -> ModelRequest:
    return ModelRequest(messages=[UserMessage.text(text)], settings=ModelSettings(**settings))

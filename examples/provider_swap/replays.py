"""What the replay server answers for each provider: recorded turns, then one synthesized turn.

Every provider's run makes the same sequence of model calls, because the agent loop decides
it, not the provider: tool turns (tools offered, plain text allowed) until the model answers
without calling a tool, then a *finalizing* turn that offers no tools and asks for the
``CityReport`` JSON Schema in the provider's own structured-output form.

The tool turns and the model's first (prose or JSON) answer are **recorded** traffic from
``shared/wire``, served byte for byte. The finalizing turn is **synthesized**: no recording
has that exact request (the recorders asked for structured output in the same request as
the tools, or not at all), so its response is hand-built here in that provider's real wire
format: a Chat Completions object, a Responses object, a Messages object, a Gemini SSE
chunk, and binary AWS event-stream frames (with CRCs) whose ``toolUse`` calls the reserved
structured-output tool helikon declares for Bedrock.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helikon.providers.bedrock import STRUCTURED_OUTPUT_TOOL
from helikon.testing.replay import ReplayServer, ResponseSpec, load_cassette

__all__ = ["ANSWER_FRANCE", "ANSWER_MEXICO", "REPLAYS", "Replay", "default_wire_dir"]

ANSWER_MEXICO = '{"city":"Mexico City","country":"Mexico","temperature_c":null}'
"""The synthesized structured answer to "What is the largest city in the user country?"."""

ANSWER_FRANCE = '{"city":"Paris","country":"France","temperature_c":30}'
"""The synthesized structured answer to "What is the temperature of the capital of France?"."""

QUESTION_MEXICO = "What is the largest city in the user country?"
QUESTION_FRANCE = "What is the temperature of the capital of France?"


def default_wire_dir() -> Path:
    """``$HELIKON_SHARED/wire``, else the ``shared/wire`` folder beside the repository."""
    shared = os.environ.get("HELIKON_SHARED")
    if shared:
        return Path(shared) / "wire"
    return Path(__file__).resolve().parents[3] / "shared" / "wire"


@dataclass(frozen=True)
class Replay:
    """One provider's scripted traffic.

    Attributes:
        question: the user question the recording was made with.
        cassette: the recording, relative to ``shared/wire``.
        interactions: the recorded interactions served, in order.
        synthesized: the hand-built responses served after them.
        route: the request path all of them answer.
    """

    question: str
    cassette: str
    interactions: tuple[int, ...]
    synthesized: tuple[ResponseSpec, ...]
    route: str

    def server(self, wire: Path) -> ReplayServer:
        """A (not yet started) server answering the recorded turns, then the synthesized.

        Raises:
            FileNotFoundError: the recording is missing.
            ValueError: a recorded interaction was made on another route.
        """
        recorded = load_cassette(wire / self.cassette, self.interactions)
        if len(recorded) != len(self.interactions):
            raise ValueError(f"{self.cassette}: interactions {self.interactions} not all found")
        specs: list[ResponseSpec] = []
        for it in recorded:
            if it.path != self.route:
                raise ValueError(f"{self.cassette}#{it.index} was made on {it.path}")
            specs.append((it.status, dict(it.headers), it.body))
        return ReplayServer.from_responses([*specs, *self.synthesized], path=self.route)


# --------------------------------------------------------------------------- synthesized turns


def _chat_completion(answer: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-synthesized-final",
        "object": "chat.completion",
        "created": 1746142584,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": answer,
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 170, "completion_tokens": 19, "total_tokens": 189},
        "service_tier": "default",
        "system_fingerprint": "fp_f5bdcc3276",
    }


def _response(answer: str) -> dict[str, Any]:
    return {
        "id": "resp_synthesized_final",
        "object": "response",
        "created_at": 1749516048,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": "gpt-4o-2024-08-06",
        "output": [
            {
                "type": "message",
                "id": "msg_synthesized_final",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 160,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 19,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 179,
        },
    }


def _message(answer: str) -> dict[str, Any]:
    return {
        "id": "msg_synthesized_final",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [{"type": "text", "text": answer}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 720,
            "output_tokens": 24,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _gemini_chunk(answer: str) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"parts": [{"text": answer}], "role": "model"}, "finishReason": "STOP"}
        ],
        "usageMetadata": {
            "promptTokenCount": 96,
            "candidatesTokenCount": 17,
            "totalTokenCount": 113,
        },
        "modelVersion": "gemini-2.0-flash",
        "responseId": "synthesized-final",
    }


def _frame(kind: str, payload: Mapping[str, Any]) -> bytes:
    """One AWS event-stream message: prelude + CRC, string headers, JSON payload, CRC."""
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    head = b"".join(
        bytes([len(name)])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    body = json.dumps(payload, separators=(",", ":")).encode()
    prelude = struct.pack(">II", 16 + len(head) + len(body), len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + body
    return message + struct.pack(">I", zlib.crc32(message))


def _converse_stream(answer: str) -> bytes:
    """A ConverseStream turn whose only block calls the structured-output tool."""
    start = {"toolUse": {"toolUseId": "tooluse_synthesized_final", "name": STRUCTURED_OUTPUT_TOOL}}
    usage = {"inputTokens": 640, "outputTokens": 31, "totalTokens": 671}
    return b"".join(
        [
            _frame("messageStart", {"role": "assistant"}),
            _frame("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
            _frame(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": answer}}},
            ),
            _frame("contentBlockStop", {"contentBlockIndex": 0}),
            _frame("messageStop", {"stopReason": "tool_use"}),
            _frame("metadata", {"usage": usage, "metrics": {"latencyMs": 310}}),
        ]
    )


_JSON = {"content-type": "application/json"}

REPLAYS: dict[str, Replay] = {
    "openai-chat": Replay(
        question=QUESTION_MEXICO,
        cassette="openai/chat_json_schema_tool_loop.yaml",
        interactions=(0, 1),
        synthesized=((200, _JSON, _chat_completion(ANSWER_MEXICO)),),
        route="/v1/chat/completions",
    ),
    "openai-responses": Replay(
        question=QUESTION_MEXICO,
        cassette="openai/responses_json_schema_tool_loop.yaml",
        interactions=(0, 1),
        synthesized=((200, _JSON, _response(ANSWER_MEXICO)),),
        route="/v1/responses",
    ),
    "anthropic": Replay(
        question=QUESTION_MEXICO,
        cassette="anthropic/messages_thinking_tool_loop.yaml",
        interactions=(0, 1),
        synthesized=((200, _JSON, _message(ANSWER_MEXICO)),),
        route="/v1/messages",
    ),
    "gemini": Replay(
        question=QUESTION_FRANCE,
        cassette="gemini/gemini_tool_loop_stream.yaml",
        interactions=(0, 1, 2),
        synthesized=((200, {}, [_gemini_chunk(ANSWER_FRANCE)]),),
        route="/v1beta/models/gemini-2.0-flash:streamGenerateContent",
    ),
    "bedrock": Replay(
        question=QUESTION_FRANCE,
        cassette="bedrock/converse_tool_loop_stream.yaml",
        interactions=(0, 1),
        synthesized=(
            (
                200,
                {"content-type": "application/vnd.amazon.eventstream"},
                _converse_stream(ANSWER_FRANCE),
            ),
        ),
        route="/model/us.amazon.nova-micro-v1:0/converse-stream",
    ),
}
"""Per provider name (see ``models.PROVIDERS``): the scripted traffic of its offline run."""

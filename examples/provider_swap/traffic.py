"""The offline traffic: one scripted conversation, written in each provider's own wire format.

Offline, every provider's model talks to a local :class:`~helikon.testing.replay.ReplayServer`
that answers with the responses built here. Nothing is read from disk: the conversation is
:data:`SCRIPT` (what the "model" says, turn by turn, provider-neutral), and one encoder per
provider turns each step into the bytes that provider's streaming API sends:

========================  =====================================================================
provider                  wire format built here
========================  =====================================================================
``openai-chat``           Chat Completions SSE: ``data: {chat.completion.chunk}`` lines, a last
                          chunk with ``usage`` and no choices, then ``data: [DONE]``
``openai-responses``      Responses SSE: ``event: response.created`` ... ``response.completed``
                          (output items, text and function-call-argument deltas)
``anthropic``             Messages SSE: ``message_start``, ``content_block_start/delta/stop``,
                          ``message_delta`` (stop reason, usage), ``message_stop``
``gemini``                ``streamGenerateContent?alt=sse``: ``data: {candidates, usageMetadata}``
``bedrock``               ConverseStream: binary AWS event-stream messages (prelude, headers,
                          JSON payload, CRC-32 checksums)
========================  =====================================================================

Every provider's run makes the same sequence of model calls, because the agent loop decides
it, not the provider: tool turns (the agent's tools offered) until the model answers without
calling a tool, then a *finalizing* turn that offers none of the agent's tools and asks for the
``CityReport`` JSON Schema in the provider's structured-output form. The finalizing answer is
the JSON text, except on Bedrock, where it is the input of the reserved structured-output tool
helikon declares (:data:`helikon.providers.bedrock.STRUCTURED_OUTPUT_TOOL`).

The ids and token counts are invented; the shapes follow each provider's API reference.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from helikon.providers.bedrock import STRUCTURED_OUTPUT_TOOL
from helikon.testing.replay import ReplayServer, ResponseSpec, SseEvent

__all__ = [
    "ANSWER",
    "MODEL_IDS",
    "QUESTION",
    "ROUTES",
    "SCRIPT",
    "Step",
    "replay_server",
    "responses_for",
]

QUESTION = "What is the temperature in the capital of my country?"
"""What every provider is asked offline."""

ANSWER = '{"city":"Paris","country":"France","temperature_c":30}'
"""The finalizing turn's structured answer (a ``CityReport`` as JSON)."""


@dataclass(frozen=True)
class Step:
    """One model turn, provider-neutral.

    Attributes:
        text: the assistant text (``""`` for none).
        call: ``(tool name, JSON arguments)`` of the one tool call, or ``None``.
        tokens: ``(input, output)`` token counts the turn reports.
        final: the finalizing (structured-output) turn.
    """

    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None
    tokens: tuple[int, int] = (0, 0)
    final: bool = False


SCRIPT: tuple[Step, ...] = (
    Step(text="Let me find out where you are.", call=("get_user_country", {}), tokens=(210, 18)),
    Step(call=("get_capital", {"country": "France"}), tokens=(245, 15)),
    Step(call=("get_temperature", {"city": "Paris"}), tokens=(270, 16)),
    Step(text="It is 30°C in Paris, the capital of France.", tokens=(301, 14)),
    Step(text=ANSWER, tokens=(180, 21), final=True),
)
"""The conversation every provider replays: three tool turns, a prose answer, the JSON."""

MODEL_IDS: dict[str, str] = {
    "openai-chat": "gpt-4o",
    "openai-responses": "gpt-4o",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "bedrock": "us.amazon.nova-micro-v1:0",
}
"""The model id each provider's model line names (``models.make_model``)."""

ROUTES: dict[str, str] = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": f"/v1beta/models/{MODEL_IDS['gemini']}:streamGenerateContent",
    "bedrock": f"/model/{MODEL_IDS['bedrock']}/converse-stream",
}
"""The request path each provider's streaming call is made on."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _named(kind: str, payload: Mapping[str, Any]) -> str:
    """A named SSE event: ``event: <kind>`` + ``data: <json>``."""
    return f"event: {kind}\ndata: {_json(payload)}"


def _halves(text: str) -> list[str]:
    """``text`` in two deltas, as a stream would deliver it."""
    cut = len(text) // 2
    return [part for part in (text[:cut], text[cut:]) if part]


# --------------------------------------------------------------------------- OpenAI Chat


def _chat_sse(step: Step, n: int) -> list[SseEvent]:
    head = {
        "id": f"chatcmpl-swap{n}",
        "object": "chat.completion.chunk",
        "created": 1767225600 + n,
        "model": "gpt-4o-2024-08-06",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**head, "choices": [choice], "usage": None}

    events: list[SseEvent] = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": part}) for part in _halves(step.text)]
    if step.call:
        name, args = step.call
        start = {"index": 0, "id": f"call_swap{n}", "type": "function"}
        events.append(
            chunk({"tool_calls": [{**start, "function": {"name": name, "arguments": ""}}]})
        )
        for part in _halves(_json(args)):
            events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}))
    events.append(chunk({}, "tool_calls" if step.call else "stop"))
    tokens_in, tokens_out = step.tokens
    usage = {
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
    }
    events.append({**head, "choices": [], "usage": usage})
    events.append("data: [DONE]")
    return events


# --------------------------------------------------------------------------- OpenAI Responses


def _responses_sse(step: Step, n: int) -> list[SseEvent]:
    response_id = f"resp_swap{n}"
    base = {
        "id": response_id,
        "object": "response",
        "created_at": 1767225600 + n,
        "model": "gpt-4o-2024-08-06",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
    }
    seq = iter(range(1000))
    events: list[SseEvent] = [
        _named(
            "response.created",
            {
                "type": "response.created",
                "sequence_number": next(seq),
                "response": {**base, "status": "in_progress"},
            },
        ),
    ]
    output: list[dict[str, Any]] = []
    if step.text:
        index = len(output)
        item_id = f"msg_swap{n}"
        message = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        events.append(
            _named(
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": index,
                    "item": message,
                },
            )
        )
        for part in _halves(step.text):
            events.append(
                _named(
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(seq),
                        "item_id": item_id,
                        "output_index": index,
                        "content_index": 0,
                        "delta": part,
                    },
                )
            )
        content = [{"type": "output_text", "text": step.text, "annotations": []}]
        done = {**message, "status": "completed", "content": content}
        events.append(
            _named(
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(seq),
                    "output_index": index,
                    "item": done,
                },
            )
        )
        output.append(done)
    if step.call:
        index = len(output)
        name, args = step.call
        item_id = f"fc_swap{n}"
        call = {
            "type": "function_call",
            "id": item_id,
            "call_id": f"call_swap{n}",
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        events.append(
            _named(
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": index,
                    "item": call,
                },
            )
        )
        for part in _halves(_json(args)):
            events.append(
                _named(
                    "response.function_call_arguments.delta",
                    {
                        "type": "response.function_call_arguments.delta",
                        "sequence_number": next(seq),
                        "item_id": item_id,
                        "output_index": index,
                        "delta": part,
                    },
                )
            )
        events.append(
            _named(
                "response.function_call_arguments.done",
                {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq),
                    "item_id": item_id,
                    "output_index": index,
                    "arguments": _json(args),
                },
            )
        )
        done = {**call, "arguments": _json(args), "status": "completed"}
        events.append(
            _named(
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(seq),
                    "output_index": index,
                    "item": done,
                },
            )
        )
        output.append(done)
    tokens_in, tokens_out = step.tokens
    usage = {
        "input_tokens": tokens_in,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens_in + tokens_out,
    }
    completed = {**base, "status": "completed", "output": output, "usage": usage}
    events.append(
        _named(
            "response.completed",
            {"type": "response.completed", "sequence_number": next(seq), "response": completed},
        )
    )
    return events


# --------------------------------------------------------------------------- Anthropic


def _anthropic_sse(step: Step, n: int) -> list[SseEvent]:
    tokens_in, tokens_out = step.tokens
    message = {
        "id": f"msg_swap{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": 1},
    }
    events: list[SseEvent] = [
        _named("message_start", {"type": "message_start", "message": message})
    ]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if step.text:
        deltas = [{"type": "text_delta", "text": part} for part in _halves(step.text)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    if step.call:
        name, args = step.call
        start = {"type": "tool_use", "id": f"toolu_swap{n}", "name": name, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [{"type": "input_json_delta", "partial_json": p} for p in _halves(_json(args))]
        blocks.append((start, deltas))
    for index, (start, deltas) in enumerate(blocks):
        events.append(
            _named(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                _named(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(_named("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = "tool_use" if step.call else "end_turn"
    events.append(
        _named(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": tokens_out},
            },
        )
    )
    events.append(_named("message_stop", {"type": "message_stop"}))
    return events


# --------------------------------------------------------------------------- Gemini


def _gemini_sse(step: Step, n: int) -> list[SseEvent]:
    tokens_in, tokens_out = step.tokens
    usage = {
        "promptTokenCount": tokens_in,
        "candidatesTokenCount": tokens_out,
        "totalTokenCount": tokens_in + tokens_out,
    }
    parts: list[dict[str, Any]] = []
    if step.text:
        parts += [{"text": part} for part in _halves(step.text)]
    if step.call:
        name, args = step.call
        parts.append({"functionCall": {"name": name, "args": args}})
    chunks: list[SseEvent] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if last:
            candidate["finishReason"] = "STOP"
        chunk: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": MODEL_IDS["gemini"],
            "responseId": f"swap{n}",
        }
        if last:
            chunk["usageMetadata"] = usage
        chunks.append(chunk)
    return chunks


# --------------------------------------------------------------------------- Bedrock


def _frame(kind: str, payload: Mapping[str, Any]) -> bytes:
    """One AWS event-stream message: total and header lengths, prelude CRC-32, string
    headers (name length, name, type 7, value length, value), the JSON payload, message CRC."""
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    head = b"".join(
        bytes([len(name)])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    body = _json(payload).encode()
    prelude = struct.pack(">II", 16 + len(head) + len(body), len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + body
    return message + struct.pack(">I", zlib.crc32(message))


def _converse_stream(step: Step, n: int) -> bytes:
    frames = [_frame("messageStart", {"role": "assistant"})]
    index = 0
    if step.text and not step.final:
        for part in _halves(step.text):
            frames.append(
                _frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": part}})
            )
        frames.append(_frame("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    call = step.call
    if step.final:  # Bedrock's structured answer is the input of the reserved tool
        call = (STRUCTURED_OUTPUT_TOOL, json.loads(step.text))
    if call:
        name, args = call
        start = {"toolUse": {"toolUseId": f"tooluse_swap{n}", "name": name}}
        frames.append(_frame("contentBlockStart", {"contentBlockIndex": index, "start": start}))
        for part in _halves(_json(args)):
            frames.append(
                _frame(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"toolUse": {"input": part}}},
                )
            )
        frames.append(_frame("contentBlockStop", {"contentBlockIndex": index}))
    frames.append(_frame("messageStop", {"stopReason": "tool_use" if call else "end_turn"}))
    tokens_in, tokens_out = step.tokens
    usage = {
        "inputTokens": tokens_in,
        "outputTokens": tokens_out,
        "totalTokens": tokens_in + tokens_out,
    }
    frames.append(_frame("metadata", {"usage": usage, "metrics": {"latencyMs": 420}}))
    return b"".join(frames)


# --------------------------------------------------------------------------- per provider

_SSE = {"content-type": "text/event-stream"}
_ENCODERS: dict[str, Callable[[Step, int], list[SseEvent] | bytes]] = {
    "openai-chat": _chat_sse,
    "openai-responses": _responses_sse,
    "anthropic": _anthropic_sse,
    "gemini": _gemini_sse,
    "bedrock": _converse_stream,
}


def responses_for(provider: str, script: tuple[Step, ...] = SCRIPT) -> list[ResponseSpec]:
    """``script`` as ``provider``'s HTTP responses, one per model call, in order.

    Raises:
        KeyError: an unknown provider (see ``models.PROVIDERS``).
    """
    encode = _ENCODERS[provider]
    specs: list[ResponseSpec] = []
    for n, step in enumerate(script):
        body = encode(step, n)
        if isinstance(body, bytes):
            specs.append((200, {"content-type": "application/vnd.amazon.eventstream"}, body))
        else:
            specs.append((200, _SSE, body))
    return specs


def replay_server(provider: str, script: tuple[Step, ...] = SCRIPT) -> ReplayServer:
    """A (not yet started) local server answering ``provider``'s route with ``script``."""
    return ReplayServer.from_responses(responses_for(provider, script), path=ROUTES[provider])

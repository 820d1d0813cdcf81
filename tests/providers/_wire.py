"""What every provider's wire tests share: the recorded corpus, a replay, and the checks.

* :func:`wire_entries` reads ``shared/wire/INDEX.json`` (one entry per recording, with the
  interactions it uses and each one's ``expected`` outcome).
* :func:`replaying` serves a recording's used interactions on a :class:`ReplayServer` and
  checks, when the test is done with them, that every one was asked for and nothing else.
* :func:`collect` runs one ``invoke`` into an :class:`Outcome` (the events, or the error).
* ``assert_*`` compare an outcome with the index's ``expected``: text, tool calls, usage,
  the one closing ``Finish``, a mapped error, reasoning with its signature.
* :func:`cancel_after_first_token` and :func:`cancel_on_first_event` drive the cancellation
  tests every adapter has.
* :func:`get_capital` and :func:`get_temperature` are the tools of the recorded Bedrock and
  Gemini tool loops (their schemas must match the recordings).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.conftest import SHARED

from helikon import ToolEffect, tool
from helikon.core.cancel import CancellationToken
from helikon.core.items import AssistantMessage, Item, ReasoningPart
from helikon.core.model import (
    Finish,
    ModelRequest,
    ProviderMetadata,
    ReasoningDelta,
    TokenDelta,
    ToolCallDelta,
    UsageReported,
)
from helikon.core.turn import TurnAccumulator
from helikon.core.usage import Usage
from helikon.errors import ModelError
from helikon.testing.replay import RecordedInteraction, ReplayServer, load_cassette

WIRE = SHARED / "wire"


def wire_entries(**match: Any) -> list[dict[str, Any]]:
    """The INDEX.json entries whose fields equal ``match`` (a tuple value: any of them)."""

    def wanted(entry: Mapping[str, Any]) -> bool:
        for key, value in match.items():
            allowed = value if isinstance(value, tuple) else (value,)
            if entry[key] not in allowed:
                return False
        return True

    index = json.loads((WIRE / "INDEX.json").read_text(encoding="utf-8"))
    return [e for e in index if wanted(e)]


# --------------------------------------------------------------------------- recorded tools


@tool(effect=ToolEffect.READ_ONLY)
def get_capital(country: str) -> str:
    """Get the capital of a country.

    Args:
        country: The country name.
    """
    return {"France": "Paris"}.get(country, "unknown")


@tool(effect=ToolEffect.READ_ONLY)
def get_temperature(city: str) -> str:
    """Get the temperature in a city.

    Args:
        city: The city name.
    """
    return {"Paris": "30°C"}.get(city, "unknown")


# --------------------------------------------------------------------------- replaying


@dataclass(frozen=True)
class Exchange:
    """One used interaction of a recording: its position ``k`` in the replay, the index's
    facts about it and the recorded interaction itself."""

    k: int
    facts: dict[str, Any]
    recorded: RecordedInteraction

    @property
    def body(self) -> Any:
        """The recorded request body (``None`` for a body-only recording)."""
        return self.recorded.request_body


@contextmanager
def replaying(
    entry: Mapping[str, Any], used: list[int] | None = None
) -> Iterator[tuple[ReplayServer, list[Exchange]]]:
    """Serve ``entry``'s used interactions (or ``used``) in order.

    After the block, every queued response must have been asked for, and no request may have
    found none left.
    """
    path = WIRE / entry["file"]
    indices = entry["interactions_used"] if used is None else used
    recorded = {r.index: r for r in load_cassette(path, indices)}
    facts = {i["index"]: i for i in entry["interactions"]}
    exchanges = [Exchange(k, facts[i], recorded[i]) for k, i in enumerate(indices)]
    with ReplayServer(path, interactions=indices) as server:
        yield server, exchanges
        assert server.unmatched == []
        assert server.remaining() == {}


# --------------------------------------------------------------------------- outcome


@dataclass
class Outcome:
    """What one invoke produced."""

    events: list[Any] = field(default_factory=list)
    error: ModelError | None = None

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TokenDelta))

    @property
    def reasoning_text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, ReasoningDelta))

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The calls, their fragments joined by id (the name must come once, first)."""
        calls: dict[str, dict[str, Any]] = {}
        for e in self.events:
            if isinstance(e, ToolCallDelta):
                entry = calls.setdefault(e.call_id, {"id": e.call_id, "name": None, "args": ""})
                if e.name is not None:
                    assert entry["name"] is None, "name must come once, on the first delta"
                    entry["name"] = e.name
                entry["args"] += e.args_delta
        return [
            {"id": c["id"], "name": c["name"], "arguments": json.loads(c["args"] or "{}")}
            for c in calls.values()
        ]

    @property
    def finishes(self) -> list[Finish]:
        return [e for e in self.events if isinstance(e, Finish)]

    @property
    def usages(self) -> list[UsageReported]:
        return [e for e in self.events if isinstance(e, UsageReported)]

    @property
    def metadata(self) -> list[ProviderMetadata]:
        return [e for e in self.events if isinstance(e, ProviderMetadata)]

    def items(self, agent: str = "replay") -> list[Item]:
        """The turn's items as the loop would record them."""
        acc = TurnAccumulator()
        for e in self.events:
            acc.add(e)
        return acc.items(agent)


async def collect(
    model: Any,
    request: ModelRequest,
    cancel: CancellationToken | None = None,
    outcome: type[Outcome] = Outcome,
) -> Any:
    """Run ``model.invoke`` to its end; a ``ModelError`` lands in ``Outcome.error``."""
    out = outcome()
    try:
        async for event in model.invoke(request, cancel or CancellationToken()):
            out.events.append(event)
    except ModelError as exc:
        out.error = exc
    return out


# --------------------------------------------------------------------------- checks


def assert_error(
    out: Outcome, expected: Mapping[str, Any], cls: type[ModelError], *, exact: bool = True
) -> None:
    """A mapped error of class ``cls`` (exactly, or a subclass) with the recorded status and
    message, and no ``Finish``."""
    assert out.error is not None, "expected an error"
    if exact:
        assert type(out.error) is cls
    else:
        assert isinstance(out.error, cls), out.error
    assert out.error.status_code == expected["http_status"]
    assert out.error.message == expected["message"]
    assert out.finishes == []


def assert_error_codes(out: Outcome, error_type: str | None, error_code: str | None) -> None:
    """The mapped error carries the provider's own error type and code, as strings."""
    assert out.error is not None, "expected an error"
    assert (out.error.error_type, out.error.error_code) == (error_type, error_code)


def assert_answered_by(out: Outcome, model: str | None, response_id: str | None) -> None:
    """The turn's ``Finish`` names the model that answered and the provider's response id."""
    assert len(out.finishes) == 1
    assert (out.finishes[0].model, out.finishes[0].response_id) == (model, response_id)


def assert_reasoning_in_output(
    usage: Usage, expected: Mapping[str, int], *, reported_apart: bool = False
) -> None:
    """helikon's usage rule: reasoning tokens are part of the output tokens, on every provider.

    ``expected`` is the index's usage as the provider sent it; ``reported_apart`` says the
    provider counts reasoning outside its output count (Gemini), so helikon adds the two.
    """
    reasoning = expected.get("reasoning_tokens", 0)
    output = expected.get("output_tokens", 0)
    assert usage.reasoning_tokens == reasoning
    assert usage.output_tokens == (output + reasoning if reported_apart else output)
    assert usage.reasoning_tokens <= usage.output_tokens


def assert_usage(
    out: Outcome, expected: Mapping[str, int], names: Mapping[str, str] | None = None
) -> Usage:
    """Exactly one usage report, whose fields (``names`` maps the index's field names to
    :class:`Usage` attributes) equal ``expected``."""
    assert len(out.usages) == 1
    usage = out.usages[0].usage
    got = {k: getattr(usage, names[k] if names else k) for k in expected}
    assert got == dict(expected)
    return usage


def whole_prompt(expected: Mapping[str, int], read: str, written: str) -> dict[str, int]:
    """The index's usage with ``input_tokens`` as helikon counts it: the whole prompt.

    The index keeps the provider's own counters; Anthropic's ``input_tokens`` and Bedrock's
    ``inputTokens`` are the uncached part only, so the cache reads (``read``) and writes
    (``written``) are added, as :class:`~helikon.Usage` says ``input_tokens`` includes them.
    """
    out = dict(expected)
    if "input_tokens" in out:
        out["input_tokens"] += out.get(read, 0) + out.get(written, 0)
    return out


def assert_extracted(out: Outcome, expected: Mapping[str, Any]) -> None:
    """The text and the tool calls (ids, names, parsed arguments)."""
    assert out.text == expected["text"]
    assert out.tool_calls == expected["tool_calls"]


def assert_one_finish(out: Outcome, raw: str) -> Finish:
    """One ``Finish``, the last event, with the provider's raw finish value."""
    assert len(out.finishes) == 1
    assert out.events[-1] is out.finishes[0]
    assert out.finishes[0].raw == raw
    return out.finishes[0]


def assert_signed_reasoning(out: Outcome, expected: Mapping[str, Any]) -> None:
    """The turn's reasoning parts are the recorded ones, text and signature."""
    reasoning = [
        p
        for item in out.items()
        if isinstance(item, AssistantMessage)
        for p in item.content
        if isinstance(p, ReasoningPart)
    ]
    want = [
        ReasoningPart(text=r["text"], signature=r["signature"])
        for r in expected.get("reasoning", [])
    ]
    assert reasoning == want


# --------------------------------------------------------------------------- cancellation


async def cancel_after_first_token(
    model: Any, request: ModelRequest, delay: float = 0.1
) -> tuple[list[Any], float]:
    """Invoke ``model``, firing the token ``delay`` seconds after each token arrives (so while
    the next chunk is awaited); the events seen and how many seconds the call took."""
    cancel = CancellationToken()
    seen: list[Any] = []
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    async for event in model.invoke(request, cancel):
        seen.append(event)
        if isinstance(event, TokenDelta):
            loop.call_later(delay, cancel.cancel)
    return seen, time.monotonic() - started


async def cancel_on_first_event(model: Any, request: ModelRequest) -> list[Any]:
    """Invoke ``model``, firing the token as soon as an event arrives (between chunks); the
    events seen."""
    cancel = CancellationToken()
    seen: list[Any] = []
    async for event in model.invoke(request, cancel):
        seen.append(event)
        cancel.cancel()
    return seen

"""Shared pieces of the server tests: a calculator agent, SSE parsing, a live uvicorn server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import pytest

from helikon import Agent, tool
from helikon.runtimes.server import AgentServer
from helikon.testing import Call, Delay, MockModel, Text
from helikon.testing.script import Script

TOOL_RUN_TYPES = [
    "run_started",
    "turn_started",
    "tool_call_delta",
    "tool_call_item",
    "tool_output_item",
    "turn_started",
    "token_delta",
    "message_output",
    "run_completed",
]
"""The events of one run of :func:`calc_agent`: a tool call, then the answer."""

BOUND = 10.0
"""Seconds any single wait in these tests may take before the test fails."""


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def calc_agent(runs: int = 1, *, name: str = "calc") -> Agent:
    """An agent whose every run calls ``add(1, 2)`` and answers ``"3"``."""
    script: list[Script] = [[Call("c1", "add", {"a": 1, "b": 2})], [Text("3")]]
    return Agent(name=name, model=MockModel(script * runs), tools=[add])


def slow_agent(seconds: float = 30.0, *, name: str = "slow", runs: int = 1) -> Agent:
    """An agent that calls ``add``, then streams a token and waits ``seconds`` (honouring
    cancellation) before its answer ``"thinking."``."""
    script: list[Script] = [
        [Call("c1", "add", {"a": 1, "b": 2})],
        [Text("thinking"), Delay(seconds), Text(".")],
    ]
    return Agent(name=name, model=MockModel(script * runs), tools=[add])


def parse_sse(raw: str) -> list[dict[str, Any]]:
    """The frames of an SSE body: ``{"id", "event", "data"}`` (``data`` parsed), comments out."""
    frames = []
    for block in raw.split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            key, _, value = line.partition(": ")
            fields[key] = value
        if fields:
            fields["data"] = json.loads(fields["data"])
            frames.append(fields)
    return frames


async def sse_frames(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """Parse SSE frames from a live line iterator (httpx ``aiter_lines``)."""
    fields: dict[str, Any] = {}
    async for line in lines:
        if line == "":
            if fields:
                fields["data"] = json.loads(fields["data"])
                yield fields
            fields = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            fields[key] = value


def types_of(events: Iterable[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


class Live:
    """An :class:`AgentServer` served by uvicorn on 127.0.0.1 with a free port."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self.task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    async def __aenter__(self) -> Live:
        self.task = asyncio.create_task(self.server.serve("127.0.0.1", 0))
        async with asyncio.timeout(BOUND):
            while self.server._uvicorn is None or not self.server._uvicorn.started:
                if self.task.done():
                    self.task.result()
                await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.shutdown()
        assert self.task is not None
        async with asyncio.timeout(BOUND):
            await self.task


@pytest.fixture
def live() -> type[Live]:
    return Live

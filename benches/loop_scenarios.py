"""The benchmark scenario, implemented once per framework.

Scenario (identical for every framework): the user says ``"go"``; for turns ``1..N`` the
model calls the tool ``echo`` once with ``{"x": k}`` and call id ``"c<k>"``; the tool returns
``str(x)``; model call ``N + 1`` answers ``"done"``. A run of N turns therefore makes N + 1
model calls and N tool calls.

Each framework gets a *stateless* scripted in-process model: it reads only the last message
of the request (the user prompt, or the result of call ``c<k>``) to decide what to say next,
so one model object serves any number of runs, sequential or concurrent, and the model's own
cost is O(1) per call (it never walks the history). Model outputs are built with the
frameworks' validated constructors (cheaper here than ``model_construct``, which is pure
Python, 50 µs for an openai type) and cost a few µs per call, so the time measured is the
framework's loop.

Every model object can record a ``CLOCK()`` stamp at the start of each call (``stamps``),
which is how the flatness check splits a run into per-turn intervals. ``CLOCK`` is the
thread's CPU time: everything here runs on one thread with no I/O, so on an idle machine it
equals wall time, and on a shared one it leaves out the time the process was descheduled
(which would otherwise land mostly on the longer, slower runs).

The tool is ``async`` for every framework: all three run *sync* tools in a worker thread,
so a sync tool would measure the thread hand-off rather than the loop. Tracing is disabled
for the Agents SDK (helikon emits no trace unless configured; Pydantic AI's instrumentation
is off by default).

A framework that is not installed reports ``available = False`` and a reason; nothing here
imports a peer at module import time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

RunFn = Callable[[], Coroutine[Any, Any, Any]]

FINAL_TEXT = "done"
CLOCK = time.thread_time
# Turn limit given to every framework (the defaults, 10 to 50, are below the 20-turn run).
MAX_TURNS = 64


class Barrier:
    """Holds every run at its ``turn``-th tool call until ``parties`` runs are waiting.

    Used by the memory benchmark so that all concurrent runs are alive, with their history
    built up, at the same moment. ``timeout`` keeps a framework that serialises runs from
    deadlocking the benchmark (``complete`` then stays False).
    """

    def __init__(self, parties: int, turn: int, timeout: float = 120.0) -> None:
        self.parties = parties
        self.turn = turn
        self.timeout = timeout
        self.waiting = 0
        self.complete = False
        self._event = asyncio.Event()

    async def arrive(self) -> None:
        self.waiting += 1
        if self.waiting >= self.parties:
            self.complete = True
            self._event.set()
            return
        try:
            await asyncio.wait_for(self._event.wait(), self.timeout)
        except TimeoutError:
            self._event.set()


# The barrier the tool consults; None outside the memory benchmark.
_barrier: Barrier | None = None


def set_barrier(barrier: Barrier | None) -> None:
    global _barrier
    _barrier = barrier


async def echo_impl(x: int) -> str:
    """The trivial tool body shared by every framework."""
    b = _barrier
    if b is not None and x == b.turn:
        await b.arrive()
    return str(x)


def _next_turn(last_call_id: str | None) -> int:
    """1 for the first model call, else one past the turn of the call just answered."""
    if last_call_id is None or not last_call_id.startswith("c"):
        return 1
    return int(last_call_id[1:]) + 1


class Framework:
    """One framework's side of the scenario."""

    name: str = "?"
    available: bool = False
    reason: str = ""

    def runner(self, turns: int, streaming: bool, stamps: list[float] | None = None) -> RunFn:
        """A zero-argument coroutine function doing one complete run of ``turns`` turns."""
        raise NotImplementedError

    def check(self, turns: int, streaming: bool) -> None:
        """Run once and verify the scenario happened exactly (N + 1 model calls, answer)."""
        stamps: list[float] = []
        out = asyncio.run(self.runner(turns, streaming, stamps)())
        if len(stamps) != turns + 1:
            raise AssertionError(
                f"{self.name}: expected {turns + 1} model calls, saw {len(stamps)}"
            )
        if out != FINAL_TEXT:
            raise AssertionError(f"{self.name}: final output {out!r} != {FINAL_TEXT!r}")


# ---------------------------------------------------------------------------------- helikon


class HelikonFramework(Framework):
    name = "helikon"

    def __init__(self) -> None:
        try:
            import helikon
            from helikon import _native

            if not hasattr(_native, "transition"):
                raise ImportError("helikon._native has no transition (native module not built)")
        except ImportError as exc:
            self.reason = f"helikon not importable: {exc}"
            return
        self.available = True
        self._helikon = helikon

    def _model(self, turns: int, stamps: list[float] | None) -> Any:
        from helikon.core.events import TokenDelta, ToolCallDelta
        from helikon.core.items import ToolResult
        from helikon.core.model import Finish, FinishReason, ModelCapabilities

        caps = ModelCapabilities(streaming=True, tools=True)
        tool_calls = FinishReason.TOOL_CALLS
        stop = FinishReason.STOP

        class ScriptedModel:
            provider = "bench"
            model = "scripted"

            def capabilities(self) -> ModelCapabilities:
                return caps

            async def invoke(self, request: Any, cancel: Any) -> AsyncIterator[Any]:
                if stamps is not None:
                    stamps.append(CLOCK())
                last = request.messages[-1]
                k = _next_turn(last.call_id if isinstance(last, ToolResult) else None)
                if k <= turns:
                    yield ToolCallDelta(call_id=f"c{k}", name="echo", args_delta=f'{{"x": {k}}}')
                    yield Finish(reason=tool_calls, raw="tool_calls")
                else:
                    yield TokenDelta(text=FINAL_TEXT)
                    yield Finish(reason=stop, raw="stop")

        return ScriptedModel()

    def _tool(self) -> Any:
        @self._helikon.tool
        async def echo(x: int) -> str:
            """Echo x."""
            return await echo_impl(x)

        return echo

    def agent(self, turns: int, stamps: list[float] | None = None) -> Any:
        return self._helikon.Agent(
            name="bench",
            model=self._model(turns, stamps),
            tools=[self._tool()],
            run_config=self._helikon.RunConfig(max_turns=MAX_TURNS),
        )

    def runner(self, turns: int, streaming: bool, stamps: list[float] | None = None) -> RunFn:
        from helikon.core.items import text_of

        agent = self.agent(turns, stamps)
        if streaming:

            async def run_stream() -> Any:
                last = None
                async for ev in agent.stream("go"):
                    if ev.type == "message_output":
                        last = ev
                    elif ev.type == "run_failed":
                        raise RuntimeError(f"helikon run failed: {ev.error}")
                return text_of(last.item.content) if last is not None else None

            return run_stream

        async def run() -> Any:
            return (await agent.run("go")).final_output

        return run

    def mock_runner(self, turns: int) -> Callable[[], RunFn]:
        """helikon with the shipped ``testing.MockModel``: a fresh model per run."""
        from helikon.testing import Call, MockModel, Text

        scripts: list[list[Any]] = [[Call(f"c{k}", "echo", {"x": k})] for k in range(1, turns + 1)]
        scripts.append([Text(FINAL_TEXT)])
        agent = self._helikon.Agent(
            name="bench",
            model=MockModel([]),
            tools=[self._tool()],
            run_config=self._helikon.RunConfig(max_turns=MAX_TURNS),
        )

        def prepare() -> RunFn:
            agent.model = MockModel(scripts)

            async def run() -> Any:
                return (await agent.run("go")).final_output

            return run

        return prepare


# ---------------------------------------------------------------------------- OpenAI Agents


class OpenAIAgentsFramework(Framework):
    name = "openai-agents"

    def __init__(self) -> None:
        try:
            import agents
            from agents.models.interface import Model
        except ImportError as exc:
            self.reason = f"openai-agents not installed ({exc}); pip install '.[bench]'"
            return
        agents.set_tracing_disabled(True)
        self.available = True
        self._agents = agents
        self._model_base = Model
        self._tool_obj: Any = None

    def _model(self, turns: int, stamps: list[float] | None) -> Any:
        from agents.items import ModelResponse
        from agents.usage import Usage
        from openai.types.responses import (
            Response,
            ResponseCompletedEvent,
            ResponseFunctionCallArgumentsDeltaEvent,
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
            ResponseTextDeltaEvent,
        )

        def output(input: Any) -> tuple[Any, int]:
            if stamps is not None:
                stamps.append(CLOCK())
            last = input[-1] if isinstance(input, list) and input else None
            call_id = last.get("call_id") if isinstance(last, dict) else None
            if call_id is None and last is not None and not isinstance(last, dict):
                call_id = getattr(last, "call_id", None)
            k = _next_turn(call_id if last is not None and _is_output(last) else None)
            if k <= turns:
                item: Any = ResponseFunctionToolCall(
                    id=f"fc{k}",
                    call_id=f"c{k}",
                    type="function_call",
                    name="echo",
                    arguments=f'{{"x": {k}}}',
                    status="completed",
                )
            else:
                item = ResponseOutputMessage(
                    id="msg",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[
                        ResponseOutputText(
                            text=FINAL_TEXT, type="output_text", annotations=[], logprobs=[]
                        )
                    ],
                )
            return item, k

        base = self._model_base

        class ScriptedModel(base):  # type: ignore[misc, valid-type]
            async def get_response(
                self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
            ) -> Any:
                item, _ = output(input)
                return ModelResponse(output=[item], usage=Usage(requests=1), response_id=None)

            async def stream_response(
                self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
            ) -> AsyncIterator[Any]:
                item, k = output(input)
                if k <= turns:
                    yield ResponseFunctionCallArgumentsDeltaEvent(
                        type="response.function_call_arguments.delta",
                        item_id=item.id,
                        output_index=0,
                        delta=item.arguments,
                        sequence_number=0,
                    )
                else:
                    yield ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=item.id,
                        output_index=0,
                        content_index=0,
                        delta=FINAL_TEXT,
                        logprobs=[],
                        sequence_number=0,
                    )
                yield ResponseCompletedEvent(
                    type="response.completed",
                    sequence_number=1,
                    response=Response(
                        id="resp",
                        created_at=0,
                        model="scripted",
                        object="response",
                        output=[item],
                        tool_choice="auto",
                        tools=[],
                        top_p=None,
                        parallel_tool_calls=False,
                        status="completed",
                        usage=None,
                    ),
                )

        return ScriptedModel()

    def _tool(self) -> Any:
        if self._tool_obj is None:

            async def echo(x: int) -> str:
                """Echo x."""
                return await echo_impl(x)

            self._tool_obj = self._agents.function_tool(echo)
        return self._tool_obj

    def runner(self, turns: int, streaming: bool, stamps: list[float] | None = None) -> RunFn:
        a = self._agents
        agent = a.Agent(name="bench", model=self._model(turns, stamps), tools=[self._tool()])
        if streaming:

            async def run_stream() -> Any:
                result = a.Runner.run_streamed(agent, "go", max_turns=MAX_TURNS)
                async for _ in result.stream_events():
                    pass
                return result.final_output

            return run_stream

        async def run() -> Any:
            return (await a.Runner.run(agent, "go", max_turns=MAX_TURNS)).final_output

        return run


def _is_output(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    return kind == "function_call_output"


# ------------------------------------------------------------------------------ Pydantic AI


class PydanticAIFramework(Framework):
    name = "pydantic-ai"

    def __init__(self) -> None:
        try:
            import pydantic_ai
            from pydantic_ai.models.function import FunctionModel
        except ImportError as exc:
            self.reason = f"pydantic-ai not installed ({exc}); pip install '.[bench]'"
            return
        self.available = True
        self._pai = pydantic_ai
        self._function_model = FunctionModel

    def _model(self, turns: int, stamps: list[float] | None) -> Any:
        from pydantic_ai.messages import (
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.models.function import DeltaToolCall
        from pydantic_ai.usage import RequestUsage

        def turn_of(messages: list[Any]) -> int:
            if stamps is not None:
                stamps.append(CLOCK())
            last = messages[-1]
            call_id = None
            if isinstance(last, ModelRequest) and last.parts:
                part = last.parts[-1]
                if isinstance(part, ToolReturnPart):
                    call_id = part.tool_call_id
            return _next_turn(call_id)

        # Usage is reported so FunctionModel does not estimate it by walking the history
        # (that estimate is the test double's cost, not the framework's).
        async def function(messages: list[Any], info: Any) -> Any:
            k = turn_of(messages)
            part: Any
            if k <= turns:
                part = ToolCallPart(tool_name="echo", args=f'{{"x": {k}}}', tool_call_id=f"c{k}")
            else:
                part = TextPart(content=FINAL_TEXT)
            return ModelResponse(parts=[part], usage=RequestUsage(input_tokens=1, output_tokens=1))

        async def stream_function(messages: list[Any], info: Any) -> AsyncIterator[Any]:
            k = turn_of(messages)
            if k <= turns:
                yield {
                    0: DeltaToolCall(name="echo", json_args=f'{{"x": {k}}}', tool_call_id=f"c{k}")
                }
            else:
                yield FINAL_TEXT

        return self._function_model(function, stream_function=stream_function)

    def runner(self, turns: int, streaming: bool, stamps: list[float] | None = None) -> RunFn:
        from pydantic_ai import Tool
        from pydantic_ai.usage import UsageLimits

        limits = UsageLimits(request_limit=MAX_TURNS)

        async def echo(x: int) -> str:
            """Echo x."""
            return await echo_impl(x)

        agent = self._pai.Agent(
            self._model(turns, stamps), name="bench", tools=[Tool(echo, takes_ctx=False)]
        )
        if streaming:
            # Every model response is streamed and every event (part deltas, tool call and
            # result events) is consumed by the handler: the core streaming path, without the
            # background task and channel that ``run_stream_events`` (2.x) adds on top.
            async def consume(ctx: Any, events: Any) -> None:
                async for _ in events:
                    pass

            async def run_stream() -> Any:
                result = await agent.run("go", usage_limits=limits, event_stream_handler=consume)
                return result.output

            return run_stream

        async def run() -> Any:
            return (await agent.run("go", usage_limits=limits)).output

        return run


def frameworks() -> list[Framework]:
    """helikon first, then the peers (unavailable ones included, with their reason)."""
    return [HelikonFramework(), OpenAIAgentsFramework(), PydanticAIFramework()]

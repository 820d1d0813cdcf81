"""OpenTelemetry spans: the invoke_agent -> agent.turn -> chat / execute_tool tree."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from helikon import Agent, RunContext, tool
from helikon.testing import Call, Fail, MockModel, Text, Usage
from helikon.tracing import TracerHandle

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def _provider() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


@tool
def lookup(q: str) -> str:
    """Look up."""
    if q == "bad":
        raise ValueError("no such thing")
    return "42"


@tool
def capital(country: str) -> str:
    """Return a country's capital."""
    return {"UK": "London"}.get(country, "unknown")


def _by_name(exporter: InMemorySpanExporter) -> dict[str, Any]:
    return {s.name: s for s in exporter.get_finished_spans()}


async def test_span_tree_and_genai_attributes(spans: InMemorySpanExporter) -> None:
    model = MockModel(
        [[Call("c1", "lookup", {"q": "x"}), Usage(10, 2)], [Text("42"), Usage(20, 1)]],
        model="gpt-test",
    )
    ctx = RunContext.ephemeral(None).with_tracer(
        TracerHandle().with_session_id("s-1").with_user_id("u-1").with_tag("prod")
    )
    await Agent(name="finder", model=model, tools=[lookup]).run("q", ctx)
    finished = spans.get_finished_spans()
    names = [s.name for s in finished]
    assert names.count("chat gpt-test") == 2
    assert names.count("agent.turn") == 2
    root = next(s for s in finished if s.name == "invoke_agent finder")
    assert root.parent is None
    assert dict(root.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "finder",
        "session.id": "s-1",
        "user.id": "u-1",
        "tags": ("prod",),
    }
    turns = [s for s in finished if s.name == "agent.turn"]
    assert all(t.parent.span_id == root.context.span_id for t in turns)
    chats = [s for s in finished if s.name == "chat gpt-test"]
    assert chats[0].parent.span_id == turns[0].context.span_id
    assert chats[0].attributes["gen_ai.provider.name"] == "mock"
    assert chats[0].attributes["gen_ai.request.model"] == "gpt-test"
    assert chats[0].attributes["gen_ai.usage.input_tokens"] == 10
    assert chats[0].attributes["gen_ai.usage.output_tokens"] == 2
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    tool_span = _by_name(spans)["execute_tool lookup"]
    assert tool_span.parent.span_id == turns[0].context.span_id
    assert tool_span.attributes["gen_ai.tool.name"] == "lookup"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "c1"
    assert all(s.context.trace_id == root.context.trace_id for s in finished)


async def test_chat_span_names_the_answering_model_and_response_id(
    spans: InMemorySpanExporter,
) -> None:
    from helikon.testing.replay import ReplayServer
    from tests.conftest import SHARED

    pytest.importorskip("openai")
    from helikon.providers.openai import OpenAIModel

    cassette = SHARED / "wire" / "openai" / "chat_tool_loop_stream.yaml"
    with ReplayServer(cassette) as server:
        model = OpenAIModel.chat(
            "gpt-4o-mini", api_key="test-key", base_url=server.base_url + "/v1"
        )
        try:
            await Agent(name="capitals", model=model, tools=[capital]).run(
                "What is the capital of the UK? Use the tool, then answer."
            )
        finally:
            await model.aclose()
    chats = [s for s in spans.get_finished_spans() if s.name == "chat gpt-4o-mini"]
    assert [
        (
            s.attributes["gen_ai.request.model"],
            s.attributes["gen_ai.response.model"],
            s.attributes["gen_ai.response.id"],
        )
        for s in chats
    ] == [
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl"),
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc"),
    ]


async def test_no_response_attributes_when_the_model_names_none(
    spans: InMemorySpanExporter,
) -> None:
    await Agent(name="f", model=MockModel([[Text("hi")]])).run("q")
    chat = next(s for s in spans.get_finished_spans() if s.name == "chat mock")
    assert "gen_ai.response.model" not in chat.attributes
    assert "gen_ai.response.id" not in chat.attributes


async def test_chat_span_sets_the_cache_reads_apart(spans: InMemorySpanExporter) -> None:
    model = MockModel([[Text("hi"), Usage(10, 2, cached_input=6)]])
    await Agent(name="f", model=model).run("q")
    chat = next(s for s in spans.get_finished_spans() if s.name == "chat mock")
    assert chat.attributes["gen_ai.usage.input_tokens"] == 10  # the whole prompt
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 6
    assert "gen_ai.usage.cache_creation.input_tokens" not in chat.attributes


async def test_errors_are_marked(spans: InMemorySpanExporter) -> None:
    model = MockModel([[Call("c1", "lookup", {"q": "bad"})], [Fail("Unavailable", "down")]])
    events = [e async for e in Agent(name="f", model=model, tools=[lookup]).stream("q")]
    assert events[-1].type == "run_failed"
    by = _by_name(spans)
    assert by["execute_tool lookup"].attributes["error.type"] == "ToolOther"
    failed_chat = [s for s in spans.get_finished_spans() if s.name == "chat mock"][-1]
    assert failed_chat.attributes["error.type"] == "ModelUnavailable"
    assert by["invoke_agent f"].attributes["error.type"] == "Other"
    assert by["invoke_agent f"].status.status_code.name == "ERROR"


def test_no_provider_means_no_spans_and_no_error() -> None:
    code = textwrap.dedent(
        """
        from helikon import Agent
        from helikon.testing import MockModel, Text
        from helikon.tracing import RunSpans, TracerHandle
        assert RunSpans.start("a", TracerHandle()) is None
        print(Agent(name="a", model=MockModel([[Text("ok")]])).run_sync("hi").final_output)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


async def test_refused_calls_have_an_execute_tool_span_marked_with_the_refusal(
    spans: InMemorySpanExporter,
) -> None:
    from helikon import DenyRule

    model = MockModel([[Call("c1", "lookup", {"q": "x"}), Call("c2", "nope", {})], [Text("done")]])
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.tool("lookup")])
    result = await Agent(name="d", model=model, tools=[lookup]).run("q", ctx)
    assert result.final_output == "done"
    by = _by_name(spans)
    denied, unknown = by["execute_tool lookup"], by["execute_tool nope"]
    assert denied.attributes["error.type"] == "PermissionDenied"
    assert denied.attributes["gen_ai.tool.call.id"] == "c1"
    assert unknown.attributes["error.type"] == "UnknownTool"
    turn = next(s for s in spans.get_finished_spans() if s.name.startswith("agent.turn"))
    assert denied.parent.span_id == turn.context.span_id


async def test_the_durable_model_activity_emits_the_chat_span_with_cache_tokens(
    spans: InMemorySpanExporter,
) -> None:
    pytest.importorskip("temporalio")
    from helikon.runtimes.temporal import WorkerPosture
    from helikon.runtimes.temporal.activities import AgentActivities
    from helikon.runtimes.temporal.payloads import ModelCall

    model = MockModel([[Text("hi"), Usage(10, 2, cached_input=6)]])
    agent = Agent(name="f", model=model)
    acts = AgentActivities({"f": agent}, WorkerPosture(), None, {}, None)
    user = [{"type": "user_message", "content": [{"type": "text", "text": "q"}]}]
    reply = await acts.call_model(ModelCall(agent="f", messages=user, tools=[]))
    assert reply.usage["cached_input_tokens"] == 6
    chat = next(s for s in spans.get_finished_spans() if s.name == "chat mock")
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 10  # the whole prompt
    assert chat.attributes["gen_ai.usage.output_tokens"] == 2
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 6
    assert "gen_ai.usage.cache_creation.input_tokens" not in chat.attributes
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)


async def test_a_failed_durable_model_call_marks_its_chat_span(
    spans: InMemorySpanExporter,
) -> None:
    pytest.importorskip("temporalio")
    from temporalio.exceptions import ApplicationError

    from helikon.runtimes.temporal import WorkerPosture
    from helikon.runtimes.temporal.activities import AgentActivities
    from helikon.runtimes.temporal.payloads import ModelCall

    agent = Agent(name="f", model=MockModel([[Fail("Unavailable", "down")]]))
    acts = AgentActivities({"f": agent}, WorkerPosture(), None, {}, None)
    user = [{"type": "user_message", "content": [{"type": "text", "text": "q"}]}]
    with pytest.raises(ApplicationError):
        await acts.call_model(ModelCall(agent="f", messages=user, tools=[]))
    chat = next(s for s in spans.get_finished_spans() if s.name == "chat mock")
    assert chat.attributes["error.type"] == "ModelUnavailable"

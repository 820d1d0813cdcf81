"""Conformance: the protocol's reference server ``@modelcontextprotocol/server-everything``
(npm, pinned in ``scripts/test``, installed into ``.cache/mcp-servers``), over stdio.

Skipped with a reason when node or the package is absent; a failure under
``HELIKON_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helikon import Agent
from helikon.core.events import ToolOutputItem
from helikon.core.items import TextPart, UserMessage
from helikon.core.tool import ToolEffect
from helikon.errors import ToolOther
from helikon.mcp import McpServerHandle, expand_template
from helikon.testing import Call, MockModel, Text, Usage
from tests.conftest import require_service
from tests.mcp._support import REPO, bounded, by_name, process_gone, tool_ctx

VERSION = "2026.8.31"  # keep in step with scripts/test
ENTRY = (
    REPO / ".cache/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

TOOLS = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "get-roots-list",  # offered because the client declares roots (the default: the workspace)
    "trigger-elicitation-request",  # offered because the client declares elicitation
    "trigger-url-elicitation",
    "trigger-sampling-request",  # offered because the client declares sampling (the default)
    "simulate-research-query",
]


def _installed() -> bool:
    """node is on PATH and the pinned version of the package is installed."""
    manifest = ENTRY.parents[1] / "package.json"
    if shutil.which("node") is None or not ENTRY.is_file() or not manifest.is_file():
        return False
    return bool(json.loads(manifest.read_text())["version"] == VERSION)


@pytest.fixture
async def everything() -> AsyncIterator[McpServerHandle]:
    require_service(f"@modelcontextprotocol/server-everything@{VERSION} (scripts/test)", _installed)
    node = shutil.which("node")
    assert node is not None
    handle = McpServerHandle.stdio(node, args=[str(ENTRY), "stdio"], connect_timeout=60)
    async with handle:
        yield handle
    assert handle.pid is not None and process_gone(handle.pid)


async def test_tools_are_listed_with_their_schemas(everything: McpServerHandle) -> None:
    assert [t.name for t in everything.tools()] == TOOLS
    schema = by_name(everything)["get-sum"].parameters
    assert schema["required"] == ["a", "b"]
    assert all(t.effect is not ToolEffect.WRITE for t in everything.tools())


async def test_text_and_structured_results(everything: McpServerHandle) -> None:
    t = by_name(everything)
    out = await bounded(t["echo"].invoke(tool_ctx(), {"message": "héllo"}))
    assert out.value == "Echo: héllo"
    out = await bounded(t["get-sum"].invoke(tool_ctx(), {"a": 2, "b": 3}))
    assert out.value == "The sum of 2 and 3 is 5."
    structured = await bounded(
        t["get-structured-content"].invoke(tool_ctx(), {"location": "Chicago"})
    )
    assert set(structured.value) == {"temperature", "conditions", "humidity"}
    schema = t["get-structured-content"].output_schema
    assert schema is not None and set(schema["properties"]) == set(structured.value)
    assert t["get-sum"].output_schema is None
    # the model reads the server's text block, the value is the checked structuredContent
    assert structured.content[0].text.startswith('{"temperature":')  # type: ignore[union-attr]


async def test_an_agent_uses_the_reference_server(everything: McpServerHandle) -> None:
    agent = Agent(
        name="a",
        model=MockModel([[Call("c1", "get-sum", {"a": 40, "b": 2})], [Text("done")]]),
        tools=everything.tools(),
    )
    result = await bounded(agent.run("add"))
    outs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    assert result.final_output == "done"
    assert outs[0].content == [TextPart(text="The sum of 40 and 2 is 42.")]


async def test_resources_templates_and_prompts(everything: McpServerHandle) -> None:
    resources = await bounded(everything.list_resources())
    assert "demo://resource/static/document/architecture.md" in [r.uri for r in resources]
    templates = [t.uri_template for t in await bounded(everything.list_resource_templates())]
    assert templates == [
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    ]
    parts = await bounded(
        everything.read_resource(expand_template(templates[0], {"resourceId": "1"}))
    )
    assert len(parts) == 1 and isinstance(parts[0], TextPart)
    assert parts[0].text.startswith("Resource 1: This is a plaintext resource")
    prompts = {p.name: p for p in await bounded(everything.list_prompts())}
    assert {"simple-prompt", "args-prompt"} <= set(prompts)
    items = await bounded(everything.get_prompt("args-prompt", {"city": "Paris"}))
    assert items == [UserMessage(content=[TextPart(text="What's weather in Paris?")])]
    read, get = await bounded(everything.context_tools())
    ran = await bounded(get.invoke(tool_ctx(), {"name": "simple-prompt"}))
    assert ran.value.startswith("user: ")
    doc = await bounded(
        read.invoke(tool_ctx(), {"uri": "demo://resource/static/document/architecture.md"})
    )
    assert len(doc.value) > 100


async def test_a_long_running_operation_is_bounded_by_call_timeout() -> None:
    require_service(f"@modelcontextprotocol/server-everything@{VERSION} (scripts/test)", _installed)
    node = shutil.which("node")
    assert node is not None
    h = McpServerHandle.stdio(node, args=[str(ENTRY), "stdio"], connect_timeout=60, call_timeout=1)
    async with h:
        slow = by_name(h)["trigger-long-running-operation"]
        with pytest.raises(ToolOther, match=r"no answer within call_timeout=1s"):
            await bounded(slow.invoke(tool_ctx(), {"duration": 20, "steps": 2}))
        quick = await bounded(slow.invoke(tool_ctx(), {"duration": 0.2, "steps": 2}))
        assert "Long running operation completed" in str(quick.value)


async def test_sampling_roots_and_elicitation_with_the_reference_server(tmp_path: Path) -> None:
    require_service(f"@modelcontextprotocol/server-everything@{VERSION} (scripts/test)", _installed)
    node = shutil.which("node")
    assert node is not None
    sampler = MockModel([[Text("a haiku about tests"), Usage(5, 4)]])
    h = McpServerHandle.stdio(
        node,
        args=[str(ENTRY), "stdio"],
        connect_timeout=60,
        sampling_model=sampler,
        roots=[tmp_path],
    )
    async with h:
        names = [t.name for t in h.tools()]
        # the server offers these only to a client declaring sampling and roots
        assert {"trigger-sampling-request", "get-roots-list"} <= set(names)
        t = by_name(h)
        sampled = await bounded(
            t["trigger-sampling-request"].invoke(tool_ctx(), {"prompt": "a haiku"})
        )
        assert "a haiku about tests" in str(sampled.value)
        assert h.sampling_usage.output_tokens == 4
        roots = await bounded(t["get-roots-list"].invoke(tool_ctx(), {}))
        assert tmp_path.resolve().as_uri() in str(roots.value)
        # elicitation outside a run (no approval handler): declined, reported by the server
        declined = await bounded(t["trigger-elicitation-request"].invoke(tool_ctx(), {}))
        assert "decline" in str(declined.value).lower()
    request = sampler.requests[0]  # type: ignore[attr-defined]
    assert request.messages[-1].content[0].text.endswith("a haiku")


async def test_the_reference_servers_sampling_is_answered_by_the_calling_agents_model(
    everything: McpServerHandle,
) -> None:
    model = MockModel(
        [
            [Call("c1", "trigger-sampling-request", {"prompt": "a haiku"}), Usage(30, 5)],
            [Text("a haiku about tests"), Usage(5, 4)],
            [Text("done"), Usage(40, 1)],
        ]
    )
    agent = Agent(name="a", model=model, tools=everything.tools())
    result = await bounded(agent.run("sample"))
    (out,) = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    assert "a haiku about tests" in out.content[0].text  # type: ignore[union-attr]
    assert model.requests[1].messages[-1].content[0].text.endswith("a haiku")  # type: ignore[union-attr]
    assert result.usage.requests == 3
    assert (result.usage.input_tokens, result.usage.output_tokens) == (75, 10)

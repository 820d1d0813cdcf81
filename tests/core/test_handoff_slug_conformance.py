"""The shared handoff-naming vectors (conformance/handoff_slug.json): slugs and collisions.

The file's MCP cases (server tool names, client prefixes) belong to the MCP client and
server, which helikon does not have yet; this module checks the handoff cases only.
"""

from __future__ import annotations

from typing import Any

import pytest

from helikon import Agent, FunctionTool
from helikon.core.handoff import handoff_tool_name
from helikon.testing import MockModel, Text
from tests.conftest import load_shared_json

CASES: list[dict[str, Any]] = load_shared_json("conformance/handoff_slug.json")["cases"]
HANDOFF = [c for c in CASES if c["kind"] == "handoff"]
COLLISION = [c for c in CASES if c["kind"] == "collision"]


def test_the_vector_file_has_handoff_and_collision_cases() -> None:
    assert len(HANDOFF) >= 10 and len(COLLISION) >= 3


@pytest.mark.parametrize("case", HANDOFF, ids=[c["name"] for c in HANDOFF])
def test_transfer_tool_name(case: dict[str, Any]) -> None:
    assert handoff_tool_name(case["name"]) == case["expect"]


def _tool(name: str) -> FunctionTool:
    def fn() -> str:
        return ""

    return FunctionTool(fn, name=name, description="a real tool")


@pytest.mark.parametrize("case", COLLISION, ids=[str(i) for i in range(len(COLLISION))])
async def test_collision_guard_at_run_start(case: dict[str, Any]) -> None:
    agent = Agent(
        name="root",
        model=MockModel([[Text("done")]]),
        tools=[_tool(n) for n in case["tool_names"]],
        handoffs=[Agent(name=n, model=MockModel([])) for n in case["handoff_names"]],
    )
    events = [e async for e in agent.stream("go")]
    if case["expect_error"]:
        assert [e.type for e in events] == ["run_started", "run_failed"]
        assert case["error_contains"] in events[-1].message
    else:
        assert events[-1].type == "run_completed"

"""The shared ``driver_runs`` vectors (transition.json) through the real Python driver."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field, create_model

from helikon import (
    Agent,
    ConversationRepaired,
    RunContext,
    RunError,
    Tool,
    ToolContext,
    ToolEffect,
    ToolOutput,
)
from helikon.permissions import PermissionMode
from helikon.testing import MockModel
from helikon.testing.script import step_from_json
from tests.conftest import load_shared_json

RUNS = load_shared_json("conformance/transition.json")["driver_runs"]

# ``ConversationRepaired`` is helikon's own event (the spec's stream has no repairs), so the
# vectors' event lists are compared without it and the repairs each run needs are listed
# here. In a structured-output repair turn the spec sends the violating tool call without a
# result, which providers reject; helikon answers it before the request goes out.
REPAIRS: dict[str, list[tuple[str, str | None]]] = {
    "structured_tool_call_violation": [("tool_result_synthesized", "x")],
}


def _camel(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


def _output_model(spec: dict[str, Any]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, ty in spec["fields"].items():
        fields[name] = (int, Field(ge=0)) if ty == "u32" else (str, ...)
    return create_model(spec["name"], **fields)


class _VectorTool:
    """A hand-written Tool (not @tool): accepts any arguments, returns a fixed value."""

    def __init__(self, spec: dict[str, Any], counts: dict[str, int]) -> None:
        self.name = spec["name"]
        self.description = f"The {self.name} tool."
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}
        self.effect = ToolEffect(spec["effect"])
        self._returns = spec["returns"]
        self._counts = counts

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        self._counts[self.name] = self._counts.get(self.name, 0) + 1
        return ToolOutput.from_value(self._returns)


def _tools(specs: list[dict[str, Any]], counts: dict[str, int]) -> list[Tool]:
    return [_VectorTool(spec, counts) for spec in specs]


@pytest.mark.parametrize("case", RUNS, ids=[r["id"] for r in RUNS])
async def test_driver_run(case: dict[str, Any]) -> None:
    counts: dict[str, int] = {}
    scripts = [
        [step_from_json(s, f"{case['id']}[{i}]") for s in script]
        for i, script in enumerate(case["model_script"])
    ]
    model = MockModel(scripts)
    output_type = _output_model(case["output_type"]) if case["output_type"] else None
    agent = Agent(
        name="test",
        model=model,
        tools=_tools(case["tools"], counts),
        output_type=output_type,
    )
    ctx: RunContext[Any] = RunContext.ephemeral(None)
    if "permission_mode" in case:
        ctx = ctx.with_permission_mode(PermissionMode(case["permission_mode"]))
    events = [ev async for ev in agent.stream("go", ctx)]
    repairs = [ev for ev in events if isinstance(ev, ConversationRepaired)]
    assert [(r.repair, r.call_id) for r in repairs] == REPAIRS.get(case["id"], [])
    events = [ev for ev in events if not isinstance(ev, ConversationRepaired)]
    assert [_camel(ev.type) for ev in events] == case["expect_event_kinds"]
    model.assert_exhausted()
    for name, n in case.get("expect_tool_invocations", {}).items():
        assert counts.get(name, 0) == n
    if "expect_tool_result_text" in case:
        outputs = [ev for ev in events if ev.type == "tool_output_item"]
        assert outputs[0].item.content[0].text == case["expect_tool_result_text"]
        assert outputs[0].item.is_error
    if "expect_tool_result_text_starts_with" in case:
        out = next(ev for ev in events if ev.type == "tool_output_item")
        assert out.item.content[0].text.startswith(case["expect_tool_result_text_starts_with"])
    if "expect_no_event" in case:
        assert all(_camel(ev.type) != case["expect_no_event"] for ev in events)
    if "expect_usage" in case:
        assert (
            events[-1].usage.model_dump(include=set(case["expect_usage"])) == case["expect_usage"]
        )
    if "expect_final_output" in case:
        result = await Agent(
            name="test", model=MockModel(scripts), tools=_tools(case["tools"], {})
        ).run("go")
        assert result.final_output == case["expect_final_output"]
    if "expect_typed_output" in case:
        result = await Agent(
            name="test",
            model=MockModel(scripts),
            tools=_tools(case["tools"], {}),
            output_type=output_type,
        ).run("go")
        assert result.final_output.model_dump() == case["expect_typed_output"]
    if "expect_error" in case:
        with pytest.raises(RunError) as exc:
            await Agent(
                name="test",
                model=MockModel(scripts),
                tools=_tools(case["tools"], {}),
                output_type=output_type,
            ).run("go")
        err = case["expect_error"]
        assert exc.value.error.kind == err["kind"]
        if "final_text" in err:
            assert exc.value.error.final_text == err["final_text"]  # type: ignore[attr-defined]
            assert exc.value.error.schema_errors  # type: ignore[attr-defined]

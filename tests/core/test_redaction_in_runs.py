"""Field case BR-21: a token never reaches the model, events, session rows or spans."""

from __future__ import annotations

import json

from helikon import Agent, RunContext, tool
from helikon.runtimes import Runner
from helikon.sessions import MemorySession, event_to_json
from helikon.testing import Call, MockModel, Text

TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@tool
def push() -> str:
    """Push."""
    raise RuntimeError(f"POST /repos failed; headers={{'Authorization': 'token {TOKEN}'}}")


@tool
def show_env() -> str:
    """Print the token (as `echo "$GH_TOKEN"` would)."""
    return f"{TOKEN}\n"


async def test_token_in_tool_error_and_output_is_redacted() -> None:
    model = MockModel([[Call("c1", "push", {}), Call("c2", "show_env", {})], [Text("done")]])
    session = MemorySession()
    agent = Agent(name="a", model=model, tools=[push, show_env])
    result = await Runner().run(agent, "push it", session=session)
    outputs = {e.item.call_id: e.item for e in result.events if e.type == "tool_output_item"}
    assert outputs["c1"].is_error
    assert outputs["c1"].content[0].text == (
        "RuntimeError: POST /repos failed; headers={'Authorization': 'token ***'}"
    )
    assert outputs["c2"].content[0].text == "***\n"
    everywhere = [
        json.dumps([e.model_dump(mode="json") for e in result.events]),
        str(model.requests[1].messages),
        *(event_to_json(e) for e in await session.events()),
    ]
    for blob in everywhere:
        assert TOKEN not in blob
    assert "POST /repos failed" in everywhere[0]  # the surrounding text survives
    assert "POST /repos failed" in everywhere[1]


async def test_extra_secrets_and_opting_out() -> None:
    @tool
    def leak() -> str:
        """Leak."""
        return "db password is s3cr3t-value-42"

    model = MockModel([[Call("c1", "leak", {})], [Text("ok")]])
    ctx = RunContext.ephemeral(None).with_extra_secrets(["s3cr3t-value-42"])
    result = await Agent(name="a", model=model, tools=[leak]).run("go", ctx)
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.content[0].text == "db password is ***"

    model = MockModel([[Call("c1", "leak", {})], [Text("ok")]])
    ctx = RunContext.ephemeral(None).without_output_redaction()
    result = await Agent(name="a", model=model, tools=[leak]).run("go", ctx)
    out = next(e for e in result.events if e.type == "tool_output_item")
    assert out.item.content[0].text == "db password is s3cr3t-value-42"

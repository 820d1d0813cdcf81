"""The helikon agents the server tests serve (in-process, or as ``mcp_test_server.py agent``)."""

from __future__ import annotations

from helikon import Agent, tool
from helikon.core.context import RunConfig
from helikon.mcp.server import McpAgentServer
from helikon.testing import Call, Delay, MockModel, Text, Usage

REPLY = "pong from the served agent"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def build(kind: str = "plain") -> McpAgentServer:
    """``plain`` answers :data:`REPLY`; ``slow`` takes 30 s; ``timeout`` has a 0.5 s limit;
    ``tools`` calls ``lookup`` once, then answers ``found it`` (usage 10+3, then 20+5
    tokens), served without an explicit version."""
    if kind == "tools":
        model = MockModel(
            [
                [Call("c1", "lookup", {"key": "k"}), Usage(10, 3)],
                [Text("found it"), Usage(20, 5)],
            ]
        )
        return McpAgentServer(Agent(name="finder", model=model, tools=[lookup]))
    if kind == "plain":
        model = MockModel([[Text(REPLY)] for _ in range(8)])
        return McpAgentServer(
            Agent(name="triage helper", description="Triages things.", model=model),
            name="helikon-test",
            version="1.2.3",
            instructions="Ask the triage helper.",
        )
    model = MockModel([[Delay(30), Text("too late")] for _ in range(4)])
    agent = Agent(name="slow.agent", description="Takes its time.", model=model)
    run_config = RunConfig(timeout=0.5) if kind == "timeout" else None
    return McpAgentServer(agent, run_config=run_config)


async def serve_stdio(kind: str = "plain") -> None:
    await build(kind).serve_stdio()

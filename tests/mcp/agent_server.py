"""The helikon agents the server tests serve (in-process, or as ``mcp_test_server.py agent``)."""

from __future__ import annotations

from helikon import Agent
from helikon.core.context import RunConfig
from helikon.mcp.server import McpAgentServer
from helikon.testing import Delay, MockModel, Text

REPLY = "pong from the served agent"


def build(kind: str = "plain") -> McpAgentServer:
    """``plain`` answers :data:`REPLY`; ``slow`` takes 30 s; ``timeout`` has a 0.5 s limit."""
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

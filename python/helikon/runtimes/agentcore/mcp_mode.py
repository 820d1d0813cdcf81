"""AgentCore MCP protocol: the agent as one MCP tool at ``/mcp`` on port 8000, stateless.

AgentCore's MCP-protocol containers serve stateless streamable HTTP at ``0.0.0.0:8000/mcp``.
Each call runs the agent on a fresh, unshared in-memory conversation: MCP mode cannot use a
persistent session backend (a v0 limitation of the contract, not a configuration mistake).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from helikon.core.agent import Agent
from helikon.core.context import RunConfig
from helikon.core.runnable import check_runnable

__all__ = ["MCP_PATH", "MCP_PORT", "mcp_app", "serve_mcp"]

MCP_PORT = 8000
MCP_PATH = "/mcp"


def _server(agent: Agent, run_config: RunConfig | None, ctx_factory: Any) -> Any:
    try:
        from helikon.mcp import McpAgentServer
    except ImportError as exc:
        raise ImportError(
            "AgentCore MCP mode needs the 'mcp' extra: pip install 'helikon[mcp]'"
        ) from exc
    checked = check_runnable("AgentCore MCP mode (agent)", agent)  # an Agent or a pattern
    return McpAgentServer(checked, run_config=run_config, ctx_factory=ctx_factory)


def mcp_app(
    agent: Agent,
    *,
    run_config: RunConfig | None = None,
    ctx_factory: Any = None,
    host: str = "0.0.0.0",
) -> Starlette:
    """The ASGI app of MCP mode: stateless streamable HTTP at ``/mcp``.

    Run it with its lifespan (it starts the MCP session manager). ``host`` set to a loopback
    name turns on the MCP SDK's DNS-rebinding protection (for local tests).

    Raises:
        ConfigError: ``agent`` does not run like an Agent (an Agent or a pattern).
        ImportError: the ``mcp`` extra is missing.
    """
    server = _server(agent, run_config, ctx_factory)
    app: Starlette = server.server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, host=host
    )
    return app


async def serve_mcp(
    agent: Agent,
    *,
    host: str = "0.0.0.0",
    port: int = MCP_PORT,
    run_config: RunConfig | None = None,
    ctx_factory: Any = None,
) -> None:
    """Serve MCP mode on ``host:port`` (AgentCore: ``0.0.0.0:8000``) until cancelled.

    Cancelling shuts uvicorn down (its socket closed and unregistered from the loop) before
    the cancellation propagates.
    """
    import uvicorn

    from helikon.runtimes.server.serving import run_uvicorn

    app = mcp_app(agent, run_config=run_config, ctx_factory=ctx_factory, host=host)
    await run_uvicorn(
        uvicorn.Server(
            uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        )
    )

"""A hosting shim for AWS Bedrock AgentCore Runtime containers: both protocols.

* HTTP protocol (:class:`AgentCoreServer`): ``POST /invocations`` (JSON or SSE) and
  ``GET /ping`` on port 8080, wrapping a :class:`~helikon.Runner` with sessions keyed by the
  ``X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`` header.
* MCP protocol (:func:`mcp_app`, :func:`serve_mcp`): the agent as one MCP tool, stateless
  streamable HTTP at ``/mcp`` on port 8000.

Needs Starlette and uvicorn (the ``agentcore`` extra); MCP mode also needs ``mcp``.
"""

from __future__ import annotations

from helikon._extras import require_extra

require_extra("helikon.runtimes.agentcore", "agentcore", "starlette", "starlette")
require_extra("helikon.runtimes.agentcore", "agentcore", "uvicorn", "uvicorn")

from helikon.runtimes.agentcore.mcp_mode import MCP_PATH, MCP_PORT, mcp_app, serve_mcp  # noqa: E402
from helikon.runtimes.agentcore.server import (  # noqa: E402
    HTTP_PORT,
    SESSION_HEADER,
    AgentCoreServer,
)

__all__ = [
    "HTTP_PORT",
    "MCP_PATH",
    "MCP_PORT",
    "SESSION_HEADER",
    "AgentCoreServer",
    "mcp_app",
    "serve_mcp",
]

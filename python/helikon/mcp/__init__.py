"""MCP integration, on the official ``mcp`` package: both directions.

* Client: :class:`McpServerHandle` connects to an MCP server (stdio child process or
  streamable HTTP) and exposes its tools as helikon tools (``tools=handle.tools()``).
* Server: :class:`McpAgentServer` serves one :class:`~helikon.Agent` as a single MCP tool
  over stdio or streamable HTTP (endpoint ``/mcp``), or as an ASGI app to embed.

Needs the ``mcp`` extra (``pip install 'helikon[mcp]'``). SSE transports are not supported
(deprecated by the 2025-03-26 MCP revision in favour of streamable HTTP).
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("helikon.mcp needs the 'mcp' package: pip install 'helikon[mcp]'") from exc

from helikon.mcp._lazy import MAX_MATCHES
from helikon.mcp._naming import display_name, server_tool_name
from helikon.mcp._tool import PLACEHOLDER_SCHEMA, McpTool
from helikon.mcp.client import McpServerHandle
from helikon.mcp.server import McpAgentServer

__all__ = [
    "MAX_MATCHES",
    "PLACEHOLDER_SCHEMA",
    "McpAgentServer",
    "McpServerHandle",
    "McpTool",
    "display_name",
    "server_tool_name",
]

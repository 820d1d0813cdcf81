"""MCP integration, on the official ``mcp`` package: both directions.

* Client: :class:`McpServerHandle` connects to an MCP server (stdio child process or
  streamable HTTP) and exposes its tools as helikon tools (``tools=handle.tools()``).
* Server: :class:`McpAgentServer` serves one :class:`~helikon.Agent` as a single MCP tool
  over stdio or streamable HTTP (endpoint ``/mcp``), or as an ASGI app to embed.

Needs the ``mcp`` extra (``pip install 'helikon[mcp]'``). SSE transports are not supported
(deprecated by the 2025-03-26 MCP revision in favour of streamable HTTP).
"""

from __future__ import annotations

from helikon._extras import require_extra

# checked first, so importing any part of this package names the missing extra
require_extra("helikon.mcp", "mcp", "mcp", "the mcp SDK")

from helikon.mcp._catalog import expand_template  # noqa: E402
from helikon.mcp._lazy import MAX_MATCHES  # noqa: E402
from helikon.mcp._naming import display_name, server_tool_name  # noqa: E402
from helikon.mcp._tool import PLACEHOLDER_SCHEMA, McpTool  # noqa: E402
from helikon.mcp.client import McpServerHandle  # noqa: E402
from helikon.mcp.server import McpAgentServer  # noqa: E402

__all__ = [
    "MAX_MATCHES",
    "PLACEHOLDER_SCHEMA",
    "McpAgentServer",
    "McpServerHandle",
    "McpTool",
    "display_name",
    "expand_template",
    "server_tool_name",
]

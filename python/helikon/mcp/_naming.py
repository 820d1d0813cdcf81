"""Tool names on both sides of MCP: the served agent's tool name and the client's prefix."""

from __future__ import annotations

__all__ = ["SEARCH_TOOLS", "display_name", "server_tool_name"]

SEARCH_TOOLS = "search_tools"
"""Wire name of the lazy-mode meta-tool (before the handle's prefix)."""

_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def server_tool_name(agent_name: str) -> str:
    """The MCP tool name an agent is served under.

    Every character outside ``[A-Za-z0-9_-]`` becomes one ``_`` (no collapsing, case kept);
    an empty name becomes ``"agent"``.

    Example:
        >>> server_tool_name("triage helper"), server_tool_name("café"), server_tool_name("")
        ('triage_helper', 'caf_', 'agent')
    """
    name = "".join(ch if ch in _ALLOWED else "_" for ch in agent_name)
    return name or "agent"


def display_name(prefix: str | None, wire_name: str) -> str:
    """The name an agent sees for a remote tool: ``prefix + wire_name``, nothing sanitized.

    Example:
        >>> display_name("fs_", "echo"), display_name(None, "echo")
        ('fs_echo', 'echo')
    """
    return (prefix or "") + wire_name

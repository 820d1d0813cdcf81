"""Approvals of a served agent asked of the MCP client, through elicitation.

When a client that declares the ``elicitation`` capability calls a served agent
(:class:`~helikon.mcp.server.McpAgentServer`), a tool call the permission pipeline asks about
becomes an ``elicitation/create`` request (a form) to that client, related to the
``tools/call`` it belongs to. The form's message names the agent, the tool, its arguments
and the reason; its schema is :data:`APPROVAL_SCHEMA`:

* ``accept`` with ``approve`` true (its default) runs the call;
* ``accept`` with ``approve`` false denies it, with the form's ``reason`` if given;
* ``decline`` or ``cancel``, an error answer, or a failed request denies it (fail closed).
"""

from __future__ import annotations

import json
from typing import Any

from helikon.core.permissions import ApprovalAllow, ApprovalDeny, ApprovalOutcome

__all__ = ["APPROVAL_SCHEMA", "ElicitedApproval"]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run this tool call (uncheck to deny it)",
            "default": True,
        },
        "reason": {
            "type": "string",
            "title": "Reason",
            "description": "Why it is denied (read by the agent's model)",
            "default": "",
        },
    },
    "required": ["approve"],
}
"""The form a served agent's approval asks the client to fill."""

_MAX_ARGS = 2000  # characters of the arguments shown in the message


class ElicitedApproval:
    """An approval handler that asks the MCP client of one ``tools/call`` (see the module
    doc).

    Args:
        session: the ``mcp`` server session of the call.
        request_id: the ``tools/call`` request's id (the elicitation relates to it).
        agent: the served agent's name, shown in the message.
    """

    def __init__(self, session: Any, request_id: Any, agent: str) -> None:
        self._session = session
        self._request_id = request_id
        self._agent = agent

    def message(self, tool: str, prompt: str, args: Any) -> str:
        """The form's message: who asks to run what, with which arguments, and why."""
        shown = json.dumps(args, ensure_ascii=False, default=str)
        if len(shown) > _MAX_ARGS:
            shown = shown[:_MAX_ARGS] + " ..."
        return f"Agent {self._agent!r} asks to run {tool} with {shown}: {prompt}"

    async def decide(self, tool: str, prompt: str, args: Any) -> ApprovalOutcome:
        """Ask the client; the call runs only on an accepted form with ``approve`` true."""
        try:
            answer = await self._session.elicit_form(
                self.message(tool, prompt, args),
                APPROVAL_SCHEMA,
                related_request_id=self._request_id,
            )
        except Exception as exc:  # fail closed
            return ApprovalDeny(f"the approval request to the MCP client failed: {exc}")
        action = getattr(answer, "action", None)
        content = getattr(answer, "content", None) or {}
        if action == "accept" and content.get("approve") is True:
            return ApprovalAllow()
        if action == "accept":
            reason = content.get("reason")
            return ApprovalDeny(
                reason if isinstance(reason, str) and reason.strip() else "denied by the MCP client"
            )
        return ApprovalDeny(f"the MCP client answered {action or 'nothing'} to the approval")

"""Permissions: rules, modes, policies and the pipeline that applies them to tool calls.

The pipeline is ``deny rules › guard rules › allow rules › mode › policy › AskUser``; see
:mod:`helikon.core.permissions` for each piece and :func:`explain` to see which rule decided
a call.

Example:
    >>> import asyncio
    >>> from helikon import RunContext
    >>> from helikon.permissions import DenyRule, explain
    >>> ctx = RunContext.ephemeral().with_deny_rules([DenyRule.bash_command("curl")])
    >>> e = asyncio.run(explain(ctx, "Bash", {"command": "echo ok && curl http://x"}))
    >>> (e.decision, e.stage, e.rule)
    ('deny', 'deny_rule', "DenyRule.bash_command('curl')")
"""

from helikon.core.authorize import Containment, Explanation, authorize, explain
from helikon.core.permissions import (
    AllowRule,
    ApprovalAllow,
    ApprovalDeny,
    ApprovalHandler,
    ApprovalOutcome,
    AskUser,
    DenyRule,
    GuardRule,
    PermissionAllow,
    PermissionDecision,
    PermissionDeny,
    PermissionMode,
    PermissionPolicy,
    Permissions,
    ReplaceArgs,
)

__all__ = [
    "AllowRule",
    "ApprovalAllow",
    "ApprovalDeny",
    "ApprovalHandler",
    "ApprovalOutcome",
    "AskUser",
    "Containment",
    "DenyRule",
    "Explanation",
    "GuardRule",
    "PermissionAllow",
    "PermissionDecision",
    "PermissionDeny",
    "PermissionMode",
    "PermissionPolicy",
    "Permissions",
    "ReplaceArgs",
    "authorize",
    "explain",
]

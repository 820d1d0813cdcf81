"""One tool call, end to end: hooks, permissions, the tool, redaction, tracing.

For each call, in order (the spec's "How they compose"):

1. ``PreToolUse`` hooks (agent-level, then run-level) may deny it or replace its arguments.
2. The permission pipeline authorizes the (possibly rewritten) call.
3. The tool runs (inside an ``execute_tool`` span when tracing is on).
4. ``PostToolUse`` hooks may replace the output text.
5. Secret redaction scrubs the output — success or error text — as the last transform.

Every outcome is a result for the model; nothing here raises except to stop the run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from helikon.core.authorize import authorize
from helikon.core.context import RunContext, ToolContext
from helikon.core.events import AgentEvent, ApprovalRequested, PermissionDenied
from helikon.core.hooks import Hook, PostToolUse, PreToolUse, fire
from helikon.core.items import TextPart
from helikon.core.permissions import PermissionDeny, ReplaceArgs
from helikon.core.tool import Tool, ToolOutput
from helikon.errors import InvalidArgs, ToolError

if TYPE_CHECKING:
    from helikon.redaction import Redactor
    from helikon.tracing import RunSpans

__all__ = ["CallOutcome", "ToolCallRunner"]

_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIAL", "_KEY")


@dataclass(slots=True)
class CallOutcome:
    """A finished call: the result for the model plus events to emit before it."""

    result: dict[str, Any]
    events: list[AgentEvent] = field(default_factory=list)
    invalid_args: list[str] | None = None


def _secret_env() -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted((k, v) for k, v in os.environ.items() if k.upper().endswith(_SECRET_SUFFIXES))
    )


@lru_cache(maxsize=16)
def _redactor(extra: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> Redactor:
    from helikon.redaction import Redactor

    return Redactor(list(extra), env=dict(env))


class ToolCallRunner:
    """Runs the tool calls of one agent's turns."""

    def __init__(
        self,
        ctx: RunContext[Any],
        tools: dict[str, Tool],
        agent_name: str,
        agent_hooks: list[Hook],
        max_agent_depth: int,
        spans: RunSpans | None,
    ) -> None:
        self.ctx = ctx
        self.tools = tools
        self.agent_name = agent_name
        self.hooks = [*agent_hooks, *ctx.hooks]
        self.max_agent_depth = max_agent_depth
        self.spans = spans
        self._redactor: Redactor | None = None

    def _redact(self, text: str) -> str:
        settings = self.ctx.redaction
        if not settings.enabled or not text:
            return text
        if self._redactor is None:
            self._redactor = _redactor(tuple(settings.extra_secrets), _secret_env())
        return self._redactor.redact(text)

    def _error(self, call_id: str, text: str, events: list[AgentEvent]) -> CallOutcome:
        return CallOutcome({"call_id": call_id, "error": self._redact(text)}, events)

    async def run(self, call: dict[str, Any]) -> CallOutcome:
        """Run one call (``{"call_id", "name", "args"}``) through the whole pipeline."""
        call_id, name, args = call["call_id"], call["name"], call.get("args")
        events: list[AgentEvent] = []
        tool = self.tools.get(name)
        if tool is None:
            return self._error(call_id, f"unknown tool: {name}", events)
        if self.hooks:
            pre = await fire(self.hooks, self.ctx, PreToolUse(name, args, call_id))
            if pre.deny is not None:
                events.append(PermissionDenied(tool=name, reason=pre.deny))
                return self._error(call_id, f"denied by hook: {pre.deny}", events)
            if pre.replace_input is not None:
                args = pre.replace_input[0]
        decision = await authorize(
            self.ctx,
            name,
            tool.effect,
            args,
            on_ask=lambda p: events.append(
                ApprovalRequested(call_id=call_id, tool=name, args=args)
            ),
        )
        if isinstance(decision, PermissionDeny):
            events.append(PermissionDenied(tool=name, reason=decision.reason))
            return self._error(call_id, f"permission denied: {decision.reason}", events)
        if isinstance(decision, ReplaceArgs):
            args = decision.args
        return await self._invoke(tool, call_id, args, events)

    async def _invoke(
        self, tool: Tool, call_id: str, args: Any, events: list[AgentEvent]
    ) -> CallOutcome:
        tctx = ToolContext(
            user_ctx=self.ctx.user_ctx,
            state=self.ctx.state,
            cancel=self.ctx.cancel,
            call_id=call_id,
            agent_name=self.agent_name,
            agent_depth=self.ctx.agent_depth,
            max_agent_depth=self.max_agent_depth,
            permission_mode=self.ctx.permissions.mode,
        )
        span = self.spans.tool(tool.name, call_id) if self.spans is not None else None
        error_type: str | None = None
        invalid: list[str] | None = None
        out: ToolOutput | None = None
        text = ""
        try:
            out = await tool.invoke(tctx, args)
        except InvalidArgs as exc:
            error_type, invalid, text = "InvalidArgs", exc.schema_errors, str(exc)
        except ToolError as exc:
            error_type, text = type(exc).__name__, str(exc)
        except Exception as exc:  # a third-party Tool implementation raised
            error_type, text = type(exc).__name__, f"{type(exc).__name__}: {exc}"
        finally:
            if span is not None:
                from helikon.tracing import RunSpans

                RunSpans.end_tool(span, error_type)
        if out is not None and self.hooks:
            joined = "".join(p.text for p in out.content if isinstance(p, TextPart))
            post = await fire(self.hooks, self.ctx, PostToolUse(tool.name, joined, call_id))
            if post.replace_output is not None:
                replaced = post.replace_output[0]
                out = ToolOutput.from_value(replaced)
        elif out is None and self.hooks:
            post = await fire(
                self.hooks, self.ctx, PostToolUse(tool.name, text, call_id, is_error=True)
            )
            if post.replace_output is not None:
                text = str(post.replace_output[0])
        if out is None:
            outcome = self._error(call_id, text, events)
            outcome.invalid_args = invalid
            return outcome
        parts = []
        for p in out.content:
            if isinstance(p, TextPart):
                p = TextPart(text=self._redact(p.text))
            parts.append(p.model_dump(mode="json", exclude_none=True))
        return CallOutcome({"call_id": call_id, "ok": parts}, events)

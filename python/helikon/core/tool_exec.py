"""One tool call, end to end: hooks, permissions, the tool, redaction, tracing.

For each call, in order (the spec's "How they compose"):

1. ``PreToolUse`` hooks (agent-level, then run-level) may deny it or replace its arguments;
   a hook that raises denies it.
2. The permission pipeline authorizes the (possibly rewritten) call.
3. The tool runs (inside an ``execute_tool`` span when tracing is on; a call refused before
   it runs gets a span too, ended at once with ``error.type`` ``PermissionDenied`` or
   ``UnknownTool``).
4. ``PostToolUse`` hooks may replace the output text; a hook that raises withholds the
   output (an error result naming the hook).
5. Secret redaction scrubs the output — success or error text — as the last transform.

Every outcome is a result for the model; nothing here raises except to stop the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from helikon.core._unicode import scrub, scrub_text
from helikon.core.authorize import (
    AskAnswer,
    DecisionTrace,
    Deferred,
    authorize,
    unanalysed_shell_of,
)
from helikon.core.context import RunContext, ToolContext
from helikon.core.events import AgentEvent, ApprovalRequested, PermissionDenied
from helikon.core.hooks import Hook, HookError, PostToolUse, PreToolUse, fire
from helikon.core.items import ContentPart, TextPart, ToolCall, ToolResult, text_of
from helikon.core.permissions import PermissionDecision, PermissionDeny, ReplaceArgs
from helikon.core.tool import Tool, ToolOutput
from helikon.errors import InvalidArgs, ModelRetry, SubRunPaused, ToolError

if TYPE_CHECKING:
    from helikon.redaction import Redactor
    from helikon.tracing import RunSpans

__all__ = ["CallDeferred", "CallOutcome", "ToolCallRunner"]

_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIAL", "_KEY")


class CallDeferred(Exception):
    """Raised by a tool whose call needs a person's answer mid-call, in a run with
    ``RunConfig(approval="defer")`` (an MCP server's elicitation): the call waits like an
    ask (the run pauses; ``prompt`` is what the person sees); approved on resume, it runs
    again and the tool finds the approval (``Approvals.granted`` holds its call id)."""

    def __init__(self, prompt: str) -> None:
        super().__init__(prompt)
        self.prompt = prompt


@dataclass(slots=True)
class CallOutcome:
    """A finished call: the result item for the model plus events to emit before it."""

    item: ToolResult
    events: list[AgentEvent] = field(default_factory=list)
    invalid_args: list[str] | None = None
    deferred: str | None = None
    """The permission prompt when the call waits for a person (it did not run; ``item`` is
    a placeholder the driver never feeds back)."""
    nested: Any = None
    """The ``RunState`` of a sub-run (an agent as a tool) that paused inside this call."""
    retry: str | None = None
    """The reason when the tool raised :class:`~helikon.ModelRetry` (fed back as its result)."""

    @property
    def result(self) -> dict[str, Any]:
        """The machine's JSON shape: ``{"call_id", "ok": [parts]}`` or ``{"call_id", "error"}``."""
        item = self.item
        if item.is_error:
            return {"call_id": item.call_id, "error": text_of(item.content)}
        return {"call_id": item.call_id, "ok": [_dump_part(p) for p in item.content]}

    def native(self) -> tuple[str, bool, Any]:
        """``(call_id, is_error, payload)`` for ``LoopRun.tool_results``."""
        item = self.item
        if item.is_error:
            return (item.call_id, True, scrub_text(text_of(item.content)))
        content = item.content
        if len(content) == 1 and type(content[0]) is TextPart:
            return (item.call_id, False, scrub_text(content[0].text))
        return (item.call_id, False, scrub([_dump_part(p) for p in content]))


def _with_call_id(event: Any, call_id: str) -> AgentEvent:
    """``event`` with ``call_id`` filled in when it has that field and it is unset."""
    if getattr(event, "call_id", "") is None:
        copied: AgentEvent = event.model_copy(update={"call_id": call_id})
        return copied
    result: AgentEvent = event
    return result


def _dump_part(part: ContentPart) -> dict[str, Any]:
    return part.model_dump(mode="json", exclude_none=True)


def _ok_item(call_id: str, parts: list[ContentPart]) -> ToolResult:
    """The result item, as the model and the events see it.

    Text parts are taken as they are; any other part goes through its JSON form, as before,
    so the item equals what the machine is given.
    """
    if all(type(p) is TextPart for p in parts):
        return ToolResult(call_id=call_id, content=parts)
    return ToolResult.model_validate(
        {"call_id": call_id, "content": [_dump_part(p) for p in parts]}
    )


def _error_item(call_id: str, text: str) -> ToolResult:
    return ToolResult(call_id=call_id, content=[TextPart(text=text)], is_error=True)


# The secret-named environment variables, cached with a copy of ``os.environ``'s raw
# mapping: a comparison with the live mapping (identity first, no decoding) says whether the
# environment changed since, so a run costs no scan of the environment when it did not.
_env_cache: tuple[dict[Any, Any], tuple[tuple[str, str], ...]] | None = None


def _secret_env() -> tuple[tuple[str, str], ...]:
    global _env_cache
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return _scan_env()
    cached = _env_cache
    if cached is not None and cached[0] == raw:
        return cached[1]
    snapshot = dict(raw)  # taken first: a change during the scan only causes a rescan
    found = _scan_env()
    _env_cache = (snapshot, found)
    return found


def _scan_env() -> tuple[tuple[str, str], ...]:
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
        self.answer: Callable[[str, str, str], PermissionDecision | Deferred | None] | None = None
        """``(call_id, tool, prompt) -> decision``: answers an ask before the approval handler
        (an approval given on resume, a remembered answer, or a deferral); ``None`` lets the
        handler decide."""
        self._redactor: Redactor | None = None

    def _redact(self, text: str) -> str:
        # Lone surrogates (a non-UTF-8 file name read with surrogateescape) cannot cross
        # into the native redactor or the loop: U+FFFD replaces them for the model.
        text = scrub_text(text)
        settings = self.ctx.redaction
        if not settings.enabled or not text:
            return text
        if self._redactor is None:
            self._redactor = _redactor(tuple(settings.extra_secrets), _secret_env())
        return self._redactor.redact(text)

    def _error(self, call_id: str, text: str, events: list[AgentEvent]) -> CallOutcome:
        return CallOutcome(_error_item(call_id, self._redact(text)), events)

    async def run(self, call: ToolCall) -> CallOutcome:
        """Run one call through the whole pipeline."""
        call_id, name, args = call.call_id, call.name, call.args
        events: list[AgentEvent] = []
        tool = self.tools.get(name)
        if tool is None:
            self._refused_span(name, call_id, "UnknownTool")
            return self._error(call_id, f"unknown tool: {name}", events)
        if self.hooks:
            try:
                pre = await fire(self.hooks, self.ctx, PreToolUse(name, args, call_id))
            except HookError as exc:  # fail closed: a hook that cannot decide denies the call
                events.append(PermissionDenied(tool=name, reason=str(exc)))
                self._log(call_id, name, "deny", DecisionTrace("hook", None, "hook"), str(exc))
                self._refused_span(name, call_id, "PermissionDenied")
                return self._error(call_id, f"denied by hook: {exc}", events)
            if pre.deny is not None:
                events.append(PermissionDenied(tool=name, reason=pre.deny))
                self._log(call_id, name, "deny", DecisionTrace("hook", None, "hook"), pre.deny)
                self._refused_span(name, call_id, "PermissionDenied")
                return self._error(call_id, f"denied by hook: {pre.deny}", events)
            if pre.replace_input is not None:
                args = pre.replace_input[0]
        trace = DecisionTrace()
        decision = await authorize(
            self.ctx,
            name,
            tool.effect,
            args,
            on_ask=lambda p: events.append(
                ApprovalRequested(call_id=call_id, tool=name, args=args)
            ),
            answer=self._answer_for(call_id),
            unanalysed_shell=unanalysed_shell_of(tool),
            trace=trace,
            needs_approval=getattr(tool, "needs_approval", False),
        )
        if isinstance(decision, Deferred):
            events.append(ApprovalRequested(call_id=call_id, tool=name, args=call.args))
            reason = self._redact(decision.reason)
            self._log(call_id, name, "ask", trace, reason)
            return CallOutcome(_error_item(call_id, reason), events, deferred=reason)
        if isinstance(decision, PermissionDeny):
            self._log(call_id, name, "deny", trace, decision.reason)
            events.append(PermissionDenied(tool=name, reason=decision.reason))
            self._refused_span(name, call_id, "PermissionDenied")
            return self._error(call_id, f"permission denied: {decision.reason}", events)
        self._log(call_id, name, "allow", trace, trace.allow_reason())
        if isinstance(decision, ReplaceArgs):
            args = decision.args
        return await self._invoke(tool, call_id, args, events)

    def _log(self, call_id: str, tool: str, decision: str, trace: DecisionTrace, why: str) -> None:
        """Report a decision to the run's decision log (a ``permission_decided`` event)."""
        sink = self.ctx.decision_log
        if sink is None:
            return
        sink(
            {
                "call_id": call_id,
                "tool": tool,
                "decision": decision,
                "stage": trace.stage,
                "rule": trace.rule,
                "reason": self._redact(why),
                "decided_by": trace.decided_by,
            }
        )

    def _answer_for(self, call_id: str) -> AskAnswer | None:
        answer = self.answer
        if answer is None:
            return None
        return lambda tool, prompt: answer(call_id, tool, prompt)

    def _refused_span(self, name: str, call_id: str, error_type: str) -> None:
        """An ``execute_tool`` span for a call that never ran, ended at once with
        ``error.type`` (``PermissionDenied``, ``UnknownTool``): every call has its span."""
        if self.spans is not None:
            from helikon.tracing import RunSpans

            RunSpans.end_tool(self.spans.tool(name, call_id), error_type)

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
        retry: str | None = None
        out: ToolOutput | None = None
        text = ""
        try:
            out = await tool.invoke(tctx, args)
            if out.events:
                reported = [_with_call_id(e, call_id) for e in out.events]
                events.extend(reported)
                if span is not None:
                    from helikon.tracing import RunSpans

                    RunSpans.tool_events(span, reported)
        except SubRunPaused as paused:  # an agent-as-tool's own call waits for a person
            error_type = "Paused"
            reason = f"agent {paused.state.agent!r} waits for approval"
            return CallOutcome(
                _error_item(call_id, reason), events, deferred=reason, nested=paused.state
            )
        except CallDeferred as waiting:  # the tool asked a person mid-call (MCP elicitation)
            error_type = "Paused"
            return CallOutcome(
                _error_item(call_id, waiting.prompt), events, deferred=waiting.prompt
            )
        except InvalidArgs as exc:
            error_type, invalid, text = "InvalidArgs", exc.schema_errors, str(exc)
        except ModelRetry as exc:
            error_type, retry, text = "ModelRetry", exc.reason, exc.reason
        except ToolError as exc:
            error_type, text = type(exc).__name__, str(exc)
        except Exception as exc:  # a third-party Tool implementation raised
            error_type, text = type(exc).__name__, f"{type(exc).__name__}: {exc}"
        finally:
            if span is not None:
                from helikon.tracing import RunSpans

                RunSpans.end_tool(span, error_type)
        try:
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
        except HookError as exc:  # fail closed: the hook may have been meant to scrub it
            out, text = None, f"tool output withheld: {exc}"
        if out is None:
            outcome = self._error(call_id, text, events)
            outcome.invalid_args = invalid
            outcome.retry = retry
            return outcome
        parts: list[ContentPart] = []
        for p in out.content:
            if isinstance(p, TextPart):
                text = self._redact(p.text)
                if type(p) is not TextPart or text != p.text:
                    p = TextPart(text=text)
            parts.append(p)
        item = _ok_item(call_id, parts)
        if out.meta is not None:
            item = item.model_copy(update={"meta": self._redact_meta(out.meta)})
        return CallOutcome(item, events)

    def _redact_meta(self, meta: dict[str, Any]) -> dict[str, Any] | None:
        """``meta`` with secrets redacted in its JSON text (``None`` when that is no longer
        a JSON object: fail closed)."""
        text = json.dumps(meta, ensure_ascii=False, default=str)
        redacted = self._redact(text)
        if redacted == text:
            return meta
        try:
            out = json.loads(redacted)
        except ValueError:
            return None
        return out if isinstance(out, dict) else None

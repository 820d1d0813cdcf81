"""Agent errors: why a run failed (``RunFailed.error``), retry and multi-agent budgets included.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from typing import Any

from helikon.errors.base import HelikonError

__all__ = [
    "AgentError",
    "AgentOther",
    "Cancelled",
    "GuardrailTripwire",
    "InputGuardrailTripwire",
    "InvalidStructuredOutput",
    "MaxAgentDepthExceeded",
    "MaxHandoffsExceeded",
    "MaxIterationsExceeded",
    "MaxTurnsExceeded",
    "NotImplementedPhase",
    "OutputGuardrailTripwire",
    "OutputRetriesExceeded",
    "RunTimeout",
    "ToolRetriesExceeded",
    "UsageLimitExceeded",
]


class AgentError(HelikonError):
    """Why a run failed; carried by the ``RunFailed`` event. ``kind`` is the variant name."""

    kind: str = "Other"

    def to_dict(self) -> dict[str, Any]:
        """The serializable form used by events and sessions: ``{"kind", "message", ...}``."""
        return {"kind": self.kind, "message": str(self)}


class MaxTurnsExceeded(AgentError):
    """The run used ``max_turns`` model turns without finishing."""

    kind = "MaxTurnsExceeded"

    def __init__(self, max_turns: int) -> None:
        self.max_turns = max_turns
        super().__init__(f"max turns ({max_turns}) exceeded")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "max_turns": self.max_turns}


class MaxAgentDepthExceeded(AgentError):
    """Agent nesting (handoffs, agent-as-tool) went past ``max_agent_depth``."""

    kind = "MaxAgentDepthExceeded"

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        super().__init__(f"max agent depth ({max_depth}) exceeded")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "max_depth": self.max_depth}


class InvalidStructuredOutput(AgentError, ValueError):
    """The final answer did not validate against ``output_type`` after the repair turns
    (``Agent(retries=...)``, default one).

    Attributes:
        schema_errors: one string per problem, ``"path: message"``.
        final_text: the last answer's text (the output tool's arguments as JSON, in tool mode).
        attempts: the repair turns spent (0 with ``retries=0``).
    """

    kind = "InvalidStructuredOutput"

    def __init__(self, schema_errors: list[str], final_text: str, attempts: int = 1) -> None:
        self.schema_errors = list(schema_errors)
        self.final_text = final_text
        self.attempts = attempts
        super().__init__(
            f"invalid structured output after {_repairs(attempts)}: "
            + "; ".join(self.schema_errors)
        )

    def to_dict(self) -> dict[str, Any]:
        out = {
            **super().to_dict(),
            "schema_errors": self.schema_errors,
            "final_text": self.final_text,
        }
        if self.attempts != 1:
            out["attempts"] = self.attempts
        return out


def _repairs(n: int) -> str:
    return "one repair attempt" if n == 1 else f"{n} repair attempts"


class OutputRetriesExceeded(InvalidStructuredOutput):
    """An output validator raised :class:`ModelRetry` after the last repair turn.

    Attributes:
        validator: the validator's name (its ``__qualname__``).
        reason: what the validator said last (also ``schema_errors[0]``).
        retries: the agent's ``retries`` bound.
    """

    kind = "OutputRetriesExceeded"

    def __init__(self, validator: str, reason: str, final_text: str, retries: int) -> None:
        super().__init__([reason], final_text, retries)
        self.validator = validator
        self.reason = reason
        self.retries = retries
        AgentError.__init__(
            self,
            f"output validator {validator!r} asked for a retry after {_repairs(retries)}: {reason}",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "validator": self.validator,
            "reason": self.reason,
            "retries": self.retries,
        }


class ToolRetriesExceeded(AgentError):
    """A tool raised :class:`ModelRetry`, or got invalid arguments, more often than its
    ``retries`` bound (``@tool(retries=...)``, else ``Agent(retries=...)``, default one).

    Attributes:
        tool: the tool's name.
        reason: the last retry reason (or the argument errors, joined by ``"; "``).
        retries: the bound.
        invalid_args: the last round was invalid arguments, not a :class:`ModelRetry`.
    """

    kind = "ToolRetriesExceeded"

    def __init__(self, tool: str, reason: str, retries: int, *, invalid_args: bool = False) -> None:
        self.tool = tool
        self.reason = reason
        self.retries = retries
        self.invalid_args = invalid_args
        fed = "once" if retries == 1 else f"{retries} times"
        what = "got invalid arguments again" if invalid_args else "asked for a retry again"
        super().__init__(f"tool {tool!r} {what} after the errors were fed back {fed}: {reason}")

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "tool": self.tool,
            "reason": self.reason,
            "retries": self.retries,
            "invalid_args": self.invalid_args,
        }


class Cancelled(AgentError):
    """The run's cancellation token fired before a terminal event."""

    kind = "Cancelled"

    def __init__(self, message: str = "run cancelled") -> None:
        super().__init__(message)


class RunTimeout(AgentError, TimeoutError):
    """``RunConfig.timeout`` elapsed before a terminal event."""

    kind = "Timeout"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"run timed out after {seconds:g}s")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "seconds": self.seconds}


class NotImplementedPhase(AgentError, NotImplementedError):
    """A reserved loop phase (compaction, approval) was reached."""

    kind = "NotImplemented"


class GuardrailTripwire(AgentError):
    """An input or output guardrail tripped; ``guardrail_kind`` and ``info`` say why.

    A run raises one of the subclasses :class:`InputGuardrailTripwire` and
    :class:`OutputGuardrailTripwire`; catching this class catches both.
    """

    kind = "GuardrailTriggered"
    #: ``"input"`` or ``"output"`` on the subclasses the run raises; ``None`` here
    stage: str | None = None

    def __init__(self, guardrail_kind: str, info: Any = None) -> None:
        self.guardrail_kind = guardrail_kind
        self.info = info
        where = f"{self.stage} guardrail" if self.stage else "guardrail"
        message = f"{where} tripped ({guardrail_kind})"
        # a guardrail that failed closed (raised, or returned a wrong value) says why
        error = info.get("error") if isinstance(info, dict) else None
        if guardrail_kind == "other" and isinstance(error, str):
            message += f": {error}"
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        out = {**super().to_dict(), "guardrail_kind": self.guardrail_kind, "info": self.info}
        if self.stage is not None:
            out["stage"] = self.stage
        return out


class InputGuardrailTripwire(GuardrailTripwire):
    """An input guardrail tripped (``except GuardrailTripwire`` catches it too)."""

    stage = "input"


class OutputGuardrailTripwire(GuardrailTripwire):
    """An output guardrail tripped (``except GuardrailTripwire`` catches it too)."""

    stage = "output"


class AgentOther(AgentError):
    """Any other run failure (a model error, an invalid transition, ...)."""

    kind = "Other"


class MaxHandoffsExceeded(AgentError):
    """A run made more than ``RunConfig.max_handoffs`` handoffs, or a ``SwarmAgent`` more than
    its ``max_handoffs``; the run was stopped."""

    kind = "MaxHandoffsExceeded"

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"max handoffs ({limit}) exceeded")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "limit": self.limit}


class MaxIterationsExceeded(AgentError):
    """A ``LoopAgent`` ran ``max_iterations`` passes and no tool escalated."""

    kind = "MaxIterationsExceeded"

    def __init__(self, max_iterations: int) -> None:
        self.max_iterations = max_iterations
        super().__init__(f"max iterations ({max_iterations}) exceeded without an escalation")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "max_iterations": self.max_iterations}


class UsageLimitExceeded(AgentError):
    """A :class:`~helikon.UsageLimits` budget of the run (shared with its sub-agents) is spent.

    Attributes:
        limit_name: the field of ``UsageLimits`` that stopped the run (``"request_limit"``,
            ``"total_tokens_limit"``, ``"input_tokens_limit"``, ``"output_tokens_limit"``).
        limit: its value.
        used: for ``request_limit`` the request that was not sent (``limit + 1``); for a
            token limit the tokens spent, past the limit.
    """

    kind = "UsageLimitExceeded"

    def __init__(self, limit_name: str, limit: int, used: int) -> None:
        self.limit_name = limit_name
        self.limit = limit
        self.used = used
        if limit_name == "request_limit":
            what = f"reached: model request {used} was not sent"
        else:
            unit = limit_name.removesuffix("_limit").replace("_", " ")
            what = f"exceeded: {used} {unit} used"
        super().__init__(
            f"usage limit {limit_name}={limit} {what} (the run and its sub-agents); "
            f"raise UsageLimits({limit_name}=...) to allow more"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "limit_name": self.limit_name,
            "limit": self.limit,
            "used": self.used,
        }

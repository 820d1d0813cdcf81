"""The whole helikon exception tree, in one module.

Every exception helikon raises derives from :class:`HelikonError`. Where a stdlib error
already names the failure, the helikon class derives from it too, so ``except ValueError``
keeps working for callers who do not know helikon::

    HelikonError
    ├── ConfigError(HelikonError, ValueError)        bad constructor / sidecar input
    ├── SchemaError(HelikonError, ValueError)        a JSON Schema cannot be normalized
    ├── ModelError                                    a provider call failed
    │   ├── ModelUnavailable                          5xx / overloaded
    │   ├── RateLimited                               429, carries ``retry_after`` (seconds)
    │   ├── ContextLengthExceeded                     the prompt does not fit
    │   ├── Refused                                   the provider refused the request
    │   ├── TransportError(ModelError, ConnectionError)  network / protocol failure
    │   └── ModelOther                                anything else (incl. a script run out)
    ├── ToolError                                     a tool call failed (fed back to the model)
    │   ├── InvalidArgs(ToolError, ValueError)        arguments did not match the schema
    │   ├── ToolDenied(ToolError, PermissionError)    the tool refused (safety boundary)
    │   └── ToolOther                                 any other failure
    ├── AgentError                                    why a run failed (``RunFailed.error``)
    │   ├── MaxTurnsExceeded
    │   ├── MaxAgentDepthExceeded
    │   ├── InvalidStructuredOutput(AgentError, ValueError)
    │   │   └── OutputRetriesExceeded                 an output validator kept asking for a retry
    │   ├── ToolRetriesExceeded                       a tool kept asking for a retry (or bad args)
    │   ├── Cancelled
    │   ├── RunTimeout(AgentError, TimeoutError)
    │   ├── NotImplementedPhase(AgentError, NotImplementedError)
    │   ├── GuardrailTripwire                         an input/output guardrail tripped
    │   ├── AgentOther
    │   ├── MaxHandoffsExceeded                       a SwarmAgent's handoff budget ran out
    │   └── MaxIterationsExceeded                     a LoopAgent never escalated
    ├── RunError                                      raised by ``run()`` / ``collect()``;
    │                                                 ``.error`` holds the AgentError
    ├── OutputTypeError(HelikonError, TypeError)      ``final_output_as(T)``: not a ``T``
    ├── ModelRetry                                    raised by a tool or output validator:
    │                                                 send the model back with the reason
    ├── SandboxUnavailable                            the OS cannot enforce the sandbox asked for
    ├── HookError                                     a hook's ``on_event`` raised
    ├── RunInterruptedError                           ``run()`` paused for approval (``.state``)
    ├── RunStateError(HelikonError, ValueError)       a RunState does not load
    ├── ResumeRefused                                 a resume cannot run (nothing ran)
    ├── SubRunPaused                                  internal: an agent-as-tool sub-run paused
    ├── SessionError                                  a session read or write failed
    │   ├── SessionUnavailable(SessionError, ConnectionError)  the store cannot be reached
    │   ├── SessionBackendError                       the store answered with an error
    │   └── SessionOther                              anything else (a corrupt stored row)
    ├── McpError                                      an MCP connection or server failed
    │   ├── McpConnectError(McpError, ConnectionError)  the initialize handshake failed
    │   ├── McpSpawnError(McpError, OSError)          the stdio server could not start
    │   ├── McpServiceError                           a request outside a tool call failed
    │   ├── McpBindError(McpError, OSError)           the HTTP server could not bind
    │   ├── McpServeError                             serving ended abnormally
    │   └── McpOther                                  anything else
    ├── DatasetError(HelikonError, ValueError)        an eval dataset line is invalid
    ├── EvalError                                     an evaluator could not score a case
    ├── TraceSinkError                                a trace sink could not record a run
    └── ServerError                                   the agent server answers with an error
        ├── AuthRejection                             an auth callable refused the request
        └── ServerBindError(ServerError, OSError)     the server could not bind its address

The CLI's ``SidecarError`` (a bad ``agents.toml``) derives from :class:`ConfigError`.

Error text never contains a secret: redaction runs before any tool text reaches an error.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentError",
    "AgentOther",
    "Cancelled",
    "ConfigError",
    "ContextLengthExceeded",
    "GuardrailTripwire",
    "HelikonError",
    "InvalidArgs",
    "InvalidStructuredOutput",
    "MaxAgentDepthExceeded",
    "MaxTurnsExceeded",
    "ModelError",
    "ModelOther",
    "ModelRetry",
    "ModelUnavailable",
    "NotImplementedPhase",
    "OutputRetriesExceeded",
    "OutputTypeError",
    "RateLimited",
    "Refused",
    "RunError",
    "RunTimeout",
    "SandboxUnavailable",
    "SchemaError",
    "ToolDenied",
    "ToolError",
    "ToolOther",
    "ToolRetriesExceeded",
    "TransportError",
]


class HelikonError(Exception):
    """Base class of every error helikon raises."""


class ConfigError(HelikonError, ValueError):
    """Bad input to a constructor, a sidecar file or a CLI flag.

    The message names the field (or file and key) and how to fix it.
    """


class SchemaError(HelikonError, ValueError):
    """A JSON Schema could not be normalized (too deep, unsupported construct)."""


# --------------------------------------------------------------------------- model errors


class ModelError(HelikonError):
    """A model provider call failed. ``kind`` is the spec's variant name.

    Attributes:
        message: the provider's own message (or helikon's, for a local failure).
        status_code: the HTTP status, when the failure was an HTTP answer.
        error_type: the provider's own error type, as sent (``invalid_request_error``,
            ``authentication_error``), else ``None``.
        error_code: the provider's own error code, as a string (``invalid_api_key``,
            ``unsupported_parameter``, Gemini's ``NOT_FOUND``, Bedrock's
            ``ValidationException``), else ``None``. Branch on these to tell apart errors
            that share a class.
    """

    kind: str = "Other"

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.error_code = error_code


class ModelUnavailable(ModelError):
    """The provider is overloaded or answered 5xx."""

    kind = "Unavailable"


class RateLimited(ModelError):
    """The provider answered 429. ``retry_after`` is in seconds when the provider said."""

    kind = "RateLimited"

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status_code: int | None = 429,
        error_type: str | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, error_type=error_type, error_code=error_code
        )
        self.retry_after = retry_after


class ContextLengthExceeded(ModelError):
    """The request does not fit the model's context window."""

    kind = "ContextLengthExceeded"


class Refused(ModelError):
    """The provider refused to answer (safety refusal or policy block)."""

    kind = "Refused"


class TransportError(ModelError, ConnectionError):
    """The connection failed or the stream broke off."""

    kind = "Transport"


class ModelOther(ModelError):
    """Any other model failure, e.g. a MockModel whose script has run out."""

    kind = "Other"


# --------------------------------------------------------------------------- tool errors


class ToolError(HelikonError):
    """A tool call failed. The text is fed back to the model as the call's result."""

    kind: str = "Other"


class InvalidArgs(ToolError, ValueError):
    """Arguments did not match the tool's schema. ``schema_errors`` lists each problem."""

    kind = "InvalidArgs"

    def __init__(self, schema_errors: list[str]) -> None:
        self.schema_errors = list(schema_errors)
        super().__init__("invalid arguments: " + "; ".join(self.schema_errors))


class ToolDenied(ToolError, PermissionError):
    """The tool refused: a safety boundary or an unsatisfiable precondition."""

    kind = "Denied"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"denied: {reason}")


class ToolOther(ToolError):
    """Any other tool failure."""

    kind = "Other"


# --------------------------------------------------------------------------- agent errors


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
    """An input or output guardrail tripped; ``guardrail_kind`` and ``info`` say why."""

    kind = "GuardrailTriggered"

    def __init__(self, guardrail_kind: str, info: Any = None) -> None:
        self.guardrail_kind = guardrail_kind
        self.info = info
        super().__init__(f"guardrail tripped ({guardrail_kind})")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "guardrail_kind": self.guardrail_kind, "info": self.info}


class AgentOther(AgentError):
    """Any other run failure (a model error, an invalid transition, ...)."""

    kind = "Other"


class RunError(HelikonError):
    """Raised by ``run()``, ``run_sync()`` and ``collect()`` when the run failed.

    ``error`` is the :class:`AgentError` from the terminal ``RunFailed`` event;
    ``events`` holds every event seen, ``usage`` the tokens spent up to the failure.
    """

    def __init__(
        self, error: AgentError, *, events: list[Any] | None = None, usage: Any = None
    ) -> None:
        super().__init__(f"run failed: {error}")
        self.error = error
        self.events = events or []
        self.usage = usage


# --------------------------------------------------------------------------- sandbox errors
# (owned by the sandbox area; raised by helikon._native.SandboxPolicy)


class SandboxUnavailable(HelikonError):
    """The OS sandbox cannot enforce the requested containment on this host.

    Raised when a sandbox policy is built: the message names what the kernel (or the
    process) lacks and which Linux release adds it, e.g. Landlock signal scoping (ABI 6,
    Linux 6.12), or that running as root requires ``run_as``. Also raised when the built-in
    self-test sees an escape that should have been refused. The backend never silently runs
    with weaker containment; choosing an unconfined backend instead is the caller's explicit
    decision.
    """

    kind = "Unavailable"


# --------------------------------------------------------------------------- session errors
# (owned by the sessions area; raised by every helikon.sessions backend)
#
#   SessionError
#   ├── SessionUnavailable(SessionError, ConnectionError)   the store cannot be reached
#   ├── SessionBackendError                                  the store answered with an error
#   └── SessionOther                                         anything else (a stored row that
#                                                            does not parse, an unusable event)

__all__ += ["SessionBackendError", "SessionError", "SessionOther", "SessionUnavailable"]


class SessionError(HelikonError):
    """A session read or write failed. ``kind`` is the spec's variant name.

    A failed ``append`` persists nothing and leaves the session usable.
    """

    kind: str = "Other"


class SessionUnavailable(SessionError, ConnectionError):
    """The session store cannot be reached (connection refused, pool closed, timeout)."""

    kind = "Unavailable"


class SessionBackendError(SessionError):
    """The session store answered with an error, e.g. SQLite's ``database is locked``."""

    kind = "Backend"


class SessionOther(SessionError):
    """Any other session failure: an event that cannot be serialized, a corrupt stored row."""

    kind = "Other"


# --------------------------------------------------------------------------- MCP errors
# (owned by the mcp area; raised by helikon.mcp, never by a tool call: a failing MCP tool
# call is a ToolError, because an agent only ever sees the Tool protocol)
#
#   McpError
#   ├── McpConnectError(McpError, ConnectionError)   the initialize handshake failed
#   ├── McpSpawnError(McpError, OSError)             the stdio server could not be started
#   ├── McpServiceError                              a request outside a tool call failed
#   ├── McpBindError(McpError, OSError)              the HTTP server could not bind
#   ├── McpServeError                                serving ended abnormally
#   └── McpOther                                     anything else

__all__ += [
    "McpBindError",
    "McpConnectError",
    "McpError",
    "McpOther",
    "McpServeError",
    "McpServiceError",
    "McpSpawnError",
]


class McpError(HelikonError):
    """An MCP connection or server failed. ``kind`` is the spec's variant name."""

    kind: str = "Other"


class McpConnectError(McpError, ConnectionError):
    """Connecting to an MCP server (transport or ``initialize`` handshake) failed."""

    kind = "Connect"


class McpSpawnError(McpError, OSError):
    """The stdio MCP server's process could not be started (command not found, ...)."""

    kind = "Spawn"


class McpServiceError(McpError):
    """An MCP request outside a tool call failed, e.g. ``tools/list`` during connect."""

    kind = "Service"


class McpBindError(McpError, OSError):
    """The streamable-HTTP MCP server could not bind its address."""

    kind = "Bind"


class McpServeError(McpError):
    """Serving an agent over MCP ended abnormally."""

    kind = "Serve"


class McpOther(McpError):
    """Any other MCP failure."""

    kind = "Other"


# --------------------------------------------------------------------------- multi-agent errors
# (owned by the agents area; carried by RunFailed from helikon.agents patterns)
#
#   AgentError
#   ├── MaxHandoffsExceeded          a SwarmAgent's max_handoffs budget was exceeded
#   └── MaxIterationsExceeded        a LoopAgent ran max_iterations passes without escalating

__all__ += ["MaxHandoffsExceeded", "MaxIterationsExceeded"]


class MaxHandoffsExceeded(AgentError):
    """A ``SwarmAgent`` saw more than ``limit`` handoffs; the run was cancelled."""

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


# --------------------------------------------------------------------------- approval errors
# (owned by the approvals area: pausing a run for a person and resuming it)
#
#   RunInterruptedError              run() paused: tool calls wait for a person (``.state``)
#   RunStateError(HelikonError, ValueError)
#                                    a RunState does not load (bad JSON, unknown version)
#   ResumeRefused                    a resume cannot run: the state was already resumed, the
#                                    session moved on, or the decisions do not fit

__all__ += ["ResumeRefused", "RunInterruptedError", "RunStateError", "SubRunPaused"]


class RunInterruptedError(HelikonError):
    """Raised by ``run()`` / ``collect()`` when the run paused for approval.

    ``state`` is the :class:`helikon.RunState` to resume from (``Runner.resume``);
    ``events`` holds every event seen, ``usage`` the tokens spent so far.
    """

    def __init__(self, state: Any, *, events: list[Any] | None = None, usage: Any = None) -> None:
        waiting = ", ".join(f"{p.tool} ({p.call_id})" for p in state.pending)
        super().__init__(
            f"run paused: {len(state.pending)} tool call(s) wait for approval: {waiting}; "
            "resume with Runner().resume(agent, err.state, decisions={call_id: Approve() | "
            "Deny(reason) | Edit(args)})"
        )
        self.state = state
        self.events = events or []
        self.usage = usage


class ModelRetry(HelikonError):
    """Raise from a tool or an output validator to send the model back with ``reason``.

    From a tool, the reason is the call's (error) result and the model may call again; from
    an output validator, the reason is listed in the repair message and the model answers
    again. Bounded by ``retries`` (per tool, else per agent; default one), after which the run
    fails with :class:`ToolRetriesExceeded` or :class:`OutputRetriesExceeded`.

    Example:
        >>> raise ModelRetry("the date must be in the future")  # doctest: +SKIP
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OutputTypeError(HelikonError, TypeError):
    """:meth:`helikon.RunResult.final_output_as` got an output that is not of the asked type.

    Attributes:
        expected: the type asked for.
        actual: the type of the run's ``final_output``.
    """

    def __init__(self, expected: type[Any], actual: type[Any]) -> None:
        super().__init__(
            f"final_output is {actual.__qualname__}, not the expected {expected.__qualname__}; "
            "give the agent output_type=... to get a typed output, or ask for the type it has"
        )
        self.expected = expected
        self.actual = actual


class RunStateError(HelikonError, ValueError):
    """A :class:`helikon.RunState` does not load; the message names the field or version."""


class ResumeRefused(HelikonError):
    """A resume cannot run, and nothing ran: the message says why and what to do.

    Raised when the state was already resumed (a tool never runs twice), when the session
    changed since the pause, when the decisions do not answer exactly the waiting calls, or
    when the agent is not the one that paused.
    """


class SubRunPaused(HelikonError):
    """Raised by a tool whose sub-run (an agent as a tool) paused for approval; the calling
    run pauses too, with ``state`` nested under the call. Internal to the approval path."""

    def __init__(self, state: Any) -> None:
        super().__init__(f"sub-run of agent {state.agent!r} paused for approval")
        self.state = state


# --------------------------------------------------------------------------- hook errors
# (raised by helikon.core.hooks.fire when a hook's on_event raises)

__all__ += ["HookError"]


class HookError(HelikonError):
    """A hook's ``on_event`` raised; the message names the hook, the event and the error.

    The original exception is the ``__cause__``. A ``PreToolUse`` hook that raises denies
    that call and a ``PostToolUse`` hook that raises withholds that output (the model reads
    the error either way); at any other event the run fails with this message.

    Attributes:
        hook_name: the hook's class name.
        event_name: the event's class name (``PreToolUse``, ``OnRunStart``, ...).
    """

    def __init__(self, hook: object, event: object, exc: BaseException) -> None:
        self.hook_name = type(hook).__name__
        self.event_name = type(event).__name__
        super().__init__(
            f"hook {self.hook_name} raised {type(exc).__name__}: {exc} (on {self.event_name})"
        )


# --------------------------------------------------------------------------- eval errors
# (raised by helikon.evals)

__all__ += ["DatasetError", "EvalError", "TraceSinkError"]


class DatasetError(HelikonError, ValueError):
    """A dataset could not be loaded.

    Attributes:
        source: the file (or ``"<string>"``) the dataset came from.
        line: the 1-based line at fault, or ``None`` for a whole-file problem.
        field: the case field at fault (``"input"``, ``"expected_tools[1]"``...), or ``None``.
    """

    def __init__(
        self, message: str, *, source: str, line: int | None = None, field: str | None = None
    ) -> None:
        where = source if line is None else f"{source}:{line}"
        if field is not None:
            where = f"{where}: field {field!r}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.field = field


class EvalError(HelikonError):
    """An evaluator could not score a case (e.g. a judge model's reply was not a verdict).

    The run records it as that evaluator's error for that case; the other evaluators and
    cases are unaffected.
    """


class TraceSinkError(HelikonError):
    """A trace sink could not record a finished run.

    Attributes:
        report: the run's complete :class:`~helikon.evals.EvalReport`, so no result is lost.
        sink: the name of the sink's class.
    """

    def __init__(self, message: str, *, report: Any, sink: str) -> None:
        super().__init__(f"{sink}: {message}")
        self.report = report
        self.sink = sink


# --------------------------------------------------------------------------- server errors
# (raised by helikon.runtimes.server; a ServerError becomes a JSON error response)

__all__ += ["AuthRejection", "ServerBindError", "ServerError"]


class ServerError(HelikonError):
    """A request the server cannot serve; becomes a JSON error response.

    ``status`` is the HTTP status, ``code`` the machine-readable ``error`` field of the body.
    Raise it from a session factory or a context factory to answer with that status
    (default 500). ``details`` are extra fields of the body (e.g. ``{"field": "input"}``).

    The body is ``{"error": code, "message": message, **details}``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 500,
        code: str = "server_error",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = dict(details or {})

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return {"error": self.code, "message": self.message, **self.details}


class AuthRejection(ServerError):
    """Raised by an auth callable to reject a request (default 401 Unauthorized).

    Example:
        >>> AuthRejection("missing bearer token").status
        401
    """

    def __init__(self, message: str, *, status: int = 401) -> None:
        code = "unauthorized" if status == 401 else "forbidden"
        super().__init__(message, status=status, code=code)


class ServerBindError(ServerError, OSError):
    """:meth:`AgentServer.serve` could not bind its address (in use, no permission)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=500, code="bind_failed")

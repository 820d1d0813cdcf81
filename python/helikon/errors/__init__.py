"""The whole helikon exception tree, in one module.

Every exception helikon raises derives from :class:`HelikonError`. Where a stdlib error
already names the failure, the helikon class derives from it too, so ``except ValueError``
keeps working for callers who do not know helikon::

    HelikonError
    ├── ConfigError(HelikonError, ValueError)        bad constructor / sidecar input
    │   ├── PeerSpellingError(ConfigError, AttributeError)  another SDK's spelling
    │   └── PeerImportError(ConfigError, ImportError)  another SDK's name imported
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
    │   │   ├── InputGuardrailTripwire                an input guardrail tripped
    │   │   └── OutputGuardrailTripwire               an output guardrail tripped
    │   ├── AgentOther
    │   ├── MaxHandoffsExceeded                       a run's or SwarmAgent's handoff budget ran out
    │   ├── MaxIterationsExceeded                     a LoopAgent never escalated
    │   └── UsageLimitExceeded                        a UsageLimits budget is spent
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
    │   ├── SessionOther                              anything else (a corrupt stored row)
    │   └── SessionTampered                           a log's hash chain does not verify
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

from helikon.errors.agent import (
    AgentError,
    AgentOther,
    Cancelled,
    GuardrailTripwire,
    InputGuardrailTripwire,
    InvalidStructuredOutput,
    MaxAgentDepthExceeded,
    MaxHandoffsExceeded,
    MaxIterationsExceeded,
    MaxTurnsExceeded,
    NotImplementedPhase,
    OutputGuardrailTripwire,
    OutputRetriesExceeded,
    RunTimeout,
    ToolRetriesExceeded,
    UsageLimitExceeded,
)
from helikon.errors.base import (
    ConfigError,
    HelikonError,
    PeerImportError,
    PeerSpellingError,
    SchemaError,
)
from helikon.errors.evals import DatasetError, EvalError, TraceSinkError
from helikon.errors.mcp import (
    McpBindError,
    McpConnectError,
    McpError,
    McpOther,
    McpServeError,
    McpServiceError,
    McpSpawnError,
)
from helikon.errors.model import (
    ContextLengthExceeded,
    ModelError,
    ModelOther,
    ModelUnavailable,
    RateLimited,
    Refused,
    TransportError,
)
from helikon.errors.run import (
    HookError,
    OutputTypeError,
    ResumeRefused,
    RunError,
    RunInterruptedError,
    RunStateError,
    SubRunPaused,
)
from helikon.errors.sandbox import SandboxUnavailable
from helikon.errors.server import AuthRejection, ServerBindError, ServerError
from helikon.errors.session import (
    SessionBackendError,
    SessionError,
    SessionOther,
    SessionTampered,
    SessionUnavailable,
)
from helikon.errors.tool import InvalidArgs, ModelRetry, ToolDenied, ToolError, ToolOther

__all__ = [
    "AgentError",
    "AgentOther",
    "AuthRejection",
    "Cancelled",
    "ConfigError",
    "ContextLengthExceeded",
    "DatasetError",
    "EvalError",
    "GuardrailTripwire",
    "HelikonError",
    "HookError",
    "InputGuardrailTripwire",
    "InvalidArgs",
    "InvalidStructuredOutput",
    "MaxAgentDepthExceeded",
    "MaxHandoffsExceeded",
    "MaxIterationsExceeded",
    "MaxTurnsExceeded",
    "McpBindError",
    "McpConnectError",
    "McpError",
    "McpOther",
    "McpServeError",
    "McpServiceError",
    "McpSpawnError",
    "ModelError",
    "ModelOther",
    "ModelRetry",
    "ModelUnavailable",
    "NotImplementedPhase",
    "OutputGuardrailTripwire",
    "OutputRetriesExceeded",
    "OutputTypeError",
    "PeerImportError",
    "PeerSpellingError",
    "RateLimited",
    "Refused",
    "ResumeRefused",
    "RunError",
    "RunInterruptedError",
    "RunStateError",
    "RunTimeout",
    "SandboxUnavailable",
    "SchemaError",
    "ServerBindError",
    "ServerError",
    "SessionBackendError",
    "SessionError",
    "SessionOther",
    "SessionTampered",
    "SessionUnavailable",
    "SubRunPaused",
    "ToolDenied",
    "ToolError",
    "ToolOther",
    "ToolRetriesExceeded",
    "TraceSinkError",
    "TransportError",
    "UsageLimitExceeded",
]

# One public home: every class reports ``helikon.errors`` as its module (what ``repr``, tracebacks,
# pickling and the documentation show), wherever in the package its area file defines it.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name

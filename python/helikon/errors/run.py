"""Run errors: what ``run()``, ``collect()``, results, hooks and approvals raise to the caller.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

from typing import Any

from helikon.errors.agent import AgentError
from helikon.errors.base import HelikonError

__all__ = [
    "HookError",
    "OutputTypeError",
    "ResumeRefused",
    "RunError",
    "RunInterruptedError",
    "RunStateError",
    "SubRunPaused",
]


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

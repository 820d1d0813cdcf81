"""Usage limits: a run (and every sub-agent it starts) stops once a budget is spent.

``RunConfig(usage_limits=UsageLimits(request_limit=3, total_tokens_limit=20_000))`` bounds
the model requests and tokens of a whole run. The budget is shared: a handoff target and an
agent run as a tool (``AgentAsTool``) spend from the budget of the run that started them, so
a sub-agent stops as soon as the *caller's* budget is gone, and what it spent counts in the
caller's usage.

When checked:

* ``request_limit`` before each model request: the request that would be the
  ``request_limit + 1``-th is not sent.
* the token limits after each model reply (tokens are known only then): the reply that
  pushes a count past its limit is the last one.

Either way the run fails with :class:`~helikon.errors.UsageLimitExceeded` (``RunError.error``).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Never

from helikon.core.usage import Usage
from helikon.errors import ConfigError, UsageLimitExceeded

__all__ = ["UsageLimits", "UsageMeter", "current_meter"]


@dataclass(frozen=True, slots=True, init=False)
class UsageLimits:
    """Budgets for one run and its sub-agents; ``None`` = no limit on that count.

    Args:
        request_limit: model requests (each call to the provider counts one, failed or not).
        total_tokens_limit: ``Usage.total_tokens`` summed over every reply.
        input_tokens_limit: ``Usage.input_tokens`` summed (cached prompt tokens included).
        output_tokens_limit: ``Usage.output_tokens`` summed (reasoning included).

    Raises:
        ConfigError: a limit is not an int >= 0 (the message names the field); Pydantic AI's
            ``tool_calls_limit=`` (helikon does not count tool calls: the message says what
            bounds the loop instead) or its older ``request_tokens_limit=`` /
            ``response_tokens_limit=`` (the message gives helikon's name).
        TypeError: any other unknown keyword.

    Example:
        >>> UsageLimits(request_limit=3).request_limit
        3
    """

    request_limit: int | None
    total_tokens_limit: int | None
    input_tokens_limit: int | None
    output_tokens_limit: int | None

    def __init__(
        self,
        request_limit: int | None = None,
        total_tokens_limit: int | None = None,
        input_tokens_limit: int | None = None,
        output_tokens_limit: int | None = None,
        **unexpected: Never,
    ) -> None:
        for name in unexpected:
            if name in _PEER_FIELDS:
                raise ConfigError(f"UsageLimits({name}=...): {_PEER_FIELDS[name]}")
            raise TypeError(f"UsageLimits() got an unexpected keyword argument {name!r}")
        object.__setattr__(self, "request_limit", request_limit)
        object.__setattr__(self, "total_tokens_limit", total_tokens_limit)
        object.__setattr__(self, "input_tokens_limit", input_tokens_limit)
        object.__setattr__(self, "output_tokens_limit", output_tokens_limit)
        self.__post_init__()

    def __post_init__(self) -> None:
        for name in ("request_limit", *_TOKEN_FIELDS):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(
                    f"UsageLimits({name}=...) must be an int >= 0 or None (no limit), got {value!r}"
                )

    def check_before_request(self, usage: Usage) -> None:
        """Raise when one more request would pass ``request_limit``.

        Raises:
            UsageLimitExceeded: ``usage.requests >= request_limit``.
        """
        if self.request_limit is not None and usage.requests >= self.request_limit:
            raise UsageLimitExceeded("request_limit", self.request_limit, usage.requests + 1)

    def check_tokens(self, usage: Usage) -> None:
        """Raise when a token count is past its limit.

        Raises:
            UsageLimitExceeded: the first of total, input, output tokens over its limit.
        """
        for name in _TOKEN_FIELDS:
            limit = getattr(self, name)
            used = getattr(usage, name.removesuffix("_limit"))
            if limit is not None and used > limit:
                raise UsageLimitExceeded(name, limit, used)


_TOKEN_FIELDS = ("total_tokens_limit", "input_tokens_limit", "output_tokens_limit")

_PEER_FIELDS = {
    "tool_calls_limit": (
        "helikon's UsageLimits counts model requests and tokens, not tool calls; bound the "
        "loop with UsageLimits(request_limit=N) or RunConfig(max_turns=N)"
    ),
    "request_tokens_limit": "helikon spells it input_tokens_limit=",
    "response_tokens_limit": "helikon spells it output_tokens_limit=",
}


class UsageMeter:
    """What one run (with its handoff targets) spent, checked against its limits and those
    of every run above it (an agent-as-tool sub-run's meter has the caller's as ``parent``).
    """

    __slots__ = ("limits", "parent", "side", "spent")

    def __init__(self, limits: UsageLimits | None, parent: UsageMeter | None = None) -> None:
        self.limits = limits
        self.parent = parent
        self.spent = Usage()
        #: usage of model calls made inside tool calls, not yet added to the run's usage
        self.side: Usage | None = None

    def add_side(self, usage: Usage) -> None:
        """Record a model call made inside a tool call (an MCP server's sampling request,
        answered by a model): the run adds ``usage`` (tokens and requests) to its own after
        the tool step. Count it against the limits with :meth:`before_request` and
        :meth:`add_tokens` too."""
        self.side = usage if self.side is None else self.side + usage

    def take_side(self) -> Usage | None:
        """The usage :meth:`add_side` recorded since the last take (``None``: none)."""
        side, self.side = self.side, None
        return side

    def _chain(self) -> list[UsageMeter]:
        out: list[UsageMeter] = []
        meter: UsageMeter | None = self
        while meter is not None:
            out.append(meter)
            meter = meter.parent
        return out

    def before_request(self) -> None:
        """Check every budget up the chain, then count the request in each.

        Raises:
            UsageLimitExceeded: a ``request_limit`` is spent (nothing is counted).
        """
        chain = self._chain()
        for meter in chain:
            if meter.limits is not None:
                meter.limits.check_before_request(meter.spent)
        one = Usage(requests=1)
        for meter in chain:
            meter.spent = meter.spent + one

    def add_tokens(self, usage: Usage) -> None:
        """Count a reply's tokens (not its requests) up the chain, then check the limits.

        Raises:
            UsageLimitExceeded: a token count is past its limit.
        """
        tokens = usage.model_copy(update={"requests": 0})
        chain = self._chain()
        for meter in chain:
            meter.spent = meter.spent + tokens
        for meter in chain:
            if meter.limits is not None:
                meter.limits.check_tokens(meter.spent)


#: the meter of the run whose tool is executing (an agent-as-tool sub-run chains to it)
_CURRENT: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar(
    "helikon_usage_meter", default=None
)


def current_meter() -> contextvars.ContextVar[UsageMeter | None]:
    """The context variable holding the meter of the run being driven (``None`` outside)."""
    return _CURRENT

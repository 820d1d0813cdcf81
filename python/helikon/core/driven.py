"""What the driver reads of the agent it runs: the :class:`DrivenAgent` protocol.

The agent describes, the driver drives: :mod:`helikon.core.driver` (and the pause/resume
planning in :mod:`helikon.core.pause`) read an agent through this protocol and never import
the agent's class; :class:`~helikon.Agent` satisfies it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from helikon.core.context import RunContext
from helikon.core.guardrails import Guardrail
from helikon.core.handoff import HandoffSpec
from helikon.core.hooks import Hook
from helikon.core.model import Model, ModelSettings
from helikon.core.output import OutputType
from helikon.core.retries import RetryRules
from helikon.core.tool import Tool

__all__ = ["DrivenAgent"]


class DrivenAgent(Protocol):
    """What the driver reads of the agent it runs (:class:`~helikon.Agent` is one).

    The driver and the pause planning never import the agent's class.
    """

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def tools(self) -> Sequence[Tool]: ...
    @property
    def handoff_specs(self) -> list[HandoffSpec]: ...
    @property
    def model_settings(self) -> ModelSettings: ...
    @property
    def output_type(self) -> OutputType[Any] | None: ...
    @property
    def hooks(self) -> Sequence[Hook]: ...
    @property
    def input_guardrails(self) -> Sequence[Guardrail]: ...
    @property
    def output_guardrails(self) -> Sequence[Guardrail]: ...
    @property
    def retry_rules(self) -> RetryRules: ...

    def native_config(self, max_turns: int) -> Any:
        """The compiled native ``LoopConfig`` for ``max_turns``."""
        ...

    def collisions(self) -> list[str]:
        """Transfer-tool names that clash (each with what clashes)."""
        ...

    async def render_instructions(self, ctx: RunContext[Any]) -> str:
        """The system prompt for a run (instruction functions called, async ones awaited)."""
        ...

    def handoff_target(self, name: str) -> DrivenAgent:
        """The handoff agent whose real name is ``name``."""
        ...

""":class:`ScriptedModel`: a stateless scripted model, so concurrent runs each play their own
script (a :class:`MockModel` pops one shared queue, so concurrent runs take each other's
turns)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from helikon.core.cancel import CancellationToken
from helikon.core.items import Item
from helikon.core.model import CALLING_AGENT, ModelCapabilities, ModelEvent, ModelRequest
from helikon.errors import ModelOther
from helikon.providers.scripted.model import MockModel
from helikon.providers.scripted.script import Script

__all__ = ["ScriptedModel", "turn_of"]


def turn_of(messages: list[Item]) -> int:
    """Which turn of the current run a request is: the number of groups of tool results
    after the last user message (0 for the run's first call; every turn but the last ends
    with tool calls, whose results come back before the next turn)."""
    last_user = max(
        (i for i, item in enumerate(messages) if item.type == "user_message"), default=-1
    )
    turn = 0
    previous = None
    for item in messages[last_user + 1 :]:
        if item.type == "tool_result" and previous != "tool_result":
            turn += 1
        previous = item.type
    return turn


class ScriptedModel:
    """A model that plays the same turns for every run, keeping no state between calls.

    The turn is read from the request's conversation (:func:`turn_of`), so any number of
    concurrent runs of one agent (a server under load, ``asyncio.gather``) each play
    ``scripts`` from the start. Every turn but the last must end with tool calls.

    Args:
        scripts: the turns of one run, each a list of steps, as for :class:`MockModel`.
        model: the model id reported to traces (default ``"scripted"``).

    Raises:
        ConfigError: ``scripts`` is not a list of lists of steps.

    Example:
        >>> from helikon.testing import ScriptedModel, Text
        >>> ScriptedModel([[Text("hi")]]).turns
        1
    """

    def __init__(self, scripts: Iterable[Script], *, model: str = "scripted") -> None:
        self._scripts: tuple[Script, ...] = tuple(scripts)
        MockModel(self._scripts)  # checks the nesting and the steps
        self._model = model

    @property
    def provider(self) -> str:
        return "mock"

    @property
    def model(self) -> str:
        return self._model

    @property
    def turns(self) -> int:
        """Turns in one run."""
        return len(self._scripts)

    def capabilities(self) -> ModelCapabilities:
        return MockModel().capabilities()

    def invoke(self, request: ModelRequest, cancel: CancellationToken) -> AsyncIterator[ModelEvent]:
        """Play the turn the conversation is at.

        Raises:
            ModelOther: the run is past its last scripted turn (the message names the turn
                and the calling agent).
            ModelError: the turn has a ``Fail`` step.
        """
        turn = turn_of(request.messages)
        if turn >= len(self._scripts):
            agent = CALLING_AGENT.get()
            whose = f" of agent {agent!r}" if agent else ""
            raise ModelOther(
                f"ScriptedModel has no turn {turn + 1}{whose}: it scripts {len(self._scripts)} "
                "turn(s) per run"
            )
        return MockModel([self._scripts[turn]], model=self._model).invoke(request, cancel)

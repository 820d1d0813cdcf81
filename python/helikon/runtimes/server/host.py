"""What the HTTP routes, the approval routes and the WebSocket endpoint use of the server.

:class:`~helikon.runtimes.server.AgentServer` is a :class:`ServerHost`; the routes
(:mod:`~helikon.runtimes.server.routes`) and the WebSocket endpoint
(:mod:`~helikon.runtimes.server.ws`) take one, so they depend on this protocol and never on
the app module that builds them (the app imports the routes, not the other way round).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from starlette.requests import HTTPConnection

from helikon.core.decisions import Decision
from helikon.core.items import Item
from helikon.core.runnable import Runnable
from helikon.runtimes.server.config import ServerConfig
from helikon.runtimes.server.runs import Run, RunRegistry

__all__ = ["ServerHost"]


class ServerHost(Protocol):
    """The server as its endpoints see it."""

    @property
    def config(self) -> ServerConfig: ...
    @property
    def runs(self) -> RunRegistry: ...
    @property
    def agents(self) -> Mapping[str, Runnable]: ...

    def metrics_text(self) -> str:
        """The server's metrics in the Prometheus text format."""
        ...

    async def authenticate(self, conn: HTTPConnection) -> None:
        """Run the auth callable (raises ``ServerError``/``AuthRejection`` to refuse)."""
        ...

    def agent(self, name: str) -> Runnable:
        """The agent served as ``name`` (raises a 404 ``ServerError`` when unknown)."""
        ...

    async def run(self, name: str, run_id: str) -> Run:
        """The run ``run_id`` of agent ``name`` (raises a 404 ``ServerError`` when unknown)."""
        ...

    async def start_run(self, conn: HTTPConnection, name: str, items: list[Item]) -> Run:
        """Register a run of agent ``name`` on ``items`` and start it in the background."""
        ...

    async def answer_approvals(
        self,
        name: str,
        run_id: str,
        decisions: Mapping[str, Decision],
        conn: HTTPConnection | None = None,
    ) -> Run:
        """Resume the paused run ``run_id`` with ``decisions`` (raises ``ServerError``)."""
        ...

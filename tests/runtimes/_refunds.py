"""A triage agent handing off to a refunds agent whose ``refund`` tool asks for approval.

Shared by the resume tests and their child process (:mod:`tests.runtimes.resume_proc`):
each process builds the agents the same way, on the part of the script it plays.
"""

from __future__ import annotations

from typing import Any

from helikon import Agent, AskUser, PermissionAllow, RunContext, tool
from helikon.testing import Call, MockModel, Text, Usage


@tool
def refund(order: str, amount: int) -> str:
    """Refund part of an order."""
    return f"refunded {amount} EUR on {order}"


class AskForRefunds:
    """Every ``refund`` call asks a person; every other call is allowed."""

    async def check(self, ctx: Any, tool: str, args: Any) -> Any:
        return AskUser(f"refund of {args['amount']}") if tool == "refund" else PermissionAllow()


class AllowAll:
    async def check(self, ctx: Any, tool: str, args: Any) -> Any:
        return PermissionAllow()


TRIAGE = [[Usage(input=10, output=2), Call("h1", "transfer_to_refunds", {})]]
BEFORE_PAUSE = [[Usage(input=20, output=3), Call("c1", "refund", {"order": "A7", "amount": 40})]]
AFTER_PAUSE = [[Usage(input=30, output=4), Text("Refunded 40 EUR on A7.")]]
SECOND_TURN = [[Usage(input=40, output=5), Text("The receipt is on its way.")]]


def agents(triage: list[Any], refunds: list[Any]) -> tuple[Agent, Agent]:
    """``(triage, refunds)``, each playing the given scripts."""
    specialist = Agent(name="refunds", model=MockModel(refunds), tools=[refund])
    return Agent(name="triage", model=MockModel(triage), handoffs=[specialist]), specialist


def ctx(ask: bool = True) -> RunContext[Any]:
    return RunContext.ephemeral().with_permission_policy(AskForRefunds() if ask else AllowAll())

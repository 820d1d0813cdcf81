"""Agents and policies shared by the approval tests (also imported by subprocesses)."""

from __future__ import annotations

from typing import Any

from helikon import Agent, ParallelAgent, RunContext, SequentialAgent, tool
from helikon.core.permissions import AskUser, PermissionAllow, PermissionDecision
from helikon.testing import Call, MockModel, Text

RAN: list[tuple[str, Any]] = []


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    RAN.append(("lookup", order))
    return f"order {order}: 40 EUR"


@tool
def refund(order: str, amount: int) -> str:
    """Refund part of an order."""
    RAN.append(("refund", {"order": order, "amount": amount}))
    return f"refunded {amount} on {order}"


class AsksForRefunds:
    """Refunds wait for a person; everything else runs."""

    async def check(self, ctx: RunContext[Any], tool: str, args: Any) -> PermissionDecision:
        if tool == "refund":
            return AskUser(f"refund of {args.get('amount')} needs approval")
        return PermissionAllow()


def first_turn() -> list[Any]:
    return [
        Text("Checking."),
        Call("c1", "lookup", {"order": "A7"}),
        Call("c2", "refund", {"order": "A7", "amount": 40}),
    ]


def agent(scripts: list[list[Any]]) -> Agent:
    return Agent(
        name="support",
        instructions="Help with orders.",
        model=MockModel(scripts),
        tools=[lookup, refund],
    )


def ctx() -> RunContext[None]:
    return RunContext.ephemeral().with_permission_policy(AsksForRefunds())


def pipeline(check: list[list[Any]], support: list[list[Any]], audit: list[list[Any]]) -> Any:
    """A sequential pattern whose second step is a parallel fan-out: ``check`` looks the
    order up, then ``support`` (asks for a refund) and ``audit`` (answers) run together."""
    return SequentialAgent(
        "pipe",
        steps=[
            Agent(name="check", model=MockModel(check), tools=[lookup]),
            ParallelAgent(
                "fan",
                branches=[
                    agent(support),
                    Agent(name="audit", model=MockModel(audit), tools=[lookup]),
                ],
            ),
        ],
    )

"""A bank's support agent: dependencies in the run context, dynamic instructions, a tool that
reads the context, and a typed answer (Agent[Deps, Out]).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from helikon import Agent, RunContext, SystemMessage, ToolCall, ToolContext, ToolResult, text_of
from helikon.testing import Call, MockModel


class FakeDatabase:
    """Stands in for the bank's database."""

    def __init__(self) -> None:
        self.names = {123: "John"}
        self.balances = {123: 123.45}

    async def customer_name(self, customer_id: int) -> str:
        return self.names[customer_id]

    async def customer_balance(self, customer_id: int, *, include_pending: bool) -> float:
        return self.balances[customer_id] + (100.0 if include_pending else 0.0)


@dataclass
class SupportDeps:
    customer_id: int
    db: FakeDatabase


class SupportOutput(BaseModel):
    support_advice: str = Field(description="Advice returned to the customer")
    block_card: bool = Field(description="Whether to block the customer's card")
    risk: int = Field(description="Risk level of query", ge=0, le=10)


model = MockModel(
    [
        [Call("c1", "customer_balance", {"include_pending": True})],
        [
            Call(
                "c2",
                "final_result",
                {
                    "support_advice": "Hello John, your balance with pending items is $223.45.",
                    "block_card": False,
                    "risk": 1,
                },
            )
        ],
        [
            Call(
                "c3",
                "final_result",
                {
                    "support_advice": "I have blocked your card, John. Please visit a branch.",
                    "block_card": True,
                    "risk": 8,
                },
            )
        ],
    ]
)
support_agent: Agent[SupportDeps, SupportOutput] = Agent(
    name="support_agent",
    model=model,
    instructions="You are a support agent in our bank; judge the risk level of each query.",
    output_type=SupportOutput,
    output_mode="tool",  # the model finishes by calling the output tool `final_result`
)


@support_agent.instructions
async def add_customer_name(ctx: RunContext[SupportDeps]) -> str:
    name = await ctx.user_ctx.db.customer_name(ctx.user_ctx.customer_id)
    return f"The customer's name is {name!r}."


@support_agent.tool(effect="read_only")
async def customer_balance(ctx: ToolContext[SupportDeps], include_pending: bool) -> float:
    """Return the customer's current account balance."""
    return await ctx.user_ctx.db.customer_balance(
        ctx.user_ctx.customer_id, include_pending=include_pending
    )


deps = RunContext.ephemeral(SupportDeps(customer_id=123, db=FakeDatabase()))
for question in ("What is my balance?", "I just lost my card!"):
    result = support_agent.run_sync(question, deps)
    for item in result.new_items:
        if isinstance(item, ToolCall):
            print(f"-> {item.name}({item.args})")
        elif isinstance(item, ToolResult):
            print(f"<- {text_of(item.content)}")
    print(result.final_output.model_dump_json())
system = model.requests[0].messages[0]
assert isinstance(system, SystemMessage)
print(text_of(system.content))
model.assert_exhausted()

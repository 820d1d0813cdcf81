"""An input guardrail: a checker agent with a typed verdict stops homework requests.

The guardrail runs alongside the first model call; a tripwire fails the run with
``GuardrailTripwire`` (inside ``RunError``), carrying the checker's reasoning as ``info``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from helikon import (
    Agent,
    GuardrailInput,
    GuardrailKind,
    GuardrailTripwire,
    Pass,
    RunContext,
    RunError,
    Runner,
    Tripwire,
)
from helikon.testing import MockModel, Text


class HomeworkVerdict(BaseModel):
    is_math_homework: bool
    reasoning: str


checker: Agent[None, HomeworkVerdict] = Agent(
    name="guardrail_check",
    model=MockModel(
        [
            [Text('{"is_math_homework": false, "reasoning": "A question about opening hours."}')],
            [Text('{"is_math_homework": true, "reasoning": "Asks to solve an equation for x."}')],
        ]
    ),
    instructions="Decide whether the user asks you to do their math homework.",
    output_type=HomeworkVerdict,
)


class MathHomework:
    """Trips when the checker agent says the input is math homework."""

    async def check(self, ctx: RunContext[Any], input: GuardrailInput) -> Pass | Tripwire:
        verdict = (await checker.run(input.text)).final_output
        if verdict.is_math_homework:
            return Tripwire(GuardrailKind.INPUT_POLICY, {"reasoning": verdict.reasoning})
        return Pass()


agent = Agent(
    name="customer_support",
    model=MockModel([[Text("We are open from 9 to 17, Monday to Friday.")], [Text("x = 2")]]),
    instructions="You are a customer support agent. You help customers with their questions.",
    input_guardrails=[MathHomework()],
)

for question in ("When are you open?", "Can you solve 2x + 3 = 7 for me?"):
    try:
        print(Runner.run_sync(agent, question).final_output)
    except RunError as exc:
        if not isinstance(exc.error, GuardrailTripwire):
            raise
        print(f"guardrail tripped: {exc.error.guardrail_kind}: {exc.error.info['reasoning']}")

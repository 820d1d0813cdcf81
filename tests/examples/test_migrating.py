"""examples/migrating: the ports of the OpenAI Agents SDK's and Pydantic AI's examples run
offline (each on a scripted MockModel) and print exactly what the run did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "migrating"

EXPECTED = {
    "hello_world.py": (
        "Code calls itself,\nsmaller each time it returns,\nbase case ends the climb.\n"
    ),
    "tools.py": (
        "-> get_weather({'city': 'Tokyo'})\n"
        '<- {"city":"Tokyo","temperature_range":"14-20C","conditions":"Sunny with wind."}\n'
        "In Tokyo it is sunny and windy, between 14 and 20C.\n"
    ),
    "agents_as_tools.py": (
        "<- Hola, ¿cómo estás?\n"
        "<- Bonjour, comment ça va ?\n"
        "Spanish: Hola, ¿cómo estás?\nFrench: Bonjour, comment ça va ?\n"
        "answered by: orchestrator\n"
    ),
    "bank_support.py": (
        "-> customer_balance({'include_pending': True})\n"
        "<- 223.45\n"
        "-> final_result({'support_advice': 'Hello John, your balance with pending items is "
        "$223.45.', 'block_card': False, 'risk': 1})\n"
        "<- Final result accepted.\n"
        '{"support_advice":"Hello John, your balance with pending items is $223.45.",'
        '"block_card":false,"risk":1}\n'
        "-> final_result({'support_advice': 'I have blocked your card, John. Please visit a "
        "branch.', 'block_card': True, 'risk': 8})\n"
        "<- Final result accepted.\n"
        '{"support_advice":"I have blocked your card, John. Please visit a branch.",'
        '"block_card":true,"risk":8}\n'
        "You are a support agent in our bank; judge the risk level of each query.\n"
        "\n"
        "The customer's name is 'John'.\n"
    ),
    "customer_service.py": (
        "user: How big can my bag be?\n"
        "  <- Transferred to faq_agent.\n"
        "  <- One bag of up to 23 kg and 158 cm in total dimensions may be checked.\n"
        "faq_agent ['transfer_to_faq_agent', 'faq_lookup']: You may check one bag of up to 23 kg.\n"
        "user: I want to change my seat.\n"
        "  <- Transferred to seat_booking_agent.\n"
        "seat_booking_agent ['transfer_to_seat_booking_agent']: What is your confirmation number, "
        "and which seat would you like?\n"
        "user: LL0EZ6, and 14C please.\n"
        "  <- Updated seat to 14C for confirmation number LL0EZ6.\n"
        "seat_booking_agent ['update_seat']: Done: you are now in seat 14C.\n"
        "context: AirlineContext(passenger_name='Ada', confirmation_number='LL0EZ6', "
        "seat_number='14C')\n"
    ),
    "deterministic.py": (
        "outline: 1. A lighthouse keeper hears knocking. 2. Nobody is there.\n"
        "check: good_quality=True is_scifi=False\n"
        "story: Every night at three the knocking came; the keeper never answered.\n"
    ),
    "routing.py": (
        "french_agent: Bonjour ! Je vais bien, merci.\n"
        "french_agent: Il fait beau à Paris.\n"
        "items in the conversation: 6\n"
    ),
    "flight_booking.py": (
        "flight: FlightDetails(flight_number='SFO123', price=350, origin='SFO',"
        " destination='ANC', date=datetime.date(2025, 1, 10))\n"
        "<-\n"
        '   [{"flight_number":"AK456","price":680,"origin":"ANC","destination":'
        '"LIS","date":"2025-01-10"},{"flight_number":"SFO123","price":350,"orig'
        'in":"SFO","destination":"ANC","date":"2025-01-10"},{"flight_number":"S'
        'FO789","price":390,"origin":"SFO","destination":"ANC","date":"2025-01-'
        '11"}]\n'
        "<-\n"
        "   Your previous response did not match the required output type `StructuredOutput`.\n"
        "   Errors:\n"
        "   - Wrong flight: the origin should be SFO, the destination should be ANC.\n"
        "<-\n"
        "   Final result accepted.\n"
        "model calls: 3 (search) + 1 (extraction)\n"
        "tokens: search 860, extraction 200, total 1060\n"
    ),
    "input_guardrails.py": (
        "We are open from 9 to 17, Monday to Friday.\n"
        "guardrail tripped: input_policy: Asks to solve an equation for x.\n"
    ),
    "sql_gen.py": (
        "SELECT message FROM records WHERE level = 'error' AND created_at >= '2026-12-04'\n"
        "Errors since yesterday.\n"
        "sent back once with: Your previous response did not match the required output type "
        "`SqlQuery`.\n"
        "Errors:\n"
        "- Only SELECT queries are allowed; do not change the data.\n"
        "Reply again with only a JSON object that matches the schema, and no other text.\n"
    ),
    "sqlite_session.py": (
        "user: What city is the Golden Gate Bridge in?\n"
        "assistant: San Francisco. (1 items sent)\n"
        "user: What state is it in?\n"
        "assistant: California. (3 items sent)\n"
        "user: What's the population?\n"
        "assistant: About 808,000 people. (5 items sent)\n"
        'last two items: ["user_message: What\'s the population?", '
        "'assistant_message: About 808,000 people.']\n"
    ),
    "weather_agent.py": (
        "<- Unknown place 'the capital of the UK'; give a place name.\n"
        '<- {"lat":51.5,"lng":-0.1}\n'
        '<- {"lat":51.3,"lng":-1.9}\n'
        "<- 21C, sunny\n"
        "<- 18C, light rain\n"
        "London: 21C, sunny. Wiltshire: 18C, light rain.\n"
    ),
}


def _run(name: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        cwd=EXAMPLES,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_port_prints_exactly_what_the_run_did(name: str) -> None:
    assert _run(name) == EXPECTED[name]


def test_every_port_is_tested_and_listed() -> None:
    ports = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert ports == sorted(EXPECTED)
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    assert [p for p in ports if f"`{p}`" not in readme] == []


def test_the_session_outlives_the_process(tmp_path: Path) -> None:
    # a second process on the same file sees the first one's three turns
    db = tmp_path / "conversations.db"
    _run("sqlite_session.py", str(db))
    again = _run("sqlite_session.py", str(db))
    assert "assistant: San Francisco. (7 items sent)\n" in again

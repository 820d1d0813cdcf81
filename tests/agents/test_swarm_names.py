"""Swarm members with non-ASCII names get distinct, valid transfer tools, and a handoff
through one reaches the right member."""

from __future__ import annotations

import re

from helikon import Agent, HandoffItem, SwarmAgent
from helikon.agents.swarm import transfer_names
from helikon.testing import Call, MockModel, Text

VALID = re.compile(r"^[a-z0-9_]{1,64}$")


def test_names_are_distinct_and_valid() -> None:
    members = ["Ärzte", "Büro", "会計", "法務", "café ☕", "cafe", "Investing specialist", "x" * 80]
    names = transfer_names(members)
    assert len(set(names.values())) == len(members)
    assert all(VALID.match(n) for n in names.values()), names
    assert names["Ärzte"] == "transfer_to_arzte"
    assert names["Büro"] == "transfer_to_buro"
    assert names["Investing specialist"] == "transfer_to_investing_specialist"
    assert re.fullmatch(r"transfer_to_[0-9a-f]{6}", names["会計"])
    assert re.fullmatch(r"transfer_to_cafe_[0-9a-f]{6}", names["café ☕"])
    assert re.fullmatch(r"transfer_to_cafe_[0-9a-f]{6}", names["cafe"])
    assert len(names["x" * 80]) == 64
    assert transfer_names(members) == names  # stable across builds


def test_a_handoff_to_an_all_non_ascii_member_reaches_it() -> None:
    names = transfer_names(["総務", "会計", "法務"])
    front = Agent(name="総務", model=MockModel([[Call("h1", names["法務"], {})]]))
    accounting = Agent(name="会計", model=MockModel([[Text("accounting")]]))
    legal = Agent(name="法務", model=MockModel([[Text("legal here")]]))
    swarm = SwarmAgent("desk", members=[front, accounting, legal])
    tools = {s.tool_name for s in swarm.members[0].handoff_specs}  # type: ignore[attr-defined]
    assert tools == {names["会計"], names["法務"]}
    result = swarm.run_sync("contract question")
    assert result.final_output == "legal here"
    handoffs = [(ev.from_agent, ev.to_agent) for ev in result.events if isinstance(ev, HandoffItem)]
    assert handoffs == [("総務", "法務")]

"""Reading a log decodes all rows in one validation call; a bad row is still named."""

from __future__ import annotations

import pytest

from helikon.errors import SessionOther
from helikon.sessions import event_to_json, user_message
from helikon.sessions._codec import decode_all


def test_rows_decode_in_order_from_text_and_bytes() -> None:
    rows = [
        ("s#0", event_to_json(user_message("a"))),
        ("s#1", event_to_json(user_message("b")).encode()),
    ]
    assert [e.content[0].text for e in decode_all(rows)] == ["a", "b"]  # type: ignore[union-attr]
    assert decode_all([]) == []


def test_a_bad_row_is_named() -> None:
    good = event_to_json(user_message("a"))
    with pytest.raises(SessionOther, match=r"^stored event at s#1 does not parse: "):
        decode_all([("s#0", good), ("s#1", '{"type": "nope"}'), ("s#2", good)])


def test_a_row_that_would_split_into_two_events_is_refused() -> None:
    good = event_to_json(user_message("a"))
    with pytest.raises(SessionOther, match=r"^stored event at s#0 does not parse: "):
        decode_all([("s#0", f"{good},{good}"), ("s#1", good)])
    with pytest.raises(SessionOther, match=r"^stored event at s#0 does not parse: "):
        decode_all([("s#0", f"{good}]"), ("s#1", f"[{good}")])

"""Every provider's response decoder speaks the one protocol of ``providers._decoder``.

Adapters drive their decoder through the same four names (``whole`` for a whole answer,
``chunk`` per stream event, ``finished``, ``ending``), so a reader following one run meets
the same steps in every provider, and the old per-provider names are gone.
"""

from __future__ import annotations

import inspect

import pytest

from helikon.providers._decoder import TurnDecoder
from helikon.providers.anthropic._response import MessageTurn
from helikon.providers.bedrock._response import ConverseTurn
from helikon.providers.gemini._response import GeminiTurn
from helikon.providers.openai._chat_events import ChatTurn
from helikon.providers.openai._responses_events import ResponsesTurn

DECODERS = [ChatTurn, ResponsesTurn, MessageTurn, ConverseTurn, GeminiTurn]
OLD_NAMES = {"on_event", "on_message", "on_response", "feed"}


@pytest.mark.parametrize("decoder", DECODERS, ids=lambda c: c.__name__)
def test_decoder_has_the_protocol_names_and_none_of_the_old(decoder: type) -> None:
    protocol = {name for name, _ in inspect.getmembers(TurnDecoder) if not name.startswith("_")}
    assert protocol == {"whole", "chunk", "finished", "ending"}
    assert protocol <= set(dir(decoder))
    assert not OLD_NAMES & set(dir(decoder))
    assert isinstance(inspect.getattr_static(decoder, "finished"), property)


def test_gemini_whole_and_chunk_decode_alike() -> None:
    body = {
        "candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r9",
    }
    whole, streamed = GeminiTurn(streamed=False), GeminiTurn(streamed=True)
    assert list(whole.whole(body)) == list(streamed.chunk(body))
    assert list(whole.ending()) == list(streamed.ending())
    assert whole.finished is False

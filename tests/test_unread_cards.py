"""A card its holder cannot read (HIDDEN in its own hand, as a trustless seat holds the cards a
gone seat handed it by swap-hand and never opened): the engine lists it only as a face-down
discard, never as a card to play, and the moves of the cards it can read stay as they were; the
bots choose on such a hand without failing."""

from __future__ import annotations

import pytest

from engine.bots import make_bot
from engine.catalog import HIDDEN
from engine.chance import SeededChance
from engine.moves import Move
from engine.rules import check, legal_moves, legal_texts, listed_moves
from engine.state import deal
from engine.views import view

PLAYERS = ("ann", "bob", "cat", "dan")


@pytest.mark.parametrize("ruleset", ["classic", "expansion"])
def test_an_unread_card_can_only_be_discarded(ruleset: str) -> None:
    state = deal(ruleset, PLAYERS, SeededChance(f"unread-{ruleset}"))
    me = state.player
    v = view(state, me)
    read = list(v.hands[me])
    v.hands[me] = [HIDDEN, *read[1:], HIDDEN]  # two cards shut, the rest read
    moves = legal_moves(v)
    assert all(m.card != HIDDEN for m in moves)  # never played
    one = Move("discard", cards=(HIDDEN,))
    assert one in moves and str(one) in legal_texts(v)
    assert len(listed_moves(v)) == len(moves)
    readable = view(state, me)
    readable.hands[me] = read[1:]
    plays = {str(m) for m in legal_moves(readable) if m.verb == "play"}
    assert {str(m) for m in moves if m.verb == "play"} == plays
    if ruleset == "expansion":  # two unread cards, or one with a read one, make a discard of two
        assert Move("discard", cards=(HIDDEN, HIDDEN)) in moves
        assert any(m.cards[:1] != (HIDDEN,) and HIDDEN in m.cards and len(m.cards) == 2 for m in moves)
    assert check(v, one) == one
    for kind in ("random", "smart", "search"):
        assert make_bot(kind, me, "unread").choose(v) in moves
    v.hands[me] = [HIDDEN]  # nothing read: the one move left is to discard it
    assert legal_moves(v) == [one]
    for kind in ("random", "smart", "search"):
        assert make_bot(kind, me, "unread").choose(v) == one

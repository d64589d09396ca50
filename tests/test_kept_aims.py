"""The action cards' legal aims are kept across turns while the cards in front are the same
(RoundState.fronts, engine/actions.py): what is listed from them is what a fresh listing gives."""

from __future__ import annotations

import random

from engine.actions import RULES
from engine.catalog import CLASSIC, EXPANSION
from engine.chance import SeededChance
from engine.rules import apply, legal_moves
from engine.state import PLAYING, THEFT, deal
from engine.views import view


def _forget_kept() -> None:
    for rule in RULES.values():
        rule._kept.clear()


def test_kept_aims_are_what_a_fresh_listing_gives() -> None:
    for ruleset, players in ((CLASSIC, 5), (EXPANSION, 9)):
        for seed in range(6):
            names = tuple(f"p{i}" for i in range(players))
            state = deal(ruleset, names, SeededChance(f"kept/{ruleset}/{seed}"))
            rng = random.Random(seed)
            while state.phase in (PLAYING, THEFT):
                listed = legal_moves(state)
                on_view = legal_moves(view(state, state.player))
                _forget_kept()
                assert legal_moves(state.copy()) == listed == on_view, (ruleset, seed)
                apply(state, listed[rng.randrange(len(listed))])


def test_fronts_names_the_cards_in_front() -> None:
    state = deal(CLASSIC, ("ann", "bob", "cid"), SeededChance("kept/fronts"))
    fronts = state.fronts
    assert state.copy().fronts == fronts and view(state, "ann").fronts == fronts  # the same cards in front
    assert deal(CLASSIC, ("ann", "bob", "cid"), SeededChance("kept/fronts")).fronts != fronts  # another state
    state.hands["ann"][0] = "fix-pick.1"  # (by hand, before anything was listed for this state)
    assert not any(m.card == "fix-pick.1" for m in legal_moves(state))  # nothing is broken yet
    state.in_front["bob"].append("break-pick.1")  # by hand: it must say so
    state.fronts_changed()
    assert state.fronts != fronts
    assert [m.target for m in legal_moves(state) if m.card == "fix-pick.1"] == ["bob"]


def test_a_move_that_changes_the_cards_in_front_gives_a_new_number() -> None:
    state = deal(CLASSIC, ("ann", "bob", "cid"), SeededChance("kept/break"))
    rng = random.Random(3)
    while state.phase == PLAYING:
        before = (state.fronts, {p: list(c) for p, c in state.in_front.items()})
        moves = legal_moves(state)
        apply(state, moves[rng.randrange(len(moves))])
        if {p: list(c) for p, c in state.in_front.items()} != before[1]:
            assert state.fronts != before[0]

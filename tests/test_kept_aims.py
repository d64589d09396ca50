"""The action cards' legal aims are kept across turns while the cards in front are the same
(the state's FrontMemo, engine/actions.py): what is listed from them is what a fresh listing
gives, and a change of the cards in front, through the state's own methods, is never missed."""

from __future__ import annotations

import random

from engine.catalog import CLASSIC, EXPANSION
from engine.chance import SeededChance
from engine.rules import apply, legal_moves
from engine.state import PLAYING, THEFT, FrontMemo, RoundState, deal
from engine.views import view


def _unkept(state: RoundState) -> RoundState:
    """A copy that has worked nothing out from the cards in front yet."""
    fresh = state.copy()
    fresh.front_memo = FrontMemo()
    return fresh


def test_kept_aims_are_what_a_fresh_listing_gives() -> None:
    for ruleset, players in ((CLASSIC, 5), (EXPANSION, 9)):
        for seed in range(6):
            names = tuple(f"p{i}" for i in range(players))
            state = deal(ruleset, names, SeededChance(f"kept/{ruleset}/{seed}"))
            rng = random.Random(seed)
            while state.phase in (PLAYING, THEFT):
                listed = legal_moves(state)
                on_view = legal_moves(view(state, state.player))
                assert legal_moves(_unkept(state)) == listed == on_view, (ruleset, seed)
                apply(state, listed[rng.randrange(len(listed))])


def test_the_memo_goes_with_the_cards_in_front() -> None:
    state = deal(CLASSIC, ("ann", "bob", "cid"), SeededChance("kept/fronts"))
    memo = state.front_memo
    assert state.copy().front_memo is memo and view(state, "ann").front_memo is memo  # the same cards in front
    assert deal(CLASSIC, ("ann", "bob", "cid"), SeededChance("kept/fronts")).front_memo is not memo  # another state
    state.hands["ann"][0] = "fix-pick.1"  # (by hand: hands are not what the memo keeps)
    assert not any(m.card == "fix-pick.1" for m in legal_moves(state))  # nothing is broken yet
    before = state.copy()
    state.put_in_front("bob", "break-pick.1")  # the one way to lay a card in front of a player
    assert state.front_memo is not memo and before.front_memo is memo
    assert [m.target for m in legal_moves(state) if m.card == "fix-pick.1"] == ["bob"]
    assert not any(m.card == "fix-pick.1" for m in legal_moves(before))  # the copy's memo still holds for it
    state.take_from_front("bob", "break-pick.1")
    assert not any(m.card == "fix-pick.1" for m in legal_moves(state))


def test_a_move_that_changes_the_cards_in_front_gives_a_new_memo() -> None:
    state = deal(CLASSIC, ("ann", "bob", "cid"), SeededChance("kept/break"))
    rng = random.Random(3)
    changed = 0
    while state.phase == PLAYING:
        before = (state.front_memo, {p: list(c) for p, c in state.in_front.items()})
        moves = legal_moves(state)
        apply(state, moves[rng.randrange(len(moves))])
        if {p: list(c) for p, c in state.in_front.items()} != before[1]:
            assert state.front_memo is not before[0]
            changed += 1
    assert changed  # (the seed plays cards in front of players)

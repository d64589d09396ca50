"""apply checks every move, one legal_moves listed too: from another position, a changed view,
text. listed_moves are legal_moves made one at a time; a copy of a state shares no list or dict."""

from __future__ import annotations

import inspect
import random

import pytest

from engine.chance import SeededChance
from engine.errors import IllegalMove
from engine.moves import Move
from engine.rules import apply, legal_moves, listed_moves
from engine.state import RoundState, deal
from engine.views import view

PLAYERS = ("ann", "bob", "cid")

def test_a_listed_move_of_an_earlier_turn_is_checked_again() -> None:
    state = deal("classic", PLAYERS, SeededChance("listed-moves"))
    moves = legal_moves(state)
    discard = next(m for m in moves if m.verb == "discard")
    apply(state, discard)
    # the same object, listed one move ago: the card has left the hand, and it is bob's turn
    with pytest.raises(IllegalMove):
        apply(state, discard)

def test_a_listed_move_on_a_copy_is_checked() -> None:
    state = deal("classic", PLAYERS, SeededChance("listed-moves"))
    moves = legal_moves(state)
    trial = state.copy()  # copies are for changing by hand: they trust nothing listed on the original
    trial.hands["ann"] = []
    with pytest.raises(IllegalMove):
        apply(trial, moves[0])

def test_moves_listed_on_a_changed_view_are_checked_on_the_state() -> None:
    state = deal("classic", PLAYERS, SeededChance("listed-moves"))
    mine = view(state, "ann")
    mine.hands["ann"] = list(state.hands["bob"])  # a view given other cards by hand
    listed = next(m for m in legal_moves(mine) if m.verb == "discard")
    with pytest.raises(IllegalMove, match="do not hold"):
        apply(state, listed)
    own = view(state, "ann")
    taken = legal_moves(own)[-1]  # the mover's own view, unchanged: its moves are the state's
    events = apply(state, taken)
    assert events[0] == {"event": "move", "player": "ann", "move": str(taken)}

def test_text_and_equal_moves_are_checked() -> None:
    state = deal("classic", PLAYERS, SeededChance("listed-moves"))
    legal_moves(state)
    not_held = next(c for c in state.hands["bob"] if c not in state.hands["ann"])
    with pytest.raises(IllegalMove, match="do not hold"):
        apply(state, Move("discard", cards=(not_held,)))
    with pytest.raises(IllegalMove):
        apply(state, f"discard {not_held}")


def test_a_copy_shares_no_list_or_dict() -> None:
    state = deal("expansion", PLAYERS, SeededChance("listed-moves"))
    state.knowledge["ann"].append(["map", "top", "goal-gold.1"])
    other = state.copy()
    names = list(RoundState.FIELDS)  # (not vars(): a state compiled by mypyc has no __dict__)
    assert names == list(inspect.signature(RoundState).parameters)  # every field __init__ takes
    names.append("front_memo")  # shared by the copy (it is true of the same cards in front)
    kept = [n for n in names if n != "board"]
    assert [getattr(other, n) for n in kept] == [getattr(state, n) for n in kept]  # every field copied
    for name in names:
        value = getattr(state, name)
        if isinstance(value, (list, dict)):
            assert getattr(other, name) == value and getattr(other, name) is not value, name
    for a, b in ((state.hands, other.hands), (state.in_front, other.in_front), (state.knowledge, other.knowledge)):
        assert all(a[p] is not b[p] for p in a)
    assert other.knowledge["ann"][0] is not state.knowledge["ann"][0]
    assert other.board.cells is not state.board.cells


@pytest.mark.parametrize("ruleset,players", [("classic", 5), ("expansion", 12), ("expansion", 2)])
def test_listed_moves_are_legal_moves_made_one_at_a_time(ruleset: str, players: int) -> None:
    names = tuple(f"p{i}" for i in range(players))
    for seed in range(3):
        state = deal(ruleset, names, SeededChance(f"listed/{ruleset}/{players}/{seed}"))
        rng = random.Random(seed)
        while not state.over:
            eager = legal_moves(state)
            lazy = listed_moves(state)
            assert len(lazy) == len(eager)
            i = rng.randrange(len(lazy))
            picked = lazy[i]
            assert picked == eager[i] and lazy[i] is picked and lazy[i - len(lazy)] is picked
            assert list(lazy) == eager and lazy[1:3] == eager[1:3]
            apply(state, picked)
        with pytest.raises(IndexError):
            listed_moves(state)[0]


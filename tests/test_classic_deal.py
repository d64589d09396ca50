"""The classic deal (RULES.md §3): dwarf cards, hands, deck, goals and nuggets.

Positions cannot express a deal, so these are unit tests over `engine.state.deal` with seeded
chance. The expected numbers are RULES.md's table, written out again here.
"""

from __future__ import annotations

from collections import Counter

import pytest

from engine.catalog import CLASSIC, card_kind, deck_ids, nugget_ids
from engine.chance import SeededChance
from engine.state import deal

# players -> (saboteurs, diggers) among the dwarf cards shuffled for the deal (RULES.md §3)
TABLE = {3: (1, 3), 4: (1, 4), 5: (2, 4), 6: (2, 5), 7: (3, 5), 8: (3, 6), 9: (3, 7), 10: (4, 7)}
HAND = {3: 6, 4: 6, 5: 6, 6: 5, 7: 5, 8: 4, 9: 4, 10: 4}
SEEDS = range(40)


def _players(n: int) -> tuple[str, ...]:
    return tuple(f"p{i}" for i in range(n))


def _kinds(cards) -> Counter:
    return Counter(card_kind(c).kind for c in cards)


@pytest.mark.parametrize("n", range(3, 11))
def test_dwarf_cards_without_the_option(n: int) -> None:
    saboteurs, diggers = TABLE[n]
    sabs_in_play = set()
    for seed in SEEDS:
        state = deal(CLASSIC, _players(n), SeededChance(f"deal/{seed}"))
        dealt = [state.roles[p] for p in state.players]
        assert len(dealt) == n and all(dealt)
        assert len(state.aside) == 1, "one dwarf card is set aside, unseen"
        assert _kinds(dealt + state.aside) == Counter({"saboteur": saboteurs, "digger": diggers})
        sabs_in_play.add(_kinds(dealt)["saboteur"])
    # nobody knows how many saboteurs play: the card aside is sometimes a saboteur, sometimes not
    assert sabs_in_play == {saboteurs - 1, saboteurs}


@pytest.mark.parametrize("n", range(3, 11))
def test_dwarf_cards_with_max_saboteurs(n: int) -> None:
    saboteurs, diggers = TABLE[n]
    for seed in SEEDS:
        state = deal(CLASSIC, _players(n), SeededChance(f"deal/{seed}"), options=frozenset({"max-saboteurs"}))
        dealt = [state.roles[p] for p in state.players]
        assert state.aside == [], "exactly as many dwarf cards as players"
        assert _kinds(dealt) == Counter({"saboteur": saboteurs, "digger": diggers - 1})


def test_max_saboteurs_at_ten_players_is_four_saboteurs_and_six_diggers() -> None:
    state = deal(CLASSIC, _players(10), SeededChance("ten"), options=frozenset({"max-saboteurs"}))
    assert _kinds(state.roles.values()) == Counter({"saboteur": 4, "digger": 6})


@pytest.mark.parametrize("n", range(3, 11))
def test_hands_deck_goals_and_nuggets(n: int) -> None:
    state = deal(CLASSIC, _players(n), SeededChance(f"hands/{n}"))
    assert all(len(h) == HAND[n] for h in state.hands.values())
    held = [c for h in state.hands.values() for c in h]
    assert len(state.deck) == 67 - n * HAND[n]
    assert sorted(held + state.deck) == sorted(deck_ids(CLASSIC)), "deck = the 40 tunnel cards + 27 action cards"
    assert len(deck_ids(CLASSIC)) == 67
    assert _kinds(deck_ids(CLASSIC))["map"] == 6 and _kinds(deck_ids(CLASSIC))["cross"] == 5
    assert sorted(state.nuggets) == sorted(nugget_ids()) and len(state.nuggets) == 28
    assert sum(card_kind(c).value for c in state.nuggets) == 16 + 16 + 12
    assert all(state.board.is_hidden(g) for g in ("top", "middle", "bottom"))
    goals = sorted(card_kind(state.board.goal_card(g)).kind for g in ("top", "middle", "bottom"))
    assert goals == ["goal-gold", "goal-stone-ne", "goal-stone-nw"]
    assert state.to_move == 0 and state.round_no == 1 and state.passes == 0
    assert all(v == 0 for v in state.gold.values()) and state.removed == []


def test_the_gold_lies_under_each_goal_cell_for_some_seed() -> None:
    where = set()
    for seed in SEEDS:
        state = deal(CLASSIC, _players(4), SeededChance(f"goals/{seed}"))
        where |= {g for g in ("top", "middle", "bottom") if card_kind(state.board.goal_card(g)).kind == "goal-gold"}
    assert where == {"top", "middle", "bottom"}


def test_the_deal_is_reproducible_from_the_seed() -> None:
    a = deal(CLASSIC, _players(5), SeededChance("same"))
    b = deal(CLASSIC, _players(5), SeededChance("same"))
    c = deal(CLASSIC, _players(5), SeededChance("other"))
    assert (a.roles, a.hands, a.deck, a.nuggets, a.aside) == (b.roles, b.hands, b.deck, b.nuggets, b.aside)
    assert (a.hands, a.deck) != (c.hands, c.deck)


@pytest.mark.parametrize("n", [2, 11])
def test_player_count_outside_3_to_10_is_refused(n: int) -> None:
    with pytest.raises(ValueError):
        deal(CLASSIC, _players(n), SeededChance("x"))

"""RULES.md §3, expansion: the deal of a round and what carries over between rounds."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.bots import RandomBot
from engine.catalog import EXPANSION, card_kind, deck_ids, dwarf_ids
from engine.chance import SeededChance
from engine.game import Game
from engine.selfplay import play_round
from engine.state import deal
from engine.views import view

NAMES = tuple(f"p{i}" for i in range(12))
DWARVES = Counter({"green": 4, "blue": 4, "boss": 1, "profiteer": 1, "geologist": 2, "saboteur": 3})


def _kinds(cards):
    return Counter(card_kind(c).kind for c in cards)


def test_expansion_catalog_sizes() -> None:
    # base 40 tunnels + 27 actions, Saboteur 2: 30 tunnels + 20 actions
    deck = deck_ids(EXPANSION)
    assert len(deck) == 117 and len(set(deck)) == 117
    assert sum(1 for c in deck if card_kind(c).ruleset == EXPANSION) == 50
    assert not any(card_kind(c).category in ("gold", "dwarf") for c in deck)
    assert _kinds(dwarf_ids(EXPANSION)) == DWARVES


@pytest.mark.parametrize("n", range(2, 13))
def test_deal(n: int) -> None:
    players = NAMES[:n]
    state = deal(EXPANSION, players, SeededChance(f"setup/{n}"))
    # one dwarf card per player from all 15, the rest aside (whatever the number of players)
    roles = [state.roles[p] for p in players]
    assert len(set(roles)) == n
    assert len(state.aside) == 15 - n
    assert Counter(roles + state.aside) == Counter(dwarf_ids(EXPANSION))
    # top 10 removed unseen, 6 cards each, the rest is the deck
    assert len(state.removed) == 10
    assert all(len(state.hands[p]) == 6 for p in players)
    assert len(state.deck) == 117 - 10 - 6 * n
    dealt = state.removed + state.deck + [c for p in players for c in state.hands[p]]
    assert Counter(dealt) == Counter(deck_ids(EXPANSION))
    # no nugget cards, nobody has gold, nothing in front, round 1 starts with the first seat
    assert state.nuggets == [] and set(state.gold.values()) == {0}
    assert state.player == players[0] and state.passes == 0 and state.last_theft is None
    assert all(state.in_front[p] == [] for p in players)
    # goals face down, the gold among them
    assert all(state.board.is_hidden(g) for g in ("top", "middle", "bottom"))
    # nobody sees the removed cards, the aside dwarves or another player's dwarf
    for p in players:
        v = view(state, p)
        assert set(v.removed) == {"?"} and set(v.aside) <= {"?"}
        assert v.roles[p] == state.roles[p]
        assert all(v.roles[q] is None for q in players if q != p)


@pytest.mark.parametrize("n", [1, 13])
def test_player_range(n: int) -> None:
    with pytest.raises(ValueError):
        deal(EXPANSION, NAMES[:n] if n <= 12 else NAMES + ("p12",), SeededChance("x"))


def test_dwarves_and_deck_are_shuffled() -> None:
    """Every dwarf kind turns up for the first seat and for the aside pile over a few seeds."""
    first, aside, top = Counter(), Counter(), set()
    for seed in range(60):
        state = deal(EXPANSION, NAMES[:4], SeededChance(f"shuffle/{seed}"))
        first[card_kind(state.roles["p0"]).kind] += 1
        aside.update(card_kind(c).kind for c in state.aside)
        top.add(tuple(state.removed))
    assert set(first) == set(DWARVES)
    assert set(aside) == set(DWARVES)
    assert len(top) == 60


def test_deal_is_reproducible() -> None:
    a = deal(EXPANSION, NAMES[:5], SeededChance("same"))
    b = deal(EXPANSION, NAMES[:5], SeededChance("same"))
    assert (a.roles, a.hands, a.deck, a.removed, a.aside) == (b.roles, b.hands, b.deck, b.removed, b.aside)


def test_removed_cards_return_next_round() -> None:
    players = NAMES[:5]
    game = Game(EXPANSION, players)
    bots = {p: RandomBot(p) for p in players}
    first = game.start_round(SeededChance("game/1"))
    removed_before = list(first.removed)
    play_round(first, bots)
    assert first.over
    second = game.start_round(SeededChance("game/2"))
    # everything is reshuffled: the 10 removed cards are back in play (or removed anew)
    dealt = second.removed + second.deck + [c for p in players for c in second.hands[p]]
    assert Counter(dealt) == Counter(deck_ids(EXPANSION))
    assert set(removed_before) <= set(dealt)
    assert Counter(second.roles.values()) + Counter(second.aside) == Counter(dwarf_ids(EXPANSION))
    assert second.retired == [] and second.discard == []
    assert all(second.in_front[p] == [] for p in players)
    # gold carries over; the round starts with the seat after the last player to act
    assert second.gold == first.gold
    assert second.player == first.next_start
    assert second.round_no == 2

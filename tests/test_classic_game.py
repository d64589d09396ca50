"""A classic game (RULES.md §3, §6): three rounds, gold and the nugget pile carried over, the
next round's first player, and the final standings."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.bots import RandomBot
from engine.catalog import CLASSIC, card_kind, nugget_ids
from engine.chance import SeededChance
from engine.game import Carry, Game, carry, carry_after, standings_winners
from engine.rules import apply
from engine.state import OVER, PLAYING
from engine.views import view


@pytest.mark.parametrize(
    "gold,winners",
    [
        ({"ann": 7, "bob": 3, "cat": 5}, ["ann"]),
        ({"ann": 5, "bob": 7, "cat": 7}, ["bob", "cat"]),
        ({"ann": 4, "bob": 4, "cat": 4}, ["ann", "bob", "cat"]),
        ({"ann": 0, "bob": 0, "cat": 0}, ["ann", "bob", "cat"]),
        ({"ann": 0, "bob": 1, "cat": 0}, ["bob"]),
    ],
)
def test_ties_share_first_place(gold: dict[str, int], winners: list[str]) -> None:
    assert standings_winners(gold) == winners


def _play_round(state, bots) -> None:
    while state.phase == PLAYING:
        me = state.player
        apply(state, bots[me].choose(view(state, me)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [3, 6, 10])
def test_three_round_game_carries_gold_and_the_nugget_pile(n: int, seed: int) -> None:
    players = tuple(f"p{i}" for i in range(n))
    game = Game(CLASSIC, players)
    bots = {p: RandomBot(f"{seed}/{p}") for p in players}
    assert game.gold == {p: 0 for p in players}
    previous = None
    for round_no in (1, 2, 3):
        state = game.start_round(SeededChance(f"game/{n}/{seed}/{round_no}"))
        assert state.round_no == round_no
        if previous is None:
            assert state.player == players[0], "round 1 starts with the first seat"
            assert sorted(state.nuggets) == sorted(nugget_ids())
            assert state.gold == {p: 0 for p in players}
        else:
            assert state.player == previous.next_start, "a round starts where the last one said"
            assert state.gold == previous.gold, "gold adds up over the rounds"
            assert Counter(state.nuggets) == Counter(previous.nuggets), "nugget cards taken stay out"
        with pytest.raises(ValueError):
            game.start_round(SeededChance("too early"))
        _play_round(state, bots)
        assert state.phase == OVER
        # next_start is the seat after the last player who played or discarded
        assert state.last_actor is not None
        assert state.next_start == players[(state.last_actor + 1) % n]
        assert state.player == state.next_start
        before = previous.gold if previous else {p: 0 for p in players}
        assert {p: state.gold[p] - before[p] for p in players} == state.payout
        if state.finder is not None and state.ruleset == CLASSIC:
            # every nugget card taken this round is worth what the diggers were paid
            assert sum(card_kind(c).value for c in state.won) == sum(state.payout.values())
        previous = state
    assert game.over
    with pytest.raises(ValueError):
        game.start_round(SeededChance("fourth"))
    taken = [c for r in game.rounds for c in r.won]
    assert sorted(taken + game.current.nuggets) == sorted(nugget_ids()), "every nugget card is taken or still in the pile"
    assert game.gold == game.current.gold
    assert sum(game.gold.values()) == sum(sum(r.payout.values()) for r in game.rounds)
    assert game.winners() == standings_winners(game.gold)
    best = max(game.gold.values())
    assert game.winners() == [p for p in players if game.gold[p] == best]


def test_a_later_round_starts_after_the_last_player_of_the_previous_one() -> None:
    players = ("ann", "bob", "cat", "dan")
    seen = set()
    for seed in range(12):
        game = Game(CLASSIC, players)
        bots = {p: RandomBot(f"{seed}/{p}") for p in players}
        first = game.start_round(SeededChance(f"start/{seed}/1"))
        _play_round(first, bots)
        second = game.start_round(SeededChance(f"start/{seed}/2"))
        assert second.to_move == (first.last_actor + 1) % 4
        seen.add(second.to_move)
    assert len(seen) > 1


def test_the_next_round_starts_from_what_the_last_one_hands_over() -> None:
    """engine.game.carry is the one rule the referee, the trustless table and the audit deal
    the next round from: the named player starts, with the gold and the pile as they were."""
    players = ("ann", "bob", "cat")
    assert carry_after(players, None) == Carry(0, None, None)
    game = Game(CLASSIC, players)
    bots = {p: RandomBot(f"carry/{p}") for p in players}
    _play_round(game.start_round(SeededChance("carry/1")), bots)
    ended = game.current
    handed = carry_after(players, ended)
    assert handed == Carry(players.index(ended.next_start or ""), ended.gold, ended.nuggets)
    second = game.start_round(SeededChance("carry/2"))
    assert (second.to_move, second.gold) == (handed.first_seat, ended.gold)
    assert Counter(second.nuggets) == Counter(ended.nuggets)
    # an archive read from outside may name nobody at the table: then the first seat starts
    assert [carry(players, who).first_seat for who in ("cat", "zed", None, ["cat"], 2)] == [2, 0, 0, 0, 0]

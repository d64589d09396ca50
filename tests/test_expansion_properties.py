"""Seeded random self-play of the expansion, 2 to 12 players, checked against RULES.md §3-§5.2.

Every game is played twice: once by `engine.selfplay.play_game` and once by the loop below,
which collects the events of every move; both must agree (the game is reproducible from its
seed), and the events must satisfy the invariants.
"""

from __future__ import annotations

import random
import signal
from collections import Counter
from contextlib import contextmanager

import pytest

from engine.bots import RandomBot
from engine.catalog import EXPANSION, deck_ids, dwarf_ids
from engine.chance import SeededChance
from engine.game import Game
from engine.rules import apply, legal_moves
from engine.selfplay import play_game, round_seed
from engine.state import OVER, PLAYING, THEFT
from engine.views import view

pytestmark = pytest.mark.slow  # thousands of seeded games


SEEDS = range(8)
MAX_MOVES = 2000  # far above any real round: 117 cards, each move spends one
FULL = Counter(deck_ids(EXPANSION)) + Counter(dwarf_ids(EXPANSION)) + Counter(
    ["start.1", "goal-gold.1", "goal-stone-nw.1", "goal-stone-ne.1"]
)
SHARE = {1: 5, 2: 4, 3: 3, 4: 2}
DISCOUNT = {"boss": 1, "profiteer": 2}


@contextmanager
def time_limit(seconds: int):
    def fail(*_):
        raise TimeoutError(f"no end after {seconds} s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class EastwardBot:
    """A random bot that, 3 times in 4, places the path card reaching furthest east (towards the
    goals), so that games also end with the gold found (random play almost never finds it). Not a
    subclass of RandomBot: compiled by mypyc, RandomBot cannot be subclassed by interpreted code."""

    def __init__(self, seed):
        self.rng = random.Random(seed)  # as RandomBot seeds its own: the same draws as before

    def choose(self, view):
        moves = legal_moves(view)
        places = [m for m in moves if m.at is not None and view.board.cells.get(m.at) is None]
        if places and self.rng.random() < 0.75:
            best = max(m.at[0] for m in places)
            return self.rng.choice([m for m in places if m.at[0] == best])
        return moves[self.rng.randrange(len(moves))]


def _bot(seed, cls=RandomBot):
    return lambda p: cls(f"{seed}/{p}")


def _play(players, seed, cls=RandomBot):
    """Like play_game, but checks every move and returns the events per round."""
    game = Game(EXPANSION, players)
    bots = {p: _bot(seed, cls)(p) for p in players}
    rounds = []
    while not game.over:
        state = game.start_round(SeededChance(round_seed(seed, len(game.rounds) + 1)))
        start_gold = dict(state.gold)
        events = []
        moves = 0
        while state.phase in (PLAYING, THEFT):
            moves += 1
            assert moves < MAX_MOVES, "the round does not end"
            me = state.player
            assert state.hands[me] or state.phase == THEFT, "a player with an empty hand is to move"
            move = bots[me].choose(view(state, me))
            events += apply(state, move)
            assert Counter(state.all_cards()) == FULL, "cards were created or lost"
            assert all(g >= 0 for g in state.gold.values()), "gold went negative"
        rounds.append((state, start_gold, events))
    return game, rounds


def _check_round(state, start_gold, events) -> None:
    players = state.players
    kinds = [e["event"] for e in events]
    assert state.phase == OVER and legal_moves(state) == []
    assert kinds.count("round_over") == 1 and kinds.count("payout") == 1
    assert kinds.count("next_start") == 1, "next_start announced more than once"
    if state.finder is not None:
        assert "gold" in kinds
    paid = next(e["gold"] for e in events if e["event"] == "payout")
    winners = next(e["players"] for e in events if e["event"] == "winners")
    trapped = {p for p in players if any(c.startswith("trap.") for c in state.in_front[p])}
    role = {p: state.role(p) for p in players}
    # winners: untrapped, never geologists, one side only
    assert not set(winners) & trapped
    assert all(role[p] != "geologist" for p in winners)
    sides = {role[p] for p in winners}
    assert sides <= {"green", "blue", "boss", "profiteer"} or sides <= {"saboteur", "profiteer"} or sides == {"boss"}
    if state.finder is None:
        assert sides <= {"saboteur", "profiteer"}
    share = SHARE.get(len(winners), 1)
    geologists = [p for p in players if role[p] == "geologist"]
    crystals = state.board.crystals()
    for p in players:
        expected = 0
        if p in winners:
            expected = max(0, share - DISCOUNT.get(role[p] or "", 0))
        elif role[p] == "geologist" and p not in trapped:
            expected = crystals // len(geologists)
        assert paid[p] == expected, (p, role[p], paid, winners)
        assert 0 <= paid[p] <= max(5, crystals)
    # thefts move single pieces between players, from victims who had gold before
    before = {p: start_gold[p] + paid[p] for p in players}
    steals = [e for e in events if e["event"] == "steal" and e.get("victim")]
    thieves = [e["player"] for e in events if e["event"] == "steal"]
    assert len(thieves) == len(set(thieves)), "a thief stole twice"
    for e in steals:
        assert e["player"] != e["victim"] and before[e["victim"]] > 0 and e["player"] not in trapped
    delta = Counter()
    for e in steals:
        delta[e["victim"]] -= 1
        delta[e["player"]] += 1
    assert {p: before[p] + delta[p] for p in players} == state.gold
    assert sum(state.gold.values()) == sum(start_gold.values()) + sum(paid.values())
    assert state.payout == {p: paid[p] + delta[p] for p in players}
    # no theft card survives in front of an untrapped player
    assert all(not any(c.startswith("theft.") for c in state.in_front[p]) for p in players if p not in trapped)


@pytest.mark.parametrize("cls", [RandomBot, EastwardBot])
@pytest.mark.parametrize("n", range(2, 13))
def test_random_self_play(n: int, cls) -> None:
    players = tuple(f"p{i}" for i in range(n))
    with time_limit(30):
        for seed in SEEDS:
            game, rounds = _play(players, f"prop/{n}/{seed}", cls)
            assert game.over and len(rounds) == 3
            for state, start_gold, events in rounds:
                _check_round(state, start_gold, events)
            same, record = play_game(EXPANSION, players, f"prop/{n}/{seed}", _bot(f"prop/{n}/{seed}", cls))
            assert same.gold == game.gold
            assert [r.board.cells.keys() for r in same.rounds] == [r.board.cells.keys() for r in game.rounds]
            assert len(record.moves) == 3


def test_self_play_exercises_the_expansion() -> None:
    """The random games above do reach the interesting parts (thefts, doors, ladders, geologists)."""
    seen = Counter()
    for n in (4, 7, 10):
        for seed, cls in [(s, c) for s in SEEDS for c in (RandomBot, EastwardBot)]:
            _, rounds = _play(tuple(f"p{i}" for i in range(n)), f"prop/{n}/{seed}", cls)
            for state, _, events in rounds:
                seen.update(e["event"] for e in events)
                seen.update(f"move:{e['move'].split()[1].split('.')[0]}" for e in events
                            if e["event"] == "move" and e["move"].startswith("play"))
                seen.update(("gold_found",) if state.finder else ())
    for key in ("steal", "thefts", "crystals", "gold_found", "swap-hand", "swap-hat", "inspect", "remove",
                "move:theft", "move:trap", "move:free", "move:hands-off", "move:bridge", "move:ladder-n"):
        assert seen[key] > 0, key

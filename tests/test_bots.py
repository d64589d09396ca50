"""Bots: legal moves only, deterministic, no hidden information, and smart beats random."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bots import KINDS, RandomBot, SearchBot, SmartBot, make_bot
from engine.bots.arena import (
    MATCHUPS,
    Matchup,
    digger_side_won,
    play_game_by_role,
    play_round_observed,
    run_games,
)
from engine.bots.maze import distance, goal_weights
from engine.catalog import CLASSIC, EXPANSION
from engine.chance import SeededChance
from engine.moves import Move
from engine.rules import apply, check, legal_moves
from engine.state import PLAYING, THEFT, RoundState, deal
from engine.views import HIDDEN, view

ROOT = Path(__file__).resolve().parent.parent
NAMES = tuple(f"p{i}" for i in range(1, 13))


def _assert_masked(v: RoundState, me: str) -> None:
    """Everything `me` may not know reads '?' (or None for roles) in a view."""
    for p, hand in v.hands.items():
        if p != me:
            assert all(c == HIDDEN for c in hand)
    for p, role in v.roles.items():
        if p != me:
            assert role is None
    for pile in (v.deck, v.discard, v.removed, v.nuggets, v.aside, v.retired):
        assert all(c == HIDDEN for c in pile)
    for p, facts in v.knowledge.items():
        if p != me:
            assert facts == []
    for t in v.board.cells.values():
        if t.hidden:
            assert t.card == HIDDEN


def _play_checked(state: RoundState, bots: dict) -> list[str]:
    """play_round_observed with a check of every choice against the full state."""
    moves: list[str] = []
    while state.phase in (PLAYING, THEFT):
        me = state.player
        v = view(state, me)
        if state.phase == PLAYING:
            _assert_masked(v, me)
        move = bots[me].choose(v)
        assert isinstance(move, Move)
        check(state, move)  # raises IllegalMove
        assert str(move) in {str(m) for m in legal_moves(state)}
        apply(state, move)
        moves.append(str(move))
        if state.phase == PLAYING:
            public = view(state, None)
            for b in bots.values():
                if hasattr(b, "observe"):
                    b.observe(public, str(move.public()), me)
    return moves


@pytest.mark.parametrize(
    "ruleset,players,rounds",
    [(CLASSIC, 3, 20), (CLASSIC, 5, 30), (CLASSIC, 10, 20), (EXPANSION, 2, 15), (EXPANSION, 8, 30), (EXPANSION, 12, 20)],
)
def test_bots_play_only_legal_moves(ruleset: str, players: int, rounds: int) -> None:
    names = NAMES[:players]
    thefts = 0
    for seed in range(rounds):
        state = deal(ruleset, names, SeededChance(f"legal/{ruleset}/{players}/{seed}"))
        # Mixed tables: smart and random bots side by side, different seats each round.
        bots = {p: make_bot("smart" if (i + seed) % 3 else "random", p, seed) for i, p in enumerate(names)}
        moves = _play_checked(state, bots)
        assert state.phase == "over" and moves
        thefts += sum(m.startswith("steal") for m in moves)
    if ruleset == EXPANSION and players >= 8:
        assert thefts > 0  # the theft phase was exercised


def test_all_smart_expansion_tables_with_thefts() -> None:
    stolen = 0
    for seed in range(6):
        state = deal(EXPANSION, NAMES[:12], SeededChance(f"thefts/{seed}"))
        bots = {p: make_bot("smart", p, seed) for p in NAMES[:12]}
        moves = _play_checked(state, bots)
        for m in moves:
            if m.startswith("steal ") and m != "steal nobody":
                stolen += 1
    assert stolen > 0


def test_smart_thief_robs_the_richest() -> None:
    for seed in range(20):
        state = deal(EXPANSION, NAMES[:6], SeededChance(f"rich/{seed}"))
        state.gold = {p: i for i, p in enumerate(NAMES[:6])}
        bots = {p: make_bot("smart", p, seed) for p in NAMES[:6]}
        while state.phase == PLAYING:
            me = state.player
            apply(state, bots[me].choose(view(state, me)))
        while state.phase == THEFT:
            me = state.player
            v = view(state, me)
            move = bots[me].choose(v)
            victims = [m.target for m in legal_moves(state) if m.target]
            richest = max(state.gold[p] for p in victims)
            assert state.gold[move.target] == richest
            apply(state, move)


def test_deterministic_for_a_seed() -> None:
    def series(seed: str) -> list[list[str]]:
        out = []
        for rs, n in ((CLASSIC, 5), (EXPANSION, 8)):
            state = deal(rs, NAMES[:n], SeededChance(seed))
            bots = {p: make_bot("smart", p, seed) for p in NAMES[:n]}
            out.append(play_round_observed(state, bots))
        return out

    assert series("det/1") == series("det/1")
    assert series("det/1") != series("det/2")
    g1, t1 = play_game_by_role(CLASSIC, NAMES[:5], "det/game", MATCHUPS[3])
    g2, t2 = play_game_by_role(CLASSIC, NAMES[:5], "det/game", MATCHUPS[3])
    assert g1.gold == g2.gold and t1 == t2
    assert [len(r.discard) for r in g1.rounds] == [len(r.discard) for r in g2.rounds]


def test_random_bot_is_unchanged_and_exported() -> None:
    state = deal(CLASSIC, NAMES[:5], SeededChance("rb"))
    a, b = RandomBot(7), RandomBot(7)
    for _ in range(20):
        v = view(state, state.player)
        m = a.choose(v)
        assert m == b.choose(v)
        moves = legal_moves(v)
        assert m in moves
        apply(state, m)


def test_random_bot_picks_as_randrange_does() -> None:
    # RandomBot draws its index without calling randrange (engine/bots/random_bot.py): the same
    # picks as rng.randrange(len(moves)) over whole rounds (lists of many lengths), and the
    # generator left in the same state
    import random

    for ruleset, players in ((CLASSIC, 5), (EXPANSION, 12)):
        state = deal(ruleset, NAMES[:players], SeededChance(f"randrange/{ruleset}"))
        bot, ref = RandomBot("rr"), random.Random("rr")
        lengths = set()
        while state.phase in (PLAYING, THEFT):
            moves = legal_moves(state)
            lengths.add(len(moves))
            m = bot.choose(state)
            assert m == moves[ref.randrange(len(moves))]
            apply(state, m)
        assert bot.rng.getstate() == ref.getstate() and len(lengths) > 10


def test_make_bot() -> None:
    assert KINDS == ("random", "smart", "search")
    assert isinstance(make_bot("random", "p1", 1), RandomBot)
    searching = make_bot("search", "p1", 1, 0.5)
    assert isinstance(searching, SearchBot) and searching.think == 0.5
    bot = make_bot("smart", "p1", 1)
    assert isinstance(bot, SmartBot) and bot.seat == "p1"
    with pytest.raises(ValueError):
        make_bot("clever", "p1", 1)


@pytest.mark.pure_engine  # (it copies bots by copy.deepcopy)
@pytest.mark.parametrize("kind,seeds,turns", [("smart", 6, 30), ("search", 1, 30)])
def test_bots_never_see_hidden_information(kind: str, seeds: int, turns: int) -> None:
    """Views mask what is hidden, and the choice does not depend on hidden cards: states that
    differ only in hidden parts give the same view and the same move. (One seat searches, with
    the least thinking that still plays worlds out: its choice comes from those worlds.)"""
    for rs, n in ((CLASSIC, 5), (EXPANSION, 8)):
        names = NAMES[:n]
        for seed in range(seeds):
            state = deal(rs, names, SeededChance(f"hidden/{rs}/{seed}"))
            bots = {p: make_bot(kind if p == names[seed % n] else "smart", p, seed) for p in names}
            for b in bots.values():
                if isinstance(b, SearchBot):
                    b.think, b.min_worlds, b.candidates = 0.001, 1, 2
            turn = 0
            while state.phase == PLAYING and turn < turns:
                me = state.player
                v = view(state, me)
                _assert_masked(v, me)
                # The same round with the hidden parts rearranged: others' hands swapped,
                # the deck reversed, the face-down goals and the others' roles rotated.
                other = state.copy()
                others = [p for p in names if p != me]
                hands = [other.hands[p] for p in others]
                for p, h in zip(others, hands[1:] + hands[:1]):
                    other.hands[p] = h
                other.deck.reverse()
                roles = [other.roles[p] for p in others]
                for p, r in zip(others, roles[-1:] + roles[:-1]):
                    other.roles[p] = r
                hidden = [pos for pos, t in other.board.cells.items() if t.hidden]
                cards = [other.board.cells[pos] for pos in hidden]
                for pos, t in zip(hidden, cards[1:] + cards[:1]):
                    other.board.cells[pos] = t
                twin = copy.deepcopy(bots[me]) if kind == "smart" or me == names[seed % n] else None
                move = bots[me].choose(v)
                if twin is not None:
                    assert twin.choose(view(other, me)) == move
                apply(state, move)
                if state.phase == PLAYING:
                    public = view(state, None)
                    for b in bots.values():
                        b.observe(public, str(move.public()), me)
                turn += 1


def test_smart_bot_refuses_the_full_state() -> None:
    state = deal(CLASSIC, NAMES[:5], SeededChance("full"))
    with pytest.raises(ValueError, match="full state"):
        SmartBot(state.player, 0).choose(state)


def test_observe_accepts_face_down_discards() -> None:
    state = deal(CLASSIC, NAMES[:4], SeededChance("obs"))
    bot = SmartBot("p1", 0)
    bot.choose(view(state, "p1"))
    bot.observe(view(state, None), "discard ?", "p2")
    bot.observe(view(state, None), "discard ? ? remove trap", "p2")
    bot.observe(view(state, None), "nonsense", "p2")
    assert bot.sus is not None and bot.sus.score["p2"] == 0.0


def test_suspicion_spots_saboteurs() -> None:
    """After part of a round, smart diggers rate the saboteurs above the other players."""
    above = pairs = 0
    for seed in range(12):
        state = deal(CLASSIC, NAMES[:5], SeededChance(f"spot/{seed}"))
        bots = {p: make_bot("smart", p, seed) for p in NAMES[:5]}
        for _ in range(25):
            if state.phase != PLAYING:
                break
            me = state.player
            move = bots[me].choose(view(state, me))
            apply(state, move)
            if state.phase == PLAYING:
                public = view(state, None)
                for b in bots.values():
                    b.observe(public, str(move.public()), me)
        for p, b in bots.items():
            if state.role(p) == "saboteur":
                continue
            sab = [q for q in NAMES[:5] if q != p and state.role(q) == "saboteur"]
            dig = [q for q in NAMES[:5] if q != p and state.role(q) != "saboteur"]
            for s in sab:
                for d in dig:
                    pairs += 1
                    above += b.sus.p(s) > b.sus.p(d)
    assert pairs and above / pairs > 0.75


def test_map_knowledge_steers_the_goal_belief() -> None:
    state = deal(CLASSIC, NAMES[:5], SeededChance("map"))
    weights = goal_weights(state.board, [["map", "top", "goal-gold.1"]])
    assert weights == {"top": 1.0, "middle": 0.0, "bottom": 0.0}
    weights = goal_weights(state.board, [["map", "middle", "goal-stone-nw.1"]])
    assert weights == {"top": 0.5, "middle": 0.0, "bottom": 0.5}
    assert distance(state.board, weights).value() == pytest.approx(9.0)  # (1,0) to (8,-2)


def test_smart_diggers_beat_random_saboteurs_more_often_than_random_diggers() -> None:
    """Fixed seeds, so the result is exact, not flaky; the margin is wide (0% vs 88% here)."""
    smart = run_games(CLASSIC, 5, 8, Matchup("s", "smart", "random"), seed="stat")
    rand = run_games(CLASSIC, 5, 8, Matchup("r", "random", "random"), seed="stat")
    assert smart.rounds == rand.rounds == 24
    assert smart.digger_rate >= rand.digger_rate + 0.3
    exp_smart = run_games(EXPANSION, 8, 4, Matchup("s", "smart", "random"), seed="stat")
    exp_rand = run_games(EXPANSION, 8, 4, Matchup("r", "random", "random"), seed="stat")
    assert exp_smart.digger_rate >= exp_rand.digger_rate + 0.3


def test_digger_side_won_matches_the_payout() -> None:
    state = deal(CLASSIC, NAMES[:5], SeededChance("side"))
    bots = {p: make_bot("smart", p, 1) for p in NAMES[:5]}
    play_round_observed(state, bots)
    assert digger_side_won(state) == (state.finder is not None)
    won_roles = {state.role(p) for p in state.winners}
    assert won_roles <= ({"digger"} if digger_side_won(state) else {"saboteur"})


def test_a_round_observed_shows_each_state_before_its_move() -> None:
    """play_round_observed's `before(state)`: called once before each move, on the state that
    move is made from (scripts/fit_outlook.py learns from it), so the same deal replayed with
    the round's moves has the same seat to move at each of them, and the same cards in play."""
    state = deal(EXPANSION, NAMES[:5], SeededChance("before"))
    seen: list[tuple[str | None, str, int]] = []
    moves = play_round_observed(state, {p: make_bot("smart", p, 1) for p in NAMES[:5]},
                                before=lambda s: seen.append((s.player, s.phase, len(s.board.cells))))
    again = deal(EXPANSION, NAMES[:5], SeededChance("before"))
    replayed = []
    for text in moves:
        replayed.append((again.player, again.phase, len(again.board.cells)))
        apply(again, text)
    assert seen == replayed and len(seen) == len(moves) > 10


def test_arena_script_smoke() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bots_arena.py"), "--games", "1", "--jobs", "1",
         "--tables", "classic5", "--matchups", "1"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout
    assert "smart diggers vs random saboteurs" in out and "%" in out


def test_doors_of_both_colours_shut_both_teams_out() -> None:
    """maze.shut_out: a green door on the only tunnel shuts blue out; a blue one after it
    shuts out green too, and a saboteur then prizes that door (it looks like progress)."""
    from engine.board import Board
    from engine.bots.maze import shut_out

    board = Board.new({"top": "goal-stone-nw.1", "middle": "goal-gold.1", "bottom": "goal-stone-ne.1"})
    weights = goal_weights(board)
    board.place((1, 0), "door-green-ew.1", False)
    for x in (2, 3):
        board.place((x, 0), f"straight-ew.{x - 1}", False)
    assert shut_out(board, weights) == {"blue"}
    board.place((4, 0), "door-blue-ew.1", False)
    assert shut_out(board, weights) == {"blue", "green"}


def test_saboteur_completes_a_door_lock() -> None:
    """With a green door on the only tunnel, a saboteur holding a blue door plays it there
    (both teams shut out: the saboteurs win unless a Boss plays) rather than a cross."""
    state = deal(EXPANSION, NAMES[:8], SeededChance("lock"))
    me = state.player
    board = state.board
    board.place((1, 0), "door-green-ew.1", False)
    for x in (2, 3):
        board.place((x, 0), f"straight-ew.{x - 1}", False)
    # The cards now on the maze leave the hands and the deck (a consistent state).
    used = {"door-green-ew.1", "straight-ew.1", "straight-ew.2", "door-blue-ew.1", "cross.1"}
    for p in state.players:
        state.hands[p] = [c for c in state.hands[p] if c not in used]
    state.deck = [c for c in state.deck if c not in used]
    state.hands[me] = state.hands[me][:4] + ["door-blue-ew.1", "cross.1"]
    state.in_front[me] = []
    # Swap roles so that `me` is a saboteur.
    sab = next((p for p in state.players if state.role(p) == "saboteur"), None)
    if sab is None:
        state.roles[me] = "saboteur.1"
    else:
        state.roles[me], state.roles[sab] = state.roles[sab], state.roles[me]
    move = SmartBot(me, 0).choose(view(state, me))
    check(state, move)
    assert str(move).startswith("play door-blue-ew.1 at 4,0")


def test_spectator_view_from_a_players_view() -> None:
    from engine.bots.arena import spectator_of
    from engine.position import dump

    for ruleset, n in ((CLASSIC, 5), (EXPANSION, 9)):
        state = deal(ruleset, NAMES[:n], SeededChance(f"spectator/{ruleset}"))
        bots = {p: make_bot("smart", p, 0) for p in NAMES[:n]}
        for _ in range(12):
            if state.phase != PLAYING:
                break
            mine = view(state, state.player)
            assert dump(spectator_of(mine)) == dump(view(state, None))
            apply(state, bots[state.player].choose(mine))

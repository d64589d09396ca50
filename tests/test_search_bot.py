"""The search bot: worlds that agree with a seat's view, a seeded choice, and a match it wins."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bots import SearchBot, SmartBot, make_bot
from engine.bots.arena import Duel, margin, play_round_observed, run_duel
from engine.bots.goals import GoldBelief
from engine.bots.search import SHARP, belief, tool_moves
from engine.bots.sides import side_won
from engine.bots.suspicion import Suspicion, prior
from engine.bots.worlds import sample_world, unseen_deck_cards
from engine.catalog import CLASSIC, EXPANSION, HIDDEN, deck_ids, ids_of
from engine.chance import SeededChance
from engine.moves import Move
from engine.position import dump
from engine.rules import apply_unchecked
from engine.state import PLAYING, deal
from engine.views import view

ROOT = Path(__file__).resolve().parent.parent
NAMES = tuple(f"p{i}" for i in range(1, 13))


def _rounds(ruleset: str, players: int, seeds: int, watch=None):
    """(true state, mover, the mover's smart bot) at every turn of some smart rounds; `watch`
    (if any) is called with (the public view after, the move, its actor) after each move."""
    for seed in range(seeds):
        state = deal(ruleset, NAMES[:players], SeededChance(f"worlds/{ruleset}/{players}/{seed}"))
        bots = {p: SmartBot(p, seed) for p in NAMES[:players]}
        while state.phase == PLAYING:
            me = state.player
            yield state, me, bots[me]
            move = bots[me].choose(view(state, me))
            apply_unchecked(state, move)
            if state.phase == PLAYING:
                public = view(state, None)
                for b in bots.values():
                    b.observe(public, str(move.public()), me)
                if watch is not None:
                    watch(public, move.public(), me)


@pytest.mark.parametrize("ruleset,players", [(CLASSIC, 5), (CLASSIC, 10), (EXPANSION, 8)])
def test_every_sampled_world_agrees_with_the_view(ruleset: str, players: int) -> None:
    rng = random.Random(1)
    turns = 0
    for state, me, bot in _rounds(ruleset, players, 3):
        v = view(state, me)
        sus = bot.sus
        world = sample_world(v, me, rng, saboteur_chance=sus.p if sus else None, log=sus.log if sus else ())
        # The seat's own hand, role and facts, the maze, the cards in front, every pile's size
        # and the known goal cards: all as the view has them.
        assert dump(view(world, me)) == dump(v)
        assert world.hands[me] == state.hands[me] and world.roles[me] == state.roles[me]
        # Nothing hidden is left, and every card is where one card can be.
        for p in world.players:
            assert HIDDEN not in world.hands[p] and world.roles[p] not in (None, HIDDEN)
        assert HIDDEN not in world.deck + world.discard + world.removed + world.aside
        assert all(not t.hidden or t.card != HIDDEN for t in world.board.cells.values())
        deck_cards = [c for c in world.all_cards() if c in set(deck_ids(ruleset))]
        assert sorted(deck_cards) == sorted(deck_ids(ruleset))
        turns += 1
    assert turns > 60


def test_worlds_keep_what_the_seat_knows() -> None:
    """A mapped goal keeps its card, an inspected role its kind, a card seen going to the
    discard pile is in it, and the seat's unseen cards are all the others hold."""
    state = deal(CLASSIC, NAMES[:5], SeededChance("known"))
    me = "p1"
    gold = next(g for g in ("top", "middle", "bottom") if state.board.goal_card(g).startswith("goal-gold"))
    state.knowledge[me] = [["map", gold, state.board.goal_card(gold)], ["inspect", "p3", state.role("p3") or ""]]
    gone = state.hands["p2"].pop()  # played by p2 (face up) and put on the discard pile
    state.discard.append(gone)
    v = view(state, me)
    rng = random.Random(7)
    unseen = set(unseen_deck_cards(v, me))
    for _ in range(40):
        w = sample_world(v, me, rng, saboteur_chance=lambda p: 0.99, prior=0.4, gone=[gone])
        assert w.board.goal_card(gold) == state.board.goal_card(gold)
        assert w.role("p3") == state.role("p3")
        assert gone in w.discard and all(gone not in h for h in w.hands.values())
        held = {c for p in NAMES[1:5] for c in w.hands[p]} | set(w.deck)
        assert held <= unseen and not held & set(state.hands[me])


def test_suspicion_weighs_the_roles() -> None:
    """A player the seat is nearly sure of is a saboteur in nearly every world."""
    state = deal(CLASSIC, NAMES[:5], SeededChance("weigh"))
    me = next(p for p in NAMES[:5] if state.role(p) != "saboteur")
    suspect = next(p for p in NAMES[:5] if p != me)
    v = view(state, me)
    rng = random.Random(3)
    chance = {p: 0.97 if p == suspect else 0.2 for p in NAMES[:5]}
    worlds = [sample_world(v, me, rng, saboteur_chance=chance.__getitem__, prior=0.4) for _ in range(200)]
    share = sum(w.role(suspect) == "saboteur" for w in worlds) / len(worlds)
    plain = [sample_world(v, me, rng) for _ in range(200)]
    base = sum(w.role(suspect) == "saboteur" for w in plain) / len(plain)
    assert share > 0.85 and 0.25 < base < 0.55


def test_search_is_seeded_and_reads_views_only() -> None:
    def round_of(seed: str) -> list[str]:
        state = deal(CLASSIC, NAMES[:5], SeededChance("seeded"))
        bots = {p: make_bot("search" if p == "p2" else "smart", p, seed) for p in NAMES[:5]}
        searching = bots["p2"]
        assert isinstance(searching, SearchBot)
        searching.think, searching.min_worlds, searching.candidates = 0.001, 1, 2
        moves = play_round_observed(state, bots)
        assert searching.worlds > 3
        return moves

    assert round_of("a") == round_of("a")
    state = deal(CLASSIC, NAMES[:5], SeededChance("full"))
    with pytest.raises(ValueError, match="full state"):
        SearchBot(state.player, 0, 0.01).choose(state)


def test_a_budget_in_turns_gives_the_same_move_every_time() -> None:
    """`turns`: each decision plays out that many simulated turns (the takeover's budget,
    pbem/protocol/timeout.py), whatever the clock: two bots with one seed choose alike, a
    bigger budget plays more worlds, and none plays the smart bot's move."""
    state = deal(CLASSIC, NAMES[:5], SeededChance("turns"))
    smart = {p: SmartBot(p, 0) for p in NAMES[:5]}
    for _ in range(12):  # into the round, where the search has choices to weigh
        apply_unchecked(state, smart[state.player].choose(view(state, state.player)))
    me, v = state.player, view(state, state.player)
    first, second = make_bot("search", me, "s", turns=150), make_bot("search", me, "s", turns=150)
    assert isinstance(first, SearchBot) and isinstance(second, SearchBot)
    assert first.choose(v) == second.choose(v) and first.worlds == second.worlds >= 2
    more = make_bot("search", me, "s", turns=900)
    assert isinstance(more, SearchBot)
    more.choose(v)
    assert more.worlds > 3 * first.worlds
    assert make_bot("search", me, "s", turns=0).choose(v) == SmartBot(me, "s").choose(v)


def test_distinct_candidates_do_different_things() -> None:
    from engine.moves import Move

    bot = SearchBot("p1", 0)
    bot.candidates, bot.distinct = 3, False
    ranked = [(9.0, Move("play", "cross.1", (1, 0))), (8.9, Move("play", "cross.2", (1, 0))),
              (5.0, Move("discard", cards=("cross.3",))), (4.0, Move("discard", cards=("dead-n.1",))),
              (3.0, Move("play", "break-pick.1", target="p2")), (2.0, Move("play", "cross.2", (1, 0), True))]
    assert bot.candidates_of(ranked) == [m for _, m in ranked[:3]]
    bot.distinct = True
    assert bot.candidates_of(ranked) == [ranked[0][1], ranked[2][1], ranked[4][1]]


def test_search_beats_random_in_a_small_match() -> None:
    """Fixed seeds, so the result is exact: diggers played by the search bot (thinking as
    little as it can) against random saboteurs find the gold far more often than random
    diggers do (3 of 3 against 0 of 3)."""
    wins = {"search": 0, "random": 0}
    worlds = 0
    for kind in wins:
        for seed in range(3):
            state = deal(CLASSIC, NAMES[:4], SeededChance(f"small/{seed}"))
            bots = {p: make_bot(kind if state.role(p) != "saboteur" else "random", p, seed) for p in NAMES[:4]}
            for b in bots.values():
                if isinstance(b, SearchBot):
                    b.think, b.min_worlds, b.candidates = 0.001, 1, 2
            play_round_observed(state, bots)
            wins[kind] += side_won(state, "digger")
            worlds += sum(b.worlds for b in bots.values() if isinstance(b, SearchBot))
    assert wins == {"search": 3, "random": 0} and worlds > 20


def test_duel_pairs_and_margin() -> None:
    pairs = run_duel(CLASSIC, 4, 2, Duel("random", "smart", "digger", 0.0), seed="duel")
    assert len(pairs) == 2 and all(isinstance(a, bool) and isinstance(b, bool) for a, b in pairs)
    m = margin([(True, False), (True, True), (False, False), (True, False)])
    assert (m.rounds, m.tested, m.baseline, m.diff) == (4, 0.75, 0.25, 0.5)
    assert m.low < 0.5 < m.high


def test_arena_json_shape() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bots_arena.py"), "--bots", "random,smart", "--seat-role",
         "saboteur", "--tables", "classic5", "--games", "1", "--jobs", "1", "--think", "0.002", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout
    doc = json.loads(out)
    assert doc["tested"] == "random" and doc["baseline"] == "smart" and doc["think"] == 0.002
    (row,) = doc["rows"]
    assert row["table"] == "classic5" and row["seat_role"] == "saboteur" and row["rounds"] == 1
    assert set(row) == {"table", "seat_role", "rounds", "tested", "baseline", "diff", "low", "high", "cpu_s"}
    assert row["low"] <= row["diff"] <= row["high"]


def test_arena_table_in_words_with_a_budget_in_turns() -> None:
    """`--turns N` (the takeover's kind of budget) is said in the table's heading."""
    duel = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bots_arena.py"), "--games", "1", "--jobs", "1", "--turns", "5",
         "--bots", "random,smart", "--seat-role", "digger", "--tables", "classic5"],
        capture_output=True, text=True, timeout=120)
    assert duel.returncode == 0 and not duel.stderr, duel.stderr
    assert "5 turns a decision" in duel.stdout and "classic5     digger" in duel.stdout


@pytest.mark.slow  # (real processes: keys, a game, a folder, then the bot)
def test_bot_run_plays_a_seat_with_the_search_bot(tmp_path: Path) -> None:
    """`pbem bot run --bot search --think S` (a real process) moves for its seat in a folder game."""
    from folder_games import folder_dealt
    from processes import one_error_line, pbem

    _, folder, homes, mover, sp = folder_dealt(tmp_path)
    inbox = folder / "inbox"
    before = set(inbox.glob("*.pbem"))
    run = pbem("bot", "run", "--as", mover.seat, "--folder", folder, "--bot", "search", "--think", "0.05", "--once",
               home=homes[mover.seat], cwd=tmp_path, ok=True)
    assert "search" in run.stdout + run.stderr
    sent = set(inbox.glob("*.pbem")) - before
    assert len(sent) == 1 and sent.pop().name.startswith(f"{mover.seat}-")
    bad = pbem("bot", "run", "--as", mover.seat, "--folder", folder, "--bot", "clever", "--once",
               home=homes[mover.seat], cwd=tmp_path)
    one_error_line(bad, 2, "clever")
    assert "search" in bad.stderr


def test_the_players_of_a_play_out_judge_every_move() -> None:
    """In a play-out every player judges the move tried and each move after it, as at the
    table: an open attack costs the attacker the others' trust there too."""
    from engine.bots.search import play_out
    from engine.bots.suspicion import Suspicion
    from engine.catalog import card_kind
    from engine.rules import legal_moves

    state = next(s for s in (deal(CLASSIC, NAMES[:5], SeededChance(f"judged/{i}")) for i in range(50))
                 if any(card_kind(c).action == "break" for c in s.hands[s.player]))
    me, v = state.player, view(state, state.player)
    attack = next(m for m in legal_moves(v) if m.card and card_kind(m.card).action == "break")
    apply_unchecked(state, attack)
    public = Suspicion("", state.players, CLASSIC)
    bots = {p: SmartBot(p, 1) for p in state.players}
    for p, b in bots.items():
        b.prime(view(state, p), public.seen_by(p, state.role(p) == "saboteur"))
    turns = play_out(state, bots, (v.board, str(attack.public()), me))
    assert state.phase != PLAYING and turns > 5
    for b in bots.values():
        assert b.sus is not None and len(b.sus.log) == turns and b.sus.log[0] == (me, str(attack))
    first = Suspicion("p9", state.players, CLASSIC)
    first.observe(v.board, v.board, str(attack), me)
    assert first.score[me] > 0  # the attack alone made the attacker look like a saboteur


def test_the_outlook_reads_the_maze_the_cards_and_the_blocked() -> None:
    """The digger side's chances (engine/bots/outlook.py) grow as a won round nears the gold,
    and fall when the diggers' tools are broken; a play-out stops `ahead` turns in."""
    from engine.bots.outlook import digger_chance
    from engine.bots.search import play_out
    from engine.catalog import ids_of

    for seed in range(40):
        state = deal(CLASSIC, NAMES[:5], SeededChance(f"outlook/{seed}"))
        bots = {p: SmartBot(p, seed) for p in NAMES[:5]}
        chances = []
        while state.phase == PLAYING:
            chances.append(digger_chance(state))
            apply_unchecked(state, bots[state.player].choose(view(state, state.player)))
        if state.finder is not None:
            break
    assert state.finder is not None and chances[-1] > max(0.6, chances[0] + 0.3)
    start = deal(CLASSIC, NAMES[:5], SeededChance("outlook/start"))
    before = digger_chance(start)
    broken = iter(ids_of("break-pick") + ids_of("break-lamp") + ids_of("break-cart"))
    for p in start.players:
        if start.role(p) != "saboteur":
            start.put_in_front(p, next(broken))
    assert digger_chance(start) < before
    bots = {p: SmartBot(p, 0) for p in NAMES[:5]}
    fresh = deal(CLASSIC, NAMES[:5], SeededChance("outlook/ahead"))
    assert play_out(fresh, bots, None, 3) == 3 and fresh.phase == PLAYING


def test_a_saboteur_plays_out_two_turns_of_the_table() -> None:
    """A saboteur's play-outs run two turns of the whole table (the answer to its move and the
    answer to that), a digger's one: with one budget in turns, the saboteur's search plays
    about half the worlds it would with one turn ahead."""
    state = next(s for s in (deal(CLASSIC, NAMES[:5], SeededChance(f"horizon/{i}")) for i in range(50))
                 if s.role(s.player) == "saboteur")
    smart = {p: SmartBot(p, 0) for p in NAMES[:5]}
    for _ in range(5):  # one turn of the table: the saboteur to move again, with choices to weigh
        apply_unchecked(state, smart[state.player].choose(view(state, state.player)))
    me, v = state.player, view(state, state.player)
    assert state.role(me) == "saboteur"
    worlds = {}
    for horizon in (None, 1.0, 2.0):
        bot = make_bot("search", me, "h", turns=400)
        assert isinstance(bot, SearchBot)
        bot.horizon = horizon
        bot.choose(v)
        worlds[horizon] = bot.worlds
    assert worlds[None] == worlds[2.0] < 0.7 * worlds[1.0]


def test_a_digger_also_weighs_the_tools_of_the_players_it_is_sure_of() -> None:
    """The smart bot's own model is rarely sure of anyone, so it ranks an attack on a saboteur
    low; a digger's search adds its best attack on the player the worlds hold surest to be a
    saboteur and its best repair of the surest digger, once they are `SHARP` sure."""
    cross = Move("play", "cross.1", (1, 0))
    on_p2 = Move("play", "break-pick.1", target="p2")
    on_p3 = Move("play", "break-cart.1", target="p3")
    fix_p4 = Move("play", "fix-pick.1", target="p4", tool="pick")
    fix_p5 = Move("play", "fix-pick.1", target="p5", tool="pick")
    ranked = [(9.0, cross), (2.0, on_p2), (1.0, on_p3), (0.5, fix_p5), (0.4, fix_p4)]
    chance = {"p2": 0.6, "p3": 0.97, "p4": 0.01, "p5": 0.3}.__getitem__
    assert tool_moves(ranked, [cross], chance, "p1") == [on_p3, fix_p4]
    assert tool_moves(ranked, [cross, on_p3], chance, "p1") == [fix_p4]  # (already weighed)
    unsure = {"p2": 0.6, "p3": 0.8, "p4": 0.2, "p5": 0.3}.__getitem__
    assert SHARP > 0.8 and tool_moves(ranked, [cross], unsure, "p1") == []


def test_the_worlds_are_as_sure_of_the_roles_as_the_smart_bots_moves_warrant() -> None:
    """Against smart bots the suspicion model is too unsure (none of the players it gives 0.2 is
    a saboteur, all at 0.5-0.9 are): the worlds draw the roles with its chances sharpened
    (`search.BELIEF`), so that they get the table's true roles far more often."""
    sus = Suspicion("p1", NAMES[:5], CLASSIC)
    sus.score.update({"p2": 1.5, "p3": -0.7})
    sus.known["p4"] = "saboteur"
    chance = belief(sus, CLASSIC, 5)
    assert sus.p("p2") < 0.7 < 0.95 < chance("p2") and chance("p3") < 0.05 < 0.15 < sus.p("p3")
    assert chance("p4") == 1.0 and belief(sus, CLASSIC, 6)("p2") == chance("p2")  # (the nearest size fitted)
    right = {True: 0, False: 0}
    for state, me, bot in _rounds(CLASSIC, 5, 4):
        if len(state.deck) > 30 or len(state.deck) < 26 or bot.sus is None:
            continue  # a few turns in, the model has something to go on
        v = view(state, me)
        for calibrated in right:
            rng = random.Random(1)
            sure = belief(bot.sus, CLASSIC, 5) if calibrated else bot.sus.p
            for _ in range(20):
                w = sample_world(v, me, rng, saboteur_chance=sure, prior=prior(CLASSIC, 5))
                right[calibrated] += all(w.role(p) == state.role(p) for p in state.players)
    assert right[True] > 1.5 * right[False] > 0, right


def test_screening_values_the_deviations_and_pairs_two_runs(tmp_path: Path) -> None:
    """scripts/bots_screen.py: the arena's deal, the version's changed decisions valued, and a
    run compared with an earlier one deal by deal (itself: no difference at all)."""
    cmd = [sys.executable, str(ROOT / "scripts" / "bots_screen.py"), "--deals", "1", "--playouts", "1",
           "--think", "0.002", "--set", "candidates=2", "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    doc = json.loads(first)
    assert (doc["table"], doc["seat_role"], doc["deals"], doc["settings"]) == ("classic5", "saboteur", 1, {"candidates": 2.0})
    assert doc["decisions"] >= doc["deviations"] >= 0 and doc["low"] <= doc["gain"] <= doc["high"]
    assert list(doc["gains"]) == ["0"]
    # Each changed decision counted by the kinds of move it swapped ("path -> fix"), with its points.
    assert sum(c["n"] for c in doc["changes"].values()) == doc["deviations"]
    assert all(" -> " in k for k in doc["changes"])
    assert abs(sum(c["points"] for c in doc["changes"].values()) - doc["gains"]["0"]) <= 0.05 * max(1, len(doc["changes"]))
    (tmp_path / "before.json").write_text(first)
    again = subprocess.run([*cmd[:-1], "--against", str(tmp_path / "before.json")], capture_output=True, text=True,
                           timeout=120, check=True).stdout
    assert "against" in again and "+0.0 points a deal" in again.splitlines()[-1]
    bad = subprocess.run([*cmd[:2], "--set", "nonsense=1"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--set takes NAME=VALUE" in bad.stderr


def test_the_worlds_place_the_gold_where_the_others_maps_and_moves_point() -> None:
    """A player who maps a second goal while its first is still face down found stone there
    (a bot that knows where the gold is maps no more); a trusted mapper builds towards what it
    saw. The search bot's worlds draw the gold with those odds (engine/bots/goals.py)."""
    state = deal(CLASSIC, NAMES[:5], SeededChance("gold belief"))
    board = state.board
    maps = ids_of("map")
    gb = GoldBelief()
    gb.observe(None, board, Move("play", maps[0], target="top"), "p2", lambda p: 0.9)
    assert gb.chances(board, []) is None  # (one map says nothing yet)
    gb.observe(board, board, Move("play", maps[1], target="bottom"), "p2", lambda p: 0.9)
    odds = gb.chances(board, [])
    assert odds is not None and odds["top"] < 0.1 and abs(odds["middle"] - odds["bottom"]) < 1e-9
    assert gb.chances(board, [["map", "middle", "goal-gold.1"]]) is None  # (the seat knows)
    # The worlds: the gold where the odds say, the view kept.
    me = "p1"
    v = view(state, me)
    rng = random.Random(5)
    for lean in ("middle", "bottom"):
        chance = {"top": 0.0, "middle": 0.0, "bottom": 0.0, lean: 1.0}
        for _ in range(20):
            w = sample_world(v, me, rng, gold_chance=chance)
            assert w.board.goal_card(lean).startswith("goal-gold") and dump(view(w, me)) == dump(v)
    # What trusted mappers did next, read over some smart rounds: the true gold is likelier
    # than the even odds over the goals the seat cannot rule out.
    better, learnt = 0.0, 0
    seen: dict[str, object] = {}  # this round's belief and maze

    def watch(public, move, actor) -> None:
        seen["gold"].observe(seen["board"], public.board, move, actor, seen["trusted"])
        seen["board"] = public.board

    for state, _, _ in _rounds(CLASSIC, 5, 6, watch):
        if seen.get("state") is not state:
            trusted = {p: float(state.role(p) != "saboteur") for p in state.players}.__getitem__
            seen.update(state=state, gold=GoldBelief(), board=None, trusted=trusted)
        gold = next(g for g in ("top", "middle", "bottom") if state.board.goal_card(g).startswith("goal-gold"))
        odds = seen["gold"].chances(state.board, [])
        if odds is not None and state.board.is_hidden(gold):
            even = 1 / sum(state.board.is_hidden(g) for g in odds)
            better += math.log(odds[gold] / even)
            learnt += 1
    assert learnt > 10 and better > 0, (learnt, better)


def test_the_outlook_can_be_fitted_again() -> None:
    """scripts/fit_outlook.py: the smart bots' rounds, a weight for the intercept and for each
    feature of engine/bots/outlook.py, and the log-loss held out beside the tree's model."""
    from engine.bots.outlook import WEIGHTS

    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "fit_outlook.py"), "--tables", "classic5",
                          "--rounds", "3"], capture_output=True, text=True, timeout=120, check=True)
    weights = run.stdout.split("weights (")[1].split(")")[0].split(",")
    assert len(weights) == len(WEIGHTS["classic"]) and "held-out log-loss: fitted" in run.stdout


def test_a_digger_plays_the_last_cards_out_to_the_round_s_end() -> None:
    """Once the deck is empty (`ENDGAME`), a digger's play-outs run to the round's end (won or
    lost, not the outlook's guess), at 5 seats: with one budget in turns, fewer worlds than one
    turn of the table ahead; with more cards in the deck, as before."""
    from engine.bots.search import ENDGAME, ENDGAME_SEATS

    def digger_to_move(empty: bool):
        for s, me, _ in _rounds(CLASSIC, 5, 30):
            if s.role(me) != "saboteur" and (not s.deck) == empty and len(s.hands[me]) > 1 and len(s.deck) < 6:
                return me, view(s, me)
        raise AssertionError("no such turn")

    assert ENDGAME == 0 and ENDGAME_SEATS == 5
    for empty in (True, False):
        me, v = digger_to_move(empty)
        worlds = {}
        for endgame in (-1, ENDGAME):
            bot = make_bot("search", me, "e", turns=600)
            assert isinstance(bot, SearchBot)
            bot.endgame = endgame
            bot.choose(v)
            worlds[endgame] = bot.worlds
        if empty:
            assert worlds[ENDGAME] < 0.7 * worlds[-1]
        else:
            assert worlds[ENDGAME] == worlds[-1]

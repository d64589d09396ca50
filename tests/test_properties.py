"""Properties of the engine over seeded random self-play (both rulesets, every player count).

Every game is reproducible from its (ruleset, players, seed): a failure message names them.
Two loops share the time budget:

- `test_checked_games`: a few hundred games, every move checked: the cards of the round are
  conserved, the mover's legal moves are the same from the full state and from their view,
  every generated move passes `check()`, the view hides other players' hands and roles, a
  round ends within a bounded number of moves, and `load(dump(s))` round-trips.
- `test_many_games_replay`: thousands of plain games (`selfplay.play_game`), each replayed
  from (seed, moves) to the same digest, round by round.
"""

from __future__ import annotations

import json
import random

import pytest

from engine.bots import RandomBot
from engine.catalog import CLASSIC, EXPANSION, card_sort_key, kind_name
from engine.chance import SeededChance
from engine.digest import digest
from engine.errors import IllegalMove
from engine.game import Game
from engine.moves import Move
from engine.position import dump, load
from engine.rules import apply, check, legal, legal_moves
from engine.selfplay import play_game, round_seed
from engine.state import OVER, PLAYING, THEFT, RoundState
from engine.views import HIDDEN, view

pytestmark = pytest.mark.slow  # thousands of seeded games


NAMES = tuple(f"p{i}" for i in range(12))
# A round has at most 67 (classic) or 117 (expansion) cards to play or discard, one per move;
# thefts add at most one move per player.
MAX_MOVES = 200

CONFIGS = [(CLASSIC, n) for n in range(3, 11)] + [(EXPANSION, n) for n in range(2, 13)]
CLASSIC_OPTIONS = [frozenset(), frozenset({"max-saboteurs"}), frozenset({"broken-tools-forfeit"})]


def _options(ruleset: str, seed: int) -> frozenset[str]:
    return CLASSIC_OPTIONS[seed % len(CLASSIC_OPTIONS)] if ruleset == CLASSIC else frozenset()


def _strings(node: object) -> set[str]:
    out: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _assert_view_hides(state: RoundState, player: str, where: str) -> None:
    doc = dump(view(state, player))
    seen = _strings(doc)
    for other in state.players:
        if other == player:
            continue
        assert doc["roles"][other] is None, f"{where}: {player} sees the role of {other}"
        assert all(c == HIDDEN for c in doc["hands"][other]), f"{where}: {player} sees the hand of {other}"
        leaked = seen & set(state.hands[other])
        assert not leaked, f"{where}: {player}'s view holds {other}'s cards {sorted(leaked)}"
        role = state.roles.get(other)
        if role:
            assert role not in seen, f"{where}: {player}'s view holds {other}'s dwarf card {role}"
    mine = {fact[1] for fact in state.knowledge.get(player, []) if fact[0] == "map"}
    for goal, word in doc["goals"].items():
        if goal not in doc["revealed"] and goal not in mine:
            assert word == HIDDEN, f"{where}: {player} sees the face-down {goal} goal"


def _candidates(state: RoundState) -> list[tuple[str, list[Move]]]:
    """Moves worth trying: every card held, on every cell next to the maze, every target and tool
    (by card: its only word with a dot is the card's id)."""
    me = state.player
    cells = list(state.board.slots()) + list(state.board.cells)
    targets = list(state.players) + ["top", "middle", "bottom", "nobody-here"]
    out: list[tuple[str, list[Move]]] = []
    for cid in sorted(set(state.hands[me])):
        # (made from their fields in order, as engine/actions.py makes its candidates: Move(...) with
        # keywords costs three times as much, and these are a few hundred per position)
        moves = [_new(Move, ("play", cid, pos, r, None, None, (), None)) for pos in cells for r in (False, True)]
        moves += [_new(Move, ("play", cid, None, False, t, tool, (), None))
                  for t in targets for tool in (None, "pick", "lamp", "cart")]
        out.append((cid, [*moves, Move("play", cid), Move("discard", cards=(cid,))]))
    return out


_new = tuple.__new__
assert Move._fields[:7] == ("verb", "card", "at", "rotated", "target", "tool", "cards"), Move._fields


def _assert_complete(state: RoundState, texts: list[str], where: str) -> None:
    """legal() accepts a move exactly when legal_moves lists it (bare copies stand for their kind);
    check() accepts what legal() accepts (test_check_and_legal_agree)."""
    listed = set(texts)
    lowest: dict[str, str] = {}
    for cid in sorted(state.hands[state.player], key=card_sort_key):
        lowest.setdefault(kind_name(cid), cid)
    for cid, moves in _candidates(state):
        as_is = lowest[kind_name(cid)] == cid  # the lowest copy of its kind: its moves' texts are their own
        for move in moves:
            resolved = legal(state, move)
            if resolved is None:
                text = str(move) if as_is else _as_lowest(str(move), lowest)
                assert text not in listed, f"{where}: {move} is listed but refused"
                continue
            assert _as_lowest(str(resolved), lowest) in listed, f"{where}: {resolved} is accepted but not listed"


def _odd_moves(state: RoundState) -> list[Move]:
    """Moves `_candidates` does not try: steals, discards of several cards or with a removal, and
    cards the mover does not hold."""
    me = state.player
    held = sorted(set(state.hands[me]), key=card_sort_key)
    others = sorted({c for p in state.players for c in state.hands[p]} - set(held), key=card_sort_key)[:3]
    out = [Move("steal"), *(Move("steal", target=p) for p in state.players)]
    out += [Move("discard", cards=tuple(held[:k])) for k in (2, 3, 4)]
    out += [Move("discard", cards=tuple(held[:2]), remove=r) for r in ("theft", "trap", "break-pick")]
    for cid in others:
        out += [Move("play", cid, target=p) for p in state.players] + [Move("discard", cards=(cid,))]
    return out


def _assert_agree(state: RoundState, where: str) -> None:
    """check() raises IllegalMove for exactly the moves legal() answers None for, and resolves the others alike."""
    for move in [*(m for _, moves in _candidates(state) for m in moves), *_odd_moves(state)]:
        resolved = legal(state, move)
        try:
            checked = check(state, move)
        except IllegalMove:
            assert resolved is None, f"{where}: check() refuses {move}, legal() gives {resolved}"
            continue
        assert checked == resolved, f"{where}: check() gives {checked} for {move}, legal() {resolved}"


def _as_lowest(text: str, lowest: dict[str, str]) -> str:
    words = text.split()
    for i, w in enumerate(words):
        if "." in w:
            words[i] = lowest.get(w.rpartition(".")[0], w)
    return " ".join(words)


def _assert_round_trip(state: RoundState, where: str) -> None:
    doc = json.loads(json.dumps(dump(state)))
    again = load(doc)
    assert dump(again) == dump(state), f"{where}: load(dump(s)) differs"
    assert digest(again) == digest(state), where
    assert sorted(map(str, legal_moves(again))) == sorted(map(str, legal_moves(state))), where


def _play_checked(ruleset: str, n: int, seed: int) -> None:
    players = NAMES[:n]
    options = _options(ruleset, seed)
    game = Game(ruleset, players, options)
    bot_rng = random.Random(f"{ruleset}/{n}/{seed}")
    while not game.over:
        state = game.start_round(SeededChance(round_seed(seed, len(game.rounds) + 1)))
        where = f"{ruleset} {n} players seed {seed} round {state.round_no}"
        cards = set(state.all_cards())
        assert len(cards) == len(state.all_cards()), f"{where}: a card is dealt twice"
        steps = 0
        while state.phase in (PLAYING, THEFT):
            here = f"{where} move {steps + 1}"
            me = state.player
            moves = legal_moves(state)
            assert moves, f"{here}: {me} has no legal move"
            texts = sorted(str(m) for m in moves)
            assert len(set(texts)) == len(texts), f"{here}: a move is listed twice"
            if state.phase == PLAYING:
                mine = view(state, me)
                assert sorted(str(m) for m in legal_moves(mine)) == texts, f"{here}: the view changes the legal moves"
                if steps % 4 == 0:
                    _assert_view_hides(state, me, here)
                    for m in moves:
                        check(mine, str(m))
            for m in moves:
                check(state, m)
            if steps % 25 == 0:
                _assert_round_trip(state, here)
            if steps % 10 == 5 and state.phase == PLAYING:
                _assert_complete(state, texts, here)
            move = moves[bot_rng.randrange(len(moves))]
            apply(state, str(move))
            steps += 1
            after = state.all_cards()  # each card once (dealt so): the same set of as many cards
            assert len(after) == len(cards) and set(after) == cards, f"{here}: {move} changed the cards of the round"
            assert steps <= MAX_MOVES, f"{where}: the round does not end"
        assert legal_moves(state) == [], where
        _assert_round_trip(state, f"{where} (over)")
    assert sum(1 for _ in game.rounds) == 3


@pytest.mark.parametrize("ruleset,n", CONFIGS, ids=[f"{r}-{n}" for r, n in CONFIGS])
def test_checked_games(ruleset: str, n: int) -> None:
    for seed in range(8):
        _play_checked(ruleset, n, seed)


@pytest.mark.parametrize("ruleset,n", [(CLASSIC, 4), (EXPANSION, 5)])
def test_check_and_legal_agree(ruleset: str, n: int) -> None:
    """What test_checked_games proves of legal() holds for check(): over the moves tried on
    states of a seeded game (every seventh move, every theft, each round's end), check() raises
    for exactly the moves legal() refuses and returns the same resolved move for the others."""
    game = Game(ruleset, NAMES[:n], _options(ruleset, 1))
    bot_rng = random.Random(f"agree/{ruleset}")
    phases = set()
    while not game.over:
        state = game.start_round(SeededChance(round_seed(1, len(game.rounds) + 1)))
        steps = 0
        while state.phase in (PLAYING, THEFT):
            if steps % 7 == 0 or state.phase == THEFT:
                phases.add(state.phase)
                _assert_agree(state, f"{ruleset} round {state.round_no} move {steps + 1}")
            moves = legal_moves(state)
            apply(state, str(moves[bot_rng.randrange(len(moves))]))
            steps += 1
        phases.add(state.phase)
        _assert_agree(state, f"{ruleset} round {state.round_no} over")
    assert phases == ({PLAYING, THEFT, OVER} if ruleset == EXPANSION else {PLAYING, OVER}), phases


def _replay(ruleset: str, players: tuple[str, ...], options: frozenset[str], seeds: list[str], moves: list[list[str]]) -> list[str]:
    game = Game(ruleset, players, options)
    digests = []
    for seed_text, round_moves in zip(seeds, moves):
        state = game.start_round(SeededChance(seed_text))
        for text in round_moves:
            apply(state, text)
        digests.append(digest(state))
    return digests


@pytest.mark.parametrize("ruleset,n", CONFIGS, ids=[f"{r}-{n}" for r, n in CONFIGS])
def test_many_games_replay(ruleset: str, n: int) -> None:
    players = NAMES[:n]
    for seed in range(100, 170):
        options = _options(ruleset, seed)
        game, record = play_game(ruleset, players, seed, lambda p, seed=seed: RandomBot(f"{seed}/{p}"), options, use_views=False)
        assert game.over and len(record.moves) == 3
        assert all(len(m) <= MAX_MOVES for m in record.moves), f"{ruleset} {n} seed {seed}: a round is too long"
        original = [digest(r) for r in game.rounds]
        assert _replay(ruleset, players, options, record.seeds, record.moves) == original, (
            f"{ruleset} {n} players seed {seed}: the replay differs"
        )


def test_same_seed_same_game() -> None:
    players = NAMES[:5]
    a, ra = play_game(CLASSIC, players, "same", lambda p: RandomBot(p))
    b, rb = play_game(CLASSIC, players, "same", lambda p: RandomBot(p))
    assert ra == rb and [digest(r) for r in a.rounds] == [digest(r) for r in b.rounds]
    c, rc = play_game(CLASSIC, players, "other", lambda p: RandomBot(p))
    assert [digest(r) for r in c.rounds] != [digest(r) for r in a.rounds]


def test_digest_is_canonical_sha256() -> None:
    import hashlib

    state = Game(CLASSIC, NAMES[:3]).start_round(SeededChance("d"))
    text = json.dumps(dump(state), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert digest(state) == hashlib.sha256(text.encode()).hexdigest()
    assert len(digest(state)) == 64
    other = state.copy()
    apply(other, str(legal_moves(other)[0]))
    assert digest(other) != digest(state)

"""An independent reading of RULES.md §4.1-§4.2 and §9 maze, checked against engine/board.py.

The oracle below is written from the spec alone (card shapes come from the catalog, as data):
a breadth-first search over (cell, segment), the placement conditions of §4.1, and the reveal
procedure of §4.2 with the cascade and orientation decisions of §9. Seeded games, biased
towards the goals so that reveals, cascades and gold finds happen often, compare at every
turn the engine's listed placements with the oracle's, and every reveal with the oracle's.
"""

from __future__ import annotations

import random

import pytest

from engine.catalog import CLASSIC, EXPANSION, KINDS, card_kind, card_sort_key, kind_name
from engine.chance import SeededChance
from engine.game import Game
from engine.rules import apply, legal_moves
from engine.state import PLAYING, THEFT, RoundState

pytestmark = pytest.mark.slow  # thousands of seeded games


STEP = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
OPP = {"N": "S", "S": "N", "E": "W", "W": "E"}
TURN = OPP  # a 180-degree turn maps each edge to the opposite one
GOALS = {"top": (8, -2), "middle": (8, 0), "bottom": (8, 2)}
GOAL_CELLS = set(GOALS.values())


def segments(kind: str, rotated: bool) -> list[frozenset[str]]:
    out = []
    for mask in KINDS[kind].segments:
        letters = {e for e, bit in (("N", 1), ("E", 2), ("S", 4), ("W", 8)) if mask & bit}
        out.append(frozenset(TURN[e] for e in letters) if rotated else frozenset(letters))
    return out


class Maze:
    """cell -> (kind, rotated, face_down) read from a state."""

    def __init__(self, state: RoundState) -> None:
        self.cells: dict[tuple[int, int], tuple[str, bool, bool]] = {}
        for pos, tile in state.board.cells.items():
            self.cells[pos] = (kind_name(tile.card), tile.rotated, tile.hidden)

    def segs(self, pos) -> list[frozenset[str]]:
        kind, rotated, _ = self.cells[pos]
        return segments(kind, rotated)

    def open_segment(self, pos, edge: str) -> int | None:
        """The segment of the (face-up) card at pos with an opening on `edge`."""
        if pos not in self.cells or self.cells[pos][2]:
            return None
        for i, seg in enumerate(self.segs(pos)):
            if edge in seg:
                return i
        return None

    def reach(self) -> set[tuple[tuple[int, int], int]]:
        todo = []
        for pos, (kind, _, hidden) in self.cells.items():
            if not hidden and KINDS[kind].ladder:
                todo.append((pos, 0))  # the ladder (and the start's tunnel) is the first segment
        seen = set(todo)
        while todo:
            pos, i = todo.pop()
            for edge in self.segs(pos)[i]:
                dx, dy = STEP[edge]
                npos = (pos[0] + dx, pos[1] + dy)
                j = self.open_segment(npos, OPP[edge])
                if j is not None and (npos, j) not in seen:
                    seen.add((npos, j))
                    todo.append((npos, j))
        return seen

    def legal_placements(self, kind: str) -> set[tuple[tuple[int, int], bool]]:
        reached = self.reach()
        ladder = KINDS[kind].ladder
        symmetric = sorted(map(sorted, segments(kind, False))) == sorted(map(sorted, segments(kind, True)))
        cells = {(x + dx, y + dy) for (x, y) in self.cells for dx, dy in STEP.values()} - set(self.cells)
        out = set()
        for rotated in (False,) if symmetric else (False, True):
            segs = segments(kind, rotated)
            openings = frozenset().union(*segs)
            for pos in cells:
                ok = True
                connected = ladder
                for edge, (dx, dy) in STEP.items():
                    npos = (pos[0] + dx, pos[1] + dy)
                    if npos not in self.cells:
                        continue
                    if ladder and npos in GOAL_CELLS:
                        ok = False
                    if self.cells[npos][2]:
                        continue  # a face-down goal accepts anything
                    theirs = self.open_segment(npos, OPP[edge])
                    if (theirs is not None) != (edge in openings):
                        ok = False
                    if theirs is not None and (npos, theirs) in reached:
                        connected = True
                if ok and connected:
                    out.add((pos, rotated))
        return out

    def reveals(self, placed: tuple[int, int]) -> list[tuple[str, bool]]:
        """Place-then-reveal per §4.2 and §9 maze 1-3, on this (already updated) maze."""
        done: list[tuple[str, bool]] = []
        while True:
            reached = self.reach()
            found = []
            for name, gpos in GOALS.items():
                kind, _, hidden = self.cells[gpos]
                if not hidden:
                    continue
                edges = []
                for edge in "NESW":  # from the goal towards its neighbour
                    dx, dy = STEP[edge]
                    npos = (gpos[0] + dx, gpos[1] + dy)
                    j = self.open_segment(npos, OPP[edge])
                    if j is not None and (npos, j) in reached:
                        edges.append((edge, npos))
                if not edges:
                    continue
                toward = next((e for e, npos in edges if npos == placed), edges[0][0])
                rotated = toward not in frozenset().union(*segments(kind, False))
                found.append((name, rotated))
            if not found:
                return done
            for name, rotated in found:
                kind = self.cells[GOALS[name]][0]
                self.cells[GOALS[name]] = (kind, rotated, False)
                done.append((name, rotated))
            if any(self.cells[GOALS[n]][0] == "goal-gold" for n, _ in found):
                for name, gpos in GOALS.items():
                    kind, _, hidden = self.cells[gpos]
                    if hidden:
                        self.cells[gpos] = (kind, False, False)
                        done.append((name, False))
                return done


def _engine_placements(state: RoundState) -> dict[str, set[tuple[tuple[int, int], bool]]]:
    out: dict[str, set] = {}
    for m in legal_moves(state):
        if m.verb == "play" and card_kind(m.card).category == "path":
            out.setdefault(kind_name(m.card), set()).add((m.at, m.rotated))
    return out


def _choose(state: RoundState, rng: random.Random):
    moves = legal_moves(state)
    places = [m for m in moves if m.verb == "play" and m.at is not None and card_kind(m.card).category == "path"]
    if places and rng.random() < 0.9:
        # head for the goals: mostly the card furthest right that leads on to the east
        if rng.random() < 0.8:
            def score(m) -> tuple[int, int]:
                east = any("E" in seg for seg in segments(kind_name(m.card), m.rotated) if len(seg) > 1)
                return (m.at[0], east)

            best = max(score(m) for m in places)
            places = [m for m in places if score(m) == best]
        return rng.choice(places)
    fixes = [m for m in moves if m.verb == "play" and card_kind(m.card).action in ("fix", "free")]
    if fixes:
        return rng.choice(fixes)
    calm = [m for m in moves if m.verb != "play" or card_kind(m.card).action not in ("break", "trap", "rockfall")]
    return rng.choice(calm if calm and rng.random() < 0.9 else moves)


def _play(ruleset: str, n: int, seed: int) -> tuple[int, int]:
    players = tuple(f"p{i}" for i in range(n))
    game = Game(ruleset, players)
    rng = random.Random(f"oracle/{ruleset}/{n}/{seed}")
    reveals = golds = 0
    while not game.over:
        state = game.start_round(SeededChance(f"oracle/{ruleset}/{n}/{seed}/{len(game.rounds) + 1}"))
        turn = 0
        while state.phase in (PLAYING, THEFT):
            where = f"{ruleset} {n} seed {seed} round {state.round_no} turn {turn}"
            turn += 1
            if state.phase == PLAYING and not state.blocked(state.player):
                maze = Maze(state)
                engine_sets = _engine_placements(state)
                for kind in {kind_name(c) for c in state.hands[state.player] if card_kind(c).category == "path"}:
                    assert engine_sets.get(kind, set()) == maze.legal_placements(kind), f"{where}: {kind}"
            move = _choose(state, rng)
            expected = None
            if move.verb == "play" and move.at is not None and card_kind(move.card).category == "path":
                maze = Maze(state)
                maze.cells[move.at] = (kind_name(move.card), move.rotated, False)
                expected = maze.reveals(move.at)
            events = apply(state, str(move))
            got = [(e["goal"], e["rotated"]) for e in events if e["event"] == "reveal"]
            if expected is not None:
                assert got == expected, f"{where}: {move}: reveals {got}, the spec says {expected}"
            reveals += len(got)
            golds += any(e["event"] == "gold" for e in events)
    return reveals, golds


@pytest.mark.parametrize(
    "ruleset,n", [(CLASSIC, 3), (CLASSIC, 5), (CLASSIC, 8), (CLASSIC, 10), (EXPANSION, 4), (EXPANSION, 9)]
)
def test_engine_agrees_with_the_spec_oracle(ruleset: str, n: int) -> None:
    reveals = golds = 0
    for seed in range(6):
        r, g = _play(ruleset, n, seed)
        reveals += r
        golds += g
    assert reveals > 5 and golds >= 1, "the games should reach the goals"


def test_oracle_sanity() -> None:
    # the oracle itself, on the RULES.md shapes: a dead end connects through one stub only
    from engine.position import load

    state = load({"format": "pbem-position/1", "ruleset": "classic", "players": ["a", "b", "c"],
                  "board": [{"at": [1, 0], "card": "dead-nesw"}], "to_move": "a"})  # fmt: skip
    maze = Maze(state)
    assert ((1, 0), 3) in maze.reach() and ((1, 0), 1) not in maze.reach()
    assert maze.legal_placements("cross") == {((-1, 0), False), ((0, -1), False), ((0, 1), False)}
    assert sorted(card_sort_key(c) for c in ["cross.2", "cross.10"]) == [("cross", 2), ("cross", 10)]

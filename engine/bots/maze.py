"""Read-only maze helpers for bots: goal beliefs, the open frontier, and distance to the gold.

Everything here reads a board (usually a view's) and never changes it. The measure bots use
is the *distance* of a maze: for each goal that may hold the gold, the fewest cards still
needed to reach it from the open frontier (Manhattan distance from the nearest empty cell
that a reachable tunnel opens into), weighted by the chance that the goal holds the gold.
A placement is judged by how it changes that distance, which takes a few integer operations
instead of a new search.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..board import GOAL_AT, GOAL_CELLS, Board, Face, face
from ..catalog import TEAMS, card_kind
from ..shapes import EDGES, OPPOSITE, STEP

Pos = tuple[int, int]
GOALS = tuple(GOAL_CELLS)  # top, middle, bottom
NEIGHBOURS = tuple((e, STEP[e][0], STEP[e][1], OPPOSITE[e]) for e in EDGES)
FAR = 99  # the distance of a goal that no frontier cell leads to


def manhattan(a: Pos, b: Pos) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def goal_weights(board: Board, knowledge: list[list[str]] | None = None) -> dict[str, float]:
    """The chance that each goal holds the gold, from revealed goals and private map facts."""
    stone: set[str] = set()
    for name in GOALS:
        if not board.is_hidden(name):
            if card_kind(board.goal_card(name)).kind == "goal-gold":
                return {g: 1.0 if g == name else 0.0 for g in GOALS}
            stone.add(name)
    for fact in knowledge or ():
        if fact and fact[0] == "map" and len(fact) == 3 and fact[2] != "?":
            if fact[2].startswith("goal-gold"):
                return {g: 1.0 if g == fact[1] else 0.0 for g in GOALS}
            stone.add(fact[1])
    open_ = [g for g in GOALS if g not in stone] or list(GOALS)
    return {g: (1.0 / len(open_) if g in open_ else 0.0) for g in GOALS}


def frontier(board: Board, reached: dict[Pos, int]) -> set[Pos]:
    """Empty cells that a reachable tunnel opens into (where the maze can grow)."""
    cells = board.cells
    out: set[Pos] = set()
    for (x, y), bits in reached.items():
        segs = cells[(x, y)].face.segments
        for i, seg in enumerate(segs):
            if not bits >> i & 1:
                continue
            for e, dx, dy, _ in NEIGHBOURS:
                if seg & e:
                    npos = (x + dx, y + dy)
                    if npos not in cells:
                        out.add(npos)
    return out


@dataclass(frozen=True, slots=True)
class Distance:
    """Per goal, the two best frontier cells (so that filling one cell can be judged)."""

    best: dict[str, tuple[int, Pos | None, int]]  # goal -> (d1, cell of d1, d2 without that cell)
    weights: dict[str, float]
    cells: frozenset[Pos]

    def value(self) -> float:
        """The weighted distance of the maze (lower is closer to the gold)."""
        return sum(w * self.best[g][0] for g, w in self.weights.items() if w)

    def min_goal(self) -> int:
        """The smallest distance to any goal that may hold the gold."""
        return min((self.best[g][0] for g, w in self.weights.items() if w), default=FAR)

    def without(self, goal: str, pos: Pos) -> int:
        d1, c1, d2 = self.best[goal]
        return d2 if c1 == pos else d1


def distance(board: Board, weights: dict[str, float], reached: dict[Pos, int] | None = None) -> Distance:
    """The distance of `board` (from its own reachable maze unless `reached` is given).

    Results for the plain reach are kept in the board's memo (until it changes), so bots that
    observe the same public view share one computation.
    """
    if reached is not None:
        return _distance(board, weights, reached)
    memo = board.memo()
    key = ("distance", tuple(weights[g] for g in GOALS))
    hit = memo.get(key)
    if isinstance(hit, Distance):
        return hit
    result = memo[key] = _distance(board, weights, board.reach())
    return result


def _distance(board: Board, weights: dict[str, float], reached: dict[Pos, int]) -> Distance:
    cells = frontier(board, reached)
    best: dict[str, tuple[int, Pos | None, int]] = {}
    for g, (gx, gy) in GOAL_CELLS.items():
        d1, c1, d2 = FAR, None, FAR
        for c in cells:
            d = abs(c[0] - gx) + abs(c[1] - gy)
            if d < d1 or (d == d1 and c1 is not None and c < c1):
                # (not one unpacking of all three: compiled by mypyc, that took c1 for a Pos and refused None)
                if c1 is not None:
                    d2 = min(d1, d2)
                d1, c1 = d, c
            elif d < d2:
                d2 = d
        best[g] = (d1, c1, d2)
    return Distance(best, weights, frozenset(cells))


def reachable_segments(f: Face, connect: int) -> list[int]:
    """The segments of a card placed with reachable neighbours on the `connect` edges."""
    out = []
    for i, seg in enumerate(f.segments):
        if seg & connect or (i == 0 and f.ladder):
            out.append(seg)
    return out


@dataclass(frozen=True, slots=True)
class Placement:
    """What placing a card does to the distance (an estimate without a new search)."""

    after: dict[str, int]  # goal -> distance afterwards
    reaches: tuple[str, ...]  # face-down goals the card opens onto (they will be revealed)
    opens: int  # new frontier cells
    dead_end: bool  # the card's reachable part leads nowhere new
    crystals: int
    door: str | None
    on_route: bool  # the card extends the reachable maze (not a side stub)


def placement(board: Board, dist: Distance, pos: Pos, kind: str, rotated: bool, connect: int) -> Placement:
    f = face(kind, rotated)
    cells = board.cells
    segs = reachable_segments(f, connect)
    new_cells: list[Pos] = []
    reaches: list[str] = []
    x, y = pos
    for seg in segs:
        for e, dx, dy, _ in NEIGHBOURS:
            if not seg & e or e & connect:
                continue
            npos = (x + dx, y + dy)
            t = cells.get(npos)
            if t is None:
                new_cells.append(npos)
            elif t.hidden and npos in GOAL_AT:
                reaches.append(GOAL_AT[npos])
    after: dict[str, int] = {}
    for g, gpos in GOAL_CELLS.items():
        d = dist.without(g, pos)
        if g in reaches:
            d = 0
        for c in new_cells:
            m = manhattan(c, gpos)
            if m < d:
                d = m
        after[g] = d
    dead = not new_cells and not reaches
    return Placement(after, tuple(reaches), len(new_cells), dead, f.crystals, f.door, bool(segs))


def weighted(after: dict[str, int], weights: dict[str, float]) -> float:
    return sum(w * after[g] for g, w in weights.items() if w)


def distance_without(board: Board, pos: Pos, weights: dict[str, float]) -> Distance:
    """The distance after a rockfall at `pos` (a real search on a copy)."""
    b = board.copy()
    b.remove(pos)
    return distance(b, weights)



# --- doors (expansion) -----------------------------------------------------------------------

OTHER_TEAM = {"green": "blue", "blue": "green"}
LOCK_MARGIN = 1.5  # a team whose door-free maze is this much farther from the gold is shut out


def team_values(board: Board, weights: dict[str, float]) -> dict[str, float]:
    """Per team, the distance of the part of the maze it can pass (no door of the other
    colour on the way: RULES.md §5.2). Uses the board's own search; nothing is changed."""
    out: dict[str, float] = {}
    for team in TEAMS:
        out[team] = _distance(board, weights, board.team_reach(team)).value()
    return out


def shut_out(board: Board, weights: dict[str, float], d_all: float | None = None) -> frozenset[str]:
    """The teams whose door-free maze is far behind the whole maze (a door of the other
    colour cuts their way to the gold)."""
    if not any(t.face.door for t in board.cells.values()):
        return frozenset()
    if d_all is None:
        d_all = distance(board, weights).value()
    return frozenset(t for t, d in team_values(board, weights).items() if d >= d_all + LOCK_MARGIN)


def after_placing(board: Board, pos: Pos, card: str, rotated: bool) -> Board:
    """A copy of `board` with one more card (no goal reveals: only for measuring)."""
    b = board.copy()
    b.place(pos, card, rotated)
    return b

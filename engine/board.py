"""The maze: placed cards, reachability over segments, placement legality and goal reveals.

Reachability is a search over (cell, segment) pairs from the start card; the start and every
ladder segment are joined (RULES.md §4.1). Face-down goals are walls that accept any edge;
revealed stone goals are ordinary path cards. The reach and the open cells are kept up to
date as cards are placed and removed (the legal-move generator asks for them on every turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache, partial
from itertools import compress
from operator import itemgetter
from typing import Final, NamedTuple

from .catalog import HIDDEN, KINDS, CardKind, Team, card_kind, kind_name
from .errors import UnknownGoal
from .record import Frozen, Record
from .shapes import EDGES, OPPOSITE, STEP, turned

Pos = tuple[int, int]
START: Pos = (0, 0)
GOAL_CELLS: dict[str, Pos] = {"top": (8, -2), "middle": (8, 0), "bottom": (8, 2)}
GOAL_AT: dict[Pos, str] = {pos: name for name, pos in GOAL_CELLS.items()}


class Face(Frozen):
    """A card as it lies: its segments after the optional 180-degree turn."""

    FIELDS = ("segments", "openings", "seg_at", "ladder", "door", "crystals", "opened")
    __slots__ = FIELDS

    def __init__(self, segments: tuple[int, ...], openings: int, seg_at: tuple[int, ...], ladder: bool,
                 door: str | None, crystals: int, opened: tuple[int, ...]) -> None:
        self.segments: Final = segments
        self.openings: Final = openings
        self.seg_at: Final = seg_at  # index by edge bit (1, 2, 4, 8) -> segment index, -1 if wall
        self.ladder: Final = ladder
        self.door: Final = door
        self.crystals: Final = crystals
        # index by a bit set of segments (as in Board.reach) -> the union of their edges: what a
        # neighbour's reachable tunnels open onto, in one lookup (the open-cell update asks often)
        self.opened: Final = opened


@cache
def face(kind: str, rotated: bool) -> Face:
    k: CardKind = KINDS[kind]
    segs = tuple(turned(s) for s in k.segments) if rotated else k.segments
    seg_at = [-1] * 9
    openings = 0
    for i, seg in enumerate(segs):
        openings |= seg
        for e in EDGES:
            if seg & e:
                seg_at[e] = i
    opened = tuple(_union(seg for i, seg in enumerate(segs) if bits & (1 << i)) for bits in range(1 << len(segs)))
    return Face(segs, openings, tuple(seg_at), k.ladder, k.door, k.crystals, opened)


def _union(masks: Iterable[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


class Tile(Record):
    FIELDS = ("card", "rotated", "face", "hidden")
    __slots__ = FIELDS

    def __init__(self, card: str, rotated: bool, face: Face, hidden: bool = False) -> None:
        self.card = card  # card id
        self.rotated = rotated
        self.face = face
        self.hidden = hidden  # a face-down goal


class Slot(NamedTuple):
    """An empty cell next to the maze and what a card placed there must satisfy.

    A NamedTuple, not a frozen dataclass: thousands are built per simulated round.
    """

    constrained: int  # edges facing a card that is not a face-down goal
    required: int  # of those, the edges that must be open (the neighbour is open there)
    connect: int  # edges facing a segment reachable from the start
    near_goal: bool  # ladders may not go here


# The live slots' cells in order, and their edges as constrained | required << 4 (Board._live_slots, Board.placements).
Live = tuple[list[Pos], list[int]]
# Where a card may go: the cells unturned, then the cells turned (Board.placements).
Placements = tuple[list[Pos], list[Pos]]
# By a card's openings, then by a slot's constrained | required << 4: whether the card's edges
# match the slot's (openings & constrained == required), as 1 or 0.
_MATCHES: tuple[bytes, ...] = tuple(bytes(int(o & (k & 15) == k >> 4) for k in range(256)) for o in range(16))
# (edge, dx, dy, the neighbour's facing edge), precomputed for the hot loops.
_AROUND = tuple((e, STEP[e][0], STEP[e][1], OPPOSITE[e]) for e in EDGES)
# The cells next to a goal: only a change of reach there can reveal one.
_BESIDE_GOALS = frozenset((x + dx, y + dy) for (x, y) in GOAL_AT for _, dx, dy, _ in _AROUND)
# a set of edges -> its edges one by one, in EDGES' order
_BITS: tuple[tuple[int, ...], ...] = tuple(tuple(e for e in EDGES if bits & e) for bits in range(16))
_new = tuple.__new__  # a Slot from its fields in order, without NamedTuple's Python-level __new__
Near = tuple[tuple[int, Pos, int], ...]
# cell -> its four neighbours as (edge, the cell behind it, that cell's facing edge): made once per
# cell and shared by every board (a memo of a pure function), so the maze's hot loops build no tuples
_NEAR: dict[Pos, Near] = {}


def _near(pos: Pos) -> Near:
    """The neighbours of `pos` (ask `_NEAR.get(pos) or _near(pos)`: the memo first, without a call)."""
    x, y = pos
    near = tuple((e, (x + dx, y + dy), back) for e, dx, dy, back in _AROUND)
    if len(_NEAR) < 1 << 16:  # (a maze spans a few hundred cells; positions given by hand may lie anywhere)
        _NEAR[pos] = near
    return near


# goal names of Board.new -> the fresh maze's (reach, open cells, sorted, live slots, placements memo)
_FRESH: dict[tuple[str, ...], tuple[dict[Pos, int], dict[Pos, Slot], dict[Pos, int], dict[Pos, Slot] | None,
                                    Live | None, dict[int, Placements]]] = {}


def _face_down(card: str) -> Tile:
    return Tile(card, False, face(card_kind(card).kind, False), hidden=True)


# card id -> its face-up tiles, unturned and turned, made when first placed: tiles are replaced,
# never changed in place, so every board shares them (placing a card builds nothing)
_TILES: dict[str, tuple[Tile, Tile]] = {}


def _tiles(card: str) -> tuple[Tile, Tile]:
    """The tiles of `card` (ask `_TILES.get(card) or _tiles(card)`)."""
    kind = kind_name(card)
    tiles = _TILES[card] = (Tile(card, False, face(kind, False)), Tile(card, True, face(kind, True)))
    return tiles


class Board:
    """The placed cards, with the reachable segments and the open cells kept up to date.

    Placing a card or turning a goal over only adds tunnels, so the reach grows by a search
    from the new card alone, and only the open cells around what changed are recomputed. A
    rockfall can cut the maze anywhere, so the reach is searched again, but the open cells
    are recomputed only around the removed card and the cells that lost reach. A copy
    shares these tables until one of the two boards changes (copy on write).
    """

    __slots__ = ("cells", "_stale", "_shared", "_reach", "_open", "_codes", "_sorted", "_live", "_paths",
                 "_fits", "_goal_news", "_memo")

    def __init__(self) -> None:
        self.cells: dict[Pos, Tile] = {}
        self._stale = True  # _reach and _open need a full rebuild
        self._shared = False  # _reach and _open are shared with a copy
        self._reach: dict[Pos, int] = {}  # cell -> bit set of its segments reachable from the start
        self._open: dict[Pos, Slot] = {}  # every empty cell next to a card, in no order
        # the open cells facing a reachable opening (the live slots), in no order, with their edges
        # as constrained | required << 4: kept with _open, so the live slots are sorted from it alone
        self._codes: dict[Pos, int] = {}
        self._sorted: dict[Pos, Slot] | None = None  # _open in row-major order, when known
        self._live: Live | None = None  # the slots facing a reachable opening, in order
        self._paths: list[Pos] | None = None  # path_cells(), when known
        # kind's _SHAPE -> placements(kind) for this version: players hold the same kinds turn after
        # turn, and the maze changes on about one turn in four. A new dict on every change, so a copy may share it.
        self._fits: dict[int, Placements] = {}
        self._goal_news = True  # the reach may have come next to a face-down goal since reveal_reached
        self._memo: dict[object, object] | None = None  # memo(): none until asked for, none after a change

    @classmethod
    def new(cls, goals: dict[str, str]) -> Board:
        """A fresh maze: the start card face up, `goals` (cell name -> card id) face down."""
        board = cls()
        board.cells[START] = Tile("start.1", False, face("start", False))
        for name, card in goals.items():
            board.cells[GOAL_CELLS[name]] = _face_down(card)
        # Every fresh maze with goals at these cells has the same reach, open cells and placements
        # (a face-down goal is a wall whatever its card): made once, then shared as a copy shares them.
        names = tuple(goals)
        fresh = _FRESH.get(names)
        if fresh is None:
            board.warm()
            fresh = _FRESH[names] = (board._reach, board._open, board._codes, board._sorted, board._live, board._fits)
        board._reach, board._open, board._codes, board._sorted, board._live, board._fits = fresh
        board._stale = False
        board._shared = True  # (changed in place only after _own copies them)
        return board

    def know_goal(self, name: str, card: str) -> None:
        """A view learns the card of a face-down goal (it stays face down until it is reached)."""
        self.cells[GOAL_CELLS[name]] = _face_down(card)
        self.changed()

    def copy(self) -> Board:
        other = _blank()  # every slot set here (views copy a board per turn)
        other.cells = dict(self.cells)  # tiles are replaced, never changed in place
        other._paths = self._paths
        other._fits = self._fits
        other._goal_news = self._goal_news
        other._memo = None
        other._stale = stale = self._stale
        if stale:
            other._shared = False
            other._reach, other._open, other._codes = {}, {}, {}
            other._sorted = other._live = None
        else:
            self._shared = other._shared = True
            other._reach, other._open, other._codes = self._reach, self._open, self._codes
            other._sorted, other._live = self._sorted, self._live
        return other

    def changed(self) -> None:
        """Say that `cells` was changed from outside: everything is rebuilt on the next query."""
        self._stale = True
        self._sorted = self._live = None
        self._paths = None
        self._fits = {}
        self._memo = None

    def memo(self) -> dict[object, object]:
        """What readers of the maze (the bots' measures, engine/bots/) worked out from it as it is
        now: emptied by every change, and not shared with a copy (a view masks its copy's goals)."""
        memo = self._memo
        if memo is None:
            memo = self._memo = {}
        return memo

    def _fresh(self) -> None:
        """Rebuild the reach and the open cells if a change made them stale."""
        if self._stale:
            self._reach = self._search(blocked_door=None)
            self._open = {}
            self._codes = {}
            self._shared = False
            for pos in self._empty_around(self.cells):
                self._update_slot(pos)
            self._stale = False
            self._sorted = self._live = None
            self._goal_news = True

    def _own(self) -> None:
        """Before changing the tables in place: stop sharing them with a copy."""
        if self._shared:
            self._reach, self._open, self._codes = dict(self._reach), dict(self._open), dict(self._codes)
            self._shared = False

    def _empty_around(self, cells: Iterable[Pos]) -> set[Pos]:
        board = self.cells
        return {cell for q in cells for _, cell, _ in (_NEAR.get(q) or _near(q)) if cell not in board}

    def _update_slot(self, pos: Pos) -> None:
        """Recompute the open cell `pos` (empty) from its neighbours; drop it if none is a card."""
        cells, reach = self.cells, self._reach
        constrained = required = connect = 0
        near_goal = touches = False
        for e, npos, back in _NEAR.get(pos) or _near(pos):
            nt = cells.get(npos)
            if nt is None:
                continue
            touches = True
            if npos in GOAL_AT:
                near_goal = True
            if nt.hidden:
                continue
            constrained |= e
            f = nt.face
            if f.openings & back:
                required |= e
                if f.opened[reach.get(npos, 0)] & back:
                    connect |= e
        if touches:
            slot = _new(Slot, (constrained, required, connect, near_goal))
            if self._open.get(pos) != slot:
                if pos not in self._open:
                    self._sorted = None
                self._open[pos] = slot
                if connect:
                    self._codes[pos] = constrained | required << 4
                else:
                    self._codes.pop(pos, None)
                self._live = None
        elif pos in self._open:
            del self._open[pos]
            self._codes.pop(pos, None)
            self._sorted = self._live = None

    def _grow(self, seeds: list[tuple[Pos, int]]) -> set[Pos]:
        """Extend the reach from newly reached (cell, segment) pairs; return the cells it changed."""
        reached, cells = self._reach, self.cells
        changed: set[Pos] = set()
        stack = []
        for pos, i in seeds:
            bits = reached.get(pos, 0)
            if not bits & (1 << i):
                reached[pos] = bits | (1 << i)
                changed.add(pos)
                stack.append((pos, i))
        while stack:
            pos, i = stack.pop()
            seg = cells[pos].face.segments[i]
            for e, npos, back in _NEAR.get(pos) or _near(pos):
                if not seg & e:
                    continue
                nt = cells.get(npos)
                if nt is None or nt.hidden:
                    continue
                j = nt.face.seg_at[back]
                if j < 0:
                    continue
                bits = reached.get(npos, 0)
                if bits & (1 << j):
                    continue
                reached[npos] = bits | (1 << j)
                changed.add(npos)
                stack.append((npos, j))
        return changed

    def _joined(self, pos: Pos) -> None:
        """A face-up card appeared at `pos` (placed, or a goal turned over): grow the reach from
        it and recompute the open cells around every cell whose reach changed."""
        if self._stale:
            return
        self._own()
        slot = self._open.pop(pos, None)
        self._codes.pop(pos, None)
        self._sorted = self._live = None
        f = self.cells[pos].face
        seeds = [(pos, 0)] if f.ladder else []
        seg_at = f.seg_at
        if slot is not None:  # (a card placed on an open cell: its connecting edges face the reach)
            seeds += [(pos, i) for e in _BITS[slot[2]] if (i := seg_at[e]) >= 0]
        else:  # a goal turned over, or a card put where the maze did not reach
            cells = self.cells
            for e, npos, back in _NEAR.get(pos) or _near(pos):
                i = seg_at[e]
                if i < 0:
                    continue
                nt = cells.get(npos)
                if nt is None or nt.hidden:
                    continue
                j = nt.face.seg_at[back]
                if j >= 0 and self._reach.get(npos, 0) & (1 << j):
                    seeds.append((pos, i))
        changed = self._grow(seeds)
        changed.add(pos)
        if not changed.isdisjoint(_BESIDE_GOALS):
            self._goal_news = True
        self._widen(changed)

    def _widen(self, changed: set[Pos]) -> None:
        """Cards appeared or the reach grew at `changed`: add their edges to the open cells beside them.

        Each field of a slot is a union over its four edges, and a card placed or turned over
        only adds tunnels and reach, so OR-ing in the edges that face `changed` is the whole
        update (a rockfall, which takes away, recomputes the cells it touches instead). The
        caller has dropped the open cells' order and the live slots.
        """
        cells, reach, slots, codes = self.cells, self._reach, self._open, self._codes
        for q in changed:
            f = cells[q].face  # face up: the reach never enters a face-down goal
            reached = f.opened[reach.get(q, 0)]
            for e, cell, back in _NEAR.get(q) or _near(q):
                if cell in cells:
                    continue
                required = back if f.openings & e else 0
                connect = back if reached & e else 0
                old = slots.get(cell)
                if old is None:  # a new open cell: its only card is q (a goal's neighbours are always open)
                    slots[cell] = _new(Slot, (back, required, connect, False))
                    if connect:
                        codes[cell] = back | required << 4
                    continue
                slot = _new(Slot, (old[0] | back, old[1] | required, old[2] | connect, old[3]))
                if slot != old:
                    slots[cell] = slot
                    if slot[2]:
                        codes[cell] = slot[0] | slot[1] << 4

    def _cut(self, pos: Pos) -> None:
        """The card at `pos` is gone (a rockfall): search the reach again and recompute the open
        cells at `pos`, around it and around every cell whose reach shrank."""
        if self._stale:
            return
        self._own()
        old, new = self._reach, self._search(blocked_door=None)
        self._reach = new
        self._sorted = self._live = None
        changed = {p for p, bits in old.items() if new.get(p) != bits}  # a cut only takes reach away
        changed.add(pos)
        self._update_slot(pos)
        for cell in self._empty_around(changed):
            self._update_slot(cell)

    # --- queries -------------------------------------------------------------------------

    def goal_card(self, name: str) -> str:
        return self.cells[GOAL_CELLS[name]].card

    def is_hidden(self, name: str) -> bool:
        return self.cells[GOAL_CELLS[name]].hidden

    def path_cells(self) -> list[Pos]:
        """Cells holding a placed path card (not the start, not a goal), in row-major order (do not change it)."""
        if self._paths is None:  # (a set difference: no Python step per cell)
            self._paths = sorted(self.cells.keys() - _NOT_PATHS, key=_row_major)
        return self._paths

    def crystals(self) -> int:
        return sum(t.face.crystals for t in self.cells.values())

    def reach(self) -> dict[Pos, int]:
        """Cell -> bit set of its segments reachable from the start (do not change it)."""
        self._fresh()
        return self._reach

    def _search(self, blocked_door: str | None) -> dict[Pos, int]:
        cells = self.cells
        reached: dict[Pos, int] = {}
        stack: list[tuple[Pos, int]] = []
        for pos, t in cells.items():
            if t.face.ladder and not t.hidden and (blocked_door is None or t.face.door != blocked_door):
                reached[pos] = 1
                stack.append((pos, 0))
        while stack:
            pos, i = stack.pop()
            seg = cells[pos].face.segments[i]
            for e, npos, back in _NEAR.get(pos) or _near(pos):
                if not seg & e:
                    continue
                nt = cells.get(npos)
                if nt is None or nt.hidden:
                    continue
                j = nt.face.seg_at[back]
                if j < 0:
                    continue
                if blocked_door is not None and j == 0 and nt.face.door == blocked_door:
                    continue
                bits = reached.get(npos, 0)
                if bits & (1 << j):
                    continue
                reached[npos] = bits | (1 << j)
                stack.append((npos, j))
        return reached

    def slots(self) -> dict[Pos, Slot]:
        """Every empty cell adjacent to a card, with its constraints, in row-major order (do not change it)."""
        self._fresh()
        if self._sorted is None:
            opened = self._open
            self._sorted = {pos: opened[pos] for pos in sorted(opened, key=_row_major)}
        return self._sorted

    def warm(self) -> None:
        """Compute now what the legal-move generator reads (the reach, the open cells, the live
        ones in order), so that copies made from here on share it instead of each computing it
        again (views.view copies the board on every turn). The open cells in order (`slots`),
        which only ladder cards and the smart bots ask for, are sorted where they are asked."""
        self._live_slots()

    def _live_slots(self) -> Live:
        """The slots facing a reachable opening, in row-major order: the only ones a card without
        a ladder can take (a handful of the open cells: sorted alone, without the others)."""
        if self._live is None:
            self._fresh()
            codes = self._codes  # (kept with the open cells: no Python step per cell here)
            live = sorted(codes, key=_row_major)
            self._live = (live, list(map(codes.__getitem__, live)))
        return self._live

    def fits(self, f: Face, slot: Slot) -> bool:
        """Whether a card face may be placed in `slot` (RULES.md §4.1)."""
        if f.openings & slot.constrained != slot.required:
            return False
        if f.ladder:
            return not slot.near_goal
        for seg in f.segments:
            if seg & slot.connect:
                return True
        return False

    def placements(self, kind: str) -> Placements:
        """The cells where a card of `kind` may go unturned, and those where it may go turned (in
        row-major order; do not change them): the generator's inner loop.

        Only slots facing a reachable opening can take a card without a ladder, so those
        are kept in a list of their own; a ladder card may go wherever its edges match.
        On such a slot, `fits` asks only that the card's edges match: the slot's connecting
        edges are among its required ones, which a matching card opens, so one of its
        segments meets one of them. tests/test_properties.py checks that `check` (which uses
        `fits`) accepts exactly the moves listed from here.
        """
        shape = _SHAPE.get(kind)
        if shape is None:
            shape = shape_of(kind)
        known = self._fits.get(shape)
        if known is not None:
            return known
        return self.placed(shape)

    def placed(self, shape: int) -> Placements:
        """`placements` of the kinds of `shape` (`shape_of`), made anew and kept for this version
        (the generator asks here when `_fits` has none: it knows each card's shape)."""
        live, edges = self._live if self._live is not None else self._live_slots()
        pair = _PAIRS[shape]
        out: Placements
        if pair is not None:  # (no ladder: every shape of the classic game) the live slots whose edges it matches
            unturned, turned = pair
            out = (list(compress(live, map(unturned, edges))),
                   _NOWHERE if turned is None else list(compress(live, map(turned, edges))))
        else:
            out = ([], [])
            for rotated, openings, matches in _WAYS[shape]:
                cells = out[rotated]
                if matches is None:  # a ladder: any open cell not beside a goal whose edges it matches
                    for pos, s in self.slots().items():
                        if not s.near_goal and openings & s.constrained == s.required:
                            cells.append(pos)
                else:  # the live slots whose edges it matches, picked out without a Python step per slot
                    cells += compress(live, map(matches, edges))
        self._fits[shape] = out
        return out

    def placement_error(self, pos: Pos, kind: str, rotated: bool) -> str | None:
        """None when legal, else the reason in a few words."""
        if pos in self.cells:
            return f"{pos[0]},{pos[1]} is not empty"
        self._fresh()
        slot = self._open.get(pos)
        if slot is None:
            return f"{pos[0]},{pos[1]} does not touch the maze"
        f = face(kind, rotated)
        if f.openings & slot.constrained != slot.required:
            return "its edges do not match the neighbouring cards"
        if f.ladder and slot.near_goal:
            return "a ladder may not touch a goal card"
        if not self.fits(f, slot):
            return "it would not connect to the start"
        return None

    # --- changes -------------------------------------------------------------------------

    def place(self, pos: Pos, card: str, rotated: bool) -> None:
        self.cells[pos] = (_TILES.get(card) or _tiles(card))[rotated]
        self._paths = None
        self._fits = {}
        self._memo = None
        self._joined(pos)

    def remove(self, pos: Pos) -> str:
        tile = self.cells.pop(pos)
        self._paths = None
        self._fits = {}
        self._memo = None
        self._cut(pos)
        return tile.card

    def reveal(self, name: str, rotated: bool) -> None:
        pos = GOAL_CELLS[name]
        card = self.cells[pos].card
        self.cells[pos] = (_TILES.get(card) or _tiles(card))[rotated]
        self._fits = {}
        self._memo = None
        self._joined(pos)

    def reveal_reached(self, placed: Pos) -> tuple[list[str], bool]:
        """Turn over every face-down goal the maze reaches, cascading (RULES.md §4.2, §9).

        Returns the goal names revealed (in order) and whether the gold was found. When the
        gold is found the remaining goals are turned over too, unrotated. On a view that does
        not know a goal it must turn over (its card is HIDDEN), raises UnknownGoal naming them.
        """
        revealed: list[str] = []
        gold = False
        if not self._stale and not self._goal_news:
            return revealed, gold  # the reach came near no face-down goal since the last call
        while True:
            found: list[tuple[str, bool]] = []
            unknown: list[str] = []
            for name, gpos in GOAL_CELLS.items():
                tile = self.cells[gpos]
                if not tile.hidden:
                    continue
                edges = self._reaching_edges(gpos)
                if not edges:
                    continue
                if tile.card == HIDDEN:
                    unknown.append(name)
                    continue
                # Face the card just placed if it reaches; otherwise the first reaching edge.
                toward = next((e for e in edges if _neighbour(gpos, e) == placed), edges[0])
                unturned = face(card_kind(tile.card).kind, False)
                found.append((name, not unturned.openings & toward))
            if unknown:
                raise UnknownGoal(unknown)
            if not found:
                break
            for name, rotated in found:
                self.reveal(name, rotated)
                revealed.append(name)
                if card_kind(self.goal_card(name)).kind == "goal-gold":
                    gold = True
            if gold:
                unknown = [n for n in GOAL_CELLS if self.is_hidden(n) and self.goal_card(n) == HIDDEN]
                if unknown:
                    raise UnknownGoal(unknown)
                for name in GOAL_CELLS:
                    if self.is_hidden(name):
                        self.reveal(name, False)
                        revealed.append(name)
                break
        self._goal_news = False
        return revealed, gold

    def _reaching_edges(self, gpos: Pos) -> list[int]:
        """The edges of the goal at `gpos` that a reachable segment of a neighbour opens onto."""
        edges = []
        cells, reach = self.cells, self.reach()
        for e, npos, back in _NEAR.get(gpos) or _near(gpos):
            bits = reach.get(npos, 0)
            if not bits:
                continue
            nt = cells[npos]
            segs = nt.face.segments
            if any(bits & (1 << i) and segs[i] & back for i in range(len(segs))):
                edges.append(e)
        return edges

    def team_reach(self, team: Team) -> dict[Pos, int]:
        """The maze a team can pass: reachability that does not enter the other colour's doors."""
        return self._search(blocked_door="blue" if team == "green" else "green")

    def team_can_pass(self, team: Team) -> bool:
        """Whether some route from the start to the revealed gold avoids the other team's doors."""
        reached = self.team_reach(team)
        for gpos in GOAL_CELLS.values():
            tile = self.cells[gpos]
            if not tile.hidden and card_kind(tile.card).kind == "goal-gold" and gpos in reached:
                return True
        return False


# A board whose slots copy() sets: interpreted, without __init__; compiled by mypyc (whose native
# class refuses object.__new__), by its native __init__.
_blank: Callable[[], Board] = partial(object.__new__, Board) if Board.__new__ is object.__new__ else Board


def path_cell(board: Board, pos: Pos) -> bool:
    """Whether `pos` holds a placed path card (not the start, not a goal): what a rockfall may hit."""
    return pos in board.cells and pos != START and pos not in GOAL_AT


_NOT_PATHS = frozenset(GOAL_AT) | {START}  # the cells that never hold a placed path card
_NOWHERE: list[Pos] = []  # the turned placements of a card that is never turned (shared: do not change it)
# Row-major order of cells: by y, then x (an itemgetter, so sorting calls no Python code).
_row_major: Callable[[Pos], tuple[int, int]] = itemgetter(1, 0)


# kind -> a number shared by the kinds that lie the same ways with the same edges open and the same
# ladder (a cross and the dead end open on four sides, a straight and its dead end, doors, crystals):
# their placements are the same, so Board.placements keeps them once for all of them
_SHAPE: dict[str, int] = {}
_SHAPES: dict[tuple[tuple[bool, int, bool], ...], int] = {}
# shape -> the ways it lies: (turned, openings, for a card without a ladder the test of a live
# slot's edges code, _MATCHES[openings].__getitem__)
_WAYS: list[tuple[tuple[bool, int, Callable[[int], int] | None], ...]] = []
# shape -> for a card without a ladder, its tests of a live slot's edges code unturned and turned
# (None when turning changes nothing); None for a ladder card (Board.placed)
_PAIRS: list[tuple[Callable[[int], int], Callable[[int], int] | None] | None] = []


def shape_of(kind: str) -> int:
    """`kind`'s number in _SHAPE, the key of its placements in `Board._fits` (ask `_SHAPE.get(kind)` first)."""
    ways = tuple((rotated, f.openings, f.ladder) for rotated, f in orientations(kind))
    shape = _SHAPES.get(ways)
    if shape is None:
        shape = _SHAPES[ways] = len(_WAYS)
        _WAYS.append(tuple((r, o, None if ladder else _MATCHES[o].__getitem__) for r, o, ladder in ways))
        tests = [m for _, _, m in _WAYS[shape] if m is not None]
        _PAIRS.append(None if len(tests) < len(ways) else (tests[0], tests[1] if len(tests) > 1 else None))
    _SHAPE[kind] = shape
    return shape


@cache
def orientations(kind: str) -> tuple[tuple[bool, Face], ...]:
    """The ways a card of `kind` may lie: (turned, face), unturned first; unturned only if turning changes nothing."""
    return tuple((rotated, face(kind, rotated)) for rotated in ((False,) if symmetric(kind) else (False, True)))


@cache
def symmetric(kind: str) -> bool:
    """Whether turning a card of `kind` changes nothing (it is then listed unturned only)."""
    return KINDS[kind].symmetric


def _neighbour(pos: Pos, edge: int) -> Pos:
    dx, dy = STEP[edge]
    return (pos[0] + dx, pos[1] + dy)

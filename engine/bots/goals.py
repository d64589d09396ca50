"""Where the gold lies, as the others' public moves suggest it (the search bot's worlds).

A player who played a map knows that goal's card, and acts on it: a bot (or a person) who
found the gold does not look at another goal, and a digger who knows where the gold is builds
towards it. `GoldBelief` reads both from the public moves, for each face-down goal the
hypothesis "the gold is here" gaining log-odds by how well it explains what the mappers did:

- a player who maps a second goal while the first it mapped is still face down: that first
  goal is very likely stone (`AGAIN`, whatever the player's side: a player who knows where the
  gold is has nothing left to map);
- a path card placed by a player who mapped: under each hypothesis that player knew where
  the gold is (or that its goal was stone), and a digger brings the maze closer to where it
  thinks the gold is; the hypothesis gains `STEER` x the player's chance to be a digger x the
  distance gained towards the goals that player would weigh under it (engine/bots/maze.py).

`chances(board, knowledge)` gives each face-down goal's chance to hold the gold, or None when
the seat already knows it (a map, a revealed gold) or nothing was learnt.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..board import Board
from ..catalog import card_kind
from ..moves import Move
from .maze import GOALS, distance, goal_weights, placement, weighted

AGAIN = 3.0  # log-odds against a goal its mapper did not trust, since it mapped another
STEER = 1.0  # log-odds per unit of distance a trusted mapper's card gained under a hypothesis


class GoldBelief:
    """Log-odds for each goal to hold the gold, from the round's public moves."""

    def __init__(self, again: float = AGAIN, steer: float = STEER) -> None:
        self.again = again
        self.steer = steer
        self.score: dict[str, float] = {g: 0.0 for g in GOALS}
        self.mapped: dict[str, list[str]] = {}  # player -> the goals it mapped, in order
        self.learnt = False

    def observe(self, before: Board | None, after: Board, move: Move, actor: str, trust: Callable[[str], float]) -> None:
        """Learn from one public move (`trust(player)`: the chance that the player is a digger)."""
        if move.verb != "play" or move.card is None or "." not in move.card:
            return
        k = card_kind(move.card)
        if k.action == "map" and move.target in self.score:
            seen = self.mapped.setdefault(actor, [])
            board = before if before is not None else after
            for g in seen:
                if g != move.target and board.is_hidden(g):
                    self.score[g] -= self.again
                    self.learnt = True
            seen.append(str(move.target))
            return
        maps = self.mapped.get(actor)
        if not maps or k.category != "path" or move.at is None:
            return
        sure = trust(actor)
        if sure <= 0.0:
            return
        if before is None or move.at in before.cells:
            before = after.copy()
            before.remove(move.at)
        slot = before.slots().get(move.at)
        if slot is None:
            return
        hidden = [g for g in GOALS if before.is_hidden(g)]
        if len(hidden) < 2:
            return
        gains: dict[tuple[float, ...], float] = {}
        for h in hidden:
            facts = [["map", g, "goal-gold" if g == h else "goal-stone"] for g in maps]
            w = goal_weights(before, facts)
            key = tuple(w[g] for g in GOALS)
            if key not in gains:
                dist = distance(before, w)
                pl = placement(before, dist, move.at, k.kind, move.rotated, slot.connect)
                gains[key] = dist.value() - weighted(pl.after, w)
            self.score[h] += self.steer * sure * gains[key]
        if len(set(gains.values())) > 1:
            self.learnt = True

    def chances(self, board: Board, knowledge: list[list[str]]) -> dict[str, float] | None:
        """Each goal's chance to hold the gold (0 for the goals known to be stone), or None
        when `knowledge` and the revealed goals already fix it or nothing was learnt."""
        if not self.learnt:
            return None
        w = goal_weights(board, knowledge)
        open_ = [g for g in GOALS if w[g] > 0.0]
        if len(open_) < 2:
            return None
        top = max(self.score[g] for g in open_)
        raw = {g: math.exp(self.score[g] - top) if g in open_ else 0.0 for g in GOALS}
        total = sum(raw.values())
        return {g: x / total for g, x in raw.items()}

"""How saboteur-like each player acts, learnt from public moves only.

Every player has a score in log-odds units; `p(player)` turns it, with the prior share of
saboteurs, into the chance that the player is a saboteur. Evidence (RULES.md terms):

| public move | evidence |
|---|---|
| a path card that brings the maze closer to a possible gold goal | digger-like (-0.7) |
| a path card that makes it farther (fills the best frontier cell, walls it off) | saboteur-like (+1.2) |
| a dead end placed on the reachable maze | saboteur-like (+0.8 more) |
| rockfall that makes the maze farther from the goals / clears a dead end / does nothing | +1.5 / -0.8 / +0.3 |
| break or trap on a trusted player / on a suspect | up to +1 / down to -1 |
| repair or free of a suspect / of a trusted player | up to +0.6 / down to -0.6 |
| being broken by a trusted player / by a suspect | a little more / less suspect |

A private `inspect` result fixes a player's role for good. `swap-hat` on a player forgets
what was learnt about them (they hold a new role).
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..board import Board
from ..catalog import CLASSIC, Ruleset, card_kind
from ..moves import Move, parse
from ..state import CLASSIC_SABOTEURS
from .maze import Distance, distance, goal_weights, placement

EXPANSION_SABOTEUR_SHARE = 3 / 15


def prior(ruleset: Ruleset, players: int) -> float:
    """The chance that another player is a saboteur before any move."""
    if ruleset == CLASSIC:
        # n+1 dwarf cards dealt to n players; the one aside is a saboteur with this share.
        sab = CLASSIC_SABOTEURS.get(players, 1)
        return sab / (players + 1)
    return EXPANSION_SABOTEUR_SHARE


@lru_cache(maxsize=512)
def parse_public(text: str) -> Move | None:
    """A public move's text as a Move (None: a text no move reads so; a bot never fails on it)."""
    try:
        return parse(text)
    except Exception:  # noqa: BLE001 - a bot never fails on an odd text
        return None


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


class Suspicion:
    """Per-round suspicion scores of the other players, from one player's point of view."""

    def __init__(self, me: str, players: tuple[str, ...], ruleset: Ruleset) -> None:
        self.me = me
        self.players = players
        self.score: dict[str, float] = {p: 0.0 for p in players}
        self.known: dict[str, str] = {}  # player -> role, from inspect
        self.base = _logit(prior(ruleset, len(players)))
        self.log: list[tuple[str, str]] = []  # (actor, public move text), the round's public record
        self.i_am_saboteur = False  # set by the bot: how attacks on me are judged

    def seen_by(self, me: str, saboteur: bool) -> Suspicion:
        """This model's scores as `me` would hold them (a saboteur or not): a new model that
        learns apart from this one (the search bot's players in a sampled world start so)."""
        other = Suspicion(me, self.players, CLASSIC)
        other.base = self.base
        other.score = dict(self.score)
        other.log = list(self.log)
        other.i_am_saboteur = saboteur
        return other

    def p(self, player: str) -> float:
        """The chance that `player` is a saboteur."""
        if player == self.me:
            return 1.0 if self.i_am_saboteur else 0.0
        if player in self.known:
            return 1.0 if self.known[player] == "saboteur" else 0.0
        z = self.base + self.score.get(player, 0.0)
        z = max(-20.0, min(20.0, z))
        return 1 / (1 + math.exp(-z))

    def learn(self, knowledge: list[list[str]]) -> None:
        for fact in knowledge:
            if fact and fact[0] == "inspect" and len(fact) == 3:
                self.known[fact[1]] = fact[2]

    def add(self, player: str, amount: float) -> None:
        if player in self.score and player != self.me:
            self.score[player] += amount

    def observe(self, before: Board | None, after: Board, text: str, actor: str) -> Move | None:
        """Update from one public move: the maze before and after, the move text, the actor.
        The card played, as a Move, for whoever learns more from it (None: not a card played
        face up: discards are face down, steals happen after the round)."""
        self.log.append((actor, text))
        if not text.startswith("play "):
            return None
        move = parse_public(text)
        if move is None or move.card is None:
            return None
        k = card_kind(move.card) if "." in move.card else None
        if k is None:
            return move
        if k.category == "path" or k.action == "rockfall":
            self.add(actor, maze_evidence(before, after, text, move))
        elif k.action in ("break", "trap") and move.target:
            self._attack(actor, move.target, 1.3 if k.action == "trap" else 1.0)
        elif k.action in ("fix", "free") and move.target and move.target != actor:
            pt = self.p(move.target)
            self.add(actor, 1.2 * (pt - 0.5))
            pa = self.p(actor)
            self.add(move.target, 0.4 * (pa - 0.5))
        elif k.action == "swap-hat" and move.target:
            self.score[move.target] = 0.0
            self.known.pop(move.target, None)
        return move

    def _attack(self, actor: str, target: str, strength: float) -> None:
        pt = self.p(target)
        self.add(actor, strength * 2 * (0.5 - pt))
        self.add(target, 0.6 * (0.5 - self.p(actor)))


def maze_evidence(before: Board | None, after: Board, text: str, move: Move) -> float:
    """How saboteur-like a placement or rockfall is (log-odds), judged on the public maze.

    Every observer judges a public move the same way, so the result is kept in the memo of
    the maze before the move (it holds the maze after, which lives on anyway: a maze keeps
    no older one alive), or of the maze after when the one before is unknown."""
    if before is None:
        memo = after.memo()
        key: tuple[str, str] = ("evidence of", text)
        hit = memo.get(key)
        if isinstance(hit, float):
            return hit
        value = memo[key] = _maze_evidence(before, after, move)
        return value
    memo = before.memo()
    key = ("evidence", text)
    kept = memo.get(key)
    if isinstance(kept, tuple) and kept[0] is after:
        return float(kept[1])
    value = _maze_evidence(before, after, move)
    memo[key] = (after, value)
    return value


def _maze_evidence(before: Board | None, after: Board, move: Move) -> float:
    assert move.card is not None and move.at is not None
    k = card_kind(move.card)
    if k.action == "rockfall":
        if before is None or before is after or move.at not in before.cells:
            return 0.0  # the maze before the move is unknown (moves observed in a batch)
        weights = goal_weights(before)
        d0 = distance(before, weights).value()
        d1 = distance(after, weights).value()
        return 1.5 if d1 > d0 + 1e-9 else -0.8 if d1 < d0 - 1e-9 else 0.3
    if before is None or move.at in before.cells:
        before = after.copy()
        before.remove(move.at)
    slot = before.slots().get(move.at)
    if slot is None:
        return 0.0
    weights = goal_weights(before)
    dist: Distance = distance(before, weights)
    pl = placement(before, dist, move.at, k.kind, move.rotated, slot.connect)
    d0 = dist.value()
    d1 = sum(w * pl.after[g] for g, w in weights.items() if w)
    out = 0.0
    if pl.reaches or d1 < d0 - 1e-9:
        out -= 0.7
    elif d1 > d0 + 1e-9:
        out += 1.2
    if pl.dead_end and pl.on_route:
        out += 0.8
    return out

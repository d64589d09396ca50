"""How a round stands for the gold diggers' side, judged on a whole state (a sampled world).

The search bot (engine/bots/search.py) plays each candidate a few turns ahead in a world and
reads the digger side's chances there instead of playing on to the round's end: one play-out
to the end decides on a coin's worth of luck, so a few dozen of them could not tell a good
move from a fair one. `digger_chance(state)` is a logistic model of the smart bots' own
rounds (fitted on their self-play: the chance that the digger side went on to win from a
turn like this one), over what a world shows: how far the reachable maze is from the gold,
how many cards are left to play, and how many players on each side cannot place path cards.
"""

from __future__ import annotations

import math

from ..board import GOAL_CELLS
from ..catalog import CLASSIC, TEAMS, card_kind
from ..state import RoundState
from .maze import FAR, _distance
from .sides import side_of

# Logistic coefficients by ruleset, for the features of `features` (in order), the intercept first.
WEIGHTS: dict[str, tuple[float, ...]] = {
    "classic": (4.00, -0.247, 0.078, -1.921, -0.046, -1.182, 0.0, -7.505, 0.0),
    "expansion": (4.648, 0.247, -0.030, -4.588, -1.161, -0.669, -0.645, -9.093, 1.047),
}


def gold_goal(state: RoundState) -> str | None:
    """The goal that holds the gold in a whole state (None if the state does not say)."""
    for name in GOAL_CELLS:
        if card_kind(state.board.goal_card(name)).kind == "goal-gold":
            return name
    return None


def features(state: RoundState) -> tuple[float, ...]:
    """What the model reads: the reachable maze's distance to the gold, the cards left a player,
    that distance over the cards left, the share of the digger side and of the saboteurs who
    cannot place path cards, how much farther the gold is for the team a door hinders least,
    the saboteurs' share of the table and whether a Boss plays."""
    board = state.board
    gold = gold_goal(state)
    weights = {g: (1.0 if g == gold else 0.0) for g in GOAL_CELLS}
    dg = float(min(FAR, _distance(board, weights, board.reach()).best[gold][0])) if gold else 5.0
    n = max(1, len(state.players))
    left = (len(state.deck) + sum(len(h) for h in state.hands.values())) / n
    diggers = [p for p in state.players if side_of(state.role(p)) == "digger"]
    saboteurs = [p for p in state.players if side_of(state.role(p)) == "saboteur"]
    bd = sum(state.blocked(p) for p in diggers) / max(1, len(diggers))
    bs = sum(state.blocked(p) for p in saboteurs) / max(1, len(saboteurs))
    door = 0.0
    if state.ruleset != CLASSIC and gold and any(t.face.door for t in board.cells.values()):
        dt = min(_distance(board, weights, board.team_reach(t)).best[gold][0] for t in TEAMS)
        door = float(min(FAR, dt)) - dg
    boss = float(any(state.role(p) == "boss" for p in state.players))
    return (dg, left, dg / (left + 1.0), bd, bs, door, len(saboteurs) / n, boss)


def digger_chance(state: RoundState) -> float:
    """The chance that the digger side wins the round from `state` (a whole state, in play)."""
    w = WEIGHTS["classic" if state.ruleset == CLASSIC else "expansion"]
    z = w[0] + sum(a * b for a, b in zip(w[1:], features(state)))
    z = max(-30.0, min(30.0, z))
    return 1.0 / (1.0 + math.exp(-z))

"""Which side won a finished round, as the bots and the arena count it (no I/O here).

The gold diggers' side is every role but the saboteur: classic diggers, the expansion's teams,
the Boss, the Profiteer and the geologists.
"""

from __future__ import annotations

from ..catalog import CLASSIC
from ..payout import winning_side
from ..state import RoundState

SABOTEUR_SIDE = frozenset({"saboteur"})


def digger_side_won(state: RoundState) -> bool:
    """Whether the gold diggers' side won a finished round (classic: the gold was found;
    expansion: a team or the Boss won)."""
    if state.ruleset == CLASSIC:
        return state.finder is not None
    teams, lone = winning_side(state)
    return bool(teams) or lone == "boss"


def saboteur_side_won(state: RoundState) -> bool:
    """Whether the saboteurs won a finished round (classic: the gold was not found)."""
    if state.ruleset == CLASSIC:
        return state.finder is None
    teams, lone = winning_side(state)
    return not teams and lone == "saboteur"


def side_of(role: str | None) -> str:
    """"saboteur" or "digger": the side a role plays for."""
    return "saboteur" if role in SABOTEUR_SIDE else "digger"


def side_won(state: RoundState, role: str | None) -> bool:
    """Whether the side of `role` won the finished round `state`."""
    return saboteur_side_won(state) if side_of(role) == "saboteur" else digger_side_won(state)

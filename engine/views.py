"""What one player may know: the full state with everything else masked.

A view is a `RoundState` in which hidden cards are the placeholder "?", so the same code
(legal moves, rendering, position dumps) works on it. Once the round is over, every view is
the full state: replays open all cards only then.
"""

from __future__ import annotations

from .board import Tile, face
from .state import PLAYING, RoundState

HIDDEN = "?"
_HIDDEN_GOAL = face("goal-gold", False)


def view(state: RoundState, player: str | None) -> RoundState:
    """The state as `player` sees it (None: a spectator who holds no cards)."""
    v = state.copy()
    if state.phase != PLAYING:
        return v
    mask = lambda cards: [HIDDEN] * len(cards)  # noqa: E731
    v.hands = {p: (h if p == player else mask(h)) for p, h in v.hands.items()}
    v.roles = {p: (r if p == player else None) for p, r in v.roles.items()}
    v.knowledge = {p: (k if p == player else []) for p, k in v.knowledge.items()}
    v.deck = mask(v.deck)
    v.discard = mask(v.discard)
    v.removed = mask(v.removed)
    v.nuggets = mask(v.nuggets)
    v.aside = mask(v.aside)
    v.retired = mask(v.retired)
    for pos, tile in v.board.cells.items():
        if tile.hidden:
            v.board.cells[pos] = Tile(HIDDEN, False, _HIDDEN_GOAL, hidden=True)
    return v

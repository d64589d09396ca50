from __future__ import annotations

import random

from ..moves import Move
from ..rules import listed_moves
from ..state import RoundState


class RandomBot:
    """Enumerates every legal move and picks one uniformly."""

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: RoundState) -> Move:
        moves = listed_moves(view)  # every legal move counted, only the one picked made
        return moves[self.rng.randrange(len(moves))]

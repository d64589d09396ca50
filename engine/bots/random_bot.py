from __future__ import annotations

import random

from ..moves import Move
from ..rules import listed_moves
from ..state import RoundState


class RandomBot:
    """Enumerates every legal move and picks one uniformly."""

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)
        self._bits = self.rng.getrandbits

    def choose(self, view: RoundState) -> Move:
        moves = listed_moves(view)  # every legal move counted, only the one picked made
        # rng.randrange(n), unrolled (CPython's _randbelow_with_getrandbits: the same draws and
        # result, without its two Python calls per turn); an empty list raises as randrange does
        n = len(moves)
        if n <= 0:
            raise ValueError("empty range for randrange()")
        k = n.bit_length()
        bits = self._bits
        r = bits(k)
        while r >= n:
            r = bits(k)
        return moves[r]

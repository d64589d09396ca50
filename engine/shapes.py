"""Edges, shape codes and their 180-degree turn.

A card's tunnels are a tuple of segments; each segment is a bit mask of the edges it joins.
Bit masks make edge matching a couple of integer operations, which matters in the legal-move
generator (it runs thousands of times per simulated round).
"""

from __future__ import annotations

N, E, S, W = 1, 2, 4, 8
EDGES = (N, E, S, W)
EDGE_LETTERS = {"N": N, "E": E, "S": S, "W": W}
OPPOSITE = {N: S, E: W, S: N, W: E}
# Offset of the neighbouring cell behind each edge (y grows downward).
STEP = {N: (0, -1), E: (1, 0), S: (0, 1), W: (-1, 0)}

_TURN = [0] * 16
for _m in range(16):
    _TURN[_m] = (
        (S if _m & N else 0) | (N if _m & S else 0) | (W if _m & E else 0) | (E if _m & W else 0)
    )
TURN: tuple[int, ...] = tuple(_TURN)


def turned(mask: int) -> int:
    """The mask after a 180-degree turn (N<->S, E<->W)."""
    return TURN[mask]


def parse_segments(code: str) -> tuple[int, ...]:
    """`"NS|EW"` -> (N|S, E|W). Modifiers are handled by the catalog."""
    segments = []
    for part in code.split("|"):
        mask = 0
        for letter in part:
            mask |= EDGE_LETTERS[letter]
        segments.append(mask)
    return tuple(segments)


def format_mask(mask: int) -> str:
    return "".join(letter for letter, bit in EDGE_LETTERS.items() if mask & bit)

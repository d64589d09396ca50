"""All chance in a round goes through a `Chance`.

`SeededChance` is a documented, portable generator (SHA-256 in counter mode, rejection
sampling, Fisher-Yates from the end), so anyone can recompute a deal from its seed in any
language. A later trustless mode (players shuffling jointly, no host) plugs in here by
providing another `Chance`; nothing else in the engine draws randomness.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Protocol, Sequence, TypeVar

T = TypeVar("T")
_WORDS = struct.Struct(">4Q")  # a SHA-256 block as four big-endian 64-bit words


class Chance(Protocol):
    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A new list holding `items` in a random order."""
        ...


class SeededChance:
    """Deterministic chance from a seed: block i of the stream is SHA-256(seed || i as 8 bytes BE)."""

    def __init__(self, seed: bytes | str | int) -> None:
        if isinstance(seed, int):
            seed = str(seed)
        if isinstance(seed, str):
            seed = seed.encode()
        self._seed = bytes(seed)
        self._counter = 0
        self._left: list[int] = []  # the unused 64-bit words of the last block, last word first

    def _next64(self) -> int:
        """The next 8 bytes of the stream, big-endian: a block gives four, in order."""
        if not self._left:
            block = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._left = list(_WORDS.unpack(block))
            self._left.reverse()
        return self._left.pop()

    def below(self, n: int) -> int:
        """Uniform in [0, n) without modulo bias."""
        limit = (1 << 64) - (1 << 64) % n
        while True:
            v = self._next64()
            if v < limit:
                return v % n

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

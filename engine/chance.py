"""All chance in a round goes through a `Chance`.

`SeededChance` is a documented, portable generator (SHA-256 in counter mode, rejection
sampling, Fisher-Yates from the end), so anyone can recompute a deal from its seed in any
language. A later trustless mode (players shuffling jointly, no host) plugs in here by
providing another `Chance`; nothing else in the engine draws randomness.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from hashlib import sha256
from operator import lt, mod
from typing import Protocol, TypeVar

T = TypeVar("T")
_WORDS = struct.Struct(">4Q")  # a SHA-256 block as four big-endian 64-bit words
_SPAN = 1 << 64  # the words' range


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
        self._prefix = sha256(self._seed)  # copied for each block: cheaper than a new hash
        self._counter = 0
        self._left: list[int] = []  # the unused 64-bit words of the last block, last word first

    def _refill(self) -> None:
        """Put the next block's four words in `_left` (empty now; the same list, last word first)."""
        h = self._prefix.copy()  # SHA-256(seed || counter): a copy of the hash of the seed, then the counter
        h.update(self._counter.to_bytes(8, "big"))
        block = h.digest()
        self._counter += 1
        self._left.extend(reversed(_WORDS.unpack(block)))

    def _next64(self) -> int:
        """The next 8 bytes of the stream, big-endian: a block gives four, in order."""
        if not self._left:
            self._refill()
        return self._left.pop()

    def below(self, n: int) -> int:
        """Uniform in [0, n) without modulo bias."""
        limit = _SPAN - _SPAN % n
        while True:
            v = self._next64()
            if v < limit:
                return v % n

    def shuffled(self, items: Sequence[T]) -> list[T]:
        # Fisher-Yates from the end: swap i takes the next word v below the limit for n = i + 1
        # and j = v % n. A word is refused with a chance below n / 2**64, so all the words are
        # drawn at once and checked in one go; only if one is refused is it done word by word
        # (the same draws, in the same order, either way: a deal shuffles about a hundred cards).
        out = list(items)
        need = len(out) - 1
        if need < 1:
            return out
        left = self._left
        words = left[::-1]  # the last block's unused words, in stream order
        left.clear()
        while len(words) < need:
            h = self._prefix.copy()
            h.update(self._counter.to_bytes(8, "big"))
            self._counter += 1
            words += _WORDS.unpack(h.digest())
        sizes = range(need + 1, 1, -1)
        if all(map(lt, words, _limits(sizes))):
            left.extend(reversed(words[need:]))
            for i, j in zip(range(need, 0, -1), map(mod, words, sizes)):
                out[i], out[j] = out[j], out[i]
            return out
        left.extend(reversed(words))  # put them back and take them one at a time
        for i in range(need, 0, -1):
            n = i + 1
            limit = _SPAN - _SPAN % n
            while True:
                if not left:
                    self._refill()
                v = left.pop()
                if v < limit:
                    break
            j = v % n
            out[i], out[j] = out[j], out[i]
        return out


def _limits(sizes: range) -> Iterator[int]:
    """For each n of `sizes` (falling), the limit below which a word is taken for a draw below n
    (the words from it up would bias the draw): the largest multiple of n up to 2**64."""
    if sizes.start < len(_LIMITS):
        return map(_LIMITS.__getitem__, sizes)
    return (_SPAN - _SPAN % n for n in sizes)


_LIMITS = [_SPAN] + [_SPAN - _SPAN % n for n in range(1, 512)]  # a deck is about a hundred cards

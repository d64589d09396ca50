"""Fiat-Shamir transcripts: every challenge hashes the whole statement and its context.

A transcript is SHA-512 over length-prefixed, labelled items, started with the proof's name
("pbem/v1 mental transcript <proof>") and the caller's context (canonical JSON naming the
game, seat, round, stack and purpose). A proof made for one game, seat, round or stack thus
never verifies for another, and a proof of one kind never passes as another kind.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pbem.protocol.crypto import canonical_json
from pbem.protocol.mental.group import GENERATOR, ORDER, Point, points_bytes, scalars_bytes

_LABEL = b"pbem/v1 mental transcript "


def _framed(label: str, data: bytes) -> bytes:
    name = label.encode()
    return len(name).to_bytes(2, "little") + name + len(data).to_bytes(8, "little") + data


def context(purpose: str, **fields: Any) -> bytes:
    """What a proof is about, as canonical JSON: e.g. context("token", game=..., seat=..., round=...,
    stack=..., slot=..., to=...). Every field the protocol knows goes in; none is optional."""
    return canonical_json({"purpose": purpose, **fields})


class Transcript:
    def __init__(self, proof: str, context: bytes) -> None:
        self._h = hashlib.sha512(_LABEL + proof.encode() + b"\n")
        self.absorb("context", context)

    def absorb(self, label: str, data: bytes) -> None:
        self._h.update(_framed(label, data))

    def points(self, label: str, points: list[Point]) -> None:
        self.absorb(label, points_bytes(points))

    def statement(self, points: list[Point], label: str = "statement") -> None:
        """The points a proof is about, after the generator G: every statement names its group."""
        self.points(label, [GENERATOR, *points])

    def scalars(self, label: str, values: list[int]) -> None:
        self.absorb(label, scalars_bytes(values))

    def challenge(self, label: str) -> int:
        """A challenge scalar; it is absorbed too, so later challenges depend on it."""
        h = self._h.copy()
        h.update(_framed("challenge", label.encode()))
        value = int.from_bytes(h.digest(), "little") % ORDER
        self.scalars(f"challenge {label}", [value])
        return value

    def challenges(self, label: str, n: int) -> list[int]:
        seed = self._h.copy()
        seed.update(_framed("challenges", label.encode()))
        root = seed.digest()
        out = []
        for i in range(n):
            h = hashlib.sha512(_LABEL + b"expand\n" + root + i.to_bytes(8, "little"))
            out.append(int.from_bytes(h.digest(), "little") % ORDER)
        self.scalars(f"challenges {label}", out)
        return out

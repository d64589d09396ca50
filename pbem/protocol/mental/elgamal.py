"""Additive ElGamal under a joint key, with decryption tokens (Barnett-Smart).

A ciphertext of a point M under key Y is (c1, c2) = (rG, M + rY). The joint key of the seats
is the sum of their key shares Y_j = x_j G; seat j's decryption token for a ciphertext is
D_j = x_j c1, and M = c2 - sum_j D_j once every seat has given its token. Anyone can
re-encrypt (add an encryption of the identity) without knowing any secret, which is what
a shuffle does.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.errors import Text, msg
from pbem.protocol.mental.group import (
    GENERATOR,
    IDENTITY,
    POINT_BYTES,
    Point,
    ScalarSource,
    base_mul,
    point_sum,
    random_scalar,
    unpack,
)

CIPHERTEXT_BYTES = 2 * POINT_BYTES


@dataclass(frozen=True, slots=True)
class Ciphertext:
    c1: Point
    c2: Point

    def encode(self) -> bytes:
        return self.c1.raw + self.c2.raw

    @classmethod
    def decode(cls, data: bytes, what: Text = "") -> Ciphertext:
        (c1, c2), _ = unpack(data, 2, 0, what=what, name=msg("a ciphertext"))
        return cls(c1, c2)


@dataclass(frozen=True)
class KeyShare:
    """One seat's secret share x and its public part Y = xG."""

    secret: int
    public: Point

    @classmethod
    def new(cls, rng: ScalarSource = random_scalar) -> KeyShare:
        x = 0
        while x == 0:
            x = rng()
        return cls(x, base_mul(x))


def joint_key(shares: list[Point]) -> Point:
    return point_sum(shares)


def trivial(m: Point) -> Ciphertext:
    """The public 'encryption' with randomness 0 that every stack starts as."""
    return Ciphertext(IDENTITY, m)


def encrypt(key: Point, m: Point, r: int) -> Ciphertext:
    return Ciphertext(base_mul(r), m + key * r)


def reencrypt(key: Point, ct: Ciphertext, r: int) -> Ciphertext:
    return Ciphertext(ct.c1 + base_mul(r), ct.c2 + key * r)


def token_point(secret: int, ct: Ciphertext) -> Point:
    """The raw decryption token x*c1 (without its proof; see proofs.make_token)."""
    return ct.c1 * secret


def open_with(ct: Ciphertext, tokens: list[Point]) -> Point:
    """The plaintext point, given every seat's token."""
    return ct.c2 - point_sum(tokens)


def decrypt(ct: Ciphertext, secret: int) -> Point:
    """The plaintext point, given the whole secret of the joint key (every seat's share summed:
    the tokens x_1 c1 + ... + x_n c1 add up to (x_1 + ... + x_n) c1, one multiplication)."""
    return ct.c2 - ct.c1 * secret


__all__ = [
    "GENERATOR",
    "Ciphertext",
    "KeyShare",
    "decrypt",
    "encrypt",
    "joint_key",
    "open_with",
    "reencrypt",
    "token_point",
    "trivial",
]

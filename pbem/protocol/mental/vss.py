"""Feldman verifiable secret sharing of a seat's keys, and the stand-in shares through which
the other seats do a vanished seat's part of a decryption (docs/trustless.md §11).

A dealer shares each of its secrets x_e (one per epoch) with a threshold K among holders
named by their seat index i (x-coordinate i + 1): f_e(z) = x_e + a_1 z + ... + a_{K-1} z^{K-1}.
The commitments are A_0 = x_e G (the dealer's published key share, never sent again) and
A_k = a_k G; anyone computes a holder's public image S_i = sum_k (i+1)^k A_k = f_e(i+1) G.
Each holder's shares are sealed to its seal key Z_i: XOR with a pad hashed from the dealing's
context, the holder and the Diffie-Hellman point P_i = r Z_i = z_i R (R = rG, one per dealing).

A holder that finds a share off its image complains by publishing P_i with a Chaum-Pedersen
proof (log_G Z_i = log_R P_i): anyone then opens that share and says who lied. A stand-in share
for a ciphertext is s_i c1 with the token proof of proofs.py against S_i, and K of them
combine by Lagrange interpolation in the exponent to the dealer's token x_e c1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pbem.errors import Text, msg
from pbem.protocol.mental.elgamal import Ciphertext, KeyShare
from pbem.protocol.mental.group import (
    ORDER,
    POINT_BYTES,
    SCALAR_BYTES,
    Point,
    ScalarSource,
    base_mul,
    point_sum,
    random_scalar,
    scalar_bytes,
)
from pbem.protocol.mental.proofs import BadProof, Token, check_dleq, check_token, make_token, prove_dleq
from pbem.protocol.mental.transcript import Transcript, context


class BadShare(BadProof):
    """A secret share or stand-in share that does not match its dealer's commitments."""


def x_of(index: int) -> int:
    """A holder's x-coordinate: its seat index plus one (0 is where the secret lies)."""
    return index + 1


@dataclass(frozen=True, slots=True)
class Dealing:
    """The public part of one dealer's sharing: commitments and sealed shares.

    `holders` are seat indices in seat order (the dealer's own left out); `sealed[j]` is for
    `holders[j]`, one 32-byte share per epoch. The wire form is R, then every epoch's
    commitments A_1..A_{K-1}, then every holder's sealed shares; its sizes follow from the
    table (epochs, threshold, holders), so it carries no length of its own."""

    threshold: int
    holders: tuple[int, ...]
    commitments: tuple[tuple[Point, ...], ...]
    ephemeral: Point
    sealed: tuple[bytes, ...]

    @property
    def epochs(self) -> int:
        return len(self.commitments)

    def encode(self) -> bytes:
        return (self.ephemeral.raw + b"".join(a.raw for row in self.commitments for a in row)
                + b"".join(self.sealed))

    @classmethod
    def size(cls, epochs: int, threshold: int, holders: int) -> int:
        return POINT_BYTES * (1 + epochs * (threshold - 1)) + SCALAR_BYTES * epochs * holders

    @classmethod
    def decode(cls, data: bytes, epochs: int, threshold: int, holders: Sequence[int], what: Text = "") -> Dealing:
        what = what or msg("a key dealing")
        if not 1 <= threshold <= len(holders):
            raise BadShare(msg("a threshold of {k} is not between 1 and the {n} holders", k=threshold, n=len(holders)))
        if len(data) != cls.size(epochs, threshold, len(holders)):
            raise BadShare(msg("{what} must be {n} bytes, not {size}", what=what,
                               n=cls.size(epochs, threshold, len(holders)), size=len(data)))
        points = [Point.decode(data[k:k + POINT_BYTES], what)
                  for k in range(0, POINT_BYTES * (1 + epochs * (threshold - 1)), POINT_BYTES)]
        rows = tuple(tuple(points[1 + e * (threshold - 1):1 + (e + 1) * (threshold - 1)]) for e in range(epochs))
        start, width = POINT_BYTES * len(points), SCALAR_BYTES * epochs
        sealed = tuple(data[start + j * width:start + (j + 1) * width] for j in range(len(holders)))
        return cls(threshold, tuple(holders), rows, points[0], sealed)

    def sealed_for(self, index: int) -> bytes:
        return self.sealed[self.holders.index(index)]


def _pad(ctx: bytes, index: int, ephemeral: Point, seal_key: Point, dh: Point, n: int) -> bytes:
    tr = Transcript("vss seal", ctx)
    tr.absorb("holder", index.to_bytes(4, "little"))
    tr.points("statement", [ephemeral, seal_key, dh])
    return tr.pad("shares", n)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def _poly(coeffs: Sequence[int], x: int) -> int:
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + c) % ORDER
    return acc


def deal(secrets: Sequence[int], holders: Sequence[tuple[int, Point]], threshold: int, ctx: bytes,
         rng: ScalarSource = random_scalar) -> Dealing:
    """Share each secret (one per epoch) among `holders` (seat index, seal key) so that any
    `threshold` of them can rebuild it. `ctx` names the game and the dealer."""
    if not 1 <= threshold <= len(holders):
        raise BadShare(msg("a threshold of {k} is not between 1 and the {n} holders", k=threshold, n=len(holders)))
    polys = [[x, *(rng() for _ in range(threshold - 1))] for x in secrets]
    r = rng()
    ephemeral = base_mul(r)
    sealed = []
    for index, seal_key in holders:
        shares = b"".join(scalar_bytes(_poly(p, x_of(index))) for p in polys)
        sealed.append(_xor(shares, _pad(ctx, index, ephemeral, seal_key, seal_key * r, len(shares))))
    commitments = tuple(tuple(base_mul(a) for a in p[1:]) for p in polys)
    return Dealing(threshold, tuple(i for i, _ in holders), commitments, ephemeral, tuple(sealed))


def image(key: Point, commitments: Sequence[Point], index: int) -> Point:
    """S_i = f(i+1) G from the public commitments (A_0 = the dealer's key for that epoch)."""
    x, power, terms = x_of(index), 1, [key]
    for a in commitments:
        power = power * x % ORDER
        terms.append(a * power)
    return point_sum(terms)


def images(keys: Sequence[Point], dealing: Dealing, index: int) -> list[Point]:
    """The holder's public image for every epoch."""
    return [image(k, row, index) for k, row in zip(keys, dealing.commitments, strict=True)]


def _unseal(dealing: Dealing, index: int, seal_key: Point, dh: Point, ctx: bytes) -> list[int]:
    box = dealing.sealed_for(index)
    plain = _xor(box, _pad(ctx, index, dealing.ephemeral, seal_key, dh, len(box)))
    return [int.from_bytes(plain[k:k + SCALAR_BYTES], "little") for k in range(0, len(plain), SCALAR_BYTES)]


def _match(shares: Sequence[int], keys: Sequence[Point], dealing: Dealing, index: int) -> bool:
    return all(s < ORDER and base_mul(s) == img for s, img in zip(shares, images(keys, dealing, index), strict=True))


def open_shares(dealing: Dealing, index: int, seal: KeyShare, keys: Sequence[Point], ctx: bytes) -> list[int]:
    """The holder's own shares, checked against the commitments; BadShare if any is off (then
    the holder complains, `complain`)."""
    shares = _unseal(dealing, index, seal.public, dealing.ephemeral * seal.secret, ctx)
    if not _match(shares, keys, dealing, index):
        raise BadShare(msg("the key shares dealt to seat {index} do not match their commitments", index=index))
    return shares


# A holder's open complaint is its Diffie-Hellman point for the dealing with the proof that it
# is (log_G Z_i = log_R P_i): the same 96 bytes, and the same proof, as a decryption token.
Complaint = Token


def _complaint_context(ctx: bytes, index: int) -> bytes:
    return context("vss complaint", dealing=ctx.decode(), holder=index)


def complain(dealing: Dealing, index: int, seal: KeyShare, ctx: bytes, rng: ScalarSource = random_scalar) -> Complaint:
    dh = dealing.ephemeral * seal.secret
    return Token(dh, prove_dleq(seal.secret, seal.public, dealing.ephemeral, dh, _complaint_context(ctx, index), rng))


Fault = Literal["dealer", "complainer"]


def judge(complaint: Complaint, dealing: Dealing, index: int, seal_key: Point, keys: Sequence[Point],
          ctx: bytes) -> Fault:
    """Who lied, from public facts only: the complainer if its proof fails or the share it
    exposes matches the commitments (a forged complaint), else the dealer."""
    if not check_dleq(seal_key, dealing.ephemeral, complaint.point, complaint.proof, _complaint_context(ctx, index)):
        return "complainer"
    return "complainer" if _match(_unseal(dealing, index, seal_key, complaint.point, ctx), keys, dealing, index) else "dealer"


# --- doing a vanished dealer's part ------------------------------------------------------------


def stand_in(share: int, image_point: Point, ct: Ciphertext, ctx: bytes, rng: ScalarSource = random_scalar) -> Token:
    """A holder's share s_i c1 of the dealer's token, with its Chaum-Pedersen proof against S_i."""
    return make_token(KeyShare(share, image_point), ct, ctx, rng)


def check_stand_in(image_point: Point, ct: Ciphertext, token: Token, ctx: bytes) -> None:
    try:
        check_token(image_point, ct, token, ctx)
    except BadProof as e:
        raise BadShare(msg("a stand-in share does not match its holder's image (its proof fails)")) from e


def lagrange(indices: Sequence[int]) -> dict[int, int]:
    """Each holder's Lagrange coefficient at 0 for the quorum `indices` (seat indices)."""
    xs = {i: x_of(i) for i in indices}
    if len(xs) != len(indices):
        raise BadShare(msg("a quorum names a holder twice"))
    out = {}
    for i, xi in xs.items():
        num = den = 1
        for j, xj in xs.items():
            if j != i:
                num = num * xj % ORDER
                den = den * (xj - xi) % ORDER
        out[i] = num * pow(den, -1, ORDER) % ORDER
    return out


def _quorum(parts: Mapping[int, object], threshold: int) -> dict[int, int]:
    if len(parts) < threshold:
        raise BadShare(msg("{n} shares, but {k} are needed", n=len(parts), k=threshold))
    return lagrange(sorted(parts)[:threshold])


def combine(parts: Mapping[int, Point], threshold: int) -> Point:
    """The dealer's token x c1 from checked stand-in shares (seat index -> s_i c1)."""
    return point_sum([parts[i] * lam for i, lam in _quorum(parts, threshold).items()])


def check_secret_share(share: int, image_point: Point) -> None:
    """A holder's share of a round key published at the round's end, against its image."""
    if not 0 <= share < ORDER or base_mul(share) != image_point:
        raise BadShare(msg("a published key share does not match its holder's image"))


def reconstruct(parts: Mapping[int, int], key: Point, threshold: int) -> int:
    """The dealer's secret from checked scalar shares, checked against its key share."""
    x = sum(parts[i] * lam for i, lam in _quorum(parts, threshold).items()) % ORDER
    if base_mul(x) != key:
        raise BadShare(msg("the key shares do not rebuild their dealer's key"))
    return x

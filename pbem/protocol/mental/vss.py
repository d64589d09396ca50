"""Feldman verifiable secret sharing of a seat's keys, and the stand-in shares through which
the other seats do a vanished seat's part of a decryption (docs/trustless.md §11).

A dealer shares each of its secrets x_e (one per epoch) with a threshold K among holders
named by their seat index i (x-coordinate i + 1): f_e(z) = x_e + a_1 z + ... + a_{K-1} z^{K-1}.
The commitments are A_0 = x_e G (the dealer's published key share, never sent again) and
A_k = a_k G; anyone computes a holder's public image S_i = sum_k (i+1)^k A_k = f_e(i+1) G.
Each holder's shares are sealed to it outside this module (the seat's own HPKE key, which the
invitation names, so a seat deals at its join without waiting for anyone).

A holder that finds a share off its image complains in the open; the dealer answers with those
shares in the open and `judge` says who lied. A stand-in share
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
    Point,
    ScalarSource,
    base_mul,
    pack,
    point_sum,
    random_scalar,
    unpack,
    wire_size,
)
from pbem.protocol.mental.proofs import BadProof, Token, check_token, make_token
from pbem.protocol.mental.transcript import Transcript


class BadShare(BadProof):
    """A secret share or stand-in share that does not match its dealer's commitments."""


def x_of(index: int) -> int:
    """A holder's x-coordinate: its seat index plus one (0 is where the secret lies)."""
    return index + 1


@dataclass(frozen=True, slots=True)
class Dealing:
    """The public part of one dealer's sharing: every epoch's commitments A_1..A_{K-1}.

    The wire form is the points, epoch after epoch; its size follows from the table (epochs,
    threshold), so it carries no length of its own. The shares go to each holder sealed
    (`share_bytes`), outside this module."""

    threshold: int
    commitments: tuple[tuple[Point, ...], ...]

    def encode(self) -> bytes:
        return pack(a for row in self.commitments for a in row)

    @classmethod
    def size(cls, epochs: int, threshold: int) -> int:
        return wire_size(points=epochs * (threshold - 1))

    @classmethod
    def decode(cls, data: bytes, epochs: int, threshold: int, holders: int, what: Text = "") -> Dealing:
        what = what or msg("a key dealing")
        if not 1 <= threshold <= holders:
            raise BadShare(msg("a threshold of {k} is not between 1 and the {n} holders", k=threshold, n=holders))
        points, _ = unpack(data, epochs * (threshold - 1), 0, BadShare, what)
        width = threshold - 1
        return cls(threshold, tuple(tuple(points[e * width:(e + 1) * width]) for e in range(epochs)))


def _poly(coeffs: Sequence[int], x: int) -> int:
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + c) % ORDER
    return acc


def deal(secrets: Sequence[int], holders: Sequence[int], threshold: int,
         rng: ScalarSource = random_scalar) -> tuple[Dealing, dict[int, list[int]]]:
    """Share each secret (one per epoch) among `holders` (seat indices) so that any `threshold`
    of them can rebuild it: (the public commitments, each holder's shares by seat index)."""
    if not 1 <= threshold <= len(holders):
        raise BadShare(msg("a threshold of {k} is not between 1 and the {n} holders", k=threshold, n=len(holders)))
    polys = [[x, *(rng() for _ in range(threshold - 1))] for x in secrets]
    shares = {i: [_poly(p, x_of(i)) for p in polys] for i in holders}
    return Dealing(threshold, tuple(tuple(base_mul(a) for a in p[1:]) for p in polys)), shares


def share_bytes(shares: Sequence[int]) -> bytes:
    """One holder's shares, 32 bytes each, epoch after epoch (what is sealed to it)."""
    return pack(scalars=shares)


def decode_shares(data: bytes, epochs: int, what: Text = "") -> list[int]:
    return unpack(data, 0, epochs, BadShare, what, msg("a key dealing"))[1]


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


def shares_match(shares: Sequence[int], keys: Sequence[Point], dealing: Dealing, index: int) -> bool:
    """Whether a holder's shares are the ones the commitments (and the dealer's keys) fix."""
    return len(shares) == len(keys) and all(
        0 <= s < ORDER and base_mul(s) == img for s, img in zip(shares, images(keys, dealing, index), strict=True))


def check_shares(shares: Sequence[int], keys: Sequence[Point], dealing: Dealing, index: int) -> None:
    """A holder's check of its opened shares at join; BadShare (it then complains) if any is off."""
    if not shares_match(shares, keys, dealing, index):
        raise BadShare(msg("the key shares dealt to seat {index} do not match their commitments", index=index))


Fault = Literal["dealer", "complainer"]


def judge(answer: Sequence[int] | None, keys: Sequence[Point], dealing: Dealing, index: int) -> Fault:
    """Who lied about holder `index`'s shares, from public facts only. The holder complained in
    the open; the dealer answers with those shares in the open (None: it did not, by its
    deadline). Shares that match the commitments make the complaint forged."""
    return "complainer" if answer is not None and shares_match(answer, keys, dealing, index) else "dealer"


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


# --- a stand-in share for a later reader: sealed to it, checked by everyone ----------------------

SEALED_SHARE_BYTES = wire_size(2, 3)


@dataclass(frozen=True, slots=True)
class SealedShare:
    """A holder's stand-in share E = s_i c1 ElGamal-encrypted to reader R's key Y_R for the
    slot's epoch, (A, B) = (rG, E + rY_R), with a proof that it is one: knowledge of (s_i, r)
    with S_i = s_i G, A = rG and B = s_i c1 + r Y_R. Anyone checks it against S_i; only R
    opens it (E = B - x_R A)."""

    a: Point
    b: Point
    challenge: int
    z_share: int
    z_blind: int

    def encode(self) -> bytes:
        return pack((self.a, self.b), (self.challenge, self.z_share, self.z_blind))

    @classmethod
    def decode(cls, data: bytes, what: Text = "") -> SealedShare:
        what = what or msg("a sealed stand-in share")
        (a, b), (e, z1, z2) = unpack(data, 2, 3, BadShare, what)
        return cls(a, b, e, z1, z2)

    @property
    def box(self) -> Ciphertext:
        """The box as a ciphertext under the reader's key (the reader's token on it opens it)."""
        return Ciphertext(self.a, self.b)


def _sealed_challenge(image_point: Point, c1: Point, reader: Point, a: Point, b: Point, t: list[Point],
                      ctx: bytes) -> int:
    tr = Transcript("sealed stand-in", ctx)
    tr.statement([image_point, c1, reader, a, b])
    tr.points("commitment", t)
    return tr.challenge("e")


def seal_stand_in(share: int, image_point: Point, ct: Ciphertext, reader: Point, ctx: bytes,
                  rng: ScalarSource = random_scalar) -> SealedShare:
    """Holder i's share s_i c1 of the dealer's token, sealed to the reader's key `reader`."""
    r, w1, w2 = rng(), rng(), rng()
    a, b = base_mul(r), ct.c1 * share + reader * r
    e = _sealed_challenge(image_point, ct.c1, reader, a, b, [base_mul(w1), base_mul(w2), ct.c1 * w1 + reader * w2], ctx)
    return SealedShare(a, b, e, (w1 + e * share) % ORDER, (w2 + e * r) % ORDER)


def check_sealed_stand_in(image_point: Point, ct: Ciphertext, reader: Point, sealed: SealedShare, ctx: bytes) -> None:
    """That the box holds the holder's share s_i c1 (S_i = s_i G) for the reader's key: public."""
    e, z1, z2 = sealed.challenge, sealed.z_share, sealed.z_blind
    t = [base_mul(z1) - image_point * e, base_mul(z2) - sealed.a * e, ct.c1 * z1 + reader * z2 - sealed.b * e]
    if _sealed_challenge(image_point, ct.c1, reader, sealed.a, sealed.b, t, ctx) != e:
        raise BadShare(msg("a sealed stand-in share does not hold its holder's share (its proof fails)"))


def open_stand_in(secret: int, sealed: SealedShare) -> Point:
    """The reader opens a sealed share with its key x_R: s_i c1 = B - x_R A."""
    return sealed.b - sealed.a * secret

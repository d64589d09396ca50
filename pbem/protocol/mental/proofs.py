"""Sigma proofs made non-interactive by Fiat-Shamir: Schnorr and Chaum-Pedersen.

Both are sent in the short (challenge, response) form: the verifier recomputes the
commitments from the response and checks that hashing them gives back the challenge.

- A key share comes with a Schnorr proof that its owner knows x with Y = xG, so no seat can
  pick its share as a function of the others' (a rogue key that would cancel them).
- A decryption token D = x c1 comes with a Chaum-Pedersen proof that log_G Y = log_c1 D: the
  token was made with the same secret as the seat's published share, so a wrong token is
  refused at the message that carries it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.errors import BadPacket, Text, msg
from pbem.protocol.mental.elgamal import Ciphertext, KeyShare, token_point
from pbem.protocol.mental.group import (
    ORDER,
    Point,
    ScalarSource,
    base_mul,
    pack,
    random_scalar,
    unpack,
    wire_size,
)
from pbem.protocol.mental.transcript import Transcript

TOKEN_BYTES = wire_size(points=1, scalars=2)


class BadProof(BadPacket):
    """A zero-knowledge proof that does not verify: the message carrying it is refused."""


@dataclass(frozen=True, slots=True)
class Proof:
    challenge: int
    response: int

    def encode(self) -> bytes:
        return pack(scalars=(self.challenge, self.response))

    @classmethod
    def decode(cls, data: bytes, what: Text = "") -> Proof:
        _, (challenge, response) = unpack(data, 0, 2, BadProof, what, msg("a proof"))
        return cls(challenge, response)


# --- Schnorr: knowledge of a key share -------------------------------------------------------


def _schnorr_challenge(key: Point, t: Point, context: bytes) -> int:
    tr = Transcript("schnorr key", context)
    tr.statement([key])
    tr.points("commitment", [t])
    return tr.challenge("e")


def prove_key(share: KeyShare, context: bytes, rng: ScalarSource = random_scalar) -> Proof:
    w = rng()
    e = _schnorr_challenge(share.public, base_mul(w), context)
    return Proof(e, (w + e * share.secret) % ORDER)


def check_key(key: Point, proof: Proof, context: bytes, who: Text = "") -> None:
    if key.is_identity:
        raise BadProof(msg("{what} is the identity point", what=who or msg("a key share")))
    t = base_mul(proof.response) - key * proof.challenge
    if _schnorr_challenge(key, t, context) != proof.challenge:
        raise BadProof(msg("the proof of knowledge of {what} does not verify", what=who or msg("a key share")))


# --- Chaum-Pedersen: equal discrete logs, used for decryption tokens -------------------------


def _dleq_challenge(key: Point, base2: Point, value2: Point, t1: Point, t2: Point, context: bytes) -> int:
    tr = Transcript("chaum-pedersen", context)
    tr.statement([key, base2, value2])
    tr.points("commitment", [t1, t2])
    return tr.challenge("e")


def prove_dleq(x: int, key: Point, base2: Point, value2: Point, context: bytes,
               rng: ScalarSource = random_scalar) -> Proof:
    """Prove log_G key == log_base2 value2 (== x)."""
    w = rng()
    e = _dleq_challenge(key, base2, value2, base_mul(w), base2 * w, context)
    return Proof(e, (w + e * x) % ORDER)


def check_dleq(key: Point, base2: Point, value2: Point, proof: Proof, context: bytes) -> bool:
    t1 = base_mul(proof.response) - key * proof.challenge
    t2 = base2 * proof.response - value2 * proof.challenge
    return _dleq_challenge(key, base2, value2, t1, t2, context) == proof.challenge


@dataclass(frozen=True, slots=True)
class Token:
    """Seat j's share D = x_j c1 of a ciphertext's decryption, with its proof."""

    point: Point
    proof: Proof

    def encode(self) -> bytes:
        return pack((self.point,), (self.proof.challenge, self.proof.response))

    @classmethod
    def decode(cls, data: bytes, what: Text = "") -> Token:
        (point,), (challenge, response) = unpack(data, 1, 2, BadProof, what, msg("a token"))
        return cls(point, Proof(challenge, response))


def make_token(share: KeyShare, ct: Ciphertext, context: bytes, rng: ScalarSource = random_scalar) -> Token:
    d = token_point(share.secret, ct)
    return Token(d, prove_dleq(share.secret, share.public, ct.c1, d, context, rng))


def check_token(key: Point, ct: Ciphertext, token: Token, context: bytes, who: Text = "") -> None:
    if not check_dleq(key, ct.c1, token.point, token.proof, context):
        raise BadProof(msg("{what} does not match its seat's key share (its Chaum-Pedersen proof fails)",
                               what=who or msg("a token")))

"""Each seat's ElGamal key shares, one per key epoch, published in its join with Schnorr proofs.

Epoch k = 1..3 encrypts round k's stacks; epoch 0 the classic nugget pile, which lasts the
whole game. A seat reveals its epoch-k secret when round k ends (docs/trustless.md §5): by
then nothing under that key is secret, and everyone can open and audit the whole round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.state import ROUNDS_PER_GAME
from pbem.errors import BadPacket, Text, msg
from pbem.protocol import shapes
from pbem.protocol.mental.elgamal import KeyShare, joint_key
from pbem.protocol.mental.group import Point, ScalarSource, base_mul, decode_scalar, random_scalar, scalar_bytes
from pbem.protocol.mental.proofs import BadProof, Proof, check_key, prove_key
from pbem.protocol.mental.transcript import context

EPOCHS = tuple(range(ROUNDS_PER_GAME + 1))  # 0: the whole game (nuggets); k: round k


def unb64(text: Any, what: Text) -> bytes:
    """A field of a trustless block, base64 in the document: its bytes, or BadPacket saying that it
    is missing (a field left out reads as None here) or not base64."""
    if not isinstance(text, str):
        raise BadPacket(msg("{what} is missing or not text", what=what))
    return shapes.unb64(text, what)


def key_context(game: str, seat: str, epoch: int) -> bytes:
    return context("key share", game=game, seat=seat, epoch=epoch)


@dataclass(frozen=True)
class SeatKeys:
    """A seat's secret shares, one per epoch (kept by the seat, never sent until revealed)."""

    shares: dict[int, KeyShare]

    @classmethod
    def new(cls, rng: ScalarSource = random_scalar) -> SeatKeys:
        return cls({e: KeyShare.new(rng) for e in EPOCHS})

    def public(self, game: str, seat: str, rng: ScalarSource = random_scalar) -> list[dict[str, Any]]:
        """The join's `mental` field: each share with its proof of knowledge."""
        return [{"epoch": e, "share": shapes.b64(k.public.raw), "proof": shapes.b64(prove_key(k, key_context(game, seat, e), rng).encode())}
                for e, k in sorted(self.shares.items())]

    def secret_hex(self) -> dict[str, str]:
        return {str(e): scalar_bytes(k.secret).hex() for e, k in self.shares.items()}

    @classmethod
    def from_secret_hex(cls, doc: dict[str, str]) -> SeatKeys:
        shares = {}
        for e, hexed in doc.items():
            x = decode_scalar(bytes.fromhex(hexed), msg("a secret key share"))
            shares[int(e)] = KeyShare(x, base_mul(x))
        return cls(shares)


def check_public(game: str, seat: str, published: Any) -> dict[int, Point]:
    """A seat's published shares, each proof checked: {epoch: share}."""
    epochs = [p.get("epoch") for p in published if isinstance(p, dict)] if isinstance(published, list) else []
    if len(epochs) != len(EPOCHS) or set(epochs) != set(EPOCHS):
        raise BadPacket(msg("{seat}'s join must carry one key share for each epoch {epochs}", seat=seat,
                          epochs=", ".join(map(str, EPOCHS))))
    out = {}
    for p in published:
        e = p["epoch"]
        what = msg("{seat}'s key share for epoch {epoch}", seat=seat, epoch=e)
        share = Point.decode(unb64(p.get("share"), what), what)
        proof = msg("{seat}'s key proof for epoch {epoch}", seat=seat, epoch=e)
        check_key(share, Proof.decode(unb64(p.get("proof"), proof)), key_context(game, seat, e), what)
        out[e] = share
    return out


def joint_keys(shares: dict[str, dict[int, Point]]) -> dict[int, Point]:
    return {e: joint_key([s[e] for s in shares.values()]) for e in EPOCHS}


def check_revealed(seat: str, epoch: int, share: Point, secret_hex: Any) -> int:
    """A secret share revealed at a round's end must match the share published in the join."""
    if not isinstance(secret_hex, str):
        raise BadPacket(msg("{seat}'s revealed key for epoch {epoch} is missing", seat=seat, epoch=epoch))
    try:
        raw = bytes.fromhex(secret_hex)
    except ValueError:
        raise BadPacket(msg("{seat}'s revealed key for epoch {epoch} is not hex", seat=seat, epoch=epoch)) from None
    x = decode_scalar(raw, msg("{seat}'s revealed key for epoch {epoch}", seat=seat, epoch=epoch))
    if base_mul(x) != share:
        raise BadProof(msg("{seat}'s revealed key for epoch {epoch} is not the one it published", seat=seat, epoch=epoch))
    return x

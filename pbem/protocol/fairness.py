"""Fair shuffles: the host commits to every round's secret before any player contributes.

seed(k) = SHA-256("pbem-seed/1\\n" || game || "\\n" || k || "\\n" || secret_k || c_1 || ... || c_n)
commitment(k) = SHA-256("pbem-commit/1\\n" || game || "\\n" || k || "\\n" || secret_k)

The invitation carries the three commitments; each join file carries that seat's 32-byte
contribution, derived from the seat's key and the invitation (`seat_contribution`), so joining
twice gives the host the same contribution and no second deal to choose from. The host cannot
pick a convenient deal (its secrets are fixed before it sees a contribution) and no player can
(nobody sees a host secret before its round ends). After round k the host reveals secret_k;
anyone can check the commitment and recompute the deal.
"""

from __future__ import annotations

import os
from hashlib import sha256

from engine.chance import SeededChance
from pbem.protocol.crypto import Identity

SECRET_BYTES = 32
CONTRIBUTION_BYTES = 32


def new_secrets(rounds: int = 3) -> list[bytes]:
    return [os.urandom(SECRET_BYTES) for _ in range(rounds)]


CONTRIBUTION_LABEL = b"pbem-contribution/1\n"


def seat_contribution(identity: Identity, game: str, invitation_hash: str) -> bytes:
    """The seat's one contribution to a game: fixed by its key and the invitation.

    Ed25519 signatures are deterministic, so this is the same on every join; nobody without
    the seat's private key can compute it in advance (the signature itself is never shown).
    """
    sig = identity.sign(CONTRIBUTION_LABEL + game.encode() + b"\n" + invitation_hash.encode())
    return sha256(CONTRIBUTION_LABEL + sig).digest()


def commitment(game: str, round_no: int, secret: bytes) -> str:
    data = b"pbem-commit/1\n" + game.encode() + b"\n" + str(round_no).encode() + b"\n" + secret
    return sha256(data).hexdigest()


def secret_matches(game: str, round_no: int, secret: bytes, expected: str) -> bool:
    import hmac  # loads OpenSSL (hashlib): only where a round's secret is revealed

    return hmac.compare_digest(commitment(game, round_no, secret), expected)


def round_seed(game: str, round_no: int, secret: bytes, contributions: list[bytes]) -> bytes:
    h = sha256(b"pbem-seed/1\n" + game.encode() + b"\n" + str(round_no).encode() + b"\n" + secret)
    for c in contributions:
        h.update(c)
    return h.digest()


def round_chance(game: str, round_no: int, secret: bytes, contributions: list[bytes]) -> SeededChance:
    return SeededChance(round_seed(game, round_no, secret, contributions))

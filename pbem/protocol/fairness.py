"""Fair shuffles: the host commits to every round's secret before any player contributes.

seed(k) = SHA-256("pbem-seed/1\\n" || game || "\\n" || k || "\\n" || secret_k || c_1 || ... || c_n)
commitment(k) = SHA-256("pbem-commit/1\\n" || game || "\\n" || k || "\\n" || secret_k)

The invitation carries the three commitments; each join file carries that seat's 32-byte
contribution. The host cannot pick a convenient deal (its secrets are fixed before it sees a
contribution) and no player can (nobody sees a host secret before its round ends). After
round k the host reveals secret_k; anyone can check the commitment and recompute the deal.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from engine.chance import SeededChance

SECRET_BYTES = 32
CONTRIBUTION_BYTES = 32


def new_secrets(rounds: int = 3) -> list[bytes]:
    return [os.urandom(SECRET_BYTES) for _ in range(rounds)]


def new_contribution() -> bytes:
    return os.urandom(CONTRIBUTION_BYTES)


def commitment(game: str, round_no: int, secret: bytes) -> str:
    data = b"pbem-commit/1\n" + game.encode() + b"\n" + str(round_no).encode() + b"\n" + secret
    return hashlib.sha256(data).hexdigest()


def secret_matches(game: str, round_no: int, secret: bytes, expected: str) -> bool:
    return hmac.compare_digest(commitment(game, round_no, secret), expected)


def round_seed(game: str, round_no: int, secret: bytes, contributions: list[bytes]) -> bytes:
    h = hashlib.sha256(b"pbem-seed/1\n" + game.encode() + b"\n" + str(round_no).encode() + b"\n" + secret)
    for c in contributions:
        h.update(c)
    return h.digest()


def round_chance(game: str, round_no: int, secret: bytes, contributions: list[bytes]) -> SeededChance:
    return SeededChance(round_seed(game, round_no, secret, contributions))

"""A seat's key dealing, carried by its join (docs/trustless.md §11): the Feldman commitments
to its epoch keys, public, and each other seat's shares sealed to that seat's pbem key.

The join's `dealing` field, as the core's dict:
  {"threshold": K, "commitments": base64, "shares": {holder seat: base64 HPKE box}}
Everyone checks its shape (`check_public`); each holder opens and checks its own shares
against the commitments when every join is out (`open_mine`), and complains if they are off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbem.errors import BadPacket, PbemError, msg
from pbem.protocol.crypto import Identity, PublicKey, canonical_json, open_sealed, seal
from pbem.protocol.mental.group import SCALAR_BYTES, Point, ScalarSource, random_scalar
from pbem.protocol.mental.vss import BadShare, Dealing, check_shares, deal, decode_shares, share_bytes
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import EPOCHS, SeatKeys, unb64

SEAL_OVERHEAD = 1 + 8 + 32 + 16  # a sealed part's version, key id, HPKE key and AEAD tag (crypto.seal)
BOX_BYTES = SCALAR_BYTES * len(EPOCHS) + SEAL_OVERHEAD


def default_threshold(seats: int) -> int:
    """All the other seats: any one honest remaining seat keeps a vanished seat's cards shut."""
    return seats - 1


def _info(game: str, dealer: str, holder: str) -> bytes:
    return canonical_json({"game": game, "from": dealer, "to": holder, "purpose": "mental key dealing"})


def make(keys: SeatKeys, game: str, dealer: str, seats: Sequence[tuple[str, PublicKey]], threshold: int,
         rng: ScalarSource = random_scalar) -> dict[str, Any]:
    """The join's `dealing`: `dealer`'s epoch keys shared among the other `seats` (in seat order)."""
    names = [n for n, _ in seats]
    holders = [i for i, n in enumerate(names) if n != dealer]
    dealing, shares = dealt(keys, names, dealer, threshold, rng)
    return {"threshold": threshold, "commitments": b64(dealing.encode()),
            "shares": {names[i]: b64(seal(share_bytes(shares[i]), seats[i][1], _info(game, dealer, names[i])))
                       for i in holders}}


def dealt(keys: SeatKeys, names: Sequence[str], dealer: str, threshold: int,
          rng: ScalarSource = random_scalar) -> tuple[Dealing, dict[int, list[int]]]:
    """`dealer`'s sharing of its epoch keys among the other seats: the commitments, and each
    holder's shares by seat index (with the join's seeded `rng`, the same every time: the
    dealer's answer to a complaint opens the shares its join sealed)."""
    return deal([keys.shares[e].secret for e in EPOCHS], [i for i, n in enumerate(names) if n != dealer], threshold, rng)


def check_public(doc: Any, dealer: str, players: Sequence[str], threshold: int) -> Dealing:
    """What everyone checks of a join's dealing: the game's threshold, a box for each other seat
    and none else, and commitments that are points. Returns the commitments."""
    if not isinstance(doc, dict):
        raise BadPacket(msg("{seat}'s join carries no key dealing: the game has a threshold of {k}", seat=dealer,
                            k=threshold))
    if doc.get("threshold") != threshold:
        raise BadPacket(msg("{seat}'s key dealing has a threshold of {got}, not the game's {k}", seat=dealer,
                            got=doc.get("threshold"), k=threshold))
    others = {p for p in players if p != dealer}
    if not isinstance(doc.get("shares"), dict) or set(doc["shares"]) != others:
        raise BadPacket(msg("{seat}'s key dealing must seal shares to each other seat and no one else", seat=dealer))
    what = msg("{seat}'s key dealing", seat=dealer)
    for holder, box in doc["shares"].items():
        if len(unb64(box, what)) != BOX_BYTES:
            raise BadPacket(msg("{seat}'s key shares for {me} are not one sealed box of {n} bytes", seat=dealer,
                                me=holder, n=BOX_BYTES))
    return Dealing.decode(unb64(doc.get("commitments"), what), len(EPOCHS), threshold, len(others), what)


def open_mine(doc: dict[str, Any], dealing: Dealing, keys: dict[int, Point], game: str, dealer: str,
              players: Sequence[str], me: str, identity: Identity) -> list[int]:
    """`me`'s shares of `dealer`'s epoch keys, opened and checked against the commitments
    (BadShare, a BadPacket, when they are off: `me` then complains in the open)."""
    what = msg("{seat}'s key shares for {me}", seat=dealer, me=me)
    try:
        shares = decode_shares(open_sealed(unb64(doc["shares"][me], what), identity, _info(game, dealer, me)),
                               len(EPOCHS), what)
        check_shares(shares, [keys[e] for e in EPOCHS], dealing, players.index(me))
    except PbemError as e:  # a box that does not open counts as a bad share: the dealer is named
        raise BadShare(msg("{what} are bad: {reason}", what=what, reason=e.message)) from e
    return shares

"""The trustless messages as typed documents (pbem.protocol.documents: KeyShareDoc in a Join,
Mental, Tokens, Shuffle, Opening), to and from the protocol core's values.

The core (keys, setup, tokens, table, play) works on plain JSON-shaped dicts; this module is
the one place that turns them into the wire's typed classes and back, so a message is checked
for its shape by the one parser (documents.parse) before any proof is looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    DealingDoc,
    Join,
    KeyShareDoc,
    Mental,
    MentalStep,
    Opening,
    Shuffle,
    Signed,
    SlotRef,
    StandIn,
    Tokens,
    Unsealed,
    convert,
    sign,
)
from pbem.protocol.mental.group import Point, ScalarSource, random_scalar
from pbem.protocol.mental.vss import Dealing
from pbem.protocol.trustless import dealing as D
from pbem.protocol.trustless.keys import SeatKeys, check_public
from pbem.protocol.trustless.tokens import Slot


def key_shares(keys: SeatKeys, game: str, seat: str, rng: ScalarSource = random_scalar) -> list[KeyShareDoc]:
    """The join's `mental` field: every epoch's public share with its proof of knowledge."""
    return [convert(p, KeyShareDoc, f"{seat}'s key share") for p in keys.public(game, seat, rng)]


def dealing(keys: SeatKeys, game: str, seat: str, seats: list[tuple[str, PublicKey]], threshold: int,
            rng: ScalarSource = random_scalar) -> DealingDoc:
    """The join's `dealing`: the seat's epoch keys shared among the others (docs/trustless.md §11)."""
    return convert(D.make(keys, game, seat, seats, threshold, rng), DealingDoc, f"{seat}'s key dealing")


def open_dealing(join: Join, commitments: Dealing, keys: dict[int, Point], players: Sequence[str], me: str,
                 identity: Identity) -> list[int]:
    """`me`'s shares of the joiner's keys, checked against the commitments (BadShare if off)."""
    return D.open_mine(msgspec.to_builtins(join.dealing), commitments, keys, join.game, join.seat, players, me,
                       identity)


def join_shares(join: Join) -> dict[int, Point]:
    """The key shares a trustless join carries, every proof checked: {epoch: share}."""
    return check_public(join.game, join.seat, [msgspec.to_builtins(k) for k in join.mental or []])


def tokens(bundle: dict[str, Any]) -> Tokens:
    return convert(bundle, Tokens, "a token bundle")


def bundle(t: Tokens) -> dict[str, Any]:
    """The core's form of a bundle (tokens.read_bundle reads it)."""
    out: dict[str, Any] = msgspec.to_builtins(t)
    return out


def shuffle_of(doc: dict[str, Any]) -> Shuffle:
    return convert(doc, Shuffle, "a shuffle")


def slot_ref(slot: Slot) -> SlotRef:
    return SlotRef(stack=slot[0], index=slot[1])


def message(identity: Identity, game: str, seat: str, seq: int, packet: str, step: MentalStep, *,
            bundles: list[dict[str, Any]] | None = None, shuffle: dict[str, Any] | None = None,
            move: str | None = None, play: tuple[Slot, dict[str, Any]] | None = None,
            handed: list[dict[str, Any]] | None = None, unsealed: list[dict[str, Any]] | None = None,
            discard: list[Slot] | None = None, reveal: dict[str, str] | None = None,
            stand_in: list[dict[str, Any]] | None = None, against: str | None = None,
            shares: str | None = None) -> Signed[Mental]:
    """One signed mental block answering packet `seq` (hash `packet`)."""
    doc = Mental(game=game, seat=seat, seq=seq, packet=packet, step=step,
                 shuffle=shuffle_of(shuffle) if shuffle is not None else None,
                 tokens=[tokens(b) for b in bundles] if bundles else None,
                 move=move,
                 play=Opening(slot=slot_ref(play[0]), open=tokens(play[1]), handed=[tokens(b) for b in handed or []] or None,
                              unsealed=[convert(u, Unsealed, "an opening of sealed shares") for u in unsealed or []] or None)
                 if play is not None else None,
                 discard=[slot_ref(s) for s in discard] if discard is not None else None,
                 reveal=reveal,
                 stand_in=[convert(d, StandIn, "a stand-in") for d in stand_in] if stand_in is not None else None,
                 against=against, shares=shares)
    return sign(doc, identity)

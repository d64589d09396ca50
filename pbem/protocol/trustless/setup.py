"""The setup: each seat in turn re-encrypts and permutes every stack of the game, with proofs.

Seat order is the invitation's. Seat i takes the stacks seat i-1 published (seat 0: the
public trivial encryptions, stacks.initial) and publishes its own, each with a
Terelius-Wikstrom proof bound to (game, seat, turn, stack). Every client checks every proof
before it accepts the message; after the last seat, the stacks are final, and no coalition
short of all seats knows any card's place.
"""

from __future__ import annotations

from typing import Any

from pbem.errors import BadPacket, Text, msg
from pbem.protocol.mental.elgamal import CIPHERTEXT_BYTES, Ciphertext
from pbem.protocol.mental.group import Point, ScalarSource, random_scalar
from pbem.protocol.mental.shuffle import ShuffleProof, check_shuffle, prove_shuffle, shuffle
from pbem.protocol.mental.transcript import context
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import unb64
from pbem.protocol.trustless.stacks import Stack, initial

Stacks = dict[str, list[Ciphertext]]  # by stack label


def shuffle_context(game: str, seat: str, turn: int, stack: Stack) -> bytes:
    return context("shuffle", game=game, seat=seat, turn=turn, stack=stack.label, cards=len(stack.cards))


def start(stacks: list[Stack]) -> Stacks:
    return {s.label: initial(s) for s in stacks}


def key_of(keys: dict[int, Point], stack: Stack) -> Point:
    return keys[stack.round_no]


def make_shuffle(game: str, seat: str, turn: int, stacks: list[Stack], keys: dict[int, Point],
                 current: Stacks, rng: ScalarSource = random_scalar) -> tuple[dict[str, Any], Stacks]:
    """Seat `seat` (the `turn`-th to shuffle) shuffles every stack: (its message, the new stacks)."""
    doc: dict[str, Any] = {"turn": turn, "stacks": {}}
    new: Stacks = {}
    for s in stacks:
        y = key_of(keys, s)
        out, perm, rands = shuffle(y, current[s.label], rng)
        proof = prove_shuffle(y, current[s.label], out, perm, rands, shuffle_context(game, seat, turn, s), rng)
        doc["stacks"][s.label] = {"cards": b64(b"".join(c.encode() for c in out)), "proof": b64(proof.encode())}
        new[s.label] = out
    return doc, new


def decode_stack(text: Any, n: int, what: Text) -> list[Ciphertext]:
    raw = unb64(text, what)
    if len(raw) != n * CIPHERTEXT_BYTES:
        raise BadPacket(msg("{what} holds {count} cards, not {n}", what=what, count=len(raw) // CIPHERTEXT_BYTES, n=n))
    return [Ciphertext.decode(raw[i:i + CIPHERTEXT_BYTES], what) for i in range(0, len(raw), CIPHERTEXT_BYTES)]


def check_shuffle_doc(game: str, seat: str, turn: int, stacks: list[Stack], keys: dict[int, Point],
                      current: Stacks, doc: Any) -> Stacks:
    """Check seat `seat`'s shuffle message against the stacks before it; return the new stacks."""
    if not isinstance(doc, dict) or doc.get("turn") != turn or not isinstance(doc.get("stacks"), dict):
        raise BadPacket(msg("{seat}'s shuffle is not the shuffle of turn {turn}", seat=seat, turn=turn))
    if sorted(doc["stacks"]) != sorted(s.label for s in stacks):
        raise BadPacket(msg("{seat}'s shuffle does not hold exactly the game's stacks", seat=seat))
    new: Stacks = {}
    for s in stacks:
        entry = doc["stacks"][s.label]
        what = msg("{seat}'s shuffle of stack {stack}", seat=seat, stack=s.label)
        if not isinstance(entry, dict):
            raise BadPacket(msg("{what} is malformed", what=what))
        out = decode_stack(entry.get("cards"), len(s.cards), what)
        proof = ShuffleProof.decode(unb64(entry.get("proof"), what), len(s.cards), what)
        check_shuffle(key_of(keys, s), current[s.label], out, proof, shuffle_context(game, seat, turn, s), what)
        new[s.label] = out
    return new

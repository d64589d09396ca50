"""Decryption tokens for named slots, published to all (the rule) or sealed to one seat.

A slot is (stack label, index) in the final shuffled stacks. Seat j's token for a slot is
D = x_j c1 with a Chaum-Pedersen proof bound to (game, maker, stack, index). Tokens are
public: a slot read by seat R stays hidden from everyone else as long as R's own token for it
stays private (docs/trustless.md §4), and public tokens let every seat check every token.
Sealing is kept for a token that must reach one seat only.

A bundle is a dict that rides inside a message:
  {"from": seat, "to": seat, "slots": [[label, i], ...], "sealed": base64}  (sealed to `to`)
  {"from": seat, "to": "all", "slots": [...], "tokens": base64}             (public)
where the tokens are 96 bytes each, in slot order. A sealed bundle's HPKE info binds game,
maker, recipient and slots, so it cannot be replayed for other slots or to another seat.
"""

from __future__ import annotations

from typing import Any

from pbem.errors import BadPacket, msg
from pbem.protocol.crypto import Identity, PublicKey, canonical_json, open_sealed, seal
from pbem.protocol.mental.elgamal import Ciphertext, KeyShare
from pbem.protocol.mental.group import Point
from pbem.protocol.mental.proofs import TOKEN_BYTES, Token, check_token, make_token
from pbem.protocol.mental.transcript import context
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import unb64

Slot = tuple[str, int]
ALL = "all"


def token_context(game: str, maker: str, slot: Slot) -> bytes:
    return context("token", game=game, seat=maker, stack=slot[0], slot=slot[1])


def _info(game: str, maker: str, to: str, slots: list[Slot]) -> bytes:
    return canonical_json({"game": game, "from": maker, "to": to, "purpose": "mental tokens",
                           "slots": [list(s) for s in slots]})


def make_bundle(game: str, maker: str, share_of: dict[str, KeyShare], cts: dict[Slot, Ciphertext],
                slots: list[Slot], to: str, recipient: PublicKey | None = None) -> dict[str, Any]:
    """`maker`'s tokens for `slots`; `share_of[label]` is its key share for that stack's epoch."""
    raw = b"".join(make_token(share_of[s[0]], cts[s], token_context(game, maker, s)).encode() for s in slots)
    doc: dict[str, Any] = {"from": maker, "to": to, "slots": [list(s) for s in slots]}
    if to == ALL:
        doc["tokens"] = b64(raw)
    else:
        assert recipient is not None
        doc["sealed"] = b64(seal(raw, recipient, _info(game, maker, to, slots)))
    return doc


def bundle_slots(doc: Any) -> list[Slot]:
    if not isinstance(doc, dict) or not isinstance(doc.get("slots"), list):
        raise BadPacket(msg("a token bundle is malformed"))
    out = []
    for s in doc["slots"]:
        if not (isinstance(s, list) and len(s) == 2 and isinstance(s[0], str) and isinstance(s[1], int)
                and not isinstance(s[1], bool)):
            raise BadPacket(msg("a token bundle names a bad slot {slot}", slot=repr(str(s)[:40])))
        out.append((s[0], s[1]))
    if len(set(out)) != len(out):
        raise BadPacket(msg("a token bundle names a slot twice"))
    return out


def read_bundle(game: str, doc: Any, shares: dict[str, Point], cts: dict[Slot, Ciphertext],
                me: Identity | None = None, my_seat: str | None = None, *, check: bool = True,
                known: dict[Slot, dict[str, Point]] | None = None) -> dict[Slot, Token]:
    """Check a bundle: every token against its maker's share for the slot's stack (shares[label]).

    A sealed bundle opens only with the recipient's identity; a public one with none. With
    `check` false the proofs are not checked again (a replay of a chain checked when it was made);
    nor is a token equal to the maker's for that slot in `known` (tokens checked already, by slot and maker).
    """
    slots = bundle_slots(doc)
    maker = doc.get("from")
    to = doc.get("to")
    if not isinstance(maker, str) or not isinstance(to, str):
        raise BadPacket(msg("a token bundle names no maker or recipient"))
    if to == ALL:
        raw = unb64(doc.get("tokens"), msg("{seat}'s tokens", seat=maker))
    else:
        if me is None or to != my_seat:
            raise BadPacket(msg("{seat}'s tokens are sealed to {to}, not to {me}", seat=maker, to=to, me=my_seat))
        raw = open_sealed(unb64(doc.get("sealed"), msg("{seat}'s sealed tokens", seat=maker)), me,
                          _info(game, maker, to, slots))
    if len(raw) != TOKEN_BYTES * len(slots):
        raise BadPacket(msg("{seat}'s bundle holds {count} tokens for {n} slots", seat=maker,
                                 count=len(raw) // TOKEN_BYTES, n=len(slots)))
    out = {}
    for i, s in enumerate(slots):
        if s not in cts or s[0] not in shares:
            raise BadPacket(msg("{seat}'s bundle names slot {slot}, which is not in the game", seat=maker,
                                     slot=repr(s)))
        what = msg("{seat}'s token for slot {slot}", seat=maker, slot=f"{s[0]} #{s[1]}")
        t = Token.decode(raw[i * TOKEN_BYTES:(i + 1) * TOKEN_BYTES], what)
        if check and (known or {}).get(s, {}).get(maker) != t.point:
            check_token(shares[s[0]], cts[s], t, token_context(game, maker, s), what)
        out[s] = t
    return out

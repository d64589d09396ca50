"""Doing a vanished seat's part in the open (docs/trustless.md §11.1-11.2).

Once the host declares a seat V gone, the table asks, at each step that waits for V, a quorum
of the other seats for exactly what V owes there (`Need`): V's public tokens for named slots,
and at a round's end V's key of that round. Holder i sends, for each slot, its stand-in share
s_i c1 with its proof against its image S_i (vss.stand_in), and its scalar share of the round
key; anyone checks each against V's Feldman commitments and, once K holders are in, combines
them into V's tokens (vss.combine) and V's round key (vss.reconstruct).

The block: {"for": V, "slots": [[label, i], ...], "shares": base64 (96 bytes a slot),
"key": hex (a round's end)}, one for each gone seat the step waits for, in seat order.

A token V owes a later reader R sealed (a second map of a goal, an inspection of V's role, the
cards a swap-hand took from V) is met by shares sealed to R: {"for": V, "to": R, "slots": ...,
"shares": base64 (160 bytes a slot, vss.SealedShare)}, each checked by everyone against the
holder's image and R's key share; R opens K - 1 of them, adds its own share and reads the card.
When R plays such a card it makes V's token public (`Unsealed`): its own share and its token on
each of those boxes, every one with its proof, so anyone combines them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.errors import BadPacket, msg
from pbem.protocol.mental.elgamal import Ciphertext, KeyShare
from pbem.protocol.mental.group import Point, ScalarSource, base_mul, decode_scalar, random_scalar, scalar_bytes
from pbem.protocol.mental.proofs import Token, check_token, make_token
from pbem.protocol.mental.transcript import context as proof_context
from pbem.protocol.mental.vss import (
    SEALED_SHARE_BYTES,
    BadShare,
    Dealing,
    SealedShare,
    check_sealed_stand_in,
    check_secret_share,
    check_stand_in,
    combine,
    images,
    open_stand_in,
    reconstruct,
    seal_stand_in,
    stand_in,
)
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import EPOCHS, unb64
from pbem.protocol.trustless.tokens import TOKEN_BYTES, Slot

EpochOf = Callable[[str], int]  # a stack label's key epoch


@dataclass(frozen=True)
class Need:
    """What gone seat `dealer` owes at the table's step: its public tokens for `slots`, and (a
    round's end) its key of round `epoch`."""

    dealer: str
    slots: list[Slot]
    epoch: int | None = None


@dataclass(frozen=True)
class CheckedShares:
    """One holder's checked part for one dealer: its share of each slot's token, and of the key."""

    tokens: dict[Slot, Point]
    key: int | None


def share_context(game: str, dealer: str, holder: str, slot: Slot) -> bytes:
    """A stand-in share's proof names the dealer, the holder, the stack (its epoch) and the slot."""
    return proof_context("stand-in", game=game, dealer=dealer, holder=holder, stack=slot[0], slot=slot[1])


def sealed_context(game: str, dealer: str, holder: str, reader: str, slot: Slot) -> bytes:
    """A sealed stand-in share's proof names the reader too."""
    return proof_context("sealed stand-in", game=game, dealer=dealer, holder=holder, to=reader, stack=slot[0],
                         slot=slot[1])


def unseal_context(game: str, dealer: str, holder: str, reader: str, slot: Slot) -> bytes:
    """The reader's token on a holder's sealed share, published when it plays the card."""
    return proof_context("unseal", game=game, dealer=dealer, holder=holder, to=reader, stack=slot[0], slot=slot[1])


def holder_images(keys: dict[int, Point], dealing: Dealing, index: int) -> dict[int, Point]:
    """Holder `index`'s public image S_i of the dealer's key, for every epoch."""
    return dict(zip(EPOCHS, images([keys[e] for e in EPOCHS], dealing, index), strict=True))


def make(game: str, holder: str, needs: Sequence[Need], held: dict[str, list[int]], cts: dict[Slot, Ciphertext],
         epoch_of: EpochOf, rng: ScalarSource = random_scalar) -> list[dict[str, Any]]:
    """`holder`'s stand-in block body: its parts of every need, from its shares `held[dealer]`."""
    out = []
    for need in needs:
        mine = held[need.dealer]
        raw = b""
        for s in need.slots:
            share = mine[epoch_of(s[0])]
            raw += stand_in(share, base_mul(share), cts[s], share_context(game, need.dealer, holder, s), rng).encode()
        doc: dict[str, Any] = {"for": need.dealer, "slots": [list(s) for s in need.slots]}
        if need.slots:
            doc["shares"] = b64(raw)
        if need.epoch is not None:
            doc["key"] = scalar_bytes(mine[need.epoch]).hex()
        out.append(doc)
    return out


def make_sealed(game: str, holder: str, dealer: str, reader: str, slots: Sequence[Slot], held: list[int],
                cts: dict[Slot, Ciphertext], reader_keys: dict[int, Point], epoch_of: EpochOf,
                rng: ScalarSource = random_scalar) -> dict[str, Any]:
    """`holder`'s shares of `dealer`'s tokens for `slots`, sealed to `reader` (its epoch keys)."""
    raw = b""
    for s in slots:
        e = epoch_of(s[0])
        raw += seal_stand_in(held[e], base_mul(held[e]), cts[s], reader_keys[e],
                             sealed_context(game, dealer, holder, reader, s), rng).encode()
    return {"for": dealer, "to": reader, "slots": [list(s) for s in slots], "shares": b64(raw)}


def read(game: str, holder: str, given: Sequence[Any], needs: Sequence[Need],
         images_of: Callable[[str], dict[int, Point]], cts: dict[Slot, Ciphertext], epoch_of: EpochOf, *,
         check: bool = True) -> dict[str, CheckedShares]:
    """Check `holder`'s parts (`StandIn` documents) against what the table needs, each share
    against the holder's image of its dealer's key: {dealer: its checked part}."""
    if [g.dealer for g in given] != [n.dealer for n in needs]:
        raise BadPacket(msg("{seat}'s stand-in must stand in for {seats}, in that order, and no one else", seat=holder,
                            seats=", ".join(n.dealer for n in needs)))
    out = {}
    for g, need in zip(given, needs, strict=True):
        slots = [s.slot for s in g.slots]
        if slots != need.slots or g.to is not None:
            raise BadPacket(msg("{seat}'s stand-in for {dealer} names other slots than the ones {dealer} owes",
                                seat=holder, dealer=need.dealer))
        if (g.key is None) != (need.epoch is None) or (g.shares is None) != (not slots):
            raise BadPacket(msg("{seat}'s stand-in for {dealer} does not carry what {dealer} owes at this step",
                                seat=holder, dealer=need.dealer))
        image = images_of(need.dealer)
        what = msg("{seat}'s stand-in shares for {dealer}", seat=holder, dealer=need.dealer)
        raw = unb64(g.shares, what) if slots else b""
        if len(raw) != TOKEN_BYTES * len(slots):
            raise BadPacket(msg("{what} must be {n} bytes, not {size}", what=what, n=TOKEN_BYTES * len(slots),
                                size=len(raw)))
        tokens = {}
        for k, s in enumerate(slots):
            tok = Token.decode(raw[k * TOKEN_BYTES:(k + 1) * TOKEN_BYTES], what)
            if check:
                try:
                    check_stand_in(image[epoch_of(s[0])], cts[s], tok, share_context(game, need.dealer, holder, s))
                except BadShare as e:
                    raise BadShare(msg("{seat}'s stand-in share for {dealer}'s token of slot {slot} is bad: {reason}",
                                       seat=holder, dealer=need.dealer, slot=f"{s[0]} #{s[1]}", reason=e.message)) from e
            tokens[s] = tok.point
        key = None
        if need.epoch is not None:
            try:
                key = decode_scalar(bytes.fromhex(str(g.key)), what)
            except ValueError:
                raise BadPacket(msg("{seat}'s share of {dealer}'s round key is not hex", seat=holder,
                                    dealer=need.dealer)) from None
            if check:
                check_secret_share(key, image[need.epoch])
        out[need.dealer] = CheckedShares(tokens, key)
    return out


def read_shares(game: str, holder: str, given: Sequence[Any], gone: Collection[str],
                debts_of: Callable[[str], list[Slot]], paid: Callable[[str, Slot], bool],
                images_of: Callable[[str], dict[int, Point]], cts: dict[Slot, Ciphertext], epoch_of: EpochOf, *,
                check: bool = True) -> dict[str, dict[Slot, Point]]:
    """A holder's shares of gone seats' public debts in a round, on any of its blocks: each
    entry names a gone seat and slots it owes now; a slot whose token is out already (another
    quorum completed it meanwhile) is passed over. {dealer: {slot: checked share}}."""
    out: dict[str, dict[Slot, Point]] = {}
    for g in given:
        if g.to is not None:  # sealed to a later reader: `read_sealed`
            continue
        v = g.dealer
        if v not in gone or v in out or g.key is not None:
            raise BadPacket(msg("{seat}'s stand-in shares are for {dealer}, whose tokens the table does not wait for",
                                seat=holder, dealer=repr(str(v)[:40])))
        slots = [s.slot for s in g.slots]
        what = msg("{seat}'s stand-in shares for {dealer}", seat=holder, dealer=v)
        raw = unb64(g.shares, what) if slots else b""
        if len(raw) != TOKEN_BYTES * len(slots) or len(set(slots)) != len(slots):
            raise BadPacket(msg("{what} must be {n} bytes, not {size}", what=what, n=TOKEN_BYTES * len(slots),
                                size=len(raw)))
        owed, mine = set(debts_of(v)), out.setdefault(v, {})
        for k, s in enumerate(slots):
            if s not in owed:
                if paid(v, s):
                    continue
                raise BadPacket(msg("{seat}'s stand-in for {dealer} names other slots than the ones {dealer} owes",
                                    seat=holder, dealer=v))
            tok = Token.decode(raw[k * TOKEN_BYTES:(k + 1) * TOKEN_BYTES], what)
            if check:
                try:
                    check_stand_in(images_of(v)[epoch_of(s[0])], cts[s], tok, share_context(game, v, holder, s))
                except BadShare as e:
                    raise BadShare(msg("{seat}'s stand-in share for {dealer}'s token of slot {slot} is bad: {reason}",
                                       seat=holder, dealer=v, slot=f"{s[0]} #{s[1]}", reason=e.message)) from e
            mine[s] = tok.point
    return out


def read_sealed(game: str, holder: str, given: Sequence[Any], gone: Collection[str], players: Sequence[str],
                owed: Callable[[str, str], list[Slot]], met: Callable[[str, str, Slot], bool],
                images_of: Callable[[str], dict[int, Point]], keys_of: Callable[[str], dict[int, Point]],
                cts: dict[Slot, Ciphertext], epoch_of: EpochOf, *,
                check: bool = True) -> dict[tuple[str, str], dict[Slot, SealedShare]]:
    """A holder's shares of the tokens gone seats owe later readers sealed, each sealed to its
    reader: every one checked in public (the holder's image, the reader's key share); a slot
    met already (K - 1 others gave theirs meanwhile) is passed over. {(dealer, reader): {slot: share}}."""
    out: dict[tuple[str, str], dict[Slot, SealedShare]] = {}
    for g in given:
        if g.to is None:
            continue
        v, to = g.dealer, g.to
        if v not in gone or to not in players or to in gone or to in (holder, v) or (v, to) in out or g.key is not None:
            raise BadPacket(msg("{seat}'s sealed stand-in shares are for {dealer}'s tokens to {to}, which the table "
                                "does not wait for", seat=holder, dealer=repr(str(v)[:40]), to=repr(str(to)[:40])))
        slots = [s.slot for s in g.slots]
        what = msg("{seat}'s sealed stand-in shares for {dealer}", seat=holder, dealer=v)
        raw = unb64(g.shares, what)
        if len(raw) != SEALED_SHARE_BYTES * len(slots) or len(set(slots)) != len(slots) or not slots:
            raise BadPacket(msg("{what} must be {n} bytes, not {size}", what=what, n=SEALED_SHARE_BYTES * len(slots),
                                size=len(raw)))
        owed_now, mine = set(owed(v, to)), out.setdefault((v, to), {})
        for k, s in enumerate(slots):
            if s not in owed_now:
                if met(v, to, s):
                    continue
                raise BadPacket(msg("{seat}'s stand-in for {dealer} names other slots than the ones {dealer} owes",
                                    seat=holder, dealer=v))
            share = SealedShare.decode(raw[k * SEALED_SHARE_BYTES:(k + 1) * SEALED_SHARE_BYTES], what)
            if check:
                e = epoch_of(s[0])
                try:
                    check_sealed_stand_in(images_of(v)[e], cts[s], keys_of(to)[e], share,
                                          sealed_context(game, v, holder, to, s))
                except BadShare as err:
                    raise BadShare(msg("{seat}'s stand-in share for {dealer}'s token of slot {slot} is bad: {reason}",
                                       seat=holder, dealer=v, slot=f"{s[0]} #{s[1]}", reason=err.message)) from err
            mine[s] = share
    return out


def open_sealed(secret: int, own: int, boxes: dict[int, SealedShare], c1: Point, me: int, threshold: int) -> Point:
    """The reader's view of the dealer's token: its own share (`own`, of the dealer's key; its
    seat index `me`) and the holders' boxes (by seat index) opened with its key `secret`."""
    parts = {i: open_stand_in(secret, box) for i, box in boxes.items()}
    parts[me] = c1 * own
    return combine(parts, threshold)


def make_unsealed(game: str, dealer: str, me: str, slot: Slot, ct: Ciphertext, own: int, key: KeyShare,
                  boxes: dict[str, SealedShare], rng: ScalarSource = random_scalar) -> dict[str, Any]:
    """The player's `Unsealed` for a card whose `dealer` token reached it as sealed shares:
    its own stand-in share and its token on each holder's box, with their proofs."""
    share = stand_in(own, base_mul(own), ct, share_context(game, dealer, me, slot), rng)
    opened = b"".join(make_token(key, box.box, unseal_context(game, dealer, h, me, slot), rng).encode()
                      for h, box in boxes.items())
    return {"for": dealer, "holders": list(boxes), "share": b64(share.encode()), "opened": b64(opened)}


def read_unsealed(game: str, me: str, slot: Slot, given: Any, boxes: dict[str, SealedShare], image: Point, key: Point,
                  ct: Ciphertext, index: Callable[[str], int], threshold: int, *, check: bool = True) -> Point:
    """The dealer's token for the played `slot` from the player's `Unsealed` (`given`): its own
    share (against its `image`), its token on each named holder's box (against its `key`
    share, the boxes the table holds for it), combined."""
    v = given.dealer
    what = msg("{seat}'s opening of {dealer}'s sealed shares", seat=me, dealer=v)
    if len(given.holders) != threshold - 1 or len(set(given.holders)) != len(given.holders) or any(
            h not in boxes for h in given.holders):
        raise BadPacket(msg("{what} must name {n} holders whose shares were sealed to it", what=what, n=threshold - 1))
    own = Token.decode(unb64(given.share, what), what)
    raw = unb64(given.opened, what)
    if len(raw) != TOKEN_BYTES * len(given.holders):
        raise BadPacket(msg("{what} must be {n} bytes, not {size}", what=what, n=TOKEN_BYTES * len(given.holders),
                            size=len(raw)))
    if check:
        check_stand_in(image, ct, own, share_context(game, v, me, slot))
    parts = {index(me): own.point}
    for k, h in enumerate(given.holders):
        tok = Token.decode(raw[k * TOKEN_BYTES:(k + 1) * TOKEN_BYTES], what)
        if check:
            check_token(key, boxes[h].box, tok, unseal_context(game, v, h, me, slot), what)
        parts[index(h)] = boxes[h].b - tok.point
    return combine(parts, threshold)


def complete(need: Need, parts: dict[int, CheckedShares], threshold: int, key: Point) -> tuple[dict[Slot, Point], int | None]:
    """Dealer `need.dealer`'s tokens and round key from `threshold` holders' checked parts (by
    holder seat index): exactly what its own message would have published."""
    tokens = {s: combine({i: p.tokens[s] for i, p in parts.items()}, threshold) for s in need.slots}
    secret = None
    if need.epoch is not None:
        secret = reconstruct({i: p.key for i, p in parts.items() if p.key is not None}, key, threshold)
    return tokens, secret

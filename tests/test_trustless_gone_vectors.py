"""Golden vectors of a vanished seat's wire forms (tests/vectors/protocol/trustless-gone.*,
written by make_trustless_gone.py there): joins dealing their keys with a threshold, the blind
host's packet declaring a seat gone, the stand-in blocks and a stand-in share riding on a move.

Every block decodes and encodes to exactly its stored bytes and signs again to the same payload;
the shares in them open, check and combine into exactly the gone seat's own tokens and key; one
byte changed anywhere is refused, and a changed share under a fresh signature is refused too.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from vector_checks import KEYS, assert_blocks_round_trip, assert_one_byte_changed_is_refused, fixed_identity, flip_b64

from pbem.protocol.documents import Gone, Join, Mental, RelayPacket, Waiting, read_blocks, sign
from pbem.protocol.mental.elgamal import Ciphertext, token_point
from pbem.protocol.mental.vss import BadShare, reconstruct
from pbem.protocol.trustless import dealing as D
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless import standin as SI
from pbem.protocol.trustless.keys import SeatKeys

V = Path(__file__).parent / "vectors" / "protocol"
FACTS = json.loads((V / "trustless-gone.json").read_text(encoding="utf-8"))
SEATS = FACTS["seats"]
K = FACTS["threshold"]
SLOTS = [("deck@1", 0), ("deck@1", 1)]
CTS = {(k.split()[0], int(k.split()[1])): Ciphertext.decode(bytes.fromhex(h)) for k, h in FACTS["ciphertexts"].items()}


def _text() -> str:
    return (V / "trustless-gone.pbem").read_text(encoding="utf-8")


def _blocks():
    return read_blocks(_text())


def _joins() -> list[Join]:
    return [b.doc for b in _blocks()[:4]]


def _dealings() -> dict[str, object]:
    return {j.seat: D.check_public(msgspec.to_builtins(j.dealing), j.seat, SEATS, K) for j in _joins()}


def _images(holder: str):
    """A holder's images of ann's keys, as SI.read asks for them (by dealer)."""
    ann = _joins()[0]
    images = SI.holder_images(M.join_shares(ann), _dealings()["ann"], SEATS.index(holder))
    return lambda dealer: images


def _epoch(label: str) -> int:
    return int(label.split("@")[1])


def test_every_block_decodes_and_encodes_to_the_same_bytes() -> None:
    blocks = assert_blocks_round_trip(_text(), FACTS["bytes"])
    assert [type(b.doc) for b in blocks] == [Join] * 4 + [RelayPacket] + [Mental] * 3


def test_the_gone_packet_pins_its_declaration() -> None:
    packet = _blocks()[4].doc
    assert packet.signer == KEYS["referee"]["line"] and packet.relayed == []
    assert packet.gone == Gone(seats=["ann"], step="deal", due="2026-12-05T04:00:00+00:00",
                               grace_until="2026-12-05T05:00:00+00:00", at="2026-12-05T05:00:07+00:00")
    assert packet.waiting == Waiting(step="stand-in", seats=["bob", "cat", "dan"], due="2026-12-06T05:00:07+00:00")


def test_each_dealing_opens_to_each_holder_and_any_quorum_rebuilds_the_keys() -> None:
    joins, dealings = _joins(), _dealings()
    for j in joins:
        assert j.dealing is not None and j.dealing.threshold == K
        keys = M.join_shares(j)
        held = {q: M.open_dealing(j, dealings[j.seat], keys, SEATS, q, fixed_identity(q)) for q in SEATS if q != j.seat}
        secret = SeatKeys.from_secret_hex(FACTS["secrets"][j.seat])
        others = list(held)
        for pair in zip(others, others[1:] + others[:1], strict=True):  # any K = 2 of the three holders
            for e, k in secret.shares.items():
                parts = {SEATS.index(q): held[q][e] for q in pair}
                assert reconstruct(parts, k.public, K) == k.secret


def test_the_stand_in_shares_combine_into_exactly_the_gone_seats_tokens_and_key() -> None:
    blocks = _blocks()
    need = SI.Need("ann", list(SLOTS), 1)
    parts = {}
    for b in blocks[5:7]:
        assert b.doc.step == "stand-in" and b.doc.seq == 9 and b.doc.packet == blocks[4].hash
        parts[SEATS.index(b.doc.seat)] = SI.read(b.doc.game, b.doc.seat, b.doc.stand_in, [need],
                                                 _images(b.doc.seat), CTS, _epoch)["ann"]
    ann = SeatKeys.from_secret_hex(FACTS["secrets"]["ann"])
    tokens, key = SI.complete(need, parts, K, ann.shares[1].public)
    assert key == ann.shares[1].secret
    assert tokens == {s: token_point(ann.shares[1].secret, CTS[s]) for s in SLOTS}
    # dan's share rides on its face-down discard, and with bob's gives ann's token again
    move = blocks[7].doc
    assert (move.step, move.move, [r.slot for r in move.discard]) == ("move", "discard ?", [("deck@1", 5)])
    riding = SI.read_shares(move.game, "dan", move.stand_in, {"ann"}, lambda _: [SLOTS[0]], lambda *_: False,
                            _images("dan"), CTS, _epoch)
    pair = {SEATS.index("bob"): parts[SEATS.index("bob")], SEATS.index("dan"): SI.CheckedShares(riding["ann"], None)}
    assert SI.complete(SI.Need("ann", SLOTS[:1]), pair, K, ann.shares[1].public)[0] == {
        SLOTS[0]: token_point(ann.shares[1].secret, CTS[SLOTS[0]])}


@pytest.mark.parametrize("index", range(8))
def test_one_byte_changed_in_any_block_is_refused(index: int) -> None:
    assert_one_byte_changed_is_refused(_blocks()[index])

@pytest.mark.parametrize("field", ["shares", "key"])
def test_a_changed_stand_in_share_signed_again_is_refused(field: str) -> None:
    doc = _blocks()[5].doc
    entry = doc.stand_in[0]
    if field == "shares":  # a byte of the first share's proof
        bad = msgspec.structs.replace(entry, shares=flip_b64(entry.shares, 40))
    else:  # the key share's lowest byte
        bad = msgspec.structs.replace(entry, key=f"{(int(entry.key[:2], 16) ^ 1):02x}{entry.key[2:]}")
    resigned = sign(msgspec.structs.replace(doc, signer="", stand_in=[bad]), fixed_identity("bob"))
    again = read_blocks(resigned.armored())[0].doc  # the signature is good: the share is what is refused
    with pytest.raises(BadShare):
        SI.read(again.game, "bob", again.stand_in, [SI.Need("ann", list(SLOTS), 1)], _images("bob"), CTS, _epoch)


def test_a_changed_dealing_box_signed_again_is_refused_by_its_holder() -> None:
    join = _joins()[0]
    boxes = dict(join.dealing.shares)
    boxes["bob"] = flip_b64(boxes["bob"], 60)  # in the ciphertext
    resigned = sign(msgspec.structs.replace(join, signer="", dealing=msgspec.structs.replace(join.dealing, shares=boxes)),
                    fixed_identity("ann"))
    again = read_blocks(resigned.armored())[0].doc
    with pytest.raises(BadShare):
        M.open_dealing(again, _dealings()["ann"], M.join_shares(again), SEATS, "bob", fixed_identity("bob"))
    M.open_dealing(again, _dealings()["ann"], M.join_shares(again), SEATS, "cat", fixed_identity("cat"))  # cat's box is whole

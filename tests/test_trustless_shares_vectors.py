"""Golden vectors of the share-carrying blocks (tests/vectors/protocol/trustless-shares.*,
written by make_trustless_shares.py there, on the joins of trustless-gone.pbem): a holder's
share of a gone seat's token sealed to the card's later reader (`StandIn.to`), the reader's
opening of it when it plays the card (`Opening.unsealed`), a `complaint` and its `answer`.

Every block decodes and encodes to exactly its stored bytes and signs again to the same payload;
the sealed share checks in public and opens for its reader alone into exactly the gone seat's
token, the opening makes that token public, the answer's shares judge the complaint; one byte
changed anywhere is refused, and a changed share under a fresh signature is refused too.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest
from vector_checks import assert_blocks_round_trip, assert_one_byte_changed_is_refused, fixed_identity, flip_b64

from pbem.protocol.documents import Join, Mental, read_blocks, sign
from pbem.protocol.mental.elgamal import Ciphertext, token_point
from pbem.protocol.mental.group import BadPoint
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.mental.vss import BadShare, SealedShare, decode_shares, judge
from pbem.protocol.trustless import dealing as D
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless import standin as SI
from pbem.protocol.trustless.keys import SeatKeys, unb64
from pbem.protocol.trustless.tokens import read_bundle

V = Path(__file__).parent / "vectors" / "protocol"
FACTS = json.loads((V / "trustless-shares.json").read_text(encoding="utf-8"))
GONE = json.loads((V / "trustless-gone.json").read_text(encoding="utf-8"))
SEATS, K = GONE["seats"], GONE["threshold"]
SLOT = (FACTS["slot"][0], FACTS["slot"][1])
CT = Ciphertext.decode(bytes.fromhex(FACTS["ciphertext"]))
ANN = SeatKeys.from_secret_hex(GONE["secrets"]["ann"]).shares[1]  # ann's key of the card's epoch


def _blocks():
    return read_blocks((V / "trustless-shares.pbem").read_text(encoding="utf-8"))


def _joins() -> dict[str, Join]:
    blocks = read_blocks((V / "trustless-gone.pbem").read_text(encoding="utf-8"))[:4]
    assert hashlib.sha256("\n".join(b.armored() for b in blocks).encode()).hexdigest() == FACTS["joins"]
    return {b.doc.seat: b.expect(Join).doc for b in blocks}


def _keys(seat: str):
    return M.join_shares(_joins()[seat])


def _ann_dealing():
    return D.check_public(msgspec.to_builtins(_joins()["ann"].dealing), "ann", SEATS, K)


def _images(holder: str):
    """A holder's images of ann's keys, as the table reads them (by dealer)."""
    images = SI.holder_images(_keys("ann"), _ann_dealing(), SEATS.index(holder))
    return lambda dealer: images


def _epoch(label: str) -> int:
    return int(label.split("@")[1])


def _read_sealed(doc: Mental):
    return SI.read_sealed(doc.game, doc.seat, doc.stand_in, {"ann"}, SEATS, lambda v, to: [SLOT],
                          lambda *_: False, _images(doc.seat), _keys, {SLOT: CT}, _epoch)


def _read_unsealed(doc: Mental, box: SealedShare):
    assert doc.play is not None and doc.play.unsealed is not None
    return SI.read_unsealed(doc.game, "dan", SLOT, doc.play.unsealed[0], {"bob": box}, _images("dan")("ann")[1],
                            _keys("dan")[1], CT, SEATS.index, K)


def test_every_block_decodes_and_encodes_to_the_same_bytes() -> None:
    blocks = assert_blocks_round_trip((V / "trustless-shares.pbem").read_text(encoding="utf-8"), FACTS["bytes"])
    assert [(b.doc.seat, b.doc.step) for b in blocks] == [("cat", "complaint"), ("ann", "answer"), ("bob", "tokens"),
                                                           ("dan", "move")]


def test_the_sealed_share_checks_in_public_and_opens_for_its_reader_alone() -> None:
    doc = _blocks()[2].doc
    entry = doc.stand_in[0]
    assert (entry.dealer, entry.to, [s.slot for s in entry.slots], entry.key) == ("ann", "dan", [SLOT], None)
    assert len(unb64(entry.shares, "a vector")) == 160
    box = _read_sealed(doc)[("ann", "dan")][SLOT]  # its proof over bob's image, the card and dan's key
    dan = SeatKeys.from_secret_hex(GONE["secrets"]["dan"]).shares[1].secret
    dealing = _ann_dealing()
    own = M.open_dealing(_joins()["ann"], dealing, _keys("ann"), SEATS, "dan", fixed_identity("dan"))[1]
    token = SI.open_sealed(dan, own, {SEATS.index("bob"): box}, CT.c1, SEATS.index("dan"), K)
    assert token == token_point(ANN.secret, CT)  # exactly ann's own token for the card
    cat = SeatKeys.from_secret_hex(GONE["secrets"]["cat"]).shares[1].secret  # another seat's key opens nothing
    mine = M.open_dealing(_joins()["ann"], dealing, _keys("ann"), SEATS, "cat", fixed_identity("cat"))[1]
    assert SI.open_sealed(cat, mine, {SEATS.index("bob"): box}, CT.c1, SEATS.index("cat"), K) != token


def test_the_played_cards_opening_makes_the_gone_seats_token_public() -> None:
    blocks = _blocks()
    box = SealedShare.decode(unb64(blocks[2].doc.stand_in[0].shares, "a vector"))
    doc = blocks[3].doc
    assert doc.play is not None and doc.play.slot.slot == SLOT and doc.move == "play cross at 1,0"
    u = doc.play.unsealed[0]
    assert (u.dealer, u.holders) == ("ann", ["bob"])
    assert _read_unsealed(doc, box) == token_point(ANN.secret, CT)
    read_bundle(doc.game, msgspec.to_builtins(doc.play.open), {"deck@1": _keys("dan")[1]}, {SLOT: CT})  # dan's own


def test_the_answer_judges_the_complaint() -> None:
    complaint, answer = (b.doc for b in _blocks()[:2])
    assert (complaint.against, complaint.shares, answer.against) == ("ann", None, "cat")
    shares = decode_shares(unb64(answer.shares, "a vector"), 4)
    keys = [_keys("ann")[e] for e in range(4)]
    assert judge(shares, keys, _ann_dealing(), SEATS.index("cat")) == "complainer"  # they match: cat's was forged
    assert judge([shares[0] ^ 1, *shares[1:]], keys, _ann_dealing(), SEATS.index("cat")) == "dealer"
    assert judge(None, keys, _ann_dealing(), SEATS.index("cat")) == "dealer"


@pytest.mark.parametrize("index", range(4))
def test_one_byte_changed_in_any_block_is_refused(index: int) -> None:
    assert_one_byte_changed_is_refused(_blocks()[index])


def _resigned(doc: Mental, **changes) -> Mental:
    """`doc` changed and signed again by its seat: its signature is good, its contents are not."""
    again = sign(msgspec.structs.replace(doc, signer="", **changes), fixed_identity(doc.seat))
    return read_blocks(again.armored())[0].expect(Mental).doc


@pytest.mark.parametrize(("at", "error"), [(0, BadPoint), (32, BadPoint), (64, BadShare), (159, BadShare)])
def test_a_changed_sealed_share_signed_again_is_refused(at: int, error: type[Exception]) -> None:
    """A byte of the box's A or B (no point any more), of the proof's challenge or last scalar."""
    doc = _blocks()[2].doc
    entry = doc.stand_in[0]
    bad = _resigned(doc, stand_in=[msgspec.structs.replace(entry, shares=flip_b64(entry.shares, at))])
    with pytest.raises(error):
        _read_sealed(bad)
    readdressed = _resigned(doc, stand_in=[msgspec.structs.replace(entry, to="cat")])  # the same box to another reader
    with pytest.raises(BadProof):
        _read_sealed(readdressed)


@pytest.mark.parametrize("field", ["share", "opened"])
def test_a_changed_opening_signed_again_is_refused(field: str) -> None:
    blocks = _blocks()
    box = SealedShare.decode(unb64(blocks[2].doc.stand_in[0].shares, "a vector"))
    doc = blocks[3].doc
    assert doc.play is not None and doc.play.unsealed is not None
    u = doc.play.unsealed[0]
    bad_u = msgspec.structs.replace(u, **{field: flip_b64(getattr(u, field), 40)})
    bad = _resigned(doc, play=msgspec.structs.replace(doc.play, unsealed=[bad_u]))
    with pytest.raises(BadProof):
        _read_unsealed(bad, box)

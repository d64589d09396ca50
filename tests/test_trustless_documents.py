"""The trustless messages on the wire: golden vectors (tests/vectors/protocol/trustless.*, written
by make_trustless.py there) and the shapes the one parser refuses.

Every vector block is read by the one parser, encoded again byte for byte, its signature
checked, and then its cryptography: the joins' key proofs, the setup chain's shuffle proofs,
the deal's tokens (ann opens the hand the vectors say), the played card's opening, the
revealed key against the join's share.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from pbem.errors import BadPacket, BadSignature
from pbem.protocol.crypto import canonical_json
from pbem.protocol.documents import SIG_LEN, Join, Mental, parse, read_blocks, sign_json, to_json
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.trustless import keys as K
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless import setup as S
from pbem.protocol.trustless.stacks import game_stacks
from pbem.protocol.trustless.table import Layout, TableSeat, TrustlessGame

V = Path(__file__).parent / "vectors" / "protocol"
FACTS = json.loads((V / "trustless.json").read_text(encoding="utf-8"))
BLOCKS = read_blocks((V / "trustless.pbem").read_text(encoding="utf-8"))


def _identity(name):
    from test_protocol_vectors import _identity as fixed
    return fixed(name)


def test_every_vector_reads_and_encodes_again_byte_for_byte():
    kinds = [b.kind for b in BLOCKS]
    assert kinds == ["join"] * 3 + ["mental"] * 13
    steps = [b.doc.step for b in BLOCKS[3:]]
    assert steps == ["shuffle"] * 3 + ["deal"] * 3 + ["move", "move", "tokens", "goal", "reveal", "move", "steal"]
    assert _raw(BLOCKS[14])["play"]["handed"][0]["from"] == "ann" and "handed" not in _raw(BLOCKS[9])["play"]
    assert _raw(BLOCKS[15])["step"] == "steal" and _raw(BLOCKS[15])["move"] == "steal ann"
    for b, size in zip(BLOCKS, FACTS["bytes"]):
        assert to_json(b.doc) == b.payload[SIG_LEN:]
        assert len(b.armored().encode()) == size
        assert b.signer == _identity(b.doc.seat).public


def _table():
    game = TrustlessGame(FACTS["game"], "classic", tuple(FACTS["seats"]), frozenset(),
                         tuple(game_stacks("classic", len(FACTS["seats"]))))
    shares = {b.doc.seat: M.join_shares(b.doc) for b in BLOCKS[:3]}
    current = S.start(list(game.stacks))
    for turn, b in enumerate(BLOCKS[3:6]):
        current = S.check_shuffle_doc(game.id, b.doc.seat, turn, list(game.stacks), K.joint_keys(shares), current,
                                      msgspec.to_builtins(b.doc.shuffle))
    return game, shares, current


@pytest.mark.slow
def test_the_vectors_deal_ann_her_cards_through_checked_proofs():
    game, shares, current = _table()
    ann = TableSeat(game, "ann", _identity("ann"), K.SeatKeys.from_secret_hex(FACTS["secrets"]["ann"]),
               {p: _identity(p).public for p in game.players}, shares, current)
    for b in BLOCKS[7:9]:
        ann.receive(M.bundle(b.doc.tokens[0]))
    assert [ann.opened[s] for s in Layout.of(game, 1).private("ann")] == FACTS["ann_dealt"]
    # bob sees ann's played card open, and only from her slot
    bob = TableSeat(game, "bob", _identity("bob"), K.SeatKeys.from_secret_hex(FACTS["secrets"]["bob"]),
               {p: _identity(p).public for p in game.players}, shares, current)
    for b in (BLOCKS[6], BLOCKS[8]):
        bob.receive(M.bundle(b.doc.tokens[0]))
    move = BLOCKS[9].doc
    slot = move.play.slot.slot
    assert bob.check_opening("ann", slot, M.bundle(move.play.open), Layout.of(game, 1).hands["ann"]) == FACTS["played"]
    with pytest.raises(BadPacket, match="not in its hand"):
        bob.check_opening("ann", slot, M.bundle(move.play.open), Layout.of(game, 1).hands["bob"])
    # the sealed token opens for ann only
    sealed = next(t for t in BLOCKS[11].doc.tokens if t.to == "ann")
    assert ann.receive(M.bundle(sealed)) == []  # one token of two: the goal stays shut
    with pytest.raises(BadPacket, match="sealed to ann"):
        bob.receive(M.bundle(sealed))
    # ann's revealed key is the one her join published
    K.check_revealed("ann", 1, shares["ann"][1], BLOCKS[13].doc.reveal["1"])
    with pytest.raises(BadProof):
        K.check_revealed("bob", 1, shares["bob"][1], BLOCKS[13].doc.reveal["1"])
    # a card handed on by swap-hand: cat's opening carries ann's token too (checked against
    # ann's share, as any public token), and with bob's dealt token every seat opens it
    played = BLOCKS[14].doc.play
    assert [t.maker for t in played.handed] == ["ann"] and played.open.maker == "cat"
    bob.receive(M.bundle(played.handed[0]))
    assert bob.check_opening("cat", played.slot.slot, M.bundle(played.open), [played.slot.slot]) == FACTS["handed_on"]
    forged = M.bundle(played.handed[0]) | {"from": "bob"}  # ann's token passed off as another seat's
    with pytest.raises(BadPacket):
        ann.receive(forged)


def test_a_shuffle_checked_against_the_wrong_stacks_is_refused():
    game = TrustlessGame(FACTS["game"], "classic", tuple(FACTS["seats"]), frozenset(),
                         tuple(game_stacks("classic", 3)))
    shares = {b.doc.seat: M.join_shares(b.doc) for b in BLOCKS[:3]}
    bob = BLOCKS[4].doc
    with pytest.raises(BadProof):  # bob's shuffle read as the first of the chain
        S.check_shuffle_doc(game.id, "bob", 1, list(game.stacks), K.joint_keys(shares), S.start(list(game.stacks)),
                            msgspec.to_builtins(bob.shuffle))


def _raw(block):
    return json.loads(block.payload[SIG_LEN:])


def _resign(kind, doc, seat):
    doc = {k: v for k, v in doc.items() if k not in ("format", "signer")}
    return sign_json(kind, doc, _identity(seat))


@pytest.mark.parametrize("change,why", [
    (lambda d: d.update(step="deal"), "carries"),  # a move's fields under another step
    (lambda d: d.pop("discard"), "one of them"),  # a move that neither plays nor discards
    (lambda d: d.update(play={"slot": ["deck@1", 0], "open": d["tokens"][0]}), "one of them"),  # both
    (lambda d: d["tokens"][0].update(sealed="AAAA"), "not both"),  # public and sealed at once
    (lambda d: d["tokens"][0].update({"from": "ann"}), "made by"),  # another seat's tokens
    (lambda d: d["tokens"][0].update(slots=[]), "names no slot"),
    (lambda d: d["tokens"][0].update(slots=[["deck@1", "7"]]), "malformed"),
    (lambda d: d["tokens"][0].update(slots=[["deck@1", 7, 1]]), "malformed"),
    (lambda d: d.update(extra=1), "malformed"),
    (lambda d: d.update(step="peek"), "malformed"),
    (lambda d: d.update(seat="Bob!"), "bad seat"),
])
def test_malformed_mental_messages_are_refused_by_the_parser(change, why):
    doc = _raw(BLOCKS[10])  # bob's face-down discard paying ann's draw
    change(doc)
    with pytest.raises(BadPacket, match=why):
        parse("mental", _resign("mental", doc, "bob"))


def test_a_changed_byte_breaks_the_signature_and_a_join_without_proofs_is_refused():
    payload = bytearray(BLOCKS[9].payload)
    i = payload.index(b'"move":"') + 8
    payload[i] ^= 1
    with pytest.raises(BadSignature):
        parse("mental", bytes(payload))
    join = _raw(BLOCKS[0])
    join["mental"] = join["mental"][:-1]
    read = parse("join", _resign("join", join, "ann")).doc
    assert isinstance(read, Join)
    with pytest.raises(BadPacket, match="one key share for each epoch"):
        M.join_shares(read)
    join = _raw(BLOCKS[0])
    join["mental"][0]["proof"] = join["mental"][1]["proof"]
    with pytest.raises(BadProof):
        M.join_shares(parse("join", _resign("join", join, "ann")).doc)


def test_an_old_join_reads_unchanged():
    """A join without key shares (every game before trustless play) has no `mental` field."""
    join = _raw(BLOCKS[0])
    del join["mental"]
    doc = parse("join", _resign("join", join, "ann")).doc
    assert doc.mental is None and b"mental" not in canonical_json(msgspec.to_builtins(doc))
    assert isinstance(BLOCKS[9].doc, Mental)

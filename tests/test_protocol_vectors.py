"""Golden vectors of the wire format (tests/vectors/protocol/, written by make.py there).

Every vector is decoded and encoded again by today's code and compared byte for byte, so any
change to the format (a field, the canonical JSON, the armour, a label, the padding, the
chance stream) fails here. docs/protocol.md, "Golden vectors", lists them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from engine.chance import SeededChance
from engine.position import dump
from engine.state import deal
from pbem.errors import BadPacket
from pbem.names import HOST
from pbem.protocol import fairness
from pbem.protocol.armor import armor, dearmor_all
from pbem.protocol.crypto import Identity, PublicKey, canonical_json, verify
from pbem.protocol.documents import (
    SIG_LEN,
    Archive,
    Handover,
    Invitation,
    Join,
    Notice,
    Packet,
    Part,
    Request,
    SealedMove,
    SeatMove,
    move_commitment,
    open_as,
    read_blocks,
    seal_info,
    sign,
    to_json,
    unb64,
)
from pbem.replay.audit import audit

V = Path(__file__).parent / "vectors" / "protocol"


def _load(name: str):
    return json.loads((V / name).read_text(encoding="utf-8"))


KEYS = {k["name"]: k for k in _load("keys.json")}


def _identity(name: str) -> Identity:
    k = KEYS[name]
    return Identity(name, Ed25519PrivateKey.from_private_bytes(bytes.fromhex(k["ed25519_seed"])),
                    X25519PrivateKey.from_private_bytes(bytes.fromhex(k["x25519_private"])))


def test_seeded_chance_streams_and_a_deal() -> None:
    vectors = _load("chance.json")
    for v in vectors["streams"]:
        c = SeededChance(bytes.fromhex(v["seed"]))
        assert [[n, c.below(n)] for n, _ in v["below"]] == v["below"]
        assert SeededChance(bytes.fromhex(v["seed"])).shuffled(list(range(20))) == v["shuffled_0_to_19"]
    d = vectors["deal"]
    assert dump(deal(d["ruleset"], tuple(d["players"]), SeededChance(bytes.fromhex(d["seed"])))) == d["position"]


def test_commitment_and_seed_formulas() -> None:
    for v in _load("fairness.json"):
        secret, contributions = bytes.fromhex(v["secret"]), [bytes.fromhex(c) for c in v["contributions"]]
        assert fairness.commitment(v["game"], v["round"], secret) == v["commitment"]
        assert fairness.round_seed(v["game"], v["round"], secret, contributions).hex() == v["seed"]
        # the formulas as docs/protocol.md writes them, outside the code under test
        head = f"{v['game']}\n{v['round']}\n".encode()
        assert hashlib.sha256(b"pbem-commit/1\n" + head + secret).hexdigest() == v["commitment"]
        assert hashlib.sha256(b"pbem-seed/1\n" + head + secret + b"".join(contributions)).hexdigest() == v["seed"]


def test_canonical_json() -> None:
    for v in _load("canonical-json.json"):
        assert canonical_json(json.loads(v["input"])).hex() == v["canonical_hex"]


def test_the_pbem1_key_line_key_id_fingerprint_and_signature_label() -> None:
    for name, k in KEYS.items():
        ident = _identity(name)
        pub = ident.public
        assert (pub.sign.hex(), pub.enc.hex()) == (k["sign_pub"], k["enc_pub"])
        assert pub.encode() == k["line"] and PublicKey.decode(k["line"]) == pub
        assert pub.key_id().hex() == k["key_id"] and pub.fingerprint() == k["fingerprint"]
        assert ident.sign(b"abc").hex() == k["signature_of_abc"]  # Ed25519 is deterministic
        verify(pub, b"abc", bytes.fromhex(k["signature_of_abc"]))


def test_armour_written_tolerated_and_refused() -> None:
    v = _load("armor.json")
    for w in v["written"]:
        assert armor(w["kind"], bytes.fromhex(w["payload"]), w["headers"] or None) == w["text"]
        assert dearmor_all(w["text"]) == [(w["kind"], bytes.fromhex(w["payload"]))]
    for t in v["tolerated"]:
        assert [p for _, p in dearmor_all(t["text"])] == [bytes.fromhex(t["payload"])], t["text"]
    for text in v["refused"]:
        with pytest.raises(BadPacket):
            dearmor_all(text)


DOCUMENTS = {"invitation.pbem": Invitation, "join.pbem": Join, "packet.pbem": Packet, "move.pbem": SeatMove,
             "archive.pbem": Archive, "notice.pbem": Notice, "request.pbem": Request, "handover.pbem": Handover,
             "packet-deadline.pbem": Packet, "move-by-host.pbem": SeatMove, "archive-deadline.pbem": Archive}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_document_decodes_and_encodes_to_the_same_bytes(name: str) -> None:
    text = (V / name).read_text(encoding="utf-8")
    manifest = _load("documents.json")[name]
    block = read_blocks(text)[-1]  # parse: size, JSON, version, canonical bytes, shape, signature
    assert isinstance(block.doc, DOCUMENTS[name])
    assert block.hash == manifest["hash"] and len(text.encode()) == manifest["bytes"]
    assert to_json(block.doc) == block.payload[SIG_LEN:]  # the typed document writes the same bytes
    assert block.armored() == text
    signer = next(n for n, k in KEYS.items() if k["line"] == block.doc.signer)
    resigned = sign(msgspec.structs.replace(block.doc, signer=""), _identity(signer))
    assert resigned.payload == block.payload  # encoder, signer field and signature label all unchanged


def test_the_sealed_parts_of_the_packet_and_the_move_open_to_canonical_documents() -> None:
    packet = read_blocks((V / "packet.pbem").read_text(encoding="utf-8"))[0].doc
    manifest = _load("documents.json")
    # the padding is part of the format: every part, and the move, has its pinned size
    assert sorted({len(unb64(v, "part")) for v in packet.parts.values()}) == manifest["packet.pbem"]["sealed_part_bytes"]
    assert len(manifest["packet.pbem"]["sealed_part_bytes"]) == 1
    for seat, sealed in packet.parts.items():
        part = open_as(Part, sealed, _identity(seat), seal_info(packet.game, packet.seq, HOST, seat, "part"))
        assert part.seat == seat and len(part.hand) == len(packet.public["hands"][seat])
    move = read_blocks((V / "move.pbem").read_text(encoding="utf-8"))[0].doc
    assert len(unb64(move.sealed, "move")) == manifest["move.pbem"]["sealed_move_bytes"]
    sealed = open_as(SealedMove, move.sealed, _identity("referee"), seal_info(move.game, move.seq, move.seat, HOST, "move"))
    assert move_commitment(unb64(sealed.nonce, "nonce"), sealed.move) == move.commit


@pytest.mark.parametrize("name", ["archive.pbem", "archive-deadline.pbem"])
def test_the_archive_audits_clean(name: str) -> None:
    archive = read_blocks((V / name).read_text(encoding="utf-8"))[-1]
    report = audit(archive.payload)
    assert report.ok, [f.line() for f in report.faults]


def test_the_deadline_vectors_hold_every_deadline_field() -> None:
    """The round with deadlines: bob's away request, cat's late notice and the host's discard
    for cat, bob's seat handed to dan's key; the fields are pinned by the vectors above."""
    def doc(name: str):
        return read_blocks((V / name).read_text(encoding="utf-8"))[-1].doc

    request, notice, handover = doc("request.pbem"), doc("notice.pbem"), doc("handover.pbem")
    assert (request.action, request.seat, request.until) == ("away", "bob", "2026-12-03T00:00:00+00:00")
    assert (notice.notice, notice.seat, notice.missed) == ("late", "cat", 1) and notice.due and notice.until is None
    assert handover.key == KEYS["dan"]["line"] and handover.signer == KEYS["referee"]["line"]
    move = doc("move-by-host.pbem")
    assert (move.seat, move.by, move.why, move.signer) == ("cat", "host", "timeout", KEYS["referee"]["line"])
    packet = doc("packet-deadline.pbem")
    assert packet.handover == "bob" and packet.moves == [] and packet.deadline is not None
    assert packet.deadline.seat == packet.to_move == "bob" and packet.deadline.on_timeout == "discard"
    assert [h.key for h in packet.handovers or []] == [KEYS["dan"]["line"]]
    assert any(m.by == "host" and m.seat == "cat" for m in packet.recent or [])
    assert "dan" not in packet.parts and packet.parts.keys() == {"ann", "bob", "cat"}
    # the part of the handed seat opens with dan's key, not bob's
    open_as(Part, packet.parts["bob"], _identity("dan"), seal_info(packet.game, packet.seq, HOST, "bob", "part"))
    archive = doc("archive-deadline.pbem")
    assert [m.why for m in archive.moves if m.by == "host"] == ["timeout"] and archive.handovers == packet.handovers

"""A blind host's packet formats: format 1 relays each seat's block in base64 (its shuffle's
ciphertexts, already base64 in the block, go into base64 twice more as the packet is
armoured); format 2 relays the block's signature and its document as JSON, so a relayed
shuffle is base64 once inside the packet's armour. Old games still read and go on.

tests/fixtures/trustless-v1/game.db is a blind host's database written by the pbem before
format 2 (its write_db.py): packet 1 relays three joins, packet 2 ann's shuffle. Here the
pbem of today follows it, carries the game on in format 2, and `pbem audit` reads the mixed
chain. tests/vectors/protocol/trustless-packets.pbem are format 2's golden vectors.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from pbem.errors import BadPacket, BadSignature
from pbem.host import blind
from pbem.protocol.crypto import canonical_json
from pbem.protocol.documents import (
    SIG_LEN,
    Packet,
    Relayed,
    RelayPacket,
    parse,
    parse_relayed,
    read_blocks,
    relay,
    sign,
    to_json,
)
from pbem.seat.trustless import TrustlessSeat

OLD = Path(__file__).parent / "fixtures" / "trustless-v1" / "game.db"
V = Path(__file__).parent / "vectors" / "protocol"


def _identity(name):
    from test_protocol_vectors import _identity as fixed
    return fixed(name)


@pytest.fixture(scope="module")
def carried_on(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The old database, carried on by today's host and seats to the deal step: bob's and
    cat's shuffles relayed in format 2."""
    db = tmp_path_factory.mktemp("v1") / "game.db"
    shutil.copyfile(OLD, db)
    with blind.BlindHost(db, _identity("referee")) as host:
        inv = read_blocks(host.invitation())[0]
        seats = {s: TrustlessSeat(inv, _identity(s), s) for s in ("ann", "bob", "cat")}
        for seat in ("bob", "cat"):
            for _, armored in host.packets(seats[seat].head[0]):
                seats[seat].follow(read_blocks(armored)[0])
            block = seats[seat].owed()
            assert block is not None and block.doc.step == "shuffle"
            host.accept(read_blocks(block.armored())[0])
        packets = [a for _, a in host.packets(0)]
        for armored in packets:  # ann, who sent packet 2's shuffle, follows the mixed chain
            seats["ann"].follow(read_blocks(armored)[0])
        assert host.status()["waiting"]["step"] == "deal"
    return db, packets


def test_an_old_game_reads_and_goes_on_in_format_2(carried_on: tuple[Path, list[str]]) -> None:
    _, packets = carried_on
    docs = [read_blocks(a)[0] for a in packets]
    assert [type(d.doc) for d in docs] == [Packet, Packet, RelayPacket, RelayPacket]
    assert [d.payload[SIG_LEN:].split(b'"format":"')[1][:13] for d in docs] == [b"pbem-packet/1"] * 2 + [b"pbem-packet/2"] * 2
    old, new = docs[1].doc.relayed[0], docs[2].doc.relayed[0]
    assert old.block is not None and old.doc is None and new.block is None and new.doc is not None
    # the same kind of block (a 3-seat classic shuffle) relayed: a quarter smaller in format 2
    assert len(packets[2]) < 0.8 * len(packets[1]), (len(packets[1]), len(packets[2]))
    assert abs(len(packets[2]) - len(packets[3])) < 0.02 * len(packets[2])
    # every relayed block is the seat's signed bytes, whichever format carried it
    for d in docs[1:]:
        block = parse_relayed(d.doc.relayed[0], "block")
        assert block.doc.step == "shuffle" and block.payload[SIG_LEN:] == to_json(block.doc)


def test_the_audit_follows_the_mixed_chain_by_a_real_process(carried_on: tuple[Path, list[str]]) -> None:
    from processes import pbem

    db, _ = carried_on
    run = pbem("audit", "--db", db, "--json", timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr  # no round has ended: nothing to audit
    out = json.loads(run.stdout)
    assert out["packets"] == 4 and out["waiting"]["step"] == "deal", out


def test_a_relayed_document_changed_by_the_host_fails_its_seats_signature(carried_on: tuple[Path, list[str]]) -> None:
    _, packets = carried_on
    doc = read_blocks(packets[2])[0].doc
    rel = doc.relayed[0]
    forged = Relayed(kind=rel.kind, sig=rel.sig, doc={**rel.doc, "seq": rel.doc["seq"] + 1})
    with pytest.raises(BadSignature):
        parse_relayed(forged, "block")
    short = Relayed(kind=rel.kind, sig="AAAA", doc=rel.doc)
    with pytest.raises(BadPacket, match="signature of 3 bytes"):
        parse_relayed(short, "block")


@pytest.mark.parametrize("fields, says", [
    ({"block": "AAAA", "sig": "AAAA"}, "either its payload or"),
    ({"sig": "AAAA"}, "either its payload or"),
    ({}, "either its payload or"),
])
def test_a_relayed_block_in_no_form_or_two_is_refused(fields, says) -> None:
    with pytest.raises(BadPacket, match=says):
        msgspec.convert({"kind": "mental", **fields}, Relayed)


def test_a_packet_relaying_in_the_other_formats_form_is_refused() -> None:
    blocks = read_blocks((V / "trustless.pbem").read_text(encoding="utf-8"))
    host = _identity("referee")
    raw = json.loads(to_json(sign(RelayPacket(**_packet(relayed=[relay(blocks[0])])), host).doc))
    for fmt, rel in (("pbem-packet/1", msgspec.to_builtins(relay(blocks[0]))), ("pbem-packet/2", {
            "kind": "join", "block": "AAAA"})):
        body = canonical_json({**raw, "format": fmt, "relayed": [rel]})
        with pytest.raises(BadPacket, match="in a form its format"):
            parse("packet", host.sign(body) + body)


def _packet(**fields):
    return {"game": "trustvec-0000beef", "seq": 1, "prev": "0" * 64, "round": 1, "phase": "playing",
            "to_move": None, "public": {}, "moves": [], "events": [], "parts": {},
            "waiting": {"step": "shuffle", "seats": ["ann"]}, **fields}


def test_the_format_2_vectors_read_and_encode_again_byte_for_byte() -> None:
    blocks = read_blocks((V / "trustless.pbem").read_text(encoding="utf-8"))
    packets = read_blocks((V / "trustless-packets.pbem").read_text(encoding="utf-8"))
    facts = json.loads((V / "trustless-packets.json").read_text(encoding="utf-8"))
    assert [p.doc.seq for p in packets] == [1, 2]
    assert all(isinstance(p.doc, RelayPacket) and p.signer == _identity("referee").public for p in packets)
    for p in packets:
        assert to_json(p.doc) == p.payload[SIG_LEN:]
    assert [parse_relayed(r, "block").payload for r in packets[0].doc.relayed] == [b.payload for b in blocks[:3]]
    assert parse_relayed(packets[1].doc.relayed[0], "block").payload == blocks[3].payload
    assert [len(p.armored().encode()) for p in packets] == facts["bytes"]
    # ann's shuffle: base64 once in format 2, so the packet is hardly bigger than the block
    assert facts["bytes"][1] < 1.05 * len(blocks[3].armored().encode()) < facts["format 1 bytes"][1] * 0.8

"""Table talk on the wire (docs/protocol.md, "Table talk"): the golden vector talk.pbem byte for
byte, whispers opened with the fixed keys, one box size whatever a whisper says, and the
forgeries a reader refuses."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from pbem.errors import BadPacket, BadSignature, UsageError, WrongKey
from pbem.protocol import talk
from pbem.protocol.documents import SIG_LEN, Talk, parse, read_blocks, sign, sign_json, to_json, unb64
from pbem.protocol.limits import TALK_CHARS, TALK_PER_PACKET

V = Path(__file__).parent / "vectors" / "protocol"
ID = {}


def _identity(name: str):
    from tests.vectors.protocol.make import identity

    return ID.setdefault(name, identity(name))


def _vector():
    return read_blocks((V / "talk.pbem").read_text(encoding="utf-8"))


def _keys() -> dict[str, str]:
    return read_blocks((V / "invitation.pbem").read_text(encoding="utf-8"))[0].doc.seat_keys()


def test_the_talk_vector_decodes_and_encodes_to_the_same_bytes() -> None:
    text = (V / "talk.pbem").read_text(encoding="utf-8")
    manifest = json.loads((V / "documents.json").read_text(encoding="utf-8"))["talk.pbem"]
    said, whisper = _vector()
    assert len(text.encode()) == manifest["bytes"] and [said.hash, whisper.hash] == manifest["hash"]
    assert said.armored() + whisper.armored() == text
    for block, name in ((said, "ann"), (whisper, "bob")):
        assert isinstance(block.doc, Talk) and to_json(block.doc) == block.payload[SIG_LEN:]
        resigned = sign(msgspec.structs.replace(block.doc, signer=""), _identity(name))
        assert resigned.payload == block.payload
    # the wire form, field by field
    body = json.loads(said.payload[SIG_LEN:])
    assert sorted(body) == ["at", "format", "game", "n", "packet", "seat", "seq", "signer", "text"]
    assert body["format"] == "pbem-talk/1" and body["text"] == "cat broke my lamp: cat is a saboteur"
    wbody = json.loads(whisper.payload[SIG_LEN:])
    assert sorted(wbody) == ["at", "format", "game", "n", "packet", "sealed", "seat", "seq", "signer", "to"]
    assert wbody["to"] == ["ann", "cat"] and sorted(wbody["sealed"]) == ["ann", "bob", "cat"]
    assert b"stone" not in whisper.payload and "stone" not in text
    # every box has the pinned padded size
    assert sorted({len(unb64(b, "box")) for b in wbody["sealed"].values()}) == manifest["sealed_talk_bytes"]


def test_a_whisper_opens_for_its_seats_and_the_speaker_only() -> None:
    keys = _keys()
    said, whisper = _vector()
    line = talk.read(said, keys["ann"], "cat", None)
    assert line is not None and (line.speaker, line.to, line.text, line.seq, line.n) == (
        "ann", None, "cat broke my lamp: cat is a saboteur", 1, 1)
    for reader in ("ann", "cat", "bob"):
        got = talk.read(whisper, keys["bob"], reader, _identity(reader))
        assert got is not None and got.text == "I saw the map: the top one is stone" and got.to == ("ann", "cat")
        assert got.json() == {"from": "bob", "to": ["ann", "cat"], "text": got.text, "packet": 1, "n": 1,
                              "at": "2026-12-01T10:01:00+00:00"}
    assert talk.read(whisper, keys["bob"], "dan", _identity("dan")) is None  # not sealed to dan
    with pytest.raises(WrongKey):  # ann's box does not open with dan's key
        talk.read(whisper, keys["bob"], "ann", _identity("dan"))


def test_a_forged_line_is_refused() -> None:
    keys = _keys()
    said, _ = _vector()
    # signed by another seat's key: the speaker's key at the packet must sign it
    forged = sign(msgspec.structs.replace(said.doc, signer=""), _identity("bob"))
    with pytest.raises(BadSignature):
        talk.read(forged, keys["ann"], "cat", None)
    # the text changed after signing: the signature no longer verifies
    body = said.payload[SIG_LEN:].replace(b"cat is a saboteur", b"bob is a saboteur")
    with pytest.raises(BadSignature):
        parse("talk", said.payload[:SIG_LEN] + body)


def test_a_box_cut_out_of_a_whisper_does_not_open_elsewhere() -> None:
    """A box is bound to its game, packet, speaker and reader (HPKE info): bob's box for ann,
    re-signed by cat into a whisper of cat's, does not open."""
    keys = _keys()
    _, whisper = _vector()
    doc = whisper.doc
    stolen = Talk(game=doc.game, seat="cat", seq=doc.seq, packet=doc.packet, n=1, at=doc.at, to=["ann"],
                  sealed={"ann": doc.sealed["ann"], "cat": doc.sealed["cat"]})
    with pytest.raises(WrongKey):
        talk.read(sign(stolen, _identity("cat")), keys["cat"], "ann", _identity("ann"))


def test_every_whisper_box_has_one_size() -> None:
    keys = _keys()
    texts = ["y", "x" * TALK_CHARS, "\U0001f600" * TALK_CHARS, "\x01" * TALK_CHARS, "矮人" * (TALK_CHARS // 2)]
    sizes = set()
    for text in texts:
        block = talk.make("vector-65a304cd", "bob", 1, "0" * 64, 1, "2026-12-01T10:00:00+00:00", text, ["ann"], keys,
                          _identity("bob"))
        assert parse("talk", block.payload).doc == block.doc
        sizes |= {len(unb64(b, "box")) for b in (block.doc.sealed or {}).values()}
        assert talk.read(block, keys["bob"], "ann", _identity("ann")).text == text
    assert len(sizes) == 1


BASE = {"game": "vector-65a304cd", "seat": "ann", "seq": 1, "packet": "0" * 64, "n": 1,
        "at": "2026-12-01T10:00:00+00:00"}


@pytest.mark.parametrize("fields", [
    {"text": ""}, {"text": "   "}, {"text": "x" * (TALK_CHARS + 1)},  # empty, only spaces, over the limit
    {},  # neither text nor whisper
    {"text": "hi", "to": ["bob"], "sealed": {"ann": "AA==", "bob": "AA=="}},  # both
    {"to": ["bob"]},  # a whisper without boxes
    {"to": ["ann"], "sealed": {"ann": "AA=="}},  # to the speaker
    {"to": ["cat", "bob"], "sealed": {"ann": "AA==", "bob": "AA==", "cat": "AA=="}},  # not in order
    {"to": [], "sealed": {"ann": "AA=="}},  # to nobody
    {"to": ["bob"], "sealed": {"ann": "AA==", "cat": "AA=="}},  # sealed to another seat than named
    {"to": ["bob"], "sealed": {"bob": "AA=="}},  # without the speaker's own box
    {"text": "hi", "n": 0}, {"text": "hi", "seq": 0},
    {"text": "hi", "at": "yesterday"}, {"text": "hi", "at": "2026-12-05T00:00:00\x1b[2J"},
])
def test_a_malformed_line_is_a_bad_packet(fields: dict) -> None:
    with pytest.raises(BadPacket):
        parse("talk", sign_json("talk", {**BASE, **fields}, _identity("ann")))


def test_the_limits_said_before_anything_is_written() -> None:
    seats = ("ann", "bob", "cat")
    assert talk.check_line("hi", ["cat", "bob", "cat"], "ann", seats) == ["bob", "cat"]
    for text, to in (("", []), (" ", []), ("x" * (TALK_CHARS + 1), []), ("hi", ["eve"]), ("hi", ["ann"])):
        with pytest.raises(UsageError):
            talk.check_line(text, to, "ann", seats)
    talk.check_count(TALK_PER_PACKET - 1, 3)
    with pytest.raises(UsageError):
        talk.check_count(TALK_PER_PACKET, 3)

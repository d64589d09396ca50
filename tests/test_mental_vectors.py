"""Golden vectors: RFC 9496's for the group binding, and pbem's own for every wire encoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mental_vectors import PATH, VSS_PATH, build, build_vss

from pbem.protocol.mental.elgamal import Ciphertext, joint_key
from pbem.protocol.mental.group import BadPoint, Point, base_mul, decode_scalar, from_uniform
from pbem.protocol.mental.proofs import BadProof, Proof, Token, check_key, check_token
from pbem.protocol.mental.shuffle import ShuffleProof, check_shuffle
from pbem.protocol.mental.vss import (
    BadShare,
    Dealing,
    SealedShare,
    check_sealed_stand_in,
    check_shares,
    check_stand_in,
    combine,
    decode_shares,
    image,
    open_stand_in,
)

RFC = json.loads((Path(__file__).parent / "vectors" / "mental" / "ristretto255.json").read_text())
OURS = json.loads(PATH.read_text())
VSS = json.loads(VSS_PATH.read_text())


def test_small_multiples_of_the_generator():
    for k, hexed in enumerate(RFC["small_multiples"]):
        assert base_mul(k).raw.hex() == hexed
        assert Point.decode(bytes.fromhex(hexed)) == base_mul(k)
    assert base_mul(15).raw.hex() == RFC["fifteen"]


def test_one_way_map():
    for v in RFC["from_uniform"]:
        assert from_uniform(bytes.fromhex(v["input"])).raw.hex() == v["output"]


@pytest.mark.parametrize("name", sorted(RFC["invalid"]))
def test_invalid_encodings_are_refused(name):
    with pytest.raises(BadPoint):
        Point.decode(bytes.fromhex(RFC["invalid"][name]))


def test_our_encodings_are_reproduced_byte_for_byte():
    assert build() == OURS


def test_the_stored_vectors_verify():
    shares = []
    for k in OURS["key_shares"]:
        key = Point.decode(bytes.fromhex(k["public"]))
        check_key(key, Proof.decode(bytes.fromhex(k["proof"])), k["context"].encode())
        shares.append(key)
    assert joint_key(shares).raw.hex() == OURS["joint_key"]
    y = joint_key(shares)
    sh = OURS["shuffle"]
    inputs = [Ciphertext.decode(bytes.fromhex(c)) for c in sh["inputs"]]
    outputs = [Ciphertext.decode(bytes.fromhex(c)) for c in sh["outputs"]]
    proof = ShuffleProof.decode(bytes.fromhex(sh["proof"]), len(inputs))
    check_shuffle(y, inputs, outputs, proof, sh["context"].encode())
    with pytest.raises(BadProof):
        check_shuffle(y, inputs, outputs[1:] + outputs[:1], proof, sh["context"].encode())
    t = OURS["token"]
    check_token(Point.decode(bytes.fromhex(t["key"])), Ciphertext.decode(bytes.fromhex(t["ciphertext"])),
                Token.decode(bytes.fromhex(t["token"])), t["context"].encode())


def test_the_vss_vectors_are_reproduced_byte_for_byte():
    assert build_vss() == VSS


def test_the_stored_vss_vectors_verify():
    v = VSS
    keys = [Point.decode(bytes.fromhex(k)) for k in v["keys"]]
    dealing = Dealing.decode(bytes.fromhex(v["dealing"]), v["epochs"], v["threshold"], len(v["shares"]))
    assert dealing.encode().hex() == v["dealing"]
    for i, hexed in v["shares"].items():
        check_shares(decode_shares(bytes.fromhex(hexed), v["epochs"]), keys, dealing, int(i))
    ct = Ciphertext.decode(bytes.fromhex(v["ciphertext"]))
    parts = {}
    for i, s in v["stand_in"].items():
        share = Token.decode(bytes.fromhex(s["share"]))
        check_stand_in(image(keys[1], dealing.commitments[1], int(i)), ct, share, s["context"].encode())
        parts[int(i)] = share.point
    assert combine(parts, v["threshold"]).raw.hex() == v["token"]


def test_the_sealed_stand_in_share_verifies_opens_for_its_reader_and_refuses_a_flipped_byte():
    v, s = VSS, VSS["sealed_stand_in"]
    keys = [Point.decode(bytes.fromhex(k)) for k in v["keys"]]
    dealing = Dealing.decode(bytes.fromhex(v["dealing"]), v["epochs"], v["threshold"], len(v["shares"]))
    ct, reader = Ciphertext.decode(bytes.fromhex(v["ciphertext"])), Point.decode(bytes.fromhex(s["reader"]))
    raw = bytes.fromhex(s["share"])
    sealed = SealedShare.decode(raw)
    assert sealed.encode() == raw and len(raw) == 160
    check_sealed_stand_in(image(keys[1], dealing.commitments[1], 1), ct, reader, sealed, s["context"].encode())
    opened = open_stand_in(decode_scalar(bytes.fromhex(s["reader_secret"])), sealed)
    assert opened.raw.hex() == s["opened"]
    assert opened == Token.decode(bytes.fromhex(v["stand_in"]["1"]["share"])).point  # holder 1's public share
    for at in (0, 32, 64, 159):  # A, B (no point any more), the challenge, the last scalar
        changed = bytearray(raw)
        changed[at] ^= 0x01
        with pytest.raises((BadShare, BadPoint)):
            check_sealed_stand_in(image(keys[1], dealing.commitments[1], 1), ct, reader,
                                  SealedShare.decode(bytes(changed)), s["context"].encode())

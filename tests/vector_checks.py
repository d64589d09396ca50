"""What the golden-vector tests share: the fixed identities of keys.json, and the check that a
stored block with one byte changed is refused."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from pbem.errors import BadPacket
from pbem.protocol.armor import armor
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import SIG_LEN, Signed, read_blocks, sign, to_json
from pbem.protocol.shapes import b64, unb64

V = Path(__file__).parent / "vectors" / "protocol"
KEYS = {k["name"]: k for k in json.loads((V / "keys.json").read_text(encoding="utf-8"))}


def fixed_identity(name: str) -> Identity:
    k = KEYS[name]
    return Identity(name, Ed25519PrivateKey.from_private_bytes(bytes.fromhex(k["ed25519_seed"])),
                    X25519PrivateKey.from_private_bytes(bytes.fromhex(k["x25519_private"])))


def signer_of(block: Signed) -> Identity:
    return fixed_identity(next(n for n, k in KEYS.items() if k["line"] == block.doc.signer))


def assert_one_byte_changed_is_refused(block: Signed) -> None:
    """A byte of the signature, of the JSON's middle and near its end, each flipped, is refused."""
    for at in (SIG_LEN // 2, SIG_LEN + len(block.payload[SIG_LEN:]) // 2, len(block.payload) - 2):
        changed = bytearray(block.payload)
        changed[at] ^= 0x01
        with pytest.raises(BadPacket):
            read_blocks(armor(block.kind, bytes(changed)))


def assert_blocks_round_trip(text: str, sizes: list[int]) -> list[Signed]:
    """Every stored block reads and writes again exactly `text` (each armoured block `sizes[i]`
    bytes), its typed document writes its payload, and its signer signs it again to the same
    bytes (Ed25519 is deterministic). The blocks, read."""
    blocks = read_blocks(text)
    assert "\n".join(b.armored() for b in blocks) == text
    assert [len(b.armored().encode()) for b in blocks] == sizes
    for b in blocks:
        assert to_json(b.doc) == b.payload[SIG_LEN:]  # the typed document writes the same bytes
        assert sign(msgspec.structs.replace(b.doc, signer=""), signer_of(b)).payload == b.payload
    return blocks


def flip_b64(text: str, at: int) -> str:
    """A base64 field with one bit of its byte `at` flipped."""
    raw = bytearray(unb64(text, "a vector"))
    raw[at] ^= 0x01
    return b64(bytes(raw))

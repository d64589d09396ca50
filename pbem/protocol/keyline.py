"""The pbem1 public key line (docs/keys-and-armor.md): its text, checksum, key id and
fingerprint, without cryptography's curve objects, so that what only shows a key (`pbem
status`: a seat's fingerprint) does not load cryptography. The keys
themselves, and the check that the signing key is a valid curve point, are
pbem.protocol.crypto.PublicKey's, which reads and writes its line through this module.
"""

from __future__ import annotations

import base64
import binascii
from hashlib import sha256

from pbem.errors import BadPacket, Msg, msg

PUBLIC_PREFIX = "pbem1"
VERSION = 0x01
RAW_LEN = 1 + 32 + 32  # the version, the signing key, the sealing key
CHECKSUM_LEN = 4
KEY_ID_LEN = 8
_KEY_ID_LABEL = b"pbem/v1 key id\n"
_BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def quote(text: str, limit: int = 80) -> str:
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return repr(text)


def _hint() -> Msg:
    return msg("copy the whole line starting with 'pbem1' again; it may have a typo or be cut short")


def line(raw: bytes) -> str:
    """The pbem1 line of a key's raw bytes (RAW_LEN of them)."""
    data = raw + sha256(raw).digest()[:CHECKSUM_LEN]
    return PUBLIC_PREFIX + base64.b32encode(data).decode("ascii").lower().rstrip("=")


def raw_of(text: str) -> bytes:
    """The raw bytes of a pbem1 line, or BadPacket saying what is wrong with its text (its
    curve points are not checked here)."""
    # Whitespace inside the line is dropped because mail clients wrap long lines.
    compact = "".join(text.split())
    if not compact.lower().startswith(PUBLIC_PREFIX):
        raise BadPacket(msg("not a pbem public key: {key}", key=quote(text)), hint=_hint())
    body = compact[len(PUBLIC_PREFIX) :].upper()
    want = len(line(bytes(RAW_LEN))) - len(PUBLIC_PREFIX)  # every line has as many characters
    if body.strip(_BASE32) == "" and len(body) != want:  # right letters, wrong count: cut short or run on
        if len(body) < want:
            raise BadPacket(msg("public key is cut short: {n} of its {want} characters after pbem1: {key}", n=len(body),
                              want=want, key=quote(text)), hint=_hint())
        raise BadPacket(msg("public key is too long: {n} characters after pbem1, not {want}: {key}", n=len(body),
                          want=want, key=quote(text)), hint=_hint())
    try:
        data = base64.b32decode(body + "=" * (-len(body) % 8))
    except (binascii.Error, ValueError):
        raise BadPacket(msg("public key has characters outside base32: {key}", key=quote(text)), hint=_hint()) from None
    if len(data) != RAW_LEN + CHECKSUM_LEN:
        raise BadPacket(msg("public key has the wrong length: {key}", key=quote(text)), hint=_hint())
    raw, checksum = data[:RAW_LEN], data[RAW_LEN:]
    if sha256(raw).digest()[:CHECKSUM_LEN] != checksum:
        raise BadPacket(msg("public key checksum does not match (typo?): {key}", key=quote(text)), hint=_hint())
    if raw[0] != VERSION:
        raise BadPacket(msg("public key version {version} is not supported: {key}", version=raw[0], key=quote(text)))
    # The last base32 character carries unused bits; a typo there would
    # otherwise decode to the same key and go unnoticed.
    if line(raw) != compact.lower():
        raise BadPacket(msg("public key is not in canonical form (typo?): {key}", key=quote(text)), hint=_hint())
    return raw


def key_id(raw: bytes) -> bytes:
    return sha256(_KEY_ID_LABEL + raw).digest()[:KEY_ID_LEN]


def fingerprint_of(key_id: bytes) -> str:
    """Human form of an 8-byte key id: 'a1b2-c3d4-e5f6-0718'."""
    h = key_id.hex()
    return "-".join(h[i : i + 4] for i in range(0, len(h), 4))


def fingerprint(text: str) -> str:
    """The fingerprint of a pbem1 line (PublicKey.decode(text).fingerprint(), without its curve check)."""
    return fingerprint_of(key_id(raw_of(text)))

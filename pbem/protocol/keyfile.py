"""A key file's document and the key its passphrase gives (scrypt), apart from the rest of the
protocol's cryptography (pbem.protocol.crypto, which loads msgspec and the signing and sealing
primitives): a command reads its key file and begins the scrypt before it loads those
(pbem.seat.keys.unlocking), so that they load while the scrypt runs.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from pbem.errors import BadPacket, Text, msg
from pbem.protocol.keyline import quote as _quote

IDENTITY_FORMAT = "pbem-identity-v1"
DEFAULT_SCRYPT_N = 2**15
SCRYPT_R = 8
SCRYPT_P = 1
# Bounds on parameters read from a file: a crafted key file must not be able to make us
# allocate gigabytes or spin for minutes (n=2**20, r=8, p=16 does). A key file may
# cost at most 4 times the default work (n*r*p) and 128 MiB of memory (128*n*r bytes).
SCRYPT_MIN_N = 2**10
SCRYPT_MAX_WORK = 4 * DEFAULT_SCRYPT_N * SCRYPT_R * SCRYPT_P
SCRYPT_MAX_MEMORY = 2**27


def load_doc(data: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadPacket(msg("key file is not a pbem identity (not JSON)")) from None
    if not isinstance(doc, dict) or doc.get("format") != IDENTITY_FORMAT:
        fmt = doc.get("format") if isinstance(doc, dict) else None
        raise BadPacket(msg("key file format {format} is not {expected}", format=repr(fmt), expected=repr(IDENTITY_FORMAT)))
    return doc


def is_protected(data: bytes) -> bool:
    return bool(load_doc(data).get("protected"))


def unb64(value: Any, what: Text) -> bytes:
    if not isinstance(value, str):
        raise BadPacket(msg("key file field {field} is missing or not text", field=repr(what)))
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise BadPacket(msg("key file field {field} is not base64: {value}", field=repr(what),
                          value=_quote(value))) from None


def check_scrypt(n: Any, r: Any, p: Any) -> tuple[int, int, int]:
    ok = (
        all(isinstance(v, int) and not isinstance(v, bool) for v in (n, r, p))
        and n >= SCRYPT_MIN_N
        and n & (n - 1) == 0
        and 1 <= r <= 64
        and 1 <= p <= 16
        and n * r * p <= SCRYPT_MAX_WORK
        and 128 * n * r <= SCRYPT_MAX_MEMORY
    )
    if not ok:
        raise BadPacket(msg("unsupported scrypt parameters n={n} r={r} p={p}", n=_quote(str(n), 24), r=_quote(str(r), 24),
                          p=_quote(str(p), 24)),
                        hint=msg("pbem reads key files costing at most n*r*p = {work} and {mib} MiB; this file was not "
                               "made by pbem", work=SCRYPT_MAX_WORK, mib=SCRYPT_MAX_MEMORY // 2**20))
    return n, r, p


def derive(passphrase: bytes, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase)


def sealed_parts(doc: dict[str, Any], name: str) -> tuple[int, int, int, bytes, bytes, bytes]:
    """A protected key file's scrypt parameters (n, r, p), salt, nonce and sealed secret, each checked."""
    kdf = doc.get("kdf")
    if not isinstance(kdf, dict) or kdf.get("name") != "scrypt" or doc.get("cipher") != "chacha20-poly1305":
        raise BadPacket(msg("key {name} uses an unsupported kdf or cipher", name=repr(name)))
    n, r, p = check_scrypt(kdf.get("n"), kdf.get("r"), kdf.get("p"))
    salt = unb64(kdf.get("salt"), "kdf.salt")
    nonce = unb64(doc.get("nonce"), "nonce")
    if len(nonce) != 12:
        raise BadPacket(msg("key file nonce has the wrong length"))
    return n, r, p, salt, nonce, unb64(doc.get("secret"), "secret")


def passphrase_key(data: bytes, passphrase: bytes) -> bytes | None:
    """The key `passphrase` gives the protected key file `data` (its scrypt); None when the file
    is not one whose parameters check (crypto.identity_from_bytes then says what is wrong)."""
    try:
        doc = load_doc(data)
        name = doc.get("name")
        if doc.get("protected") is not True or not isinstance(name, str):
            return None
        n, r, p, salt, _, _ = sealed_parts(doc, name)
    except BadPacket:
        return None
    return derive(passphrase, salt, n, r, p)

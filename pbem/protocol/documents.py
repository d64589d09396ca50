"""The signed, versioned file formats (docs/protocol.md).

Every file is one or more armoured blocks. A block's payload is a 64-byte Ed25519
signature followed by the canonical JSON of the signed document; the signature covers the
exact document bytes, so nothing a mail client does to the armour can break it. Every
document names its format (`pbem-<kind>/1`), its game and its signer's public key line.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pbem.errors import BadPacket
from pbem.protocol.armor import armor, dearmor_all
from pbem.protocol.crypto import Identity, PublicKey, canonical_json, open_sealed, seal, verify

VERSION = 1
SIG_LEN = 64
# notice: host -> table (reminders, late notices, ...); request: seat -> host (away, resign);
# handover: a seat given to a new key (signed by the host, or by the seat's old key).
KINDS = ("invitation", "join", "packet", "move", "archive", "notice", "request", "handover")


@dataclass(frozen=True)
class Signed:
    kind: str
    doc: dict[str, Any]
    signer: PublicKey
    payload: bytes  # signature || document, exactly as signed and armoured

    @property
    def hash(self) -> str:
        return payload_hash(self.payload)

    @property
    def game(self) -> str:
        return str(self.doc.get("game", ""))

    def armored(self) -> str:
        return armor(self.kind.upper(), self.payload, headers=_headers(self.kind, self.doc))


def payload_hash(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def _headers(kind: str, doc: dict[str, Any]) -> dict[str, str]:
    # Untrusted comments for humans skimming a mail; readers ignore them. A document signed
    # by someone else may hold anything, so only plain printable text goes in.
    game = "".join(ch for ch in str(doc.get("game", "?")) if ch.isascii() and ch.isprintable())
    h = {"Comment": f"pbem {kind} for game {game}"[: 64 - len("Comment: ")].rstrip()}
    seq = doc.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool):
        h["Seq"] = str(seq)
    return h


def sign(kind: str, doc: dict[str, Any], identity: Identity) -> Signed:
    if kind not in KINDS:
        raise ValueError(kind)
    full = {**doc, "format": f"pbem-{kind}/{VERSION}", "signer": identity.public.encode()}
    body = canonical_json(full)
    payload = identity.sign(body) + body
    return Signed(kind, full, identity.public, payload)


def parse(kind: str, payload: bytes) -> Signed:
    """Check a block's structure and its signature (against the key it names)."""
    k = kind.lower()
    if k not in KINDS:
        raise BadPacket(f"unknown block type {kind!r}", hint="is this a pbem file?")
    if len(payload) <= SIG_LEN + 2:
        raise BadPacket(f"{k} block is truncated ({len(payload)} bytes)")
    sig, body = payload[:SIG_LEN], payload[SIG_LEN:]
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadPacket(f"{k} block is damaged: its document is not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != f"pbem-{k}/{VERSION}":
        fmt = doc.get("format") if isinstance(doc, dict) else None
        raise BadPacket(f"{k} block has format {fmt!r}, expected 'pbem-{k}/{VERSION}'",
                        hint="a newer pbem may be needed" if isinstance(fmt, str) and fmt.startswith(f"pbem-{k}/") else None)
    if canonical_json(doc) != body:
        raise BadPacket(f"{k} block is not in canonical form")
    signer = PublicKey.decode(str(doc.get("signer", "")))
    verify(signer, body, sig)
    return Signed(k, doc, signer, payload)


def read_blocks(text: str) -> list[Signed]:
    return [parse(kind, payload) for kind, payload in dearmor_all(text)]


def read_file(path: Path) -> list[Signed]:
    """Every signed block in a file (armoured text, possibly inside an email)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadPacket(f"cannot read {str(path)!r}: {exc.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    blocks = read_blocks(text)
    if not blocks:
        raise BadPacket(f"{str(path)!r} holds no pbem block", hint="expected a file written by pbem")
    return blocks


def read_one(path: Path, kind: str) -> Signed:
    blocks = [b for b in read_file(path) if b.kind == kind]
    if not blocks:
        raise BadPacket(f"{str(path)!r} holds no {kind}")
    distinct = {b.hash: b for b in blocks}
    if len(distinct) > 1:
        raise BadPacket(f"{str(path)!r} holds {len(distinct)} different {kind}s; pass one")
    return blocks[0]


# --- sealed parts -------------------------------------------------------------------------


def seal_info(game: str, seq: int, sender: str, recipient: str, purpose: str) -> bytes:
    """What a sealed box is bound to, so it cannot be cut out and replayed elsewhere."""
    return canonical_json({"game": game, "seq": seq, "from": sender, "to": recipient, "purpose": purpose})


def seal_json(obj: Any, recipient: PublicKey, info: bytes) -> str:
    return b64(seal(canonical_json(obj), recipient, info))


def open_json(text: str, identity: Identity, info: bytes) -> Any:
    plain = open_sealed(unb64(text, "sealed part"), identity, info)
    try:
        return json.loads(plain.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadPacket("a sealed part does not hold JSON") from None


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any, what: str) -> bytes:
    try:
        return base64.b64decode(str(text), validate=True)
    except (binascii.Error, ValueError):
        raise BadPacket(f"{what} is not valid base64") from None


def move_commitment(nonce: bytes, text: str) -> str:
    """Binds the signed move file to its sealed text, so an archive can later prove it."""
    return hashlib.sha256(b"pbem-move/1\n" + nonce + text.encode()).hexdigest()

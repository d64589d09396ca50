"""Signed blocks of the file formats (docs/protocol.md): signing, the one parser, sealed parts.

Every file is one or more armoured blocks. A block's payload is a 64-byte Ed25519
signature followed by the canonical JSON of the signed document; the signature covers the
exact document bytes, so nothing a mail client does to the armour can break it. Every
document names its format (`pbem-<kind>/1`), its game and its signer's public key line. The
document types are pbem.protocol.shapes' and pbem.protocol.table_docs' (named here too).

`parse` is the one reader: it bounds the size, decodes the JSON (msgspec: no integer over
64 bits, no lone surrogate, no nesting past the recursion limit), checks the version, that
the bytes are canonical and that every field has its type (`msgspec.convert`, strict), and
then the signature. Whatever it refuses is a `BadPacket` quoting why. Nothing outside
pbem/protocol/ looks inside a raw document dict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

import msgspec

from pbem.atomic import read_bounded
from pbem.errors import BadPacket, Text, kind_word, msg
from pbem.names import check_game_id
from pbem.protocol.armor import armor, dearmor_all
from pbem.protocol.crypto import Identity, OwnBox, PublicKey, canonical_json, open_sealed, seal, sha256_hex, verify
from pbem.protocol.limits import MAX_BLOCK, MAX_FILE, check_size
from pbem.protocol.shapes import (
    KINDS,
    MOVE_NONCE_LEN,
    PHASES,
    SIG_LEN,
    VERSION,
    Archive,
    ArchivedMove,
    Carried,
    Deadline,
    DealingDoc,
    Document,
    Gone,
    HandoverRecord,
    HostParty,
    Invitation,
    Join,
    KeyShareDoc,
    Link,
    Packet,
    Part,
    Party,
    Phase,
    PublicMove,
    RecentMove,
    Relayed,
    RelayPacket,
    Result,
    SealedMove,
    SeatMove,
    Shape,
    Standings,
    Waiting,
    b64,
    mail_address_ok,
    move_commitment,
    move_nonce,
    unb64,
)
from pbem.protocol.table_docs import (
    ALL_SEATS,
    Handover,
    Mental,
    MentalStep,
    Notice,
    NoticeKind,
    Opening,
    Request,
    Shuffle,
    SlotRef,
    StackShuffle,
    StandIn,
    Talk,
    Tokens,
    Unsealed,
    talk_text_problem,
)

# The document types, for the code that reads and writes them through this module.
__all__ = [
    "SEAT_SENDS",
    "SEAT_SENDS_KINDS",
    "ALL_SEATS",
    "Archive",
    "ArchivedMove",
    "Carried",
    "Deadline",
    "DealingDoc",
    "Document",
    "Gone",
    "Handover",
    "HandoverRecord",
    "HostParty",
    "Invitation",
    "Join",
    "KINDS",
    "KeyShareDoc",
    "Link",
    "MOVE_NONCE_LEN",
    "Mental",
    "MentalStep",
    "SeatMove",
    "Notice",
    "NoticeKind",
    "Opening",
    "PHASES",
    "Packet",
    "Part",
    "Party",
    "Phase",
    "PublicMove",
    "RecentMove",
    "Relayed",
    "RelayPacket",
    "Request",
    "Result",
    "SIG_LEN",
    "SealedMove",
    "Shape",
    "Shuffle",
    "SlotRef",
    "StackShuffle",
    "StandIn",
    "Unsealed",
    "Standings",
    "Talk",
    "Tokens",
    "VERSION",
    "Waiting",
    "b64",
    "mail_address_ok",
    "move_commitment",
    "move_nonce",
    "talk_text_problem",
    "unb64",
]


TYPES: dict[str, type[Document]] = {t.KIND: t for t in (Invitation, Join, Packet, SeatMove, Archive, Notice, Request,
                                                         Handover, Mental, Talk)}
# What a seat sends its host (by folder, file or mail): every transport hands the host these kinds
SEAT_SENDS: tuple[type[Document], ...] = (Join, SeatMove, Request, Handover, Mental, Talk)
SEAT_SENDS_KINDS: frozenset[str] = frozenset(t.KIND for t in SEAT_SENDS)
# the formats read besides each kind's current one: a blind host's packets of format 2
OTHER_FORMATS: dict[str, type[Document]] = {"pbem-packet/2": RelayPacket}
D = TypeVar("D", bound=Document)
E = TypeVar("E", bound=Document)
S = TypeVar("S", bound=Shape)


# --- signed blocks ----------------------------------------------------------------------------


class Signed(msgspec.Struct, Generic[D], frozen=True):
    kind: str
    doc: D
    signer: PublicKey
    payload: bytes  # signature || document, exactly as signed and armoured

    @property
    def hash(self) -> str:
        return payload_hash(self.payload)

    @property
    def game(self) -> str:
        return self.doc.game

    def armored(self) -> str:
        return armor(self.kind.upper(), self.payload, headers=_headers(self.kind, self.doc))

    def expect(self, cls: type[E]) -> Signed[E]:
        """This block, if it is a `cls` document; else BadPacket naming what it is."""
        if not isinstance(self.doc, cls):
            raise BadPacket(msg("expected a {kind}, got a {other}", kind=kind_word(cls.KIND), other=kind_word(self.kind)))
        return cast("Signed[E]", self)


def payload_hash(payload: bytes) -> str:
    return sha256_hex(payload)


def _headers(kind: str, doc: Document) -> dict[str, str]:
    # Untrusted comments for humans skimming a mail; readers ignore them.
    h = {"Comment": f"pbem {kind} for game {doc.game}"[: 64 - len("Comment: ")].rstrip()}
    seq = getattr(doc, "seq", None)
    if isinstance(seq, int):
        h["Seq"] = str(seq)
    return h


def to_json(obj: Shape) -> bytes:
    """The canonical bytes of a wire object (encoded as it is: its fields sorted, unset
    optional fields left out, as `to_builtins` gives them)."""
    return canonical_json(obj)


def sign(doc: D, identity: Identity) -> Signed[D]:
    full = msgspec.structs.replace(doc, signer=identity.public.encode())
    body = to_json(full)
    return Signed(full.KIND, full, identity.public, identity.sign(body) + body)


def sign_json(kind: str, obj: dict[str, Any], identity: Identity) -> bytes:
    """A signed payload of any JSON object, typed or not: only for tests that forge nonsense."""
    body = canonical_json({**obj, "format": f"pbem-{kind}/{VERSION}", "signer": identity.public.encode()})
    return identity.sign(body) + body


def load_json(data: bytes, what: Text) -> Any:
    """Untyped JSON within msgspec's bounds (64-bit integers, valid UTF-8, bounded nesting)."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeDecodeError) as exc:
        raise BadPacket(msg("{what} is damaged: its document is not JSON we read ({detail})", what=what,
                          detail=_short(exc))) from None


def convert(obj: Any, cls: type[S], what: Text) -> S:
    """`obj` (untyped JSON) as a `cls`, every field checked, or BadPacket saying which is wrong."""
    try:
        typed = msgspec.convert(obj, cls, strict=True)
    except msgspec.ValidationError as exc:
        raise BadPacket(msg("{what} is malformed: {detail}", what=what, detail=_short(exc))) from None
    except RecursionError:
        raise BadPacket(msg("{what} is nested too deeply", what=what)) from None
    if msgspec.to_builtins(typed) != _without_old_nulls(obj, cls):  # e.g. an optional field written as null
        raise BadPacket(msg("{what} is not in canonical form", what=what))
    return typed


def _without_old_nulls(obj: Any, cls: type) -> Any:
    """`obj` without the nulls an older version wrote for the fields `cls.OLD_NULLS` names."""
    old: frozenset[str] = getattr(cls, "OLD_NULLS", frozenset())
    if not old or not isinstance(obj, dict):
        return obj
    return {k: v for k, v in obj.items() if not (k in old and v is None)}


def _short(exc: BaseException) -> str:
    return str(exc)[:120]


def parse(kind: str, payload: bytes, *, check_signature: bool = True) -> Signed[Any]:
    """A block's typed document: size, JSON, version, canonical bytes, shape, then signature."""
    k = kind.lower()
    cls = TYPES.get(k)
    if cls is None:
        raise BadPacket(msg("unknown block type {kind}", kind=repr(kind[:24])), hint=msg("is this a pbem file?"))
    check_size(len(payload), MAX_BLOCK, msg("a {kind} block", kind=kind_word(k)))
    if len(payload) <= SIG_LEN + 2:
        raise BadPacket(msg("{kind} block is truncated ({size} bytes)", kind=kind_word(k), size=len(payload)))
    sig, body = payload[:SIG_LEN], payload[SIG_LEN:]
    what = msg("the {kind} block", kind=kind_word(k))
    raw = load_json(body, what)
    fmt = raw.get("format") if isinstance(raw, dict) else None
    other = OTHER_FORMATS.get(fmt) if isinstance(fmt, str) else None
    if other is not None and other.KIND == k:
        cls = other
    elif fmt != f"pbem-{k}/{VERSION}":
        newer = isinstance(fmt, str) and fmt.startswith(f"pbem-{k}/")
        raise BadPacket(msg("{kind} block has format {format}, expected {expected}", kind=kind_word(k), format=repr(str(fmt)[:40]),
                          expected=repr(f"pbem-{k}/{VERSION}")),
                        hint=msg("a newer pbem may be needed") if newer else None)
    if canonical_json(raw) != body:
        raise BadPacket(msg("{what} is not in canonical form", what=what))
    if "game" in raw:
        check_game_id(raw["game"])  # first: the id names files, and the reader's error quotes it
    doc = convert(raw, cls, what)
    signer = PublicKey.decode(doc.signer)
    if check_signature:
        verify(signer, body, sig)
    return Signed(k, doc, signer, payload)


def relay(block: Signed[Any]) -> Relayed:
    """`block` as a format 2 packet relays it: its signature, and its document as JSON."""
    kind = cast("Literal['join', 'mental']", block.kind)
    return Relayed(kind=kind, sig=b64(block.payload[:SIG_LEN]), doc=load_json(block.payload[SIG_LEN:], "block"))


def relayed_payload(r: Relayed, what: Text) -> bytes:
    """The payload of a relayed block as its seat signed it, from either packet format."""
    if r.block is not None:
        return unb64(r.block, what)
    sig = unb64(r.sig, what)
    if len(sig) != SIG_LEN:
        raise BadPacket(msg("{what} has a signature of {size} bytes", what=what, size=len(sig)))
    return sig + canonical_json(r.doc)


def parse_relayed(r: Relayed, what: Text, *, check_signature: bool = True) -> Signed[Any]:
    """A relayed block, parsed as `parse` does (its kind as the packet names it)."""
    return parse(r.kind, relayed_payload(r, what), check_signature=check_signature)


def check_signature(block: Signed[Any]) -> None:
    """The signature of a block read with check_signature=False (raises BadSignature)."""
    verify(block.signer, block.payload[SIG_LEN:], block.payload[:SIG_LEN])


def read_blocks(text: str) -> list[Signed[Any]]:
    return [parse(kind, payload) for kind, payload in dearmor_all(text)]


def read_text(path: Path) -> str:
    """A file's text, read by pbem.atomic.read_bounded (a regular file of at most MAX_FILE
    bytes; CannotRead, a BadPacket, otherwise)."""
    return read_bounded(path, MAX_FILE).decode("utf-8", errors="replace")


def read_file(path: Path) -> list[Signed[Any]]:
    """Every signed block in a file (armoured text, possibly inside an email)."""
    blocks = read_blocks(read_text(path))
    if not blocks:
        raise BadPacket(msg("{path} holds no pbem block", path=repr(str(path))), hint=msg("expected a file written by pbem"))
    return blocks


def read_one(path: Path, kind: str) -> Signed[Any]:
    blocks = [b for b in read_file(path) if b.kind == kind]
    if not blocks:
        raise BadPacket(msg("{path} holds no {kind}", path=repr(str(path)), kind=kind_word(kind)))
    distinct = {b.hash: b for b in blocks}
    if len(distinct) > 1:
        raise BadPacket(msg("{path} holds {n} different {kind} blocks; pass one", path=repr(str(path)), n=len(distinct),
                          kind=kind_word(kind)))
    return blocks[0]


# --- sealed parts -------------------------------------------------------------------------


def seal_info(game: str, seq: int, sender: str, recipient: str, purpose: str) -> bytes:
    """What a sealed box is bound to, so it cannot be cut out and replayed elsewhere."""
    return canonical_json({"game": game, "seq": seq, "from": sender, "to": recipient, "purpose": purpose})


# Every sealed box is padded with JSON whitespace to a multiple of a size fixed per kind of
# box, so that its length says nothing about what is inside (a hand, a role, a peek, which card
# was discarded). The sizes are far above what a box holds in play (a part holds ~350 bytes,
# a move ~80); a box that outgrows its size takes the next multiple.
# A whisper's box holds {"text": ...}: at most TALK_CHARS characters of 6 bytes each (\uXXXX), so
# every whisper takes one size.
PAD = {"part": 1024, "move": 256, "state": 8192, "secrets": 256, "talk": 4096}


def padded(plain: bytes, kind: str) -> bytes:
    unit = PAD[kind]
    return plain + b" " * (-len(plain) % unit if plain else unit)


def seal_json(obj: Any, recipient: PublicKey | OwnBox, info: bytes, *, pad: str) -> str:
    """Seal a JSON value (or a wire object), padded to the size of its kind of box (`PAD`), to
    a recipient's key or into the sealer's own box."""
    plain = canonical_json(obj)  # a wire object's bytes are to_json's
    if isinstance(recipient, OwnBox):
        return b64(recipient.seal(padded(plain, pad), info))
    return b64(seal(padded(plain, pad), recipient, info))


def open_json(text: Any, identity: Identity | OwnBox, info: bytes) -> Any:
    ct = unb64(text, msg("the sealed part"))
    plain = identity.open(ct, info) if isinstance(identity, OwnBox) else open_sealed(ct, identity, info)
    return load_json(plain, msg("the sealed part"))


def open_as(cls: type[S], text: Any, identity: Identity, info: bytes) -> S:
    """A sealed box holding a `cls` (a seat's part, a sealed move), opened and checked."""
    return convert(open_json(text, identity, info), cls, msg("the sealed {kind}", kind=cls.__name__.lower()))

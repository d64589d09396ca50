"""The signed, versioned file formats (docs/protocol.md), one typed class per document kind.

Every file is one or more armoured blocks. A block's payload is a 64-byte Ed25519
signature followed by the canonical JSON of the signed document; the signature covers the
exact document bytes, so nothing a mail client does to the armour can break it. Every
document names its format (`pbem-<kind>/1`), its game and its signer's public key line.

`parse` is the one reader: it bounds the size, decodes the JSON (msgspec: no integer over
64 bits, no lone surrogate, no nesting past the recursion limit), checks the version, that
the bytes are canonical and that every field has its type (`msgspec.convert`, strict), and
then the signature. Whatever it refuses is a `BadPacket` quoting why. Nothing outside
pbem/protocol/ looks inside a raw document dict.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar, cast

import msgspec

from engine.catalog import Ruleset
from engine.state import ROUNDS_PER_GAME
from pbem.atomic import read_bounded
from pbem.errors import BadPacket, Msg, Text, kind_word, msg
from pbem.names import check_game_id, check_game_name_read, check_identity_id, check_seat_id
from pbem.protocol.armor import armor, dearmor_all
from pbem.protocol.crypto import Identity, OwnBox, PublicKey, canonical_json, open_sealed, seal, sha256_hex, verify
from pbem.protocol.limits import MAX_BLOCK, MAX_FILE, TALK_CHARS, check_size

VERSION = 1
SIG_LEN = 64
# notice: host -> table (reminders, late notices, ...); request: seat -> host (away, resign);
# handover: a seat given to a new key (signed by the host, or by the seat's old key).
# mental: a trustless seat's shuffle, tokens, move or key reveal (docs/trustless.md).
# talk: a seat's line to the table, public or sealed to some seats.
KINDS = ("invitation", "join", "packet", "move", "archive", "notice", "request", "handover", "mental", "talk")
PHASES = ("playing", "round-over", "game-over")
Phase = Literal["playing", "round-over", "game-over"]


class Shape(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Every object on the wire: unknown fields are refused, optional fields left out when unset."""


class Document(Shape, tag_field="format", frozen=True):
    """What every signed document holds; `format` (the tag) is `pbem-<kind>/1`."""

    KIND: ClassVar[str] = ""
    # Optional fields an older pbem wrote as null rather than leaving out: read as unset, so
    # what that version signed still reads (the signature covers those bytes as they are).
    OLD_NULLS: ClassVar[frozenset[str]] = frozenset()
    game: str
    signer: str = ""  # filled in by `sign`

    def __post_init__(self) -> None:
        check_game_id(self.game)


# --- invitation -------------------------------------------------------------------------------


class Party(Shape, frozen=True):
    name: str
    key: str

    def __post_init__(self) -> None:
        check_seat_id(self.name)


# A mail address as a document may name it: one '@', printable ASCII, nothing a header or a
# terminal would read as more than an address.
_MAIL_RE = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9.-]{1,189}")


def mail_address_ok(address: str) -> bool:
    return _MAIL_RE.fullmatch(address) is not None


class HostParty(Shape, frozen=True):
    name: str
    key: str
    # Where the seats mail their joins and moves, signed with the rest: a key home learns the
    # host's address from here, never from the headers of whoever passed the invitation on.
    mail: str | None = None

    def __post_init__(self) -> None:
        if self.mail is not None and not mail_address_ok(self.mail):
            raise BadPacket(msg("the invitation names {address} as its host's mail address, which is no mail address",
                              address=repr(self.mail)))
        check_identity_id(self.name)  # every list of games shows it


class Invitation(Document, tag=f"pbem-invitation/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "invitation"
    name: str
    ruleset: Ruleset
    options: list[str]
    host: HostParty
    seats: list[Party]
    commitments: list[str]
    created: str
    trustless: bool = False  # dealt by the seats (docs/trustless.md): the host holds no secret

    def __post_init__(self) -> None:
        super().__post_init__()
        check_game_name_read(self.name)  # every list of games shows it

    def seat_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.seats)

    def seat_keys(self) -> dict[str, str]:
        return {s.name: s.key for s in self.seats}

    def seat_of_key(self, key: str) -> str | None:
        return next((s.name for s in self.seats if s.key == key), None)


# --- join -------------------------------------------------------------------------------------


class KeyShareDoc(Shape, frozen=True):
    """A trustless seat's key share for one epoch, with its Schnorr proof (docs/trustless.md §3)."""

    epoch: int
    share: str  # base64 of a 32-byte ristretto255 point
    proof: str  # base64 of 64 bytes


class Join(Document, tag=f"pbem-join/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "join"
    seat: str
    invitation: str  # hash of the invitation block
    contribution: str  # base64 of 32 bytes
    mental: list[KeyShareDoc] | None = None  # a trustless game: one ElGamal key share per epoch


# --- packet -----------------------------------------------------------------------------------


class PublicMove(Shape, frozen=True):
    round: int
    n: int
    seat: str
    text: str
    by: Literal["host"] | None = None  # a move the host made for the seat (timeout policy)
    why: str | None = None  # timeout, absent or resigned


class RecentMove(PublicMove, frozen=True, kw_only=True):
    """A public move in a packet's `recent`, with the packet it answered."""

    seq: int


class Deadline(Shape, frozen=True):
    seat: str
    due: str  # ISO 8601, UTC
    on_timeout: str
    grace_until: str | None = None


class HandoverRecord(Shape, frozen=True):
    """A seat given to a new key, as packets and archives list it (`document`: the signed
    handover block's payload, base64)."""

    seat: str
    key: str
    old: str
    at: int  # the first packet sealed to the new key
    by: str  # "host" or the seat's name
    document: str


class Result(Shape, frozen=True):
    round: int
    secret: str
    finder: str | None
    winners: list[str]
    payout: dict[str, int]
    gold: dict[str, int]
    next_start: str | None
    final: dict[str, Any]

    def shown(self) -> dict[str, Any]:
        """The result without the full final position (what `show --json` prints), with every
        seat's role from it (all open at a round's end)."""
        out = {k: v for k, v in msgspec.to_builtins(self).items() if k != "final"}
        roles = self.final.get("roles")
        return {**out, "roles": dict(roles)} if isinstance(roles, dict) else out


class Standings(Shape, frozen=True):
    gold: dict[str, int]
    winners: list[str]


class Relayed(Shape, frozen=True):
    """A seat's signed block, relayed whole by a blind host (base64 of its payload)."""

    kind: Literal["join", "mental"]
    block: str


class Waiting(Shape, frozen=True):
    """What a trustless table waits for before play goes on: a step and the seats that owe it."""

    step: str  # shuffle, deal, goal, reveal, tokens
    seats: list[str]
    due: str | None = None  # with deadlines: when every seat named must have answered (ISO 8601, UTC)


class Packet(Document, tag=f"pbem-packet/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "packet"
    seq: int
    prev: str
    round: int
    phase: Phase
    to_move: str | None
    public: dict[str, Any]
    moves: list[PublicMove]
    events: list[dict[str, Any]]
    parts: dict[str, str]
    result: Result | None = None
    standings: Standings | None = None
    # deadlines (docs/protocol.md, "Deadlines"): all optional, left out when unset
    deadline: Deadline | None = None
    paused: bool = False
    absent: list[str] | None = None
    away: dict[str, str] | None = None
    recent: list[RecentMove] | None = None
    handovers: list[HandoverRecord] | None = None
    handover: str | None = None
    # a trustless game: the seats' join and mental blocks the host accepted since the last
    # packet, in chain order, and the step the table waits for
    relayed: list[Relayed] | None = None
    waiting: Waiting | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.seq < 1 or not 1 <= self.round <= ROUNDS_PER_GAME:
            raise BadPacket(msg("packet {seq} of round {round}: numbers start at 1 and a game has {rounds} rounds",
                              seq=str(self.seq)[:20], round=str(self.round)[:20], rounds=ROUNDS_PER_GAME))
        # in play somebody moves, unless a trustless table waits for a step (`waiting`); when it is over nobody
        if self.phase == "game-over" and self.to_move is not None:
            raise BadPacket(msg("packet {seq} ends the game but names {player} to move", seq=str(self.seq)[:20],
                              player=repr(self.to_move[:40])))
        if self.phase != "game-over" and self.to_move is None and self.waiting is None:
            raise BadPacket(msg("packet {seq} ({phase}) names nobody to move and no step it waits for",
                              seq=str(self.seq)[:20], phase=self.phase))
        if self.to_move is not None and self.to_move not in self.parts:
            raise BadPacket(msg("packet {seq} names {player} to move, who holds no seat", seq=self.seq,
                              player=repr(self.to_move[:40])))
        if any(not isinstance(e.get("event"), str) for e in self.events):  # found by test_hostile_input's fuzzing
            raise BadPacket(msg("packet {seq} holds an event without its kind", seq=self.seq))

    def moves_json(self) -> list[dict[str, Any]]:
        return [msgspec.to_builtins(m) for m in self.moves]

    def since_last_move_of(self, seat: str) -> list[PublicMove]:
        """Every public move since `seat`'s own last move (from `recent`; a packet without it:
        its own moves). A move the host made for the seat is not its own: a seat back from
        being away or absent sees every move made meanwhile, the host's for it marked."""
        if self.recent is None:
            return list(self.moves)
        mine = [i for i, m in enumerate(self.recent) if m.seat == seat and m.by is None]
        return list(self.recent[(mine[-1] + 1 if mine else 0):])


class Part(Shape, frozen=True):
    """A seat's sealed part of a packet."""

    seat: str
    role: str | None
    hand: list[str]
    knowledge: list[list[str]]
    events: list[dict[str, Any]]


# --- move -------------------------------------------------------------------------------------


class Move(Document, tag=f"pbem-move/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "move"
    seat: str
    seq: int  # the packet this move answers
    packet: str  # and its hash
    commit: str
    sealed: str
    by: Literal["host"] | None = None  # signed by the host, for a seat that let its time run out
    why: str | None = None
    at: str | None = None  # a host's move: when the host made it (checked against the packet's deadline)


class SealedMove(Shape, frozen=True):
    """What a move seals to the host."""

    move: str
    nonce: str


MOVE_NONCE_LEN = 16  # bytes of a move's nonce: what keeps a move's text from being guessed from its commitment


def move_nonce(text: str) -> bytes:
    """A move's nonce (base64), refused unless it has MOVE_NONCE_LEN bytes: an empty or short
    nonce lets anyone find a move's words from its commitment by trying every legal move."""
    nonce = unb64(text, msg("the nonce"))
    if len(nonce) != MOVE_NONCE_LEN:
        raise BadPacket(msg("the move's nonce has {n} bytes, not {want}", n=len(nonce), want=MOVE_NONCE_LEN))
    return nonce


def move_commitment(nonce: bytes, text: str) -> str:
    """Binds the signed move file to its sealed text, so an archive can later prove it."""
    return sha256(b"pbem-move/1\n" + nonce + text.encode()).hexdigest()


# --- archive ----------------------------------------------------------------------------------


class Carried(Shape, frozen=True):
    gold: dict[str, int] | None = None
    nuggets: list[str] | None = None
    first: str | None = None


class ArchivedMove(Shape, frozen=True):
    n: int
    seat: str
    text: str
    nonce: str
    envelope: str  # the seat's signed move block, base64
    by: Literal["host"] | None = None
    why: str | None = None


class Link(Shape, frozen=True):
    seq: int
    hash: str
    prev: str


class Archive(Document, tag=f"pbem-archive/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "archive"
    round: int
    invitation: str  # armoured
    joins: list[str]
    secret: str
    carried: Carried | None = None
    start: dict[str, Any]
    moves: list[ArchivedMove]
    chain: list[Link]
    handovers: list[HandoverRecord] | None = None
    final: dict[str, Any]


# --- deadlines: notice, request, handover -------------------------------------------------------

NoticeKind = Literal["reminder", "late", "absent", "back", "away", "due", "paused", "resumed", "resigned", "handover"]


class Notice(Document, tag=f"pbem-notice/{VERSION}", frozen=True, kw_only=True):
    """The host tells the table about the clock; it changes no packet."""

    KIND: ClassVar[str] = "notice"
    OLD_NULLS: ClassVar[frozenset[str]] = frozenset({"seat"})  # the deadlines' first version wrote it as null
    seq: int  # the packet it concerns
    notice: NoticeKind
    at: str
    seat: str | None = None
    due: str | None = None
    until: str | None = None
    missed: int | None = None
    policy: str | None = None
    fingerprint: str | None = None
    step: str | None = None  # a trustless game: the step the table waits for from `seat`


class Request(Document, tag=f"pbem-request/{VERSION}", frozen=True, kw_only=True):
    """A seat asks the host: away until a time, or resign."""

    KIND: ClassVar[str] = "request"
    seat: str
    action: Literal["away", "resign", "back"]
    until: str | None = None
    at: str | None = None  # when the seat made it: each `back` is a new request

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.action == "away") != (self.until is not None):
            raise BadPacket(msg("an away request names the time it ends, and only an away request does"))


class Handover(Document, tag=f"pbem-handover/{VERSION}", frozen=True, kw_only=True):
    """A seat given to a new key (a `pbem1` line), signed by the host or the seat's key."""

    KIND: ClassVar[str] = "handover"
    seat: str
    key: str
    seq: int | None = None  # the packet the host was at, in a handover the host made


# --- trustless play: the seats' mental-poker messages (docs/trustless.md §5) ----------------------



class SlotRef(Shape, frozen=True, array_like=True):
    """A slot on the wire: [stack label, index in the final shuffled stack]."""

    stack: str
    index: int

    @property
    def slot(self) -> tuple[str, int]:
        return (self.stack, self.index)

ALL_SEATS = "all"
MentalStep = Literal["shuffle", "deal", "move", "tokens", "goal", "reveal"]


class Tokens(Shape, frozen=True, kw_only=True):
    """One seat's decryption tokens for named slots: public (`to` = "all") or sealed to one seat."""

    maker: str = msgspec.field(name="from")
    to: str
    slots: list[SlotRef]
    tokens: str | None = None  # base64, 96 bytes a slot, in slot order (public)
    sealed: str | None = None  # base64 HPKE box of the same bytes (to one seat)

    def __post_init__(self) -> None:
        if (self.tokens is None) == (self.sealed is None) or (self.tokens is not None) != (self.to == ALL_SEATS):
            raise BadPacket(msg("{seat}'s tokens must be public (to all) or sealed to one seat, not both",
                              seat=self.maker[:40]))
        if not self.slots:
            raise BadPacket(msg("{seat}'s token bundle names no slot", seat=self.maker[:40]))


class StackShuffle(Shape, frozen=True):
    cards: str  # base64: the re-encrypted, permuted ciphertexts, 64 bytes each
    proof: str  # base64: the Terelius-Wikstrom proof, 32 (4N + 5) bytes


class Shuffle(Shape, frozen=True):
    turn: int  # the seat's place in the setup chain, 0 first
    stacks: dict[str, StackShuffle]


class Opening(Shape, frozen=True):
    """A played card: the slot it lies in and the player's own public token for it."""

    slot: SlotRef
    open: Tokens


# what each step carries besides `tokens` (docs/trustless.md §5, the table)
_STEP_FIELDS: dict[str, set[str]] = {"shuffle": {"shuffle"}, "deal": set(), "move": {"move"}, "tokens": set(),
                                     "goal": set(), "reveal": {"reveal"}}


class Mental(Document, tag=f"pbem-mental/{VERSION}", frozen=True, kw_only=True):
    """A trustless seat's message, answering the packet it names; the blind host relays it in
    its next packet (`Packet.mental`), so the chain orders every one."""

    KIND: ClassVar[str] = "mental"
    seat: str
    seq: int  # the packet this message answers
    packet: str  # and its hash
    step: MentalStep
    shuffle: Shuffle | None = None
    tokens: list[Tokens] | None = None  # the tokens this seat owes, riding on the message
    move: str | None = None  # a move's public text (a face-down discard's cards as ?)
    play: Opening | None = None  # the played card's slot and its opening
    discard: list[SlotRef] | None = None  # a face-down discard: its slots only
    reveal: dict[str, str] | None = None  # epoch -> the seat's secret share for it, hex (round's end)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_seat_id(self.seat)
        present = {f for f in ("shuffle", "move", "reveal", "play", "discard") if getattr(self, f) is not None}
        need = _STEP_FIELDS[self.step]
        if self.step == "move":
            if (self.play is None) == (self.discard is None):
                raise BadPacket(msg("{seat}'s move must open a played card or name discarded slots, one of them",
                                  seat=self.seat))
            need = need | {"play" if self.play is not None else "discard"}
        if present != need:
            raise BadPacket(msg("{seat}'s {step} message carries {fields}, expected {expected}", seat=self.seat,
                              step=self.step, fields=sorted(present), expected=sorted(need)))
        if self.step in ("deal", "tokens", "goal") and not self.tokens:
            raise BadPacket(msg("{seat}'s {step} message carries no tokens", seat=self.seat, step=self.step))
        for tok in self.tokens or []:
            if tok.maker != self.seat:
                raise BadPacket(msg("{seat}'s message carries tokens made by {maker}", seat=self.seat,
                                  maker=repr(tok.maker[:40])))


# --- table talk: a seat's public line or whisper (docs/protocol.md, "Table talk") --------------------


def talk_text_problem(text: str) -> Msg | None:
    """Why `text` cannot be a line of table talk (None: it can)."""
    if not text.strip():
        return msg("a line of table talk says something: this one is empty")
    if len(text) > TALK_CHARS:
        return msg("a line of table talk has at most {limit} characters, not {n}", limit=TALK_CHARS, n=len(text))
    return None


class Talk(Document, tag=f"pbem-talk/{VERSION}", frozen=True, kw_only=True):
    """A line a seat says at the table, after the packet it names: public (`text`) or a
    whisper (`to`, and `sealed`: the text sealed to each of them and to the speaker)."""

    KIND: ClassVar[str] = "talk"
    seat: str
    seq: int  # the packet the line answers
    packet: str  # and its hash
    n: int  # the seat's count of lines in the game, from 1
    at: str  # when the seat said it (ISO 8601, UTC): the order of lines at one packet
    text: str | None = None
    to: list[str] | None = None
    sealed: dict[str, str] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_seat_id(self.seat)
        if self.seq < 1 or self.n < 1:
            raise BadPacket(msg("{seat}'s line {n} at packet {seq}: numbers start at 1", seat=self.seat,
                              n=str(self.n)[:20], seq=str(self.seq)[:20]))
        if (self.text is None) == (self.sealed is None) or (self.to is None) != (self.sealed is None):
            raise BadPacket(msg("{seat}'s line is either public (its text) or a whisper (to whom, sealed), one of them",
                              seat=self.seat))
        if self.text is not None:
            problem = talk_text_problem(self.text)
            if problem:
                raise BadPacket(problem)
        if self.to is not None and self.sealed is not None:
            for seat in self.to:
                check_seat_id(seat)
            if not self.to or self.to != sorted(set(self.to)) or self.seat in self.to:
                raise BadPacket(msg("{seat}'s whisper names its seats once each, in order, not the speaker",
                                  seat=self.seat))
            if set(self.sealed) != {*self.to, self.seat}:
                raise BadPacket(msg("{seat}'s whisper is sealed to other seats than it names", seat=self.seat))


TYPES: dict[str, type[Document]] = {t.KIND: t for t in (Invitation, Join, Packet, Move, Archive, Notice, Request,
                                                         Handover, Mental, Talk)}
D = TypeVar("D", bound=Document)
E = TypeVar("E", bound=Document)
S = TypeVar("S", bound=Shape)


# --- signed blocks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Signed(Generic[D]):
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
    if fmt != f"pbem-{k}/{VERSION}":
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


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any, what: Text) -> bytes:
    if not isinstance(text, str):
        raise BadPacket(msg("{what} is not base64 text", what=what))
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadPacket(msg("{what} is not valid base64", what=what)) from None

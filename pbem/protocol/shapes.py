"""The documents of a game on the wire (docs/protocol.md), one typed class per kind: the
invitation, a join, a packet, a move and a round's archive, with the shapes inside them.
pbem.protocol.table_docs holds what seats and host say around the moves (notices, requests,
handovers, a trustless seat's mental-poker messages, table talk); pbem.protocol.documents
signs and parses them all."""

from __future__ import annotations

import base64
import binascii
import re
from hashlib import sha256
from typing import Any, ClassVar, Literal

import msgspec

from engine.catalog import Ruleset
from engine.state import ROUNDS_PER_GAME
from pbem.errors import BadPacket, Text, msg
from pbem.names import check_game_id, check_game_name_read, check_identity_id, check_seat_id

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
# (A string: re compiles it the first time it is used.)
_MAIL = r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9.-]{1,189}"


def mail_address_ok(address: str) -> bool:
    return re.fullmatch(_MAIL, address) is not None


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
    # a trustless game: how many of the other seats can do a vanished seat's part (docs/trustless.md
    # §11); None, a game from before it: no seat deals its keys, and none can vanish
    threshold: int | None = None

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


class DealingDoc(Shape, frozen=True):
    """A trustless seat's epoch keys shared among the other seats (docs/trustless.md §11)."""

    threshold: int
    commitments: str  # base64: every epoch's Feldman commitments A_1..A_{K-1}, 32 bytes each
    shares: dict[str, str]  # holder seat -> base64 HPKE box of its four shares


class Join(Document, tag=f"pbem-join/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "join"
    seat: str
    invitation: str  # hash of the invitation block
    contribution: str  # base64 of 32 bytes
    mental: list[KeyShareDoc] | None = None  # a trustless game: one ElGamal key share per epoch
    dealing: DealingDoc | None = None  # a trustless game with a threshold: the keys, shared


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
    bot_turns: int | None = None  # policy bot: the search bot's simulated turns (none: the smart bot)


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
    """A seat's signed block, relayed whole by a blind host. Packet format 1 carries the
    block's payload in base64 (`block`); format 2 its signature in base64 (`sig`) and its
    document as JSON (`doc`), whose canonical bytes are what the seat signed, so a shuffle's
    ciphertexts are not put into base64 a second time (pbem.protocol.documents.relayed_payload)."""

    kind: Literal["join", "mental"]
    block: str | None = None
    sig: str | None = None
    doc: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        v2 = self.sig is not None and self.doc is not None
        if (self.block is None) != v2 or (self.block is not None and (self.sig, self.doc) != (None, None)):
            raise BadPacket(msg("a relayed block must be either its payload or its signature and document"))


class Waiting(Shape, frozen=True):
    """What a trustless table waits for before play goes on: a step and the seats that owe it."""

    step: str  # shuffle, deal, goal, reveal, tokens
    seats: list[str]
    due: str | None = None  # with deadlines: when every seat named must have answered (ISO 8601, UTC)


class Packet(Document, tag=f"pbem-packet/{VERSION}", frozen=True, kw_only=True):
    KIND: ClassVar[str] = "packet"
    FORMAT: ClassVar[int] = VERSION
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
        if any((r.block is None) != (self.FORMAT == 2) for r in self.relayed or []):
            raise BadPacket(msg("packet {seq} relays a block in a form its format {format} does not use", seq=self.seq,
                              format=self.FORMAT))

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


class Gone(Shape, frozen=True):
    """A blind host's declaration that seats stopped answering (docs/trustless.md §11): each was
    waited for past the due time the packet before signed and the grace after it. The table then
    takes the seats' turns as face-down discards and waits for the other seats' stand-in shares
    for what they owe."""

    seats: list[str]
    step: str  # the step the table waited for from them
    due: str  # the due time the packet before signed (ISO 8601, UTC)
    grace_until: str  # when the grace after it ended
    at: str  # when the host declared it


class RelayPacket(Packet, tag="pbem-packet/2", frozen=True, kw_only=True):
    """A blind host's packet in format 2: its relayed blocks as signature and JSON document
    (`Relayed.doc`), not base64 inside base64. Format 1 packets still read (`Packet`)."""

    FORMAT: ClassVar[int] = 2
    gone: Gone | None = None  # the seats this packet declares gone (it then relays no block)


class Part(Shape, frozen=True):
    """A seat's sealed part of a packet."""

    seat: str
    role: str | None
    hand: list[str]
    knowledge: list[list[str]]
    events: list[dict[str, Any]]


# --- move -------------------------------------------------------------------------------------


class SeatMove(Document, tag=f"pbem-move/{VERSION}", frozen=True, kw_only=True):
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
    renewed: list[int] | None = None  # packets that renewed the deadline (answered by no move before)
    final: dict[str, Any]


# --- bytes in a document ---------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any, what: Text) -> bytes:
    if not isinstance(text, str):
        raise BadPacket(msg("{what} is not base64 text", what=what))
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadPacket(msg("{what} is not valid base64", what=what)) from None

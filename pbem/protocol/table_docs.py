"""What seats and the host say around the moves (docs/protocol.md), one typed class per kind:
the host's notices, a seat's requests, seat handovers, a trustless seat's mental-poker
messages (docs/trustless.md §5) and table talk. The game's own documents are in
pbem.protocol.shapes; pbem.protocol.documents signs and parses them all."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from pbem.errors import BadPacket, Msg, msg
from pbem.names import check_seat_id
from pbem.protocol.limits import TALK_CHARS
from pbem.protocol.shapes import VERSION, Document, Shape

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
MentalStep = Literal["shuffle", "deal", "move", "tokens", "goal", "reveal", "stand-in", "steal", "complaint", "answer"]
CHOICES = ("move", "steal")  # steps whose block is a seat's choice: its move, or a thief's victim


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
    """A played card: the slot it lies in and the player's own public token for it; `handed`:
    the tokens of the card's earlier holders, which reached the player sealed (a swap-hand's
    hand-over), published with it (each checked against its maker's share, as any token)."""

    slot: SlotRef
    open: Tokens
    handed: list[Tokens] | None = None
    unsealed: list[Unsealed] | None = None  # a vanished seat's token that reached the player as sealed shares


class Unsealed(Shape, frozen=True, kw_only=True):
    """A vanished seat's token for a played card, which reached its player as stand-in shares
    sealed to it (docs/trustless.md §11.2), made public: the player's own stand-in share (its
    proof against the player's image) and its token on each holder's sealed share (its proof
    against the player's key share), so anyone opens those shares and combines the K of them."""

    dealer: str = msgspec.field(name="for")
    holders: list[str]  # whose sealed shares it opens, K - 1 of them
    share: str  # base64, 96 bytes: the player's own stand-in share
    opened: str  # base64, 96 bytes a holder, in `holders` order: the player's token on that holder's box


class StandIn(Shape, frozen=True, kw_only=True):
    """A holder's part of what a vanished seat owes (docs/trustless.md §11): its stand-in share
    s_i c1 of the seat's token for each slot, with its proof against the holder's image S_i, and
    at a round's end its share of the seat's round key."""

    dealer: str = msgspec.field(name="for")
    slots: list[SlotRef]
    shares: str | None = None  # base64, 96 bytes a slot (the share and its proof), in slot order
    key: str | None = None  # hex: the holder's share of the seat's key of the round that ended
    to: str | None = None  # a later reader: the shares are sealed to it, 160 bytes a slot (vss.SealedShare)


# what each step carries besides `tokens` (docs/trustless.md §5, the table)
_STEP_FIELDS: dict[str, set[str]] = {"shuffle": {"shuffle"}, "deal": set(), "move": {"move"}, "tokens": set(),
                                     "goal": set(), "reveal": {"reveal"}, "stand-in": {"stand_in"}, "steal": {"move"},
                                     "complaint": {"against"}, "answer": {"against", "shares"}}


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
    stand_in: list[StandIn] | None = None  # a vanished seat's part, one entry for each such seat
    against: str | None = None  # a complaint: the dealer of a bad share; an answer: the complainer
    shares: str | None = None  # an answer: base64, the complainer's shares of the dealer's keys, in the open

    def __post_init__(self) -> None:
        super().__post_init__()
        check_seat_id(self.seat)
        present = {f for f in ("shuffle", "move", "reveal", "play", "discard", "stand_in", "against", "shares")
                   if getattr(self, f) is not None}
        need = _STEP_FIELDS[self.step]
        if self.step in ("deal", "goal", "reveal", "move", "tokens"):  # a holder's part of a gone seat's
            present.discard("stand_in")  # may ride along
        if self.step == "move":
            if (self.play is None) == (self.discard is None):
                raise BadPacket(msg("{seat}'s move must open a played card or name discarded slots, one of them",
                                  seat=self.seat))
            need = need | {"play" if self.play is not None else "discard"}
        if present != need:
            raise BadPacket(msg("{seat}'s {step} message carries {fields}, expected {expected}", seat=self.seat,
                              step=self.step, fields=sorted(present), expected=sorted(need)))
        if self.step in ("deal", "goal") and not self.tokens:  # a seat that comes back may owe no token
            raise BadPacket(msg("{seat}'s {step} message carries no tokens", seat=self.seat, step=self.step))
        for tok in self.tokens or []:
            if tok.maker != self.seat:
                raise BadPacket(msg("{seat}'s message carries tokens made by {maker}", seat=self.seat,
                                  maker=repr(tok.maker[:40])))


# --- table talk: a seat's public line or whisper (docs/protocol.md, "Table talk") --------------------


def _is_time(text: str) -> bool:
    """An ISO 8601 time as pbem writes it (at most 40 characters)."""
    from datetime import datetime

    try:
        return len(text) <= 40 and text.isascii() and text.isprintable() and bool(datetime.fromisoformat(text))
    except ValueError:
        return False


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
        if not _is_time(self.at):
            raise BadPacket(msg("{seat}'s line says it was said at {at}, which is no time", seat=self.seat,
                                at=repr(self.at[:40])))
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

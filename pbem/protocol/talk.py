"""Table talk on the wire (docs/protocol.md, "Table talk"): a seat's signed line, public or a
whisper sealed to the seats it names (and to the speaker's own key), and a line as a reader
sees it once its signature, its speaker's key and its whisper are checked.

The document is `pbem.protocol.documents.Talk`; this module makes lines, opens whispers and
checks a line's place. No I/O: the seat side (pbem.seat.talk) and the host (pbem.host.talk)
own files and stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.errors import BadPacket, BadSignature, UsageError, msg
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    Shape,
    Signed,
    Talk,
    open_as,
    seal_info,
    seal_json,
    sign,
    talk_text_problem,
)
from pbem.protocol.limits import TALK_PER_PACKET

PURPOSE = "talk"


class Whispered(Shape, frozen=True):
    """What a whisper seals to each of its seats."""

    text: str


@dataclass(frozen=True)
class Line:
    """A line as a seat reads it: who said it, to whom (None: the table), what, and where."""

    speaker: str
    to: tuple[str, ...] | None
    text: str
    seq: int
    n: int
    at: str
    hash: str

    def json(self) -> dict[str, Any]:
        """The line in `pbem show --json`'s "talk" (docs/protocol.md)."""
        return {"from": self.speaker, "to": None if self.to is None else list(self.to), "text": self.text,
                "packet": self.seq, "n": self.n, "at": self.at}


def check_line(text: str, to: list[str], speaker: str, seats: tuple[str, ...]) -> list[str]:
    """The whisper's seats in order (empty: a public line), or UsageError saying what is wrong."""
    problem = talk_text_problem(text)
    if problem:
        raise UsageError(problem)
    for seat in to:
        if seat not in seats:
            raise UsageError(msg("no seat {seat} in this game: a whisper goes to {seats}", seat=repr(seat),
                               seats=", ".join(s for s in seats if s != speaker)))
        if seat == speaker:
            raise UsageError(msg("{seat} is your own seat: whisper to the others", seat=speaker))
    return sorted(set(to))


def check_count(said: int, seq: int) -> None:
    """UsageError when a seat has said its lines at packet `seq` already (`said`: how many)."""
    if said >= TALK_PER_PACKET:
        raise UsageError(msg("you said {n} lines at packet {seq}, as many as a seat may: the next packet starts a new count",
                           n=said, seq=seq))


def make(game: str, seat: str, seq: int, packet: str, n: int, at: str, text: str, to: list[str],
         keys: dict[str, str], identity: Identity) -> Signed[Talk]:
    """A signed line: public when `to` is empty, else sealed to those seats and to `seat` (its
    own copy), each box padded to one size. `keys`: each seat's key line at packet `seq`."""
    if not to:
        return sign(Talk(game=game, seat=seat, seq=seq, packet=packet, n=n, at=at, text=text), identity)
    sealed = {s: seal_json(Whispered(text=text), PublicKey.decode(keys[s]), seal_info(game, seq, seat, s, PURPOSE),
                           pad=PURPOSE) for s in (*to, seat)}
    return sign(Talk(game=game, seat=seat, seq=seq, packet=packet, n=n, at=at, to=to, sealed=sealed), identity)


def read(block: Signed[Talk], speaker_key: str, reader: str, identity: Identity | None) -> Line | None:
    """The line `reader` (with its `identity`) may read: its text, or its whisper opened; None
    for a whisper not sealed to `reader`. BadSignature unless `speaker_key` (the seat's key at
    the line's packet) signed it; WrongKey when a box for `reader` does not open."""
    doc = block.doc
    if block.signer.encode() != speaker_key:
        raise BadSignature(msg("{seat}'s line is signed by key {fingerprint}, not the seat's key", seat=doc.seat,
                             fingerprint=block.signer.fingerprint()))
    text = doc.text
    if doc.sealed is not None:
        box = doc.sealed.get(reader)
        if box is None or identity is None:
            return None
        text = open_as(Whispered, box, identity, seal_info(doc.game, doc.seq, doc.seat, reader, PURPOSE)).text
        problem = talk_text_problem(text)
        if problem:
            raise BadPacket(problem)
    assert text is not None
    return Line(doc.seat, None if doc.to is None else tuple(doc.to), text, doc.seq, doc.n, doc.at, block.hash)


def ordered(lines: list[Line]) -> list[Line]:
    """Oldest first: by packet, then by the time each speaker gave, then speaker and count."""
    return sorted(lines, key=lambda ln: (ln.seq, ln.at, ln.speaker, ln.n))

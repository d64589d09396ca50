"""A seat's table talk (docs/protocol.md, "Table talk"): saying a line, kept in the key home
before it is sent the way moves are, and hearing the lines that came, each checked.

A line is heard only when the speaker's key at its packet signed it (the invitation's seats,
then the packet's handovers) and its packet is the one this key home saw under that number;
a whisper is opened with the seat's own key. The key home keeps the lines this seat said
(their count and how many at each packet come from them) and those read from mail, and which
lines the seat was shown, so `pbem turn` shows only what is new.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pbem.atomic import read_bounded, write_atomic, write_new
from pbem.errors import PbemError
from pbem.protocol import talk
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Signed, Talk, read_blocks
from pbem.protocol.limits import KIB
from pbem.protocol.talk import Line
from pbem.seat.home import talk_dir, talk_heard_path
from pbem.seat.player import SeatPacket, seat_keys_at, seen_packets

MAX_TALK_FILE = 256 * KIB  # a whisper to eleven seats is about 70 KB
MAX_TALK_FILES = 10_000  # files of talk read for one game (the newest, by name): a full game says far fewer


@dataclass(frozen=True)
class AtTable:
    """A seat at its table now, as talk needs it: the newest packet it has (number and hash), each
    seat's key then, the keys handed over before (key -> (seat, packet of the handover)), and its
    own key."""

    game: str
    seat: str
    seq: int
    packet: str
    keys: dict[str, str]
    former: dict[str, tuple[str, int]]
    identity: Identity


def at_packet(sp: SeatPacket) -> AtTable:
    """A classic seat at the packet it opened (the keys after the packet's handovers)."""
    keys, former = seat_keys_at(sp.doc, sp.invitation)
    return AtTable(sp.packet.game, sp.seat, sp.doc.seq, sp.packet.hash, keys, former, sp.identity)


def at_chain(inv: Signed[Invitation], seat: str, head: tuple[int, str], identity: Identity) -> AtTable:
    """A trustless seat at the last packet of the chain it followed (its seats never change keys)."""
    return AtTable(inv.game, seat, head[0], head[1], inv.doc.seat_keys(), {}, identity)


def talk_files(folder: Path) -> list[Path]:
    """The talk files in `folder` (regular `.pbem` files), at most MAX_TALK_FILES."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".pbem") and not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / n for n in names[-MAX_TALK_FILES:]]


def beside(packet: Path) -> list[Path]:
    """The talk files a host relayed beside a packet file: its out-dir's talk/, or the talk/ of
    the game folder whose packets/ holds it."""
    folder = packet.parent.parent.parent
    found = talk_files(packet.parent / "talk")
    return found + talk_files(folder / "talk") if (folder / "pbem-folder.json").is_file() else found


def read_lines(paths: Iterable[Path], game: str) -> list[Signed[Talk]]:
    """The talk blocks of `game` in these files, once each; a file that does not read is passed over
    (anyone who can write to a shared folder can drop one there)."""
    out: dict[str, Signed[Talk]] = {}
    for path in paths:
        try:
            blocks = read_blocks(read_bounded(path, MAX_TALK_FILE).decode("utf-8", errors="replace"))
        except PbemError:
            continue
        for b in blocks:
            if isinstance(b.doc, Talk) and b.game == game:
                out.setdefault(b.hash, b)
    return list(out.values())


def kept(home: Path, game: str) -> list[Signed[Talk]]:
    """The lines kept in the key home: said by its seats, or read from mail."""
    return read_lines(talk_files(talk_dir(home, game)), game)


def keep(home: Path, block: Signed[Talk]) -> Path:
    """Keep a line in the key home (named by packet and speaker, as a game folder's talk/ is)."""
    return write_new(talk_dir(home, block.game), f"{block.doc.seq:06d}-{block.doc.seat}", ".pbem",
                     block.armored().encode())


def mark_sent(home: Path, block: Signed[Talk]) -> None:
    """Remember that this seat's line went to the host (or into a talk file): it is not sent again."""
    write_atomic(keep(home, block).with_suffix(".sent"), b"")


def unsent(me: AtTable, home: Path) -> list[Signed[Talk]]:
    """This seat's lines kept but not sent (its last `pbem say` failed on the way, or was cut short),
    oldest first: the next `pbem say` sends them first, as they were."""
    mine = []
    for path in talk_files(talk_dir(home, me.game)):
        if path.with_suffix(".sent").exists():
            continue
        mine += [b for b in read_lines([path], me.game) if b.doc.seat == me.seat and b.signer == me.identity.public]
    return sorted(mine, key=lambda b: b.doc.n)


def say(me: AtTable | SeatPacket, home: Path, text: str, to: list[str], at: str) -> Signed[Talk]:
    """This seat's next line at its packet (public when `to` is empty), signed, sealed to `to`,
    and kept in the key home (not sent yet: `mark_sent` once it is); UsageError, with nothing
    kept, when the line may not be said."""
    me = at_packet(me) if isinstance(me, SeatPacket) else me
    game, seat, seq = me.game, me.seat, me.seq
    to = talk.check_line(text, to, seat, tuple(me.keys))
    mine = [b.doc for b in kept(home, game) if b.doc.seat == seat and b.signer == me.identity.public]
    talk.check_count(sum(d.seq == seq for d in mine), seq)
    n = max((d.n for d in mine), default=0) + 1
    block = talk.make(game, seat, seq, me.packet, n, at, text, to, me.keys, me.identity)
    keep(home, block)
    return block


def heard(me: AtTable | SeatPacket, home: Path, more: Iterable[Path] = ()) -> list[Line]:
    """Every line this seat may read, oldest first: from the key home and the files `more` (a
    game folder's talk/), each signed by its speaker's key at its packet, at a packet this key
    home saw under that number; whispers to other seats left out."""
    me = at_packet(me) if isinstance(me, SeatPacket) else me
    game, keys, former = me.game, me.keys, me.former
    seen = seen_packets(home, game)
    lines = []
    for block in read_lines([*talk_files(talk_dir(home, game)), *list(more)[-MAX_TALK_FILES:]], game):
        doc = block.doc
        if seen.get(str(doc.seq), doc.packet) != doc.packet:
            continue  # said at another packet than this seat saw under that number
        key = keys.get(doc.seat)
        signer = block.signer.encode()
        if signer != key and former.get(signer, ("", 0))[0] == doc.seat and doc.seq < former[signer][1]:
            key = signer  # said before the seat was handed over, by its key then
        if key is None:
            continue
        try:
            line = talk.read(block, key, me.seat, me.identity)
        except PbemError:
            continue
        if line is not None:
            lines.append(line)
    return talk.ordered(lines)


def unheard(home: Path, game: str, seat: str, lines: list[Line]) -> list[Line]:
    """The lines this seat has not been shown yet."""
    path = talk_heard_path(home, game, seat)
    try:
        shown = set(json.loads(read_bounded(path, 4 * MAX_TALK_FILE))) if path.is_file() else set()
    except (PbemError, ValueError, TypeError):
        shown = set()
    return [ln for ln in lines if ln.hash not in shown]


def mark_heard(home: Path, game: str, seat: str, lines: list[Line]) -> None:
    """Remember that this seat was shown `lines` (all it may read: the record never grows past them)."""
    write_atomic(talk_heard_path(home, game, seat), json.dumps(sorted(ln.hash for ln in lines)).encode())

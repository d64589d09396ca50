"""A seat of a trustless game over any transport (docs/trustless.md): a shared folder or mail.

The transport gives two things: the packet files received so far (`packets`: a folder's, or
those `pbem inbox` kept in the key home) and a way to send one block (`send`: into the
folder's inbox, or mailed to the host). Everything else is the same for both: the seat
follows the chain in order (a packet not arrived yet stops it there; a fork is refused),
joins with its key shares, and sends the block it owes at each step. Every block it sends is
kept in the key home first (`move_path`, by the packet that opened its step), so a restarted
seat sends the same bytes again instead of a second, different shuffle or bundle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from pbem.atomic import write_atomic
from pbem.errors import BadPacket, StaleMove, UsageError
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Notice, Packet, Signed, read_blocks, read_text
from pbem.protocol.table_docs import CHOICES
from pbem.seat import player, trustless_said
from pbem.seat import trustless as T
from pbem.seat.checked import Head, checked_in, mark_checked, read_checked, ties_to
from pbem.seat.home import join_path, last_looked, mark_looked, move_path, save_packet, trusted_host_key
from pbem.ui import words
from pbem.ui.words import t

MARK_EVERY = 10.0  # seconds: a process that follows the chain as it grows (a bot) keeps how far it
# checked it this often at most (a write a packet cost as much as the rest of its look); the first
# look of each process, as each `pbem turn` is, keeps it at once, and so does the look that finds
# the game over (its chain grows no more: a replay by the seat then trusts all of it)

Where = TypeVar("Where")  # what a send returns: the inbox file written, or where the mail went


@dataclass
class TrustlessClient(Generic[Where]):
    inv: Signed[Invitation]
    identity: Identity
    home: Path
    packets: Callable[[], list[tuple[int, Path]]]  # the packet files received so far, by number (or those after the head)
    send: Callable[[int, bytes], Where]  # send one block's armour, answering the step opened at that packet
    notices: Callable[[], list[Notice]] = lambda: []  # the host's notices received so far (reminders, late...)
    seat: str = field(init=False)
    ts: T.TrustlessSeat = field(init=False)
    checked: Head | None = field(init=False, default=None)  # the head of the chain this seat checked before
    known: bool = field(init=False, default=False)  # `checked` given (start_from): the record is not read
    anchor_host: str | None = field(init=False, default=None)
    marked_at: float = field(init=False, default=-MARK_EVERY)  # when `checked` was last kept (time.monotonic)

    def __post_init__(self) -> None:
        self.seat = player.seat_of(self.inv, self.identity)
        self.ts = T.TrustlessSeat(self.inv, self.identity, self.seat)

    @property
    def game(self) -> str:
        return self.inv.game

    def join(self) -> tuple[Where, bool]:
        """Send the join (kept in the key home; the same bytes on every run)."""
        saved = join_path(self.home, self.inv.game, self.seat)
        new = not saved.exists()
        if new:  # player.join keeps the invitation as the trust anchor and makes the trustless join
            write_atomic(saved, player.join(self.inv, self.identity, self.home).armored().encode())
        return self.send(0, saved.read_bytes()), new

    def joined(self) -> bool:
        return join_path(self.home, self.inv.game, self.seat).exists()

    def sync(self) -> list[str]:
        """Follow every packet not yet followed, up to the first one not arrived yet; a line
        per relayed block."""
        lines = []
        new = [p for seq, p in self.packets() if seq > self.ts.head[0]]  # the chain only grows
        chain = T.chain_in(new, self.inv.game)
        if not self.ts.head[0] and not self.known:  # a fresh follower: the packets this seat's key checked before
            self.checked = read_checked(self.home, self.identity, self.inv, self.seat)
        upto = checked_in(self.checked, chain, self.ts.head[0])  # need no proof checked again
        last = None
        for packet in chain:
            if packet.doc.seq != self.ts.head[0] + 1:
                break  # a gap: the packets after it wait for it (mail out of order, a folder mid-sync)
            lines += self.ts.follow(packet, check=packet.doc.seq > upto)
            last = packet
        if last is not None and (host := self._host_key()) is not None:  # joined: kept in the key home,
            save_packet(self.home, last, host)  # the newest packet followed is what 'pbem games' reads
            due = time.monotonic() >= self.marked_at + MARK_EVERY or self.ts.table.step() == "over"
            if self.ts.table.check_proofs and last.doc.seq > upto and due:
                self.checked = mark_checked(self.home, self.identity, self.inv, self.seat, last)
                self.marked_at = time.monotonic()
        return lines

    def start_from(self, checked: Head | None) -> None:
        """The head of the chain this seat checked before, as its caller knows it (the record,
        read already, or a packet tied to the record's head): the first sync reads no record."""
        self.checked, self.known = checked, True

    def _host_key(self) -> str | None:
        """The host's key in the invitation this seat joined (the key home's copy: the trust
        anchor), read once it is there."""
        if self.anchor_host is None:
            self.anchor_host = trusted_host_key(self.home, self.game)
        return self.anchor_host

    def catch_up(self) -> list[str]:
        """Follow the chain; what happened since this seat's table was last shown (the key home
        keeps where), in words. It is shown now: the next call says only what comes after."""
        self.sync()
        since = last_looked(self.home, self.game, self.seat)
        said = trustless_said.news(self.ts, since)
        if self.ts.head[0] != since and self.joined():
            mark_looked(self.home, self.game, self.seat, self.ts.head[0])
        return said

    def news(self) -> list[Notice]:
        """The host's notices about the step the table waits for now (a reminder, who is late)."""
        return [n for n in self.notices() if n.seq >= self.step_key()]

    def step_key(self) -> int:
        """The packet that opened the table's current step: one answer per seat and step."""
        return self.ts.table.opened_at

    def answered(self) -> bool:
        """Whether this seat has sent its block for the table's current step already."""
        return move_path(self.home, self.inv.game, self.seat, self.step_key()).exists()

    def my_turn(self) -> bool:
        w = self.ts.table.waiting()
        return w.step in CHOICES and w.seats == [self.seat]

    def play(self, text: str) -> tuple[Where, bool]:
        """A person's move: checked by the engine on this seat's view, then sent with the tokens
        it owes and its card's opening (a move sent before for this step is sent again)."""
        from pbem.ui.card_names import check_typed

        w = self.ts.table.waiting()
        if not self.my_turn():
            raise StaleMove(t("it is not your turn: the table waits for the {step} step from {seats}",
                              step=words.step_name(w.step), seats=words.join(w.seats)))
        if not self.answered():
            move = check_typed(self.ts.view(), text)
            self.ts.choose = lambda _view: move
        out = self.answer()
        assert out is not None  # the seat to move always owes its move
        return out

    def answer(self) -> tuple[Where, bool] | None:
        """Send the block this seat owes at the current step, if any: (where it went, whether
        it is new). A block made before for this step (the key home keeps it, by the packet
        that opened the step) is sent again as it was, never made twice."""
        key = self.step_key()
        saved = move_path(self.home, self.inv.game, self.seat, key)
        if saved.exists():
            return self.send(key, saved.read_bytes()), False
        block = self.ts.owed()
        if block is None:
            return None
        saved.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(saved, block.armored().encode())
        return self.send(key, saved.read_bytes()), True


# --- file by file: `pbem show PACKET`, `pbem move PACKET [MOVE]` ----------------------------------


def chain_files(folder: Path, game: str, upto: int) -> list[tuple[int, Path]]:
    """The packet files of `game` in `folder` up to packet `upto`, by number (the seat checks
    them as it follows; a damaged file says nothing)."""
    out = []
    for path in sorted(folder.glob("*.pbem")):
        try:
            blocks = read_blocks(read_text(path))
        except BadPacket:
            continue
        out += [(b.doc.seq, path) for b in blocks if isinstance(b.doc, Packet) and b.game == game and b.doc.seq <= upto]
    return sorted(out)


def packet_file_seat(packet_file: Path, packet: Signed[Packet], identity: Identity, home: Path,
                     write: Callable[[str, int, bytes], Path]) -> TrustlessClient[Path]:
    """This key's seat at a trustless packet played file by file: the chain is the packets in
    the packet file's folder (a host's out/, or wherever the player keeps them) up to that
    packet, followed and checked now; each block the seat owes is written by `write(step, seq,
    data)` to a file to send to the host (`pbem apply` takes it)."""
    from pbem.seat.home import invitation_path

    anchor = invitation_path(home, packet.game)
    if not anchor.exists():
        raise UsageError(t("you have not joined game {game}", game=packet.game),
                         hint=t("join it first (pbem turn DIR, or pbem join)"))
    inv = read_blocks(read_text(anchor))[0].expect(Invitation)
    files = chain_files(packet_file.parent, packet.game, packet.doc.seq)
    client: TrustlessClient[Path] = TrustlessClient(inv, identity, home, lambda: files, lambda _key, data: write(
        client.ts.table.waiting().step, client.ts.head[0], data))
    head = read_checked(home, identity, inv, client.seat)
    if head is not None and head[0] > packet.doc.seq:  # an older packet than the newest this key checked:
        later = T.chain_in([p for seq, p in chain_files(packet_file.parent, packet.game, head[0])  # the
                            if seq > packet.doc.seq], packet.game)  # folder's packets after it reach there
        if ties_to(head, packet, later, inv.doc.host.key):
            head = (packet.doc.seq, packet.hash)
    client.start_from(head)
    client.sync()
    if client.ts.head[0] != packet.doc.seq:
        raise BadPacket(t("packet {seq}'s chain is not all in {path} (found up to packet {last})", seq=packet.doc.seq,
                          path=repr(str(packet_file.parent)), last=client.ts.head[0]),
                        hint=t("a trustless seat reads every packet of the chain"))
    return client

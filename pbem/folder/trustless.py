"""A seat of a trustless game playing through a shared folder (docs/trustless.md).

It reads the folder's packets in chain order into its `TrustlessSeat`, joins with its key
shares, and writes the block it owes at each step into the inbox. Every block it writes is
kept in the key home first (`move_path`, by the packet it answers), so a restarted seat
submits the same bytes again instead of a second, different shuffle or bundle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pbem.atomic import write_atomic
from pbem.errors import StaleMove, UsageError
from pbem.folder.layout import GameFolder
from pbem.folder.play import read_invitation
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Signed
from pbem.seat import player
from pbem.seat import trustless as T
from pbem.seat.home import join_path, move_path
from pbem.ui import words
from pbem.ui.words import t


@dataclass
class TrustlessFolderSeat:
    folder: GameFolder
    identity: Identity
    home: Path
    inv: Signed[Invitation] = field(init=False)
    seat: str = field(init=False)
    ts: T.TrustlessSeat = field(init=False)

    def __post_init__(self) -> None:
        self.inv = read_invitation(self.folder).expect(Invitation)
        self.seat = player.seat_of(self.inv, self.identity)
        self.ts = T.TrustlessSeat(self.inv, self.identity, self.seat)

    @classmethod
    def open(cls, dir: Path, identity: Identity, home: Path) -> TrustlessFolderSeat:
        return cls(GameFolder.open(Path(dir)), identity, Path(home))

    def join(self) -> tuple[Path, bool]:
        """Submit the join (kept in the key home; the same bytes on every run)."""
        saved = join_path(self.home, self.inv.game, self.seat)
        new = not saved.exists()
        if new:  # player.join keeps the invitation as the trust anchor and makes the trustless join
            write_atomic(saved, player.join(self.inv, self.identity, self.home).armored().encode())
        return self.folder.submit_move(self.seat, 0, saved.read_bytes()), new

    def joined(self) -> bool:
        return join_path(self.home, self.inv.game, self.seat).exists()

    def sync(self) -> list[str]:
        """Follow every packet not yet followed; a line per relayed block."""
        lines = []
        new = [p for seq, p in self.folder.packets(None) if seq > self.ts.head[0]]  # the chain only grows
        for packet in T.chain_in(new, self.inv.game):
            lines += self.ts.follow(packet)
        return lines

    def step_key(self) -> int:
        """The packet that opened the table's current step: one answer per seat and step."""
        return self.ts.table.opened_at

    def answered(self) -> bool:
        """Whether this seat has written its block for the table's current step already."""
        return move_path(self.home, self.inv.game, self.seat, self.step_key()).exists()

    def play(self, text: str) -> tuple[Path, bool]:
        """A person's move: checked by the engine on this seat's view, then sent with the tokens
        it owes and its card's opening (a move written before for this step is sent again)."""
        from engine.rules import check

        w = self.ts.table.waiting()
        if w.step != "move" or w.seats != [self.seat]:
            raise StaleMove(t("it is not your turn: the table waits for the {step} step from {seats}",
                              step=t(f"trustless step {w.step}"), seats=words.join(w.seats)))
        if not self.answered():
            move = check(self.ts.view(), text)
            self.ts.choose = lambda _view: move
        out = self.answer()
        assert out is not None  # the seat to move always owes its move
        return out

    def answer(self) -> tuple[Path, bool] | None:
        """Submit the block this seat owes at the current step, if any: (inbox path, whether it
        is new). A block written before for this step (the key home keeps it, by the packet
        that opened the step) is submitted again as it was, never made twice."""
        saved = move_path(self.home, self.inv.game, self.seat, self.step_key())
        if saved.exists():
            return self.folder.submit_move(self.seat, self.step_key(), saved.read_bytes()), False
        block = self.ts.owed()
        if block is None:
            return None
        saved.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(saved, block.armored().encode())
        return self.folder.submit_move(self.seat, self.step_key(), saved.read_bytes()), True

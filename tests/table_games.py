"""A real game made through the library: real key files (passphrase PASS), a real SQLite file
and the packet and move files on disk; bots play it, and a seat's own program may forge a move."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from engine.bots import RandomBot
from pbem.host import referee as H
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    SealedMove,
    SeatMove,
    Signed,
    b64,
    move_commitment,
    read_file,
    seal_info,
    seal_json,
    sign,
)
from pbem.seat import keys
from pbem.seat import player as P

PASS = b"correct horse"


@dataclass
class Table:
    root: Path
    host: H.Host
    ids: dict[str, Identity]
    homes: dict[str, Path]
    seats: list[str]
    files: list[Path] = field(default_factory=list)
    _last: tuple[int, str] = (0, "")  # the newest packet read so far

    def latest(self) -> tuple[Path, Signed]:
        # only the packets since the last one read: reading them all made a game quadratic
        new = self.host.packets(since=self._last[0])
        if new:
            self._last = new[-1]
        seq, armored = self._last
        path = self.root / "out" / f"packet-{seq:06d}.pbem"
        path.parent.mkdir(exist_ok=True)
        path.write_text(armored)
        self.files.append(path)
        return path, read_file(path)[0]

    def move_file(self, seat: str, text: str, packet: Signed, opened: P.SeatPacket | None = None) -> Path:
        """The seat's move file answering `packet` (`opened`: that packet already opened by the seat)."""
        sp = opened or P.open_packet(packet, self.ids[seat], self.homes[seat])
        mv = P.make_move(sp, text)
        path = self.root / "moves" / f"{seat}-{packet.doc.seq}.pbem"
        path.parent.mkdir(exist_ok=True)
        path.write_text(mv.armored())
        self.files.append(path)
        return path

    def apply_file(self, path: Path) -> list[H.Outcome]:
        return [self.host.accept(b) for b in read_file(path)]


def make_table(root: Path, seats: list[str], ruleset: str = "classic", options: list[str] | None = None,
               store: str | None = None) -> Table:
    """A dealt game; in `store` (a URL) or else in a SQLite file root/game.db."""
    ids: dict[str, Identity] = {}
    homes: dict[str, Path] = {}
    for name in ["referee", *seats]:
        homes[name] = root / f"home-{name}"
        keys.create_identity(homes[name], name, PASS)
        ids[name] = keys.load_identity(homes[name], name, PASS)  # from the key file on disk
    db = store or root / "game.db"
    invitation = H.create_game(db, "test", ids["referee"], ruleset, [(s, ids[s].public) for s in seats], options or [])
    inv_path = root / "invitation.pbem"
    inv_path.write_text(invitation.armored())
    host = H.Host(db, ids["referee"], game="test")
    table = Table(root, host, ids, homes, seats, [inv_path])
    for s in seats:
        join = P.join(read_file(inv_path)[0], ids[s], homes[s])
        path = root / f"join-{s}.pbem"
        path.write_text(join.armored())
        table.files.append(path)
        table.apply_file(path)
    return table


def mailed_table(root: Path, seats: list[str], **settings: object) -> Table:
    """A dealt game (make_table) whose seats and host read mail at NAME@example.org, with `settings`."""
    table = make_table(root, seats)
    for s in seats:
        table.host.set_email(s, f"{s}@example.org")
    table.host.set_email("host", "referee@example.org")
    table.host.set_settings(**settings)
    return table


def play_until(table: Table, stop, seed: int = 0, limit: int = 2000) -> None:
    """Bots on every seat answer packets until `stop(packet)` is true."""
    bots = {s: RandomBot(f"{seed}-{s}") for s in table.seats}
    rng = random.Random(seed)
    for _ in range(limit):
        _, packet = table.latest()
        if stop(packet):
            return
        seat = packet.doc.to_move
        sp = P.open_packet(packet, table.ids[seat], table.homes[seat])
        move = bots[seat].choose(sp.view)
        path = table.move_file(seat, str(move), packet, sp)
        table.apply_file(path)
        rng.random()
    raise AssertionError("the game did not reach the stop condition")


def forged_move(game: str, seq: int, packet: str, seat: str, text: str, host_key: PublicKey, signer: Identity,
                nonce: bytes | None = None) -> Signed[SeatMove]:
    """A move of any `text` (no rule asked), sealed to the host and signed by `signer` as `seat`'s
    answer to packet `seq` (hash `packet`) of `game`: what a seat's own program could send."""
    nonce = os.urandom(16) if nonce is None else nonce
    return sign(SeatMove(game=game, seat=seat, seq=seq, packet=packet, commit=move_commitment(nonce, text),
                     sealed=seal_json(SealedMove(move=text, nonce=b64(nonce)), host_key,
                                      seal_info(game, seq, seat, "host", "move"), pad="move")), signer)

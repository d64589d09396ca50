"""A trustless game played in one process for the tests of what people see of it: the blind
host with its real SQLite file, a `TrustlessSeat` per seat with its real key file, random bots
choosing the moves, and the host's packets published into a real game folder (as `pbem host run
--folder` does). A round of three seats takes a few seconds: the host checks every proof when a
block comes in; the seats here follow the chain without checking them again.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from engine.bots import make_bot
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderPublisher
from pbem.host import blind
from pbem.host.publish import publish_pending
from pbem.host.settings import TransportSetting
from pbem.protocol.documents import Invitation, Packet, Signed, read_blocks
from pbem.protocol.trustless.public import PublicTable
from pbem.seat.keys import create_identity
from pbem.seat.trustless import TrustlessSeat
from pbem.seat.trustless_client import TrustlessClient

SEATS = ("ann", "bob", "cat")


@dataclass
class BlindGame:
    root: Path
    seats_: tuple[str, ...] = SEATS
    ruleset: str = "classic"
    store: str | None = None  # a store's URL to keep the game in (None: the file saves/t.db)
    name: str = "t"
    homes: dict[str, Path] = field(init=False)
    seen: int = 0

    def __post_init__(self) -> None:
        self.homes = {n: self.root / f"home-{n}" for n in ("referee", *self.seats_)}
        ids = {n: create_identity(h, n, None) for n, h in self.homes.items()}
        self.db = self.root / "saves" / "t.db"
        where = self.store or self.db
        self.inv: Signed[Invitation] = blind.create_game(where, self.name, ids["referee"], self.ruleset,
                                                         [(s, ids[s].public) for s in self.seats_], [])
        self.host = blind.BlindHost(where, ids["referee"], game=self.name)
        self.ids = ids
        self.seats: dict[str, TrustlessSeat] = {}
        for s in self.seats_:
            # joined as `pbem turn` joins (TrustlessClient.join): the invitation kept in the seat's key
            # home as its trust anchor, and the join kept there too, handed straight to the host
            client = TrustlessClient(self.inv, ids[s], self.homes[s], lambda: [], self._take)
            client.join()
            self.seats[s] = seat = client.ts
            seat.table.check_proofs = False
            seat.choose = make_bot("random", s, "7").choose
        self.folder = self.root / "shared"
        self.host.set_settings(transport=TransportSetting(folder=str(self.folder)))
        self.sync()

    def copy(self, root: Path) -> BlindGame:
        """This game (of a store file) copied into `root`, to play on from where it is: its key
        homes, store and folder copied, a host on the copy publishing into the copied folder, and
        seats made anew from their keys that follow the chain, without checking its proofs again
        (as these seats do)."""
        assert self.store is None, "a store file's game only"
        # (without SQLite's shared-memory index of the write-ahead log: rebuilt from the log on opening)
        shutil.copytree(self.root, root, ignore=shutil.ignore_patterns("*-shm"))
        other = copy.copy(self)
        other.root = root
        other.homes = {n: root / h.relative_to(self.root) for n, h in self.homes.items()}
        other.db, other.folder = root / self.db.relative_to(self.root), root / self.folder.relative_to(self.root)
        other.host = blind.BlindHost(other.db, self.ids["referee"], game=self.name)
        other.host.set_settings(transport=TransportSetting(folder=str(other.folder)))
        other.seats = {}
        for s in self.seats_:
            other.seats[s] = seat = TrustlessSeat(self.inv, self.ids[s], s)
            seat.table.check_proofs = False
            seat.choose = make_bot("random", s, "7").choose
        other.seen = 0
        other.sync()
        return other

    def _take(self, seq: int, armored: bytes) -> None:
        self.host.accept(read_blocks(armored.decode())[0])

    @property
    def table(self) -> PublicTable:
        return self.host.table()[0]

    def sync(self) -> None:
        self.seen = follow_host(self.host, self.seats.values(), self.seen)

    def send(self, seat: str) -> None:
        """`seat` sends the block it owes; every seat follows the packet it makes."""
        owed = self.seats[seat].owed()
        assert owed is not None, (seat, self.table.waiting())
        self.host.accept(read_blocks(owed.armored())[0])
        self.sync()

    def play(self, until: Callable[[PublicTable], bool]) -> BlindGame:
        """Every seat the table waits for answers, until `until(table)` holds; then the folder
        has every packet."""
        while not until(table := self.table) and table.step() != "over":
            for s in table.waiting().seats:
                self.send(s)
        return self.publish()

    def publish(self) -> BlindGame:
        publish_pending(self.host, FolderPublisher(GameFolder.init(self.folder, self.inv.game, self.seats_)))
        return self

    def packet_file(self, seq: int) -> Path:
        return dict(GameFolder.open(self.folder).packets(None))[seq]


def follow_host(host: blind.BlindHost, seats: Iterable[TrustlessSeat], seen: int) -> int:
    """Every seat follows the host's packets after packet `seen`; the last one's number."""
    for seq, armored in host.packets(seen):
        packet = read_blocks(armored)[0].expect(Packet)
        for seat in seats:
            seat.follow(packet)
        seen = seq
    return seen


def round_over(n: int) -> Callable[[PublicTable], bool]:
    return lambda table: len(table.ended) >= n

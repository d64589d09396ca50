"""A real game on disk for tests: real key files, a real SQLite file, real packet files."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from engine.bots import RandomBot
from pbem.host import referee as H
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Signed, read_file
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


def store_dump(url: str) -> str:
    """Every row of every table of a store (SQLite or PostgreSQL), in a stable order: two
    dumps are equal when nothing in the store changed."""
    from pbem.host.store import Store, metadata

    with Store(url) as st, st.read() as c:
        return "\n".join(f"{t.name}: {sorted(map(repr, c.execute(t.select()).all()))}" for t in metadata.sorted_tables)


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


POSITION_CASES = Path(__file__).parent / "positions"


def case_position_file(tmp_path: Path, ruleset: str, case: str) -> tuple[Path, dict]:
    """Write the position of rules case tests/positions/<ruleset>/<case>.json to a file of
    its own (what `pbem position` reads); return the file and the whole case."""
    import json

    doc = json.loads((POSITION_CASES / ruleset / f"{case}.json").read_text(encoding="utf-8"))
    path = tmp_path / f"{case}.position.json"
    path.write_text(json.dumps(doc["position"]), encoding="utf-8")
    return path, doc

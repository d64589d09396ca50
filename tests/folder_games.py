"""Games dealt through the library in a shared folder: homes with keys, three or four seats
(a clock that moves only when told), played in this process, and a finished game checked."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from pytest import CaptureFixture, MonkeyPatch
from run_here import main_here

from engine.position import dump, load
from engine.rules import apply
from pbem.auto.host_runner import FolderHost
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.host.clock import FakeClock, stamp
from pbem.host.deadlines import Timing
from pbem.protocol.documents import read_blocks
from pbem.seat import keys

SEATS = ["ann", "bob", "cat"]


def make_homes(root: Path, names: list[str]) -> dict[str, Path]:
    homes = {}
    for n in names:
        homes[n] = root / f"home-{n}"
        keys.create_identity(homes[n], n, None)
    return homes


def keys_here(homes: dict[str, Path]) -> dict[str, str]:
    """What processes.new_keys makes (`pbem key new NAME --no-passphrase` in each home: the same
    identity file), made in this process; returns each name's public key line."""
    return {n: keys.create_identity(h, n, None).public.encode() for n, h in homes.items()}


def new_game(root: Path, seats: list[str] = SEATS) -> tuple[Path, dict[str, Path]]:
    homes = make_homes(root, ["referee", *seats])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = root / "saves" / "t.db"
    H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in seats], [])
    return db, homes


def check_game(db: Path, referee_home: Path) -> dict:
    """The finished game is what the engine gives replaying the archived moves, and every
    move number of every round is in the database exactly once."""
    host = H.Host(db, keys.load_identity(referee_home, "referee", None))
    try:
        st = host.status()
        archives = host.archives()
    finally:
        host.close()
    assert st["status"] == "over"
    assert sorted(archives) == [1, 2, 3]
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT round_no, n, file_hash FROM moves ORDER BY round_no, n").fetchall()
    finally:
        con.close()
    assert len({r[2] for r in rows}) == len(rows)
    gold = None
    for rnd, armored in archives.items():
        archive = read_blocks(armored)[0].doc
        state = load(archive.start)
        for i, m in enumerate(archive.moves, 1):
            assert m.n == i
            apply(state, m.text)
        assert dump(state) == archive.final, f"round {rnd} does not replay"
        assert [n for r, n, _ in rows if r == rnd] == list(range(1, len(archive.moves) + 1))
        gold = state.gold
    assert gold == st["gold"]
    return st


def started_game(tmp_path: Path):
    """A dealt game in a folder: (db, host, FolderHost, its log lines, seats' FolderSeat, ids)."""
    db, homes = new_game(tmp_path)
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    host = H.Host(db, ids["referee"])
    lines: list[str] = []
    fh = FolderHost(host, tmp_path / "shared", lines.append)
    fh.grace = 0.0
    seats = {s: FolderSeat.open(tmp_path / "shared", ids[s], homes[s]) for s in SEATS}
    for s in seats.values():
        s.join()
    fh.step()
    return db, host, fh, lines, seats, ids


def folder_dealt(root: Path):
    """A dealt game in the folder root/shared: (db, folder, homes, the mover's FolderSeat and its packet)."""
    db, host, _, _, seats, _ = started_game(root)
    host.close()
    sp = seats["ann"].latest()
    assert sp is not None
    mover = seats[sp.doc.to_move]
    return db, root / "shared", {n: root / f"home-{n}" for n in ["referee", *SEATS]}, mover, mover.latest()


SEATS4 = ["ann", "bob", "cat", "dan"]


def four_seat_game(root: Path, clock: FakeClock, timing: Timing, store: str):
    homes = make_homes(root, ["referee", *SEATS4])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = store
    H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS4], [],
                  timing=timing.to_config(), clock=clock)
    return db, homes, ids


def clocked_game(tmp_path: Path, timing: Timing, store: str, start: str = "2026-12-01T12:00:00+00:00"):
    """A four-seat game dealt in `store` under `timing`, with a clock that moves only when told,
    from `start`: (clock, host, FolderHost, seats' FolderSeat, ids)."""
    clock = FakeClock(start)
    db, homes, ids = four_seat_game(tmp_path, clock, timing, store)
    host = H.Host(db, ids["referee"], clock)
    fh = FolderHost(host, tmp_path / "shared", lambda line: None)
    seats = {s: FolderSeat.open(tmp_path / "shared", ids[s], homes[s]) for s in SEATS4}
    for s in seats.values():
        s.join()
    fh.step()
    return clock, host, fh, seats, ids


def bots_end_the_round(host: H.Host, fh: FolderHost, seats: dict[str, FolderSeat]) -> None:
    """clocked_game's round played to its end by a smart bot for each seat, the host serving: the
    seat to move opens its newest packet and submits the bot's move (or again the move it made,
    at a renewal), as a bot daemon does (pbem.auto.seat_bot.FolderBot, whose seats each open
    every packet: what a seat does with a packet not its turn is not what these tests check)."""
    from engine.bots import make_bot

    bots = {s: make_bot("smart", s, 1) for s in seats}
    for _ in range(2000):
        if host.archives():
            break
        seat = seats[host.status()["to_move"]]
        sp = seat.latest()
        assert sp is not None
        seat.move(sp, "" if seat.answered(sp) else str(bots[seat.seat].choose(sp.view)))
        fh.step()
    assert host.archives()


def paused_game(tmp_path: Path, store: str, home: Path, capsys: CaptureFixture[str], monkeypatch: MonkeyPatch):
    """A four-seat folder game under a 1 h deadline, paused (`pbem game pause`) after its first
    move: packet 2, published while paused, names no deadline. (clock, host, FolderHost, seats, ids)"""
    from pbem.auto.seat_bot import FolderBot

    now = stamp(datetime.now(UTC).replace(microsecond=0))  # the commands count on the real clock
    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, grace=3600, on_timeout="discard"),
                                               store, start=now)
    assert main_here(["game", "pause", "t", "--store", store], home, capsys, monkeypatch)[0] == 0
    first = host.status()["to_move"]
    FolderBot(fh.dir, ids[first], seats[first].home, "smart", 1, lambda line: None).step()
    fh.step()
    return clock, host, fh, seats, ids

"""Seats changing hands mid-game: the host's reseat and a player's own handover.

Real key files, a real store (a SQLite file, and a database of a real PostgreSQL server), a
real shared folder, bots on every seat; the host's `pbem game reseat` and the player's
`pbem handover` run as the real command.
"""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path

import processes
import pytest
from folder_games import make_homes
from on_disk import store_dump
from processes import one_error_line
from run_here import main_here

from pbem.auto.host_runner import FolderHost
from pbem.auto.seat_bot import FolderBot
from pbem.errors import BadSignature, UsageError
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.protocol.documents import Handover, SeatMove, parse, read_blocks, sign, unb64
from pbem.replay.audit import audit, audit_source
from pbem.replay.rounds import build, verify_archive
from pbem.replay.sources import open_source
from pbem.replay.trust import Trust
from pbem.seat import keys
from pbem.seat import player as P
from pbem.ui.words import render

SEATS = ["ann", "bob", "cat"]


def pbem(*args: object, home: Path, ok: bool = True) -> subprocess.CompletedProcess:
    return processes.pbem(*args, home=home, ok=ok)


def game(tmp_path: Path, db: str):
    homes = make_homes(tmp_path, ["referee", *SEATS, "eve", "fay"])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    host = H.Host(db, ids["referee"])
    lines: list[str] = []
    fh = FolderHost(host, tmp_path / "shared", lines.append)
    return db, homes, ids, host, fh, lines


def play(fh: FolderHost, bots: dict[str, FolderBot], until, limit: int = 2000) -> None:
    for _ in range(limit):
        for b in bots.values():
            b.step()
        if fh.step() or until():
            return
    raise AssertionError("the game did not get there")


@pytest.mark.slow
def test_a_seat_handed_to_a_new_key_in_round_2_finishes_and_the_audit_passes(tmp_path: Path, store_url: str,
                                                                            here) -> None:
    db, homes, ids, host, fh, lines = game(tmp_path, store_url)
    # `pbem game reseat`, `pbem handover` and `pbem audit`: processes of their own on SQLite,
    # through the command line's entry in this process on PostgreSQL
    folder_cli = partial(here, ok=True) if store_url.startswith("postgresql") else pbem
    shared = tmp_path / "shared"
    bots = {s: FolderBot(shared, ids[s], homes[s], "smart", 3, lines.append) for s in SEATS}
    def bob_just_moved_in_round_2() -> bool:
        doc = read_blocks(host.packets()[-1][1])[0].doc
        return doc.round == 2 and doc.phase == "playing" and [m.seat for m in doc.moves] == ["bob"]

    play(fh, bots, bob_just_moved_in_round_2)
    at = host.status()["seq"]
    packet_before = read_blocks(host.packets()[-1][1])[0]

    # the host gives bob's seat to eve, through the command
    out = folder_cli("game", "reseat", "t", "bob", "--key", ids["eve"].public.encode(), "--store", db,
                     home=homes["referee"]).stdout
    assert "seat bob handed over to key" in out
    assert host.status()["seq"] == at + 1
    handed = read_blocks(host.packets()[-1][1])[0]
    assert handed.doc.handover == "bob" and handed.doc.moves == []

    # the old key: its view of the new packet is refused, and so is any move it signs
    fh.step()
    old = FolderSeat.open(shared, ids["bob"], homes["bob"])
    with pytest.raises(UsageError, match="handed over to another key"):
        old.latest()
    forged = sign(SeatMove(game=handed.game, seat="bob", seq=handed.doc.seq, packet=handed.hash, commit="0" * 64,
                       sealed=""), ids["bob"])
    before = store_dump(db)
    with pytest.raises(BadSignature, match="handed over to a new key at packet"):
        host.accept(forged)
    assert store_dump(db) == before
    old.folder.submit_move("bob", handed.doc.seq, forged.armored().encode())
    fh.step()
    assert any("rejected" in line and "handed over" in line for line in lines), lines[-5:]
    # ... but a move signed before the handover, for the packet before it, is stale anyway
    assert packet_before.doc.seq < handed.doc.seq

    # eve plays bob's seat with her own key (her key home knew nothing of the game)
    del bots["bob"]
    bots["eve"] = FolderBot(shared, ids["eve"], homes["eve"], "smart", 4, lines.append)
    # in round 3, cat hands her own seat to fay, signed by cat's key, through the real command
    play(fh, bots, lambda: host.status()["round"] == 3)
    out = folder_cli("handover", shared, "--key", ids["fay"].public.encode(), "--as", "cat", home=homes["cat"]).stdout
    assert "handover of cat submitted" in out
    fh.step()
    del bots["cat"]
    bots["fay"] = FolderBot(shared, ids["fay"], homes["fay"], "smart", 5, lines.append)
    play(fh, bots, lambda: False)
    assert host.status()["status"] == "over"
    assert [h["by"] for h in host.status()["handovers"]] == ["host", "cat"]

    previous = None
    notes: dict[int, list[str]] = {}
    for rnd, armored in host.archives().items():
        block = [b for b in read_blocks(armored) if b.kind == "archive"][0]
        report = audit(block.payload, previous_final=previous)
        assert report.ok, [f.line() for f in report.faults]
        notes[rnd] = [render(n) for n in report.notes]
        previous = block.doc.final
        build(*verify_archive(block.payload))  # the replay re-applies every move
    assert [n for n in notes[1] if not n.startswith("no packet files")] == []  # (no packets given here)
    # every packet, the handover packets too (no move, the same table), against the replay;
    # with eve's key only the parts sealed to eve (from the handover on) are opened
    trust = Trust(None, "", ("bob", ids["eve"]))
    reports = audit_source(open_source(str(db)), host.game_id(), [1, 2, 3], trust)
    for rep in reports:
        assert rep.ok, [f.line() for f in rep.faults]
    # (how many packets a game has depends on its deal: the store's game ids, and so its deals, are random)
    assert sum(rep.counts.get("packet-table", 0) for rep in reports) > len(host.packets()) // 2
    assert reports[0].counts.get("part", 0) == 0 and reports[1].counts["part"] > 0
    # eve audits through the CLI with her own key: her key home knows the seat from the packets
    run = folder_cli("audit", shared, "--round", "2", "--as", "eve", home=homes["eve"])
    assert "of bob's sealed parts opened and checked" in run.stdout and "anchored to the invitation you joined" in run.stdout
    assert any("seat bob was handed over" in n and "signed by the host" in n for n in notes[2])
    assert any("seat cat was handed over" in n and "the seat's old key" in n for n in notes[3])
    # the archive's moves of bob's seat after the handover are signed by eve's key
    r2 = [b for b in read_blocks(host.archives()[2]) if b.kind == "archive"][0]
    signers = {parse("move", unb64(m.envelope, "envelope")).signer.encode() for m in r2.doc.moves if m.seat == "bob"}
    assert ids["eve"].public.encode() in signers and ids["bob"].public.encode() in signers
    host.close()


@pytest.mark.slow
def test_bad_seat_changes_are_one_line_and_change_nothing(tmp_path: Path, store_url: str,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def pbem(*args: object, home: Path, ok: bool = False) -> subprocess.CompletedProcess:
        """The command through the command line's own entry, in this process (its error line
        and exit code are the point; the commands as processes are run above)."""
        code, err = main_here(list(args), home, capsys, monkeypatch)
        return subprocess.CompletedProcess(args, code, "", err)

    db, homes, ids, host, fh, lines = game(tmp_path, store_url)
    shared = tmp_path / "shared"
    seats = {s: FolderSeat.open(shared, ids[s], homes[s]) for s in SEATS}
    for s in seats.values():
        s.join()
    fh.step()
    before = store_dump(db)
    inv = seats["ann"].invitation
    bad = tmp_path / "bad"
    bad.mkdir()
    # a reseat signed by a player (not the host, not the seat's own key)
    (bad / "h.pbem").write_text(sign(Handover(game=inv.game, seat="bob", key=ids["eve"].public.encode()),
                                     ids["ann"]).armored())
    one_error_line(pbem("apply", "t", bad / "h.pbem", "--store", db, home=homes["referee"], ok=False), 3,
                   "must be signed by the host or by the seat's own key")
    # the host's own reseat command run with a player's key
    keys.create_identity(homes["ann"], "referee2", None)
    one_error_line(pbem("game", "reseat", "t", "bob", "--key", ids["eve"].public.encode(), "--as", "ann", "--store", db,
                        home=homes["ann"], ok=False), 3, "is not the host key")
    # an away notice for another seat
    (bad / "a.pbem").write_text(P.make_request(inv, "bob", ids["ann"], "away", until="2030-01-01T00:00:00+00:00").armored())
    one_error_line(pbem("apply", "t", bad / "a.pbem", "--store", db, home=homes["referee"], ok=False), 3, "not the seat's key")
    # a date in the past, a deadline of nothing
    one_error_line(pbem("away", shared, "--until", "2020-01-01", "--as", "ann", home=homes["ann"], ok=False), 2,
                   "in the past")
    one_error_line(pbem("game", "config", "t", "--deadline", "-3h", "--store", db, home=homes["referee"], ok=False), 2,
                   "bad --deadline")
    # a pause from a player
    one_error_line(pbem("game", "pause", "t", "--as", "ann", "--store", db, home=homes["ann"], ok=False), 3, "is not the host key")
    assert store_dump(db) == before
    assert len(seats["ann"].folder.inbox()) == 0  # nothing was submitted either
    host.close()

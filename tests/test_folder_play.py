"""Shared-folder play end to end: real key files, a real SQLite file, a real folder.

The commands run through the command line's own entry in this process (the `here` fixture), and
the whole-game test runs real processes (`pbem host run`, `pbem bot run`) that share
nothing but the folder (and the host's database, for the two hosts).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from cli_games import cli_game, start_bots, start_host
from folder_games import SEATS, check_game, make_homes, new_game
from on_disk import sqlite_dump
from process_tools import wait_all
from processes import one_error_line

from engine.rules import legal_moves
from pbem.auto.host_runner import FolderHost
from pbem.errors import StaleMove, UsageError
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.protocol.documents import read_blocks
from pbem.seat import keys

# --- in-process: init, turn, host --once, duplicates and conflict copies ----------------------


def test_folder_turns_and_harmless_copies(tmp_path: Path, here) -> None:
    db, homes = new_game(tmp_path)
    folder = tmp_path / "shared"
    out = here("folder", "init", "t", folder, "--db", db, home=homes["referee"], ok=True).stdout
    assert "invitation.pbem and 0 packets" in out
    here("folder", "init", "t", folder, "--db", db, home=homes["referee"], ok=True)  # again: a no-op
    gf = GameFolder.open(folder)
    assert (folder / "invitation.pbem").exists() and gf.seats == tuple(SEATS)

    # each seat's first 'turn' joins; a second one does not write another join
    for s in SEATS:
        out = here("turn", folder, "--as", s, home=homes[s], ok=True).stdout
        assert f"as seat {s}; host key fingerprint " in out and "waiting for every seat" in out
        assert keys.load_public(homes["referee"], "referee").fingerprint() in out  # as `pbem join` prints it
    out = here("turn", folder, "--as", "ann", home=homes["ann"], ok=True).stdout
    assert "joined" not in out
    assert len(gf.inbox()) == 3

    host = H.Host(db, keys.load_identity(homes["referee"], "referee", None))
    lines: list[str] = []
    fh = FolderHost(host, folder, lines.append)
    assert fh.step() is False
    assert any("round 1 dealt, packet 1" in line for line in lines)
    assert any("published packet 1" in line for line in lines)
    assert gf.inbox() == [] and len(list(gf.done_dir.iterdir())) == 3

    # the seat to move sees it is their turn and plays through the folder
    sp = FolderSeat.open(folder, keys.load_identity(homes["ann"], "ann", None), homes["ann"]).latest()
    mover = sp.doc.to_move
    msp = FolderSeat.open(folder, keys.load_identity(homes[mover], mover, None), homes[mover]).latest()
    text = str(legal_moves(msp.view)[0])
    out = here("turn", folder, "--as", mover, "--json", home=homes[mover], ok=True).stdout
    assert json.loads(out[: out.rindex("}") + 1])["my_turn"] is True
    out = here("turn", folder, "--as", mover, text, home=homes[mover], ok=True).stdout
    assert "move for packet 1 submitted" in out
    # a second, different move for the same packet is not written: the first is re-submitted, the
    # new one refused (exit 5; tests/test_answers.py runs it as real processes)
    other = str(legal_moves(msp.view)[-1])
    result = here("turn", folder, "--as", mover, other, home=homes[mover])
    one_error_line(result, StaleMove.exit_code, "packet 1 has your move already")
    assert StaleMove.exit_code == 5 and f"already answered packet 1 with “{text}”" in result.stdout, result.stdout
    assert len(gf.inbox()) == 1
    move_file = gf.inbox()[0]

    # sync-conflict copies and a plain duplicate of the same move: applied exactly once
    for name in (f"{move_file.stem} (conflicted copy 2024-03-01).pbem",
                 f"{move_file.stem}.sync-conflict-20240101-000000-ABCDEFG.pbem",
                 f"{move_file.stem} (Bob's conflicted copy 2024-03-01).pbem"):
        shutil.copy(move_file, gf.inbox_dir / name)
    lines.clear()
    fh.step()
    assert [line for line in lines if "applied" in line][0].endswith("packet 2")
    assert "(+3 identical copies)" in lines[0]
    assert gf.inbox() == []
    after = sqlite_dump(db)
    # the same files arriving again later (a sync tool resurrecting them) change nothing
    for p in list(gf.done_dir.iterdir()):
        shutil.copy(p, gf.inbox_dir / f"{p.stem}.sync-conflict-20240102-000000-XYZ.pbem")
    lines.clear()
    fh.step()
    assert sqlite_dump(db) == after
    assert all("nothing changed" in line for line in lines), lines
    assert not (gf.inbox_dir / "rejected").exists()

    # a waiting seat's view says whose turn it is; the mover now waits for the next seat
    out = here("turn", folder, "--as", mover, home=homes[mover], ok=True).stdout
    assert "waiting for" in out
    host.close()


def test_turn_needs_a_game_folder(tmp_path: Path, here) -> None:
    homes = make_homes(tmp_path, ["ann"])
    (tmp_path / "empty").mkdir()
    result = here("turn", tmp_path / "empty", "--as", "ann", home=homes["ann"])
    one_error_line(result, UsageError.exit_code, "not a pbem game folder")



def _joined(tmp_path: Path) -> tuple[H.Host, FolderHost, dict[str, FolderSeat], dict[str, Path]]:
    """A game in a folder whose seats joined: packet 1 published (host, its FolderHost, the seats, the homes)."""
    db, homes = new_game(tmp_path)
    host = H.Host(db, keys.load_identity(homes["referee"], "referee", None))
    fh = FolderHost(host, tmp_path / "shared", lambda line: None)
    seats = {s: FolderSeat.open(tmp_path / "shared", keys.load_identity(homes[s], s, None), homes[s]) for s in SEATS}
    for seat in seats.values():
        seat.join()
    fh.step()
    return host, fh, seats, homes


def test_a_seat_opens_the_newest_packet_again_only_when_its_file_changed(tmp_path: Path) -> None:
    """A bot asks for the latest packet at every poll: the same bytes are not verified and
    unsealed again, but a file that changed is read anew (a forgery in its place is skipped)."""
    host, fh, seats, homes = _joined(tmp_path)
    first = seats["ann"].latest()
    assert first is not None and first.doc.seq == 1 and seats["ann"].latest() is first
    mover = seats[first.doc.to_move]
    mover.move(mover.latest(), str(legal_moves(mover.latest().view)[0]))
    fh.step()
    second = seats["ann"].latest()
    assert second is not None and second.doc.seq == 2 and seats["ann"].skipped == []
    path = dict(fh.folder.packets(None))[2]
    path.write_bytes(path.read_bytes()[:400])  # the same name, other bytes
    again = seats["ann"].latest()
    assert again is not None and again.doc.seq == 1 and len(seats["ann"].skipped) == 1
    host.close()


def test_a_seat_verifies_a_new_packet_and_its_invitation_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a new packet checks two signatures, the packet's and the invitation's (the
    trusted anchor naming the host's key), each once: a bot opens every packet of its game.
    (Keeping the packet read the invitation and checked its signature a second time.)"""
    from pbem.protocol import documents

    host, fh, seats, homes = _joined(tmp_path)
    checked: list[str] = []
    real = documents.verify
    monkeypatch.setattr(documents, "verify", lambda pub, data, sig: (checked.append(pub.fingerprint()), real(pub, data, sig)))
    first = seats["ann"].latest()
    assert first is not None and first.doc.seq == 1
    host_key = keys.load_identity(homes["referee"], "referee", None).public.fingerprint()
    assert checked == [host_key, host_key], checked  # the packet, the invitation
    assert (homes["ann"] / "games" / first.packet.game / "packets" / "packet-000001.pbem").read_text() == first.packet.armored()
    host.close()


# --- real processes: two hosts and three bots play a whole game through one folder ------------




@pytest.mark.slow
def test_two_hosts_and_three_bots_play_a_whole_game_through_one_folder(tmp_path: Path, here) -> None:
    db, folder, homes = cli_game(tmp_path, here=here)  # the set-up is not the point: the processes after it
    started = time.monotonic()
    hosts = [start_host(db, folder, homes["referee"], tmp_path / f"host-{i}.log") for i in (1, 2)]
    bots = start_bots(folder, homes, tmp_path)
    gf = GameFolder.open(folder)

    # meanwhile a sync tool plays up: conflict copies and resurrected duplicates of
    # processed moves keep appearing in the inbox
    stop = threading.Event()
    injected: list[str] = []

    def meddle() -> None:
        n = 0
        while not stop.is_set():
            done = sorted(p for p in gf.done_dir.glob("*.pbem") if "conflict" not in p.name)
            if done:
                src = done[n % len(done)]
                name = (f"{src.stem} (conflicted copy {n}).pbem" if n % 2
                        else f"{src.stem}.sync-conflict-20240101-{n:06d}-ABC.pbem")
                try:  # like a sync tool: a hidden temp file, renamed into place
                    shutil.copy(src, gf.inbox_dir / f".{name}.tmp")
                    os.replace(gf.inbox_dir / f".{name}.tmp", gf.inbox_dir / name)
                    injected.append(name)
                except FileNotFoundError:
                    pass
                n += 1
            stop.wait(0.15)

    t = threading.Thread(target=meddle, daemon=True)
    t.start()
    try:
        wait_all([*hosts, *bots.values()], timeout=150)
    finally:
        stop.set()
        t.join()
    wall = time.monotonic() - started
    logs = {p.name: p.read_text() for p in tmp_path.glob("*.log")}
    assert all(p.returncode == 0 for p in [*hosts, *bots.values()]), logs

    st = check_game(db, homes["referee"])
    moves = sum(len(read_blocks(a)[0].doc.moves) for a in H.Host(db).archives().values())
    # both hosts worked, yet every move was applied once: duplicates were recognised as such
    host_logs = logs["host-1.log"] + logs["host-2.log"]
    assert host_logs.count("applied ") == moves
    assert "game t-" in host_logs and "is over" in logs["host-1.log"] and "is over" in logs["host-2.log"]
    assert injected and "nothing changed" in host_logs
    assert not (gf.inbox_dir / "rejected").exists() or not list((gf.inbox_dir / "rejected").iterdir())
    for s in SEATS:
        assert "game over" in logs[f"bot-{s}.log"]
    # every packet is published once, archives too
    assert [seq for seq, _ in gf.packets(None)] == list(range(1, st["seq"] + 1))
    assert len(list(gf.archive_dir.iterdir())) == 3
    print(f"\n3-round game through a folder: {moves} moves, {st['seq']} packets, {wall:.1f}s wall, "
          f"{moves / wall:.1f} moves/s, {len(injected)} injected copies")

"""The automatic host: refusals go aside and never stop it, a crash loses nothing.

Real key files, a real SQLite file, a real folder; the kill test runs the host as real processes
(the bots in threads of this process) and SIGKILLs it mid-game.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from cli_games import bots_here, cli_game, start_host
from folder_games import SEATS, check_game, started_game
from on_disk import sqlite_dump
from process_tools import stop_all, wait_all
from table_games import forged_move

from engine.rules import legal_moves
from pbem.auto.host_runner import FolderHost, run
from pbem.auto.seat_bot import FolderBot
from pbem.folder.layout import GameFolder
from pbem.host import referee as H
from pbem.protocol.documents import read_blocks
from pbem.seat import player as P


def test_refused_files_go_aside_and_the_host_carries_on(tmp_path: Path) -> None:
    db, host, fh, lines, seats, ids = started_game(tmp_path)
    gf: GameFolder = fh.folder
    sp = seats["ann"].latest()
    mover = sp.doc.to_move
    waiting = next(s for s in SEATS if s != mover)
    msp = seats[mover].latest()
    before = sqlite_dump(db)

    (gf.inbox_dir / "garbage.pbem").write_text("hello, not a packet\n")
    (gf.inbox_dir / "packet-by-mistake.pbem").write_bytes(host.packets()[-1][1].encode())
    # out of turn, properly signed and sealed by a seat that is not to move
    wsp = seats[waiting].latest()
    oot = forged_move(sp.packet.game, sp.doc.seq, sp.packet.hash, waiting, "discard " + wsp.part.hand[0],
                      ids["referee"].public, ids[waiting])
    gf.submit_move(waiting, sp.doc.seq, oot.armored().encode())
    # an illegal move by the mover, sealed and signed properly
    illegal = forged_move(sp.packet.game, sp.doc.seq, sp.packet.hash, mover, "play rockfall at 9,9",
                          ids["referee"].public, ids[mover])
    gf.submit_move(mover, sp.doc.seq, illegal.armored().encode())
    lines.clear()
    assert fh.step() is False
    assert sqlite_dump(db) == before
    rejected = sorted(p.name for p in (gf.inbox_dir / "rejected").iterdir() if p.suffix != ".why")
    assert len(rejected) == 4 and gf.inbox() == []
    for name in rejected:  # each with its reason beside it
        assert (gf.inbox_dir / "rejected" / f"{name}.why").read_text().startswith(f"rejected {name}")
    assert len([line for line in lines if line.startswith("rejected")]) == 4, lines
    assert any("not yours" in line or "it is" in line for line in lines)

    # the host goes on: the real move is applied
    seats[mover].move(msp, str(legal_moves(msp.view)[0]))
    lines.clear()
    fh.step()
    assert any(line.endswith("packet 2") and "applied" in line for line in lines), lines
    # a move answering the (now) old packet is stale: aside, with its reason
    gf.submit_move(mover, sp.doc.seq, illegal.armored().encode())
    lines.clear()
    fh.step()
    assert len(lines) == 1 and "rejected" in lines[0] and "packet 1" in lines[0]
    host.close()


def test_a_wake_ends_once_the_file_is_in_not_after_a_fixed_wait(tmp_path: Path) -> None:
    """A game through a folder waits on two wakes a packet (the seat's for the packet, the
    host's for the move): a wake that slept a fixed SETTLE after each file added that much to
    every packet. Twenty files, each waited for: each wake ends once no other file came for
    QUIET, far under SETTLE."""
    from pbem.watch import SETTLE, Doorbell

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    bell = Doorbell([inbox]).arm()
    assert bell.arrivals is not None, "inotify is there on Linux: without it this test proves nothing"
    took = 0.0
    try:
        for i in range(20):
            (inbox / f"move-{i}.pbem").write_text("a move")
            started = time.monotonic()
            assert bell.wait(10.0)
            took += time.monotonic() - started
    finally:
        bell.close()
    assert took < 20 * SETTLE, took


def test_a_file_still_being_written_is_given_time(tmp_path: Path) -> None:
    db, host, fh, lines, seats, ids = started_game(tmp_path)
    fh.grace = 30.0
    half = fh.folder.inbox_dir / "copying.pbem"
    half.write_text("-----BEGIN PBEM MOVE-----\nAAAA")
    lines.clear()
    fh.step()
    assert half.exists() and lines == []
    old = time.time() - 60
    os.utime(half, (old, old))
    fh.step()
    assert not half.exists() and (fh.folder.inbox_dir / "rejected" / "copying.pbem").exists()
    host.close()


def test_an_unexpected_error_keeps_the_file_and_the_loop(tmp_path: Path, monkeypatch) -> None:
    db, host, fh, lines, seats, ids = started_game(tmp_path)
    sp = seats["ann"].latest()
    mover = sp.doc.to_move
    msp = seats[mover].latest()
    seats[mover].move(msp, str(legal_moves(msp.view)[0]))
    real = host.accept
    calls = {"n": 0}

    def flaky(block):
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.OperationalError("database is locked")
        return real(block)

    monkeypatch.setattr(host, "accept", flaky)
    lines.clear()
    fh.step()
    assert "will retry" in lines[0] and len(fh.folder.inbox()) == 1
    fh.step()
    assert any("applied" in line for line in lines) and fh.folder.inbox() == []

    # and a step that blows up is logged by the loop, which goes on
    class Flaky:
        n = 0

        def step(self) -> bool:
            self.n += 1
            if self.n == 1:
                raise OSError("disk hiccup")
            return self.n >= 3

    said: list[str] = []
    run(Flaky(), poll=0.0, log=said.append)
    assert len(said) == 1 and "disk hiccup" in said[0]
    host.close()


def test_a_packet_committed_but_not_published_is_published_on_restart(tmp_path: Path) -> None:
    db, host, fh, lines, seats, ids = started_game(tmp_path)
    sp = seats["ann"].latest()
    mover = sp.doc.to_move
    msp = seats[mover].latest()
    mv = P.make_move(msp, str(legal_moves(msp.view)[0]))
    # the host died right after committing: the DB has packet 2, the folder does not
    assert host.accept(mv).seq == 2
    assert [s for s, _ in fh.folder.packets(None)] == [1]
    lines2: list[str] = []
    fh2 = FolderHost(host, tmp_path / "shared", lines2.append)
    assert [s for s, _ in fh2.folder.packets(None)] == [1, 2]
    assert lines2 == ["published packets 2 (not yet in the folder)"]
    # the seats go on from packet 2; the bot plays through the same files
    nxt = seats["ann"].latest().doc.to_move
    bot = FolderBot(tmp_path / "shared", ids[nxt], seats[nxt].home, "random", 7, lines2.append)
    bot.step()
    fh2.step()
    assert host.status()["seq"] == 3
    host.close()


@pytest.mark.slow
def test_host_killed_mid_game_and_restarted_finishes_the_game(tmp_path: Path, here) -> None:
    db, folder, homes = cli_game(tmp_path, here=here)  # the set-up is not the point: the processes after it
    log = tmp_path / "host.log"
    # the host's processes are the point: the players' bots play in threads of this process
    # (cli_games.BotHere; a bot's process costs its start-up more CPU than its share of the game,
    # and `pbem bot run` runs as processes in the last test here)
    bots = bots_here(folder, homes, tmp_path)
    gf = GameFolder.open(folder)
    kills = starts = 0
    try:
        for kill_at in (5, 40, 75):  # SIGKILL whenever the folder reaches these packets
            host = start_host(db, folder, homes["referee"], log)
            starts += 1
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and host.poll() is None:
                if any(seq >= kill_at for seq, _ in gf.packets(None)[-1:]):
                    break
                time.sleep(0.01)
            if host.poll() is not None:
                break  # the game ended first
            host.send_signal(signal.SIGKILL)
            host.wait()
            kills += 1
        host = start_host(db, folder, homes["referee"], log)  # again, also when the game ended before a kill
        starts += 1
        wait_all([host, *bots.values()], timeout=150)
    finally:
        stop_all([host, *bots.values()])
    text = log.read_text()
    assert kills >= 2, text
    assert host.returncode == 0 and all(b.returncode == 0 for b in bots.values())
    st = check_game(db, homes["referee"])
    # every move was applied once and every packet is in the folder once
    moves = sum(len(read_blocks(a)[0].doc.moves) for a in H.Host(db).archives().values())
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM moves").fetchone()[0] == moves
    con.close()
    assert [seq for seq, _ in gf.packets(None)] == list(range(1, st["seq"] + 1))
    # a kill during a write may leave a hidden temp file; readers skip dot files
    assert len([p for p in gf.archive_dir.iterdir() if not p.name.startswith(".")]) == 3
    rejected = gf.inbox_dir / "rejected"
    assert not rejected.exists() or not list(rejected.iterdir()), text
    assert text.count("serving ") == starts  # each host started said so once


def test_a_move_for_another_game_is_rejected_with_a_line(tmp_path: Path) -> None:
    """It does not wait in the inbox for ever (its packet number is ahead of ours)."""
    db, host, fh, lines, seats, ids = started_game(tmp_path)
    gf: GameFolder = fh.folder
    sp = seats["ann"].latest()
    mover = sp.doc.to_move
    text = "discard " + seats[mover].latest().part.hand[0]
    foreign = forged_move("another-game", 99, sp.packet.hash, mover, text, ids["referee"].public, ids[mover])
    (gf.inbox_dir / "stray.pbem").write_text(foreign.armored())
    before = sqlite_dump(db)
    lines.clear()
    fh.step()
    assert sqlite_dump(db) == before and gf.inbox() == []
    assert sorted(p.name for p in (gf.inbox_dir / "rejected").iterdir()) == ["stray.pbem", "stray.pbem.why"]
    assert any(line.startswith("rejected stray.pbem") and "another-game" in line for line in lines), lines


def test_a_move_is_published_once_in_its_pass(tmp_path: Path) -> None:
    """A pass that applies a move asks the store what is left to publish at its start and once
    after the move (its packet out before the inbox is tidied); not a third time at its end, which
    only a pass that took something without a packet (a line of talk) or made a notice needs.
    Each ask is one statement (the channel's three marks and the newest packet, notice and line
    of talk), and marking the packet delivered one more: 3 statements on the deliveries table
    (a third ask would make 4)."""
    from sqlalchemy import event

    _, host, fh, lines, seats, _ = started_game(tmp_path)
    mover = seats["ann"].latest().doc.to_move
    msp = seats[mover].latest()
    seats[mover].move(msp, str(legal_moves(msp.view)[0]))
    asked: list[str] = []
    event.listen(host.store.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: asked.append(statement) if "deliveries" in statement else None)
    fh.step()
    assert any(f"applied {mover}'s move" in line for line in lines), lines
    assert len(GameFolder.open(tmp_path / "shared").packets(None)) == 2
    assert len(asked) == 3 and asked[2].startswith("INSERT INTO deliveries"), asked


def test_a_sigterm_during_a_finaliser_stops_the_watch_loop_after_the_step_and_prints_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM can come while Python runs a finaliser mid-step (a database connection
    collected). Raised there, it would be printed as a traceback (a daemon's log said
    "Exception during reset or similar") and dropped; so during a step it is only noted: the
    loop stops once the step is done, says so, and nothing is printed from inside the finaliser."""
    import sys

    from pbem.auto import polling

    dropped: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)

    class Collected:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100_000):  # the handler runs here, inside the finaliser
                pass

    class Stepper:
        steps = 0

        def step(self) -> bool:
            self.steps += 1
            if self.steps == 1:
                Collected()
            return self.steps >= 30

    lines: list[str] = []
    stepper = Stepper()
    polling.run(stepper, poll=0.001, once=False, log=lines.append)
    assert stepper.steps == 1 and any("stopped (SIGTERM)" in line for line in lines), (stepper.steps, lines)
    assert not dropped, dropped


def test_a_sigterm_while_the_loop_waits_ends_the_wait_at_once() -> None:
    """Between steps the loop waits (here a poll of a minute); a SIGTERM ends the wait at once."""
    import threading
    import time

    from pbem.auto import polling

    class Stepper:
        def step(self) -> bool:
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
            return False

    lines: list[str] = []
    started = time.monotonic()
    polling.run(Stepper(), poll=60, once=False, log=lines.append)
    assert time.monotonic() - started < 30 and any("stopped (SIGTERM)" in line for line in lines), lines


@pytest.mark.slow  # two bot processes started and stopped: 3-6 s
def test_a_bot_answers_a_packet_as_it_comes_not_at_its_next_look(tmp_path: Path) -> None:
    """`pbem bot run --folder` looks at the folder only once a minute here (--poll 60), yet answers
    a packet as it is published: the kernel says the folder's packets changed (pbem.watch)."""
    import subprocess

    from processes import PBEM, cli_env, start

    _, host, fh, _, seats, _ = started_game(tmp_path)
    sp = seats["ann"].latest()
    assert sp is not None
    mover = sp.doc.to_move
    homes = {s: seats[s].home for s in SEATS}
    logs = {s: tmp_path / f"bot-{s}.log" for s in SEATS if s != mover}
    bots = [start([*PBEM, "bot", "run", "--as", s, "--folder", tmp_path / "shared", "--bot", "random", "--poll", "60"],
                  env=cli_env(homes[s]), stdout=log.open("wb"), stderr=subprocess.STDOUT) for s, log in logs.items()]
    try:
        deadline = time.monotonic() + 60
        while not all("playing seat" in log.read_text() for log in logs.values()):  # each had its first look
            assert time.monotonic() < deadline, [log.read_text() for log in logs.values()]
            time.sleep(0.05)
        time.sleep(0.3)  # and waits now
        msp = seats[mover].latest()
        assert msp is not None
        seats[mover].move(msp, str(legal_moves(msp.view)[0]))
        fh.step()  # packet 2, for one of the bots
        nxt = seats["ann"].latest()
        assert nxt is not None and nxt.doc.seq == 2 and nxt.doc.to_move in logs
        published = time.monotonic()
        inbox = tmp_path / "shared" / "inbox"
        while not any(p.name.startswith(f"{nxt.doc.to_move}-000002-") for p in inbox.iterdir()):
            assert time.monotonic() - published < 15, logs[nxt.doc.to_move].read_text()
            time.sleep(0.05)
    finally:
        for b in bots:
            b.terminate()
            b.wait(30)
        host.close()

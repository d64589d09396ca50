"""Two `pbem host run --all` daemons on one store share its games (pbem/host/leases.py).

Real daemon processes, real folders, bot seats (in threads of this process); a real SQLite file
and a real PostgreSQL database. Each daemon serves its share and reads only those games' inboxes
(no move is seen by both: no "already applied"); one killed with SIGKILL has its game served by
the other within a lease period.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_games import BotHere, bots_here
from processes import PBEM, cli_env, start
from sqlalchemy import create_engine, select
from test_club import SEATS, club

from engine.rules import legal_moves
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.host.tables import games as games_table
from pbem.host.tables import moves
from pbem.seat import keys

LEASE = 2.0  # seconds


def _wait(what, seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, why
        time.sleep(0.05)


def _applied_in(log: str) -> set[str]:
    """The games whose moves a daemon's log says it applied."""
    return set(re.findall(r"host (\w+): \S+: applied ", log))


@pytest.mark.slow
def test_two_daemons_share_the_games_and_take_over_a_killed_ones(tmp_path: Path, store_url: str) -> None:
    games = ["oak", "elm"]
    homes = club(tmp_path, games, store_url)
    logs = [tmp_path / "daemon-a.log", tmp_path / "daemon-b.log"]
    text = lambda i: logs[i].read_text()  # noqa: E731
    # --poll is only the look at every game: a move's file wakes its daemon at once (pbem.watch),
    # and the leases are renewed and taken over on rounds of their own (LEASE)
    daemons = [start([*PBEM, "host", "run", "--all", "--store", store_url, "--poll", "0.5",
                      "--lease", str(LEASE)], env=cli_env(homes["referee"]), stdout=log.open("ab"),
                     stderr=subprocess.STDOUT) for log in logs]
    bots: list[BotHere] = []  # the players, in threads of this process: the daemons are the point
    try:
        share = "holding 1 of 2 active games; 2 daemon(s) share the store"
        _wait(lambda: all(share in text(i) for i in (0, 1)), 30, "the daemons did not share the games")
        for g in games:
            # paced, so the killed daemon's game is still on when the other takes it over
            bots += bots_here(tmp_path / "shared" / g, homes, tmp_path / "shared" / g, pace=0.05).values()
        folders = {g: GameFolder.open(tmp_path / "shared" / g) for g in games}
        _wait(lambda: all(len(f.packets(None)) >= 5 for f in folders.values()), 60, "the games did not move")
        seen = [_applied_in(text(i)) for i in (0, 1)]
        # each daemon applied the moves of one game, a different one; no move reached both
        assert len(seen[0]) == len(seen[1]) == 1 and seen[0] != seen[1], seen
        assert "already applied" not in text(0) + text(1)
        (victim_game,) = seen[1]
        served = f"host {victim_game}: serving "
        before = text(0).count(served)
        daemons[1].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        daemons[1].wait()
        _wait(lambda: text(0).count(served) > before, 30, "the killed daemon's game was not taken over")
        taken = time.monotonic() - killed
        assert taken < LEASE + 1.0, taken  # within a lease period (and a second of this busy machine)
        packets = len(folders[victim_game].packets(None))
        _wait(lambda: len(folders[victim_game].packets(None)) >= packets + 1, 30, "the game stopped after the takeover")
        assert _applied_in(text(0)) == set(games)
    finally:
        for p in [*daemons, *bots]:
            if p.poll() is None:
                p.terminate()
                p.wait(10)
    assert text(0).count("already applied") <= 1  # the file of a move the victim applied, killed before it moved it
    engine = create_engine(store_url)
    with engine.connect() as c:  # every move once: per game and round, moves number 1..n
        rows = c.execute(select(games_table.c.name, moves.c.round_no, moves.c.n)
                         .join(moves, moves.c.game_id == games_table.c.id)).all()
    engine.dispose()
    numbers: dict[tuple[str, int], list[int]] = {}
    for name, round_no, n in rows:
        numbers.setdefault((name, round_no), []).append(n)
    assert {k[0] for k in numbers} == set(games)
    assert all(sorted(ns) == list(range(1, len(ns) + 1)) for ns in numbers.values()), numbers


def _one_move(tmp_path: Path, homes: dict[str, Path], ids: dict, game: str, then: float) -> None:
    """The seat to move in `game` moves (the move written into its inbox as `pbem move` writes
    it); it must be applied within `then` seconds."""
    folder = GameFolder.open(tmp_path / "shared" / game)
    sp = FolderSeat.open(tmp_path / "shared" / game, ids["ann"], homes["ann"]).latest()
    assert sp is not None
    mover = FolderSeat.open(tmp_path / "shared" / game, ids[sp.doc.to_move], homes[sp.doc.to_move])
    msp = mover.latest()
    assert msp is not None
    sent = time.monotonic()
    mover.move(msp, str(legal_moves(msp.view)[0]))
    _wait(lambda: len(folder.packets(None)) > msp.doc.seq, 20, "the move waited for the next look")
    assert time.monotonic() - sent < then


def _dealt_with_a_slow_daemon(tmp_path: Path, games: list[str]) -> tuple[dict[str, Path], dict, subprocess.Popen]:
    """`games` dealt in one store, and one daemon that looks at every game only once a minute
    (--poll 60, leases renewed as seldom): only the kernel's word wakes it sooner."""
    homes = club(tmp_path, games)  # the daemon is the point, not the commands that make games
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    for g in games:
        for s in SEATS:
            FolderSeat.open(tmp_path / "shared" / g, ids[s], homes[s]).join()
    log = tmp_path / "daemon.log"
    daemon = subprocess.Popen([*PBEM, "host", "run", "--all", "--poll", "60", "--lease", "300"],
                              env=cli_env(homes["referee"]), cwd=tmp_path, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    folders = [GameFolder.open(tmp_path / "shared" / g) for g in games]
    _wait(lambda: all(len(f.packets(None)) == 1 for f in folders), 60, "the games were not dealt")
    return homes, ids, daemon


@pytest.mark.slow  # five `pbem` processes, 4-9 s
def test_a_move_is_taken_as_it_arrives_not_at_the_next_look(tmp_path: Path) -> None:
    """A move dropped into one game's inbox is applied at once, not at the next look a minute
    later: the kernel says which served inbox had a file arrive (pbem.watch.arrivals), and
    that game alone is stepped."""
    homes, ids, daemon = _dealt_with_a_slow_daemon(tmp_path, ["oak", "elm"])
    try:
        for _ in range(2):  # two moves in a row, each as it arrives
            _one_move(tmp_path, homes, ids, "oak", 10)
        assert len(GameFolder.open(tmp_path / "shared" / "elm").packets(None)) == 1
    finally:
        daemon.terminate()
        daemon.wait(30)


@pytest.mark.slow  # five `pbem` processes, 4-9 s
def test_an_inbox_deleted_and_made_again_is_watched_again(tmp_path: Path) -> None:
    """The inbox of a served game is deleted (a sync tool, a person tidying up) and made again
    by the next seat that moves: the daemon watches the new folder as soon as it is there, and
    the move in it is applied at once, not at the next look a minute later. Again with the
    folder moved away and a new one made at once, and with the old one moved back."""
    homes, ids, daemon = _dealt_with_a_slow_daemon(tmp_path, ["oak"])
    inbox = GameFolder.open(tmp_path / "shared" / "oak").inbox_dir
    try:
        shutil.rmtree(inbox)
        time.sleep(0.5)  # the daemon has read that it is gone
        _one_move(tmp_path, homes, ids, "oak", 10)  # `pbem move` makes the inbox again
        inbox.rename(inbox.with_name("old-inbox"))
        inbox.mkdir()  # at once: maybe before the daemon read that the first one went
        _one_move(tmp_path, homes, ids, "oak", 10)
        shutil.rmtree(inbox)
        inbox.with_name("old-inbox").rename(inbox)  # a folder moved in under the name
        _one_move(tmp_path, homes, ids, "oak", 10)
    finally:
        daemon.terminate()
        daemon.wait(30)
    assert "rejected" not in (tmp_path / "daemon.log").read_text()


def test_a_lease_goes_with_all_only(tmp_path: Path, here) -> None:
    r = subprocess.run([*PBEM, "host", "run", "oak", "--lease", "5"], env=cli_env(tmp_path / "home"), cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("error: --lease goes with --all"), r.stderr
    r = here("host", "run", "--all", "--lease", "0.1", home=tmp_path / "home", cwd=tmp_path)  # the command's entry, here
    assert r.returncode == 2 and "--lease" in r.stderr and not (tmp_path / "saves").exists(), r.stderr


def test_game_new_says_in_full_where_the_invitation_of_each_store_is(tmp_path: Path, store_url: str, here) -> None:
    """A SQLite store keeps its games' files beside it; a database server's go to saves/ of the
    folder the command runs in, and `game new` says so, in full, whatever folder that is (a
    process of its own for the SQLite store, the command line's entry in this process for the
    server's)."""
    from pbem.seat import keys

    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    elsewhere.mkdir()
    keys.create_identity(home, "referee", None)
    seats = [a for s in ("ann", "bob", "cat")
             for a in ("--player", f"{s}={keys.create_identity(tmp_path / s, s, None).public.encode()}")]
    args = ["game", "new", "oak", "--host", "referee", *seats, "--store", store_url]
    if store_url.startswith("sqlite"):
        r = subprocess.run([*PBEM, *args], env=cli_env(home), cwd=elsewhere, capture_output=True, text=True, timeout=60)
    else:
        r = here(*args, home=home, cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    said = Path(re.search(r"^invitation: (.+)$", r.stdout, re.M).group(1))  # type: ignore[union-attr]
    assert said.is_absolute() and said.name == "invitation.pbem" and "BEGIN PBEM" in said.read_text()
    if store_url.startswith("sqlite"):  # beside the store, not in the folder the command ran in
        assert said == tmp_path / "oak" / "out" / "invitation.pbem" and not (elsewhere / "saves").exists()
        assert "database server" not in r.stderr
    else:
        assert said == elsewhere / "saves" / "oak" / "out" / "invitation.pbem"
        assert f"the files of game oak (out/, mail/) are kept in {elsewhere / 'saves' / 'oak'}" in r.stderr

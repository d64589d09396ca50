"""Trustless games in a club's store, SQLite and PostgreSQL (tests/pg_server.py): a trustless
game made with the club's --store is kept in the store (no file of its own), and `pbem host run
--all --store URL` serves it with the store's classic games in one pass; `pbem games` lists
both, and two daemons share the store's games and serve a whole trustless game to its end (on
PostgreSQL a classic one too). Real processes (the commands on PostgreSQL; on SQLite the same
code runs in this process), a real PostgreSQL server."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_games import bots_here
from process_tools import wait_all
from processes import PBEM, cli_env
from test_club import SEATS, club, run

from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.protocol.documents import RelayPacket, read_blocks
from pbem.seat import keys


def _commands(root: Path, store_url: str, here) -> Callable[..., subprocess.CompletedProcess]:
    """`pbem ARGS` for a home, in `root`: real processes on PostgreSQL, the club's store; through
    the command line's entry in this process on SQLite (the same code on a file)."""
    def cli(home: Path, *args: object) -> subprocess.CompletedProcess:
        if store_url.startswith("postgresql"):
            return run(root, home, *args)
        return here(*args, home=home, cwd=root, ok=True)
    return cli


@pytest.mark.slow
def test_host_run_all_serves_a_trustless_game_of_each_kind_of_store(tmp_path: Path, store_url: str, here) -> None:
    """(The commands as real processes on PostgreSQL, in this process on SQLite: _commands.)"""
    cli = _commands(tmp_path, store_url, here)
    # the classic game by the library (tests/test_club.py makes such games by the commands)
    homes = club(tmp_path, ["oak"], store=store_url)
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}")]
    cli(homes["referee"], "game", "new", "duo", "--host", "referee", *players, "--trustless",
        "--store", store_url)
    assert not (tmp_path / "duo.db").exists() and not (tmp_path / "saves" / "duo.db").exists()
    cli(homes["referee"], "folder", "init", "duo", tmp_path / "shared" / "duo", "--store", store_url)
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    for g in ("oak", "duo"):
        for s in SEATS:
            FolderSeat.open(tmp_path / "shared" / g, ids[s], homes[s]).join()
    out = cli(homes["referee"], "host", "run", "--all", "--once", "--store", store_url).stdout
    for g in ("oak", "duo"):
        assert [seq for seq, _ in GameFolder.open(tmp_path / "shared" / g).packets(None)] == [1], out
    duo = read_blocks(GameFolder.open(tmp_path / "shared" / "duo").packets(None)[0][1].read_text())[0].doc
    assert isinstance(duo, RelayPacket) and duo.waiting is not None and duo.waiting.step == "shuffle"
    listed = {g["name"]: g for g in json.loads(cli(homes["referee"], "games", "--json", "--store",
                                                   store_url).stdout)["hosting"]}
    assert sorted(listed) == ["duo", "oak"], listed
    assert listed["duo"]["trustless"] and listed["duo"]["seq"] == 1 and not listed["oak"].get("trustless")


def _daemon(root: Path, home: Path, store_url: str, n: int) -> subprocess.Popen:
    return subprocess.Popen([*PBEM, "host", "run", "--all", "--store", store_url, "--poll", "0.5", "--lease", "4"],
                            env=cli_env(home), cwd=root, stdout=(root / f"daemon-{n}.log").open("ab"),
                            stderr=subprocess.STDOUT)


@pytest.mark.slow
@pytest.mark.game
def test_a_whole_trustless_game_and_a_classic_one_served_from_the_store_by_two_daemons(
        tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch, here) -> None:
    """A trustless game and a classic one in one store (SQLite or PostgreSQL), served by two `pbem
    host run --all` sharing the store's games by their leases. On PostgreSQL, the club's store,
    both games are played to their end by bots over their folders; then the trustless game is
    audited from the store, every round, replayed as one seat saw it, and `pbem games` says both
    are over: by real processes. On SQLite the store's own part runs the same way: the two
    daemons share the two games by its leases, serve the trustless game to its end and keep its
    chain, and `pbem games` says it is over (through the command line's entry in this process).
    The classic game there waits for its joins (two daemons killed mid-game on SQLite are
    tests/test_club.py's kill test, a classic game served to its end by one host killed again and
    again on SQLite tests/test_autohost.py's), and the audit and replay read the chain by the same
    code from either store. The games are made in this process (by the library for the classic
    one, by the same commands for the trustless one): the test above makes them by real
    processes. The daemons are this test's point: the bots play in threads of this process
    (cli_games.BotHere); tests/test_trustless_folder.py and others run trustless `pbem bot run`
    processes."""
    monkeypatch.chdir(tmp_path)  # as the daemons run: a database server's games keep their files in saves/ here

    server = store_url.startswith("postgresql")
    cli = _commands(tmp_path, store_url, here)

    homes = club(tmp_path, ["oak"], store=store_url)
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}")]
    here("game", "new", "duo", "--host", "referee", *players, "--trustless", "--store", store_url, home=homes["referee"], ok=True)
    here("folder", "init", "duo", tmp_path / "shared" / "duo", "--store", store_url, home=homes["referee"], ok=True)
    started = time.monotonic()
    daemons = [_daemon(tmp_path, homes["referee"], store_url, n) for n in (1, 2)]
    shared = "holding 1 of 2 active games; 2 daemon(s) share the store"
    try:
        until = time.monotonic() + 60  # the two games shared out by the leases before anyone joins
        while time.monotonic() < until and not all(shared in (tmp_path / f"daemon-{n}.log").read_text() for n in (1, 2)):
            time.sleep(0.2)
        played = ("oak", "duo") if server else ("duo",)
        for g in played:
            (tmp_path / f"bots-{g}").mkdir()
        bots = [p for g in played for p in
                bots_here(tmp_path / "shared" / g, homes, tmp_path / f"bots-{g}", seats=list(SEATS), kind="random",
                          poll=1).values()]
        wait_all(bots, timeout=1200)
        wall = time.monotonic() - started
    finally:
        for d in daemons:
            d.terminate()
        for d in daemons:
            d.wait(timeout=60)
    logs = {p.name: p.read_text() for p in tmp_path.rglob("*.log")}
    assert all(b.returncode == 0 for b in bots), {k: v[-2000:] for k, v in logs.items()}
    daemon_logs = [logs["daemon-1.log"], logs["daemon-2.log"]]
    assert not any("Traceback" in log for log in daemon_logs), daemon_logs
    # the two daemons shared the two games by the store's leases, each served by one at a time
    assert all(shared in log for log in daemon_logs), daemon_logs
    listed = {g["name"]: g for g in json.loads(cli(homes["referee"], "games", "--json", "--store",
                                                   store_url).stdout)["hosting"]}
    assert listed["duo"]["trustless"] and listed["duo"]["status"] == "over"
    assert listed["oak"]["status"] == ("over" if server else "joining"), listed["oak"]
    kind = store_url.split(":", 1)[0]
    print(f"\ntrustless 3-round game{' and a classic one' if server else ''}, two daemons on {kind}: "
          f"{listed['duo']['seq']} packets, {wall:.0f} s wall")
    if not server:
        return
    audit = cli(homes["referee"], "audit", store_url, "--game", "duo", "--json")
    report = json.loads(audit.stdout)
    assert report["ok"] and report["step"] == "over" and report["packets"] == listed["duo"]["seq"], report
    assert [r["round"] for r in report["rounds"]] == [1, 2, 3]
    # and replayed from the store as one seat saw it, as any game's round
    page = tmp_path / "duo-r2.html"
    said = cli(homes["ann"], "replay", store_url, "--game", "duo", "--round", "2", "--as", "ann", "--html", page).stdout
    assert "round 2 of game duo-" in said and "as ann saw it then" in said and page.stat().st_size > 10_000, said

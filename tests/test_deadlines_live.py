"""Deadlines in real time: `pbem host run --folder` with seconds-long deadlines, three bots and a
fourth seat that joins and then never answers. The game finishes on its
own under `--on-timeout bot --bot-turns 20` (the search bot plays the silent seat within the
budget its packets name: a small one, as the point here is the clock, not the bot's play; the
default budget is tests/test_bot_budget.py's), the folder holds the reminders and late notices,
and `pbem audit` passes every round (it plays the search bot again for each of those moves and
finds the same).
A real host process, a real folder, a real store (a SQLite file, and a database of a real
PostgreSQL server); the keys are made in this process, the three bots play in threads of it
(cli_games.BotHere: the point is the host's clock, and a bot's process cost its start-up
more than its share of the game), and the set-up commands run in this process (the host's
`pbem game new`, `folder init` and a seat's `pbem turn` run as processes in many other files).
The audit is a process of its own on the SQLite store and runs in this process on the
PostgreSQL one: it reads the folder, not the store. Each of the silent seat's missed deadlines
is waited out (2 s, then 0.5 s of grace): short for the test's wall, yet ten times what a bot
takes to answer.
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from cli_games import bots_here, start_imap
from folder_games import keys_here
from mailservers import MailServers
from process_tools import stop_all, wait_all
from processes import PBEM, cli_env, pbem, start
from test_turn import dealt_mail_game

from pbem.folder.layout import GameFolder
from pbem.host import referee as H
from pbem.protocol.documents import read_blocks

SEATS = ["ann", "bob", "cat", "dan"]
BOTS = ["ann", "bob", "cat"]
BUDGET = 20  # the search bot's simulated turns a move for the silent seat


@pytest.mark.slow
def test_a_silent_seat_in_real_time_is_reminded_timed_out_and_played_for(tmp_path: Path, store_url: str, here) -> None:
    homes = {n: tmp_path / f"home-{n}" for n in ["referee", *SEATS]}
    pubs = keys_here(homes)
    db, folder = store_url, tmp_path / "shared"
    players = [a for s in SEATS for a in ("--player", f"{s}={pubs[s]}")]
    new = here("game", "new", "t", "--host", "referee", *players, "--store", db, "--deadline", "2s", "--grace", "0.5s",
              "--on-timeout", "bot", "--bot-turns", str(BUDGET), "--absent-after", "2", home=homes["referee"], cwd=tmp_path)
    assert new.returncode == 0, new.stderr
    here("folder", "init", "t", folder, "--store", db, home=homes["referee"], ok=True)
    joined = here("turn", folder, "--as", "dan", home=homes["dan"])
    assert "as seat dan" in joined.stdout, joined.stderr  # and dan is never heard of again
    log = tmp_path / "host.log"
    # the folder is remembered; a move wakes the host at once, and --poll is its look at the clock
    host = start([*PBEM, "host", "run", "t", "--store", db, "--poll", "0.2"],
                 env=cli_env(homes["referee"]), stdout=log.open("ab"), stderr=subprocess.STDOUT)
    bots = bots_here(folder, homes, tmp_path, BOTS)
    try:
        wait_all([host, *bots.values()], timeout=240)
    finally:
        stop_all([host, *bots.values()])
    text = log.read_text()
    assert host.returncode == 0, text[-2000:]
    assert "is over after packet" in text

    # the folder holds the host's signed notices: reminded, late twice, then absent
    gf = GameFolder.open(folder)
    notices = [read_blocks(p.read_text())[0] for _, p in gf.notices()]
    about_dan = Counter(n.doc.notice for n in notices if n.doc.seat == "dan")
    assert about_dan["reminder"] >= 1 and about_dan["late"] >= 2 and about_dan["absent"] >= 1, about_dan
    assert "notice: reminder: dan to move" in text and "notice: dan is late" in text

    # every move of dan's seat was made by the host, and the audit passes every round
    with H.Host(db) as done:
        archives = done.archives()
    assert sorted(archives) == [1, 2, 3]
    for armored in archives.values():
        archive = [b for b in read_blocks(armored) if b.kind == "archive"][0]
        dan = [m for m in archive.doc.moves if m.seat == "dan"]
        assert dan and all(m.by == "host" for m in dan)
    if db.startswith("sqlite"):  # the audit as a process once; it reads the folder, not the store
        audit = pbem("audit", folder, home=homes["ann"], timeout=600)
    else:
        audit = here("audit", folder, home=homes["ann"])
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert audit.stdout.count("audit ok") == 3
    assert "moves made by the host for a silent seat" in audit.stdout

    # the packets that waited for dan name the game's budget: the audit above played the
    # search bot again within it from dan's view at each of them and found the host's own move
    waited = [read_blocks(p.read_text())[0].doc for _, p in gf.packets(None)]
    budgets = {d.deadline.bot_turns for d in waited if d.deadline is not None and d.deadline.seat == "dan"}
    assert budgets == {BUDGET}


@pytest.mark.slow
def test_a_host_idling_on_imap_wakes_for_its_reminder_not_for_mail(mail_servers: MailServers, tmp_path: Path,
                                                                   here) -> None:
    """`pbem host run` over IMAP waits for mail by IDLE, which a server may keep silent for
    minutes: the host idles only until the clock's next reminder, so the reminder goes out
    when it is due (here 8 s and 16 s after the clock starts), with no mail coming to wake it."""
    s = mail_servers
    db, homes, _ = dealt_mail_game(here, s, tmp_path)
    mover = H.Host(db).status()["to_move"]
    # The clock restarts: reminders at 8 s and 16 s (in this process: the host is the point). Both
    # later than a loaded machine takes to start a host: one that starts past both sends one.
    here("game", "config", "t", "--db", db, "--deadline", "160s", "--remind", "5%", "--remind", "10%",
         home=homes["host"], ok=True)
    started = time.monotonic()
    log = tmp_path / "host.log"
    host = start_imap(s, "host", ["host", "run", "t", "--db", str(db)], homes["host"], log)
    try:
        # Bounded well under IDLE's five-minute renewal, the thing this test would catch, and
        # far over the 16 s the reminders need: a loaded machine takes seconds to start a host.
        while time.monotonic() - started < 150 and log.read_text().count("notice: reminder") < 2:
            assert host.poll() is None, log.read_text()[-2000:]
            time.sleep(0.1)
        took = time.monotonic() - started
    finally:
        host.terminate()
        host.wait(30)
    text = log.read_text()
    assert text.count(f"notice: reminder: {mover} to move") == 2, text[-2000:]
    assert took < 150, (took, text[-2000:])  # each at its time, not at IDLE's five-minute renewal
    assert "late" not in text

"""A whole game by mail alone: the host and three bot seats, each a separate process with its
own mailbox on a real IMAP server (pymap), sending through a real SMTP server (aiosmtpd).
Midway the IMAP server is stopped and started again: nothing is lost or applied twice. The
keys and the game are made by the same commands in this process: the set-up is not the point."""

from __future__ import annotations

import mailbox
import time
from pathlib import Path

import pytest
from cli_games import imap_game, start_imap
from folder_games import SEATS, check_game
from mailservers import MailServers
from process_tools import wait_all

from pbem.host import referee as H
from pbem.protocol.documents import read_blocks


@pytest.mark.slow
@pytest.mark.game
def test_imap_whole_game_host_and_three_bots_survive_an_imap_restart(tmp_path: Path, mail_servers: MailServers, here):
    s = mail_servers
    db, homes = imap_game(tmp_path, s, here=here)
    started = time.monotonic()
    procs = [start_imap(s, "host", ["host", "run", "t", "--db", str(db), "--send"], homes["host"],
                        tmp_path / "host.log")]
    procs += [start_imap(s, p, ["bot", "run", "--as", p, "--seed", f"seed-{p}", "--to", s.address("host"), "--send",
                           "--smtp-server", "127.0.0.1", "--smtp-port", str(s.smtp_port), "--smtp-security", "none",
                           "--from", s.address(p)], homes[p], tmp_path / f"bot-{p}.log") for p in SEATS]
    # midway (round 2 under way), the IMAP server goes away for a while and comes back
    deadline = time.monotonic() + 400
    restarted = False
    with H.Host(db) as h:  # one reader for the whole watch (opening the store each time cost more than the look)
        while time.monotonic() < deadline and not restarted:
            if any(p.poll() is not None for p in procs):
                break
            if (h.status().get("round") or 0) >= 2:
                s.imap.restart(down=0.3)
                restarted = True
            time.sleep(0.2)
    wait_all(procs, timeout=900)  # about a minute on an idle machine; far more on a busy one
    wall = time.monotonic() - started
    logs = {p.name: p.read_text() for p in tmp_path.glob("*.log")}
    assert restarted, logs
    assert all(p.returncode == 0 for p in procs), {k: v[-3000:] for k, v in logs.items()}

    st = check_game(db, homes["host"])  # replays, and every move is in the database once
    moves = sum(len(read_blocks(a)[0].doc.moves) for a in H.Host(db).archives().values())
    assert logs["host.log"].count("applied ") == moves
    # the restart was noticed and lived through, by the host and by the seats
    assert "lost the IMAP connection" in logs["host.log"] or "cannot reach IMAP server" in logs["host.log"]
    # every join and move left the host's inbox for pbem/done; nothing was refused. What may
    # be left is the host's own copy of the last packet: the host stops when the game is over.
    left = [m["Subject"] for m in mailbox.Maildir(s.imap.maildir("host"), create=False)]
    assert all("game over" in subject for subject in left) and len(left) <= 1, left
    assert s.imap.count("host", "pbem/rejected") == 0
    for p in SEATS:
        assert "game over" in logs[f"bot-{p}.log"]
        assert s.imap.count(p) == 0 and s.imap.count(p, "pbem/rejected") == 0
    per_seat = {p: s.handler.per_address[s.address(p)] for p in SEATS}
    print(f"\n3-round game by IMAP+SMTP: {moves} moves, {st['seq']} packets, {wall:.1f}s wall, "
          f"mails per seat {per_seat}, host inbox {s.handler.per_address[s.address('host')]}")

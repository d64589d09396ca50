"""A whole game by mail through Debian's own Postfix and Dovecot (tests/realmail.py), in the
stock Maildir layout ('.' separator) where pbem once never got past the first mail.

Everyone sets up mail once (`pbem mail setup`, the private CA named by --ca-file); the host
and two bots run as separate processes over IMAP and SMTP submission (STARTTLS + AUTH);
ann is a person: `pbem inbox`, `pbem mail-join`, `pbem mail-move` (through the command line's
own entry in this process: test_mail_host_address.py runs each as a process of its own), and
later a bot started on her key home after her invitation mail was long settled. Midway the host
is killed (-9) and started again, a bot is killed and started again with the same command, and
Dovecot is restarted: every move is applied exactly once and the game ends.
"""

from __future__ import annotations

import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from folder_games import check_game, keys_here
from process_tools import wait_all
from processes import PBEM, cli_env, start
from realmail import RealMail, start_real_mail, stop_real_mail

from pbem.host import referee as H
from pbem.protocol.documents import read_blocks, read_file
from pbem.seat import keys
from pbem.seat import player as P
from pbem.seat.home import latest_saved_packet

SEATS = ["ann", "bob", "cat"]
FOLDERS = ("INBOX", "pbem/done", "pbem/rejected")


def _env(home: Path, who: str) -> dict[str, str]:
    return cli_env(home, PBEM_IMAP_PASSWORD=f"pw-{who}", PBEM_SMTP_PASSWORD=f"pw-{who}", PBEM_LANG="en")


def _setup(here, root: Path, s: RealMail) -> tuple[Path, dict[str, Path]]:
    """Keys, each person's mail (IMAP, SMTP submission, the club's CA) and the game, by the same
    commands in this process: the set-up is not the point (test_real_mail.py runs `pbem mail
    setup` as a process of its own), the game after it is."""
    homes = {n: root / f"home-{n}" for n in ["host", *SEATS]}
    pubs = keys_here({"referee" if n == "host" else n: h for n, h in homes.items()})
    db = root / "saves" / "t.db"
    args = [a for p in SEATS for a in ("--player", f"{p}={pubs[p]}", "--email", f"{p}={s.address(p)}")]
    for n, h in homes.items():
        here("mail", "setup", "--imap", s.dovecot.url(n), *s.smtp_args(n), "--ca-file", s.ca, home=h, ok=True)
    here("game", "new", "t", "--host", "referee", *args, "--email", f"host={s.address('host')}", "--db", db, home=homes["host"], ok=True)
    return db, homes


def _start(args: list[str], home: Path, who: str, log: Path) -> subprocess.Popen:
    return start([*PBEM, *args], env=_env(home, who), stdin=subprocess.DEVNULL, stdout=log.open("ab"),
                 stderr=subprocess.STDOUT)


def _until(cond: Callable[[], bool], seconds: float) -> None:
    """Until `cond()` holds, or at most `seconds`: bob's inbox may hold his last packet already, or
    stay empty when the game waits on him."""
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        time.sleep(0.05)


class Person:
    """ann at her terminal: reads her mail, joins, answers each packet with its first legal move.
    She looks when mail has come (Dovecot put a file in her Maildir), as a mail client tells a
    person, rather than running `pbem inbox` a few times a second."""

    def __init__(self, home: Path, s: RealMail, pbem: Callable[..., Any]) -> None:
        self.home = home
        self.pbem = pbem  # the `here` fixture: `pbem ARGS` in this process
        self.mail = s
        self.identity = keys.load_identity(home, "ann", None)
        self.game: str | None = None
        self.answered: set[int] = set()

    def turn(self) -> bool:
        """One look, if mail came; True when she mailed something."""
        from engine.rules import legal_moves

        if self.mail.dovecot.count("ann") == 0:
            return False
        pbem = self.pbem
        pbem("inbox", home=self.home, env={"PBEM_IMAP_PASSWORD": "pw-ann"}, ok=True)
        if self.game is None:
            invited = sorted((self.home / "invitations").glob("*.pbem"))
            if not invited:
                return False
            self.game = invited[0].stem
            pbem("mail-join", self.game, home=self.home, env={"PBEM_IMAP_PASSWORD": "pw-ann", "PBEM_SMTP_PASSWORD": "pw-ann"}, ok=True)
            return True
        latest = latest_saved_packet(self.home, self.game)
        if latest is None:
            return False
        sp = P.open_packet(read_file(latest)[0], self.identity, self.home)
        if sp.doc.to_move != "ann" or sp.doc.seq in self.answered:
            return False
        move = str(legal_moves(sp.view)[0])
        out = pbem("mail-move", self.game, move, home=self.home,
                   env={"PBEM_IMAP_PASSWORD": "pw-ann", "PBEM_SMTP_PASSWORD": "pw-ann"}, ok=True)
        assert f"move for packet {sp.doc.seq}: sent to host@example.org" in out.stdout, out.stdout
        self.answered.add(sp.doc.seq)
        return True


@pytest.mark.slow
@pytest.mark.game
def test_a_whole_game_through_postfix_and_stock_dovecot_survives_restarts(tmp_path: Path, here):
    s = start_real_mail(Path(tempfile.gettempdir()), ["host", *SEATS], ".")  # Debian's stock layout
    try:
        _play(s, tmp_path, here)
    finally:
        stop_real_mail(s, tmp_path)


def _play(s: RealMail, root: Path, here: Callable[..., Any]) -> None:
    db, homes = _setup(here, root, s)
    logs = {n: root / f"{n}.log" for n in ["host", *SEATS]}
    # Polling every 0.05 s rather than IDLE: Dovecot tells an idling client of new mail 0.50 s
    # after it arrived (measured, each time), a second per move on the two hops. IDLE against
    # Dovecot is tested in test_real_mail.py. Each move waits for two polls, and a quicker poll
    # shortens the game more than it adds to the CPU the pollers take.
    poll = ["--no-idle", "--poll", "0.05"]
    host_cmd = ["host", "run", "t", "--db", str(db), *poll]
    bot_cmd = {p: ["bot", "run", "--as", p, "--seed", f"seed-{p}", *poll] for p in SEATS}
    started = time.monotonic()
    procs = {"host": _start(host_cmd, homes["host"], "host", logs["host"])}
    procs |= {p: _start(bot_cmd[p], homes[p], p, logs[p]) for p in ("bob", "cat")}
    ann = Person(homes["ann"], s, here)
    events: list[str] = []
    deadline = time.monotonic() + 600

    def alive() -> None:
        for name, proc in procs.items():
            assert proc.poll() is None, (name, proc.returncode, logs[name].read_text()[-3000:])

    # ann by hand until she has answered 2 packets; the host is killed (-9) after her 1st, so her
    # 2nd goes to the host started again (each answer by hand is two pbem processes and a wait)
    while len(ann.answered) < 2:
        assert time.monotonic() < deadline, {n: p.read_text()[-2000:] for n, p in logs.items()}
        alive()
        if not ann.turn():
            time.sleep(0.05)
        if len(ann.answered) == 1 and "host" not in events:
            procs["host"].send_signal(signal.SIGKILL)
            procs["host"].wait()
            events.append("host")
            procs["host"] = _start(host_cmd, homes["host"], "host", logs["host"])
    # then a bot on her seat: her invitation mail is in pbem.done long since; it resumes
    procs["ann"] = _start(bot_cmd["ann"], homes["ann"], "ann", logs["ann"])
    with H.Host(db) as watch:  # one reader for the whole watch (opening the store each time cost more than the look)
        while len(events) < 3:
            assert time.monotonic() < deadline, {n: p.read_text()[-2000:] for n, p in logs.items()}
            alive()
            rnd = watch.status().get("round") or 0
            if rnd >= 2 and "bot" not in events:  # bob killed mid-game, started again by the same command
                procs["bob"].send_signal(signal.SIGKILL)
                procs["bob"].wait()
                events.append("bot")
                _until(lambda: s.dovecot.count("bob") > 0, 1.0)  # mail for bob piles up in his inbox meanwhile
                procs["bob"] = _start(bot_cmd["bob"], homes["bob"], "bob", logs["bob"])
            if rnd >= 3 and "dovecot" not in events:
                s.dovecot.restart(down=0.5)
                events.append("dovecot")
            time.sleep(0.2)
    wait_all(list(procs.values()), timeout=max(30.0, deadline - time.monotonic()))
    wall = time.monotonic() - started
    text = {n: p.read_text() for n, p in logs.items()}
    assert all(p.returncode == 0 for p in procs.values()), {n: v[-3000:] for n, v in text.items()}

    st = check_game(db, homes["host"])  # replays; every move is in the store once
    h = H.Host(db)
    moves = sum(len(read_blocks(a)[0].doc.moves) for a in h.archives().values())
    h.close()
    assert "resuming t-" in text["ann"] and "joined before" in text["ann"]
    assert text["bob"].count("resuming t-") == 1  # the restarted bob, from his key home
    # Dovecot really went down and came back; whether the host's session saw it depends on where
    # the host was in its poll, and the game going on to its end is what counts.
    assert (s.dovecot.base / "dovecot.log").read_text().count("starting up") >= 2
    for who in ["host", *SEATS]:  # nothing refused, nothing left unread but the last packet's copy
        assert s.dovecot.count(who, "pbem/rejected") == 0, who
    per_seat = {p: sum(s.dovecot.count(p, f) for f in FOLDERS) for p in SEATS}
    print(f"\nwhole game through Postfix + Dovecot ('.'): {moves} moves, {st['seq']} packets, {wall:.1f}s wall, "
          f"mails per seat {per_seat}, host mails {sum(s.dovecot.count('host', f) for f in FOLDERS)}; "
          f"restarts {events}")

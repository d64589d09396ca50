"""`pbem turn --wait`: a real `pbem` process waits until the table waits for its seat's move,
woken by the host's packet in a shared folder (inotify) or by the host's mail (IMAP IDLE on a
real pymap server); `--timeout S` ends the wait with exit 12, Ctrl-C with exit 130."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from folder_games import SEATS
from mailservers import MailServers
from processes import PBEM, cli_env, one_error_line, start
from run_here import main_here
from test_turn import _legal, dealt_mail_game, folder_game

from engine.rules import legal_moves
from pbem import watch as W
from pbem.auto.host_runner import FolderHost
from pbem.errors import EXIT_INTERRUPTED, EXIT_TIMED_OUT
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.mail.imap import ImapFolder, ImapUrl, ImapWatch
from pbem.seat import keys

WAITING = "waiting for your turn"


class Waiter:
    """`pbem turn TARGET --as SEAT --wait ...` running; its output read line by line."""

    def __init__(self, home: Path, *args: object, env: dict[str, str] | None = None, says: str = "waiting for ") -> None:
        self.proc = start([*PBEM, "turn", *map(str, args), "--wait"],
                          env=cli_env(home, **{"PBEM_LANG": "en", "COLUMNS": "120", **(env or {})}),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.says = says  # how its line that says what it waits for starts
        self.out: list[str] = []
        self._seen = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.append(line)
            if line.startswith(self.says):
                self._seen.set()

    def waiting(self, timeout: float = 20) -> None:
        """Until it says what it waits for (it has read the table once and watches)."""
        assert self._seen.wait(timeout), (self.text(), self.proc.poll())
        assert self.proc.poll() is None, self.text()

    def end(self, timeout: float = 60) -> tuple[int, str]:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._reader.join(5)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def text(self) -> str:
        return "".join(self.out)


def _folder_game(here, tmp_path: Path) -> tuple[Path, Path, dict[str, Path], H.Host, str]:
    """Game t in a shared folder, every seat joined and packet 1 dealt: (db, folder, homes, host, mover)."""
    db, folder, homes, host = folder_game(here, tmp_path)
    return db, folder, homes, host, host.status()["to_move"]


def _next(seat: str) -> str:
    return SEATS[(SEATS.index(seat) + 1) % len(SEATS)]


@pytest.mark.slow
def test_a_folder_wait_wakes_when_the_host_publishes_the_seats_turn(tmp_path: Path, here) -> None:
    """The seat after the mover waits; the other one waits too and times out; the mover's own
    wait returns at once (its turn already: through the command line's entry in this process)."""
    db, folder, homes, host, mover = _folder_game(here, tmp_path)
    nxt = _next(mover)
    other = _next(nxt)
    waiter = Waiter(homes[nxt], folder, "--as", nxt, "--timeout", "60")
    poller = Waiter(homes[nxt], folder, "--as", nxt, "--timeout", "60", env={"PBEM_WATCH": "poll"})  # the fallback
    loser = Waiter(homes[other], folder, "--as", other, "--timeout", "2")
    waiter.waiting()
    poller.waiting()
    assert f"{WAITING}: {mover} is to move" in waiter.text()

    mine = here("turn", folder, "--as", mover, "--wait", "--timeout", "5", home=homes[mover])
    assert mine.returncode == 0 and WAITING not in mine.stdout and "your turn: pbem turn" in mine.stdout, mine

    me = keys.load_identity(homes[mover], mover, None)
    move = str(legal_moves(FolderSeat.open(folder, me, homes[mover]).latest().view)[0])
    here("turn", folder, "--as", mover, move, home=homes[mover], ok=True)
    time.sleep(0.5)
    assert waiter.proc.poll() is None, waiter.text()  # the move in the inbox is not the seat's turn yet
    FolderHost(host, folder, lambda line: None).step()  # packet 2: nxt to move
    published = time.monotonic()
    assert host.status()["to_move"] == nxt
    code, err = waiter.end(30)
    woke = time.monotonic() - published
    assert code == 0, (err, waiter.text())
    assert f"your turn: pbem turn {folder} --as {nxt}" in waiter.text() and "packet: 2" in waiter.text(), waiter.text()
    assert woke < 10, woke
    code, err = poller.end(30)
    assert code == 0 and f"your turn: pbem turn {folder} --as {nxt}" in poller.text(), (err, poller.text())
    host.close()

    code, err = loser.end(30)
    one_error_line(subprocess.CompletedProcess([], code, "", err), EXIT_TIMED_OUT, "not your turn after 2 s")


def test_a_wait_stops_cleanly_at_ctrl_c_and_refuses_what_it_cannot_wait_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here) -> None:
    _, folder, homes, host, mover = _folder_game(here, tmp_path)
    host.close()
    nxt = _next(mover)
    waiter = Waiter(homes[nxt], folder, "--as", nxt, env={"PBEM_WATCH": "poll"})  # the fallback waits too
    waiter.waiting()
    waiter.proc.send_signal(signal.SIGINT)
    code, err = waiter.end(30)
    assert code == EXIT_INTERRUPTED and err.strip() == "error: interrupted", (code, err)
    # in 简体: what it waits for, and the timeout's one line
    zh = Waiter(homes[nxt], folder, "--as", nxt, "--timeout", "2", env={"PBEM_LANG": "zh-Hans"}, says="等待轮到你")
    zh.waiting()
    assert f"等待轮到你：现在轮到 {mover}" in zh.text()
    code, err = zh.end(30)
    assert code == EXIT_TIMED_OUT and err.startswith("错误：等了 2 秒，仍未轮到你"), (code, err)

    packet = next(GameFolder.open(folder).packets_newest_first(nxt))[1]

    def refused(*args: object) -> subprocess.CompletedProcess:  # through the command line's entry, in this process
        code, err = main_here(["turn", *args], homes[nxt], capsys, monkeypatch)
        return subprocess.CompletedProcess(args, code, "", err)

    one_error_line(refused(packet, "--as", nxt, "--wait"), 2, "--wait is for a game folder or a mail game")
    one_error_line(refused(folder, "--as", nxt, "--timeout", "3"), 2, "--timeout is for --wait")
    one_error_line(refused(folder, "--as", nxt, "--wait", "pass"), 2, "--wait shows your table")


def test_inotify_wakes_on_a_rename_not_at_a_poll(tmp_path: Path) -> None:
    """The kernel's word, not a look every few seconds: a file renamed into a watched folder (as
    pbem.atomic writes a packet) ends a wait of 30 s at once; nothing: the wait lasts."""
    sub = tmp_path / "packets" / "ann"
    sub.mkdir(parents=True)
    watch = W.Doorbell([tmp_path, tmp_path / "packets"], subfolders=True, safety=True).arm()
    assert watch.arrivals is not None and sub in watch.arrivals.wd_of
    try:
        started = time.monotonic()
        assert watch.wait(0.3) is False and time.monotonic() - started >= 0.3
        (sub / ".x.tmp").write_bytes(b"x")
        threading.Timer(0.3, os.rename, (sub / ".x.tmp", sub / "000002-abc.pbem")).start()
        assert watch.wait(0.1) is False  # a hidden temp file written is no arrival
        started = time.monotonic()
        assert watch.wait(30) is True
        assert time.monotonic() - started < 5
    finally:
        watch.close()
    nowhere = W.Doorbell([tmp_path / "missing" / "deeper"], safety=True).arm()  # nor a parent to wait in
    assert nowhere.arrivals is None


def _wakes(watch: W.Doorbell, act) -> bool:
    """Whether `act`, done 0.2 s into a wait of 20 s, ends it within 5 s."""
    threading.Timer(0.2, act).start()
    started = time.monotonic()
    return watch.wait(20) is True and time.monotonic() - started < 5


def test_a_folder_made_inside_is_watched_and_a_mail_linked_in_wakes(tmp_path: Path) -> None:
    """With `subfolders`: a seat's packet folder made after the wait began wakes it, and a packet
    renamed into that folder then wakes it again; a mail that a Maildir's delivery links into
    new/ (no write, no rename there: the way Postfix and Python's mailbox deliver) wakes it; in a
    folder watched alone (an inbox), a file is no arrival until it is written whole."""
    packets = tmp_path / "game" / "packets"
    packets.mkdir(parents=True)
    watch = W.Doorbell([packets], subfolders=True, safety=True).arm()
    try:
        assert _wakes(watch, lambda: (packets / "bob").mkdir())
        (packets / "bob" / ".p.tmp").write_bytes(b"packet")
        assert _wakes(watch, lambda: os.rename(packets / "bob" / ".p.tmp", packets / "bob" / "000001-x.pbem"))
    finally:
        watch.close()
    maildir = tmp_path / "Maildir"
    for sub in ("new", "cur", "tmp"):
        (maildir / sub).mkdir(parents=True)
    (maildir / "tmp" / "1.host").write_bytes(b"Subject: packet\n\nbody\n")
    mail = W.Doorbell([maildir], subfolders=True, safety=True).arm()
    try:
        assert _wakes(mail, lambda: os.link(maildir / "tmp" / "1.host", maildir / "new" / "1.host"))
    finally:
        mail.close()
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    bell = W.Doorbell([inbox]).arm()
    try:
        fd = os.open(inbox / "move.pbem", os.O_WRONLY | os.O_CREAT)
        assert bell.wait(0.3) is False  # made, not yet written whole
        assert _wakes(bell, lambda: os.close(fd))
    finally:
        bell.close()


def test_safety_looks_end_a_long_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `safety` (a wait without end: `pbem turn --wait`), a wait says to look again once
    every SAFETY seconds (a network filesystem's change reaches no watch) and, with no kernel to
    tell (PBEM_WATCH=poll), once every POLL seconds; without it a wait lasts what it is asked."""
    monkeypatch.setattr(W, "SAFETY", 0.3)
    monkeypatch.setattr(W, "POLL", 0.2)
    for env, most in ((None, 0.3), ("poll", 0.2)):
        if env:
            monkeypatch.setenv("PBEM_WATCH", env)
        watch = W.Doorbell([tmp_path], safety=True).arm()
        assert (watch.arrivals is None) == (env == "poll")
        started = time.monotonic()
        assert watch.wait(30) is True and most <= time.monotonic() - started < 5
        watch.close()
        plain = W.Doorbell([tmp_path]).arm()
        started = time.monotonic()
        assert plain.wait(0.5) is False and time.monotonic() - started >= 0.5
        plain.close()


@pytest.mark.slow
def test_a_mail_wait_wakes_when_the_hosts_mail_arrives(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """Over IMAP: the seat after the mover waits on its mail profile's folder (IDLE on pymap),
    and wakes when the host mails the packet that makes it its turn."""
    s = mail_servers
    db, homes, host_pass = dealt_mail_game(here, s, tmp_path)
    mover = H.Host(db).status()["to_move"]
    nxt = _next(mover)
    waiter = Waiter(homes[nxt], "t", "--timeout", "60")
    waiter.waiting()
    game = next((homes[mover] / "invitations").glob("*.pbem")).stem
    here("turn", "t", home=homes[mover], ok=True)  # reads packet 1
    here("turn", "t", _legal(homes[mover], mover, game)[0], home=homes[mover], ok=True)
    assert f"applied {mover}'s move" in host_pass()
    mailed = time.monotonic()
    code, err = waiter.end(30)
    assert code == 0, (err, waiter.text())
    assert time.monotonic() - mailed < 10
    assert "read 1 new block of mail: 1 new" in waiter.text() and "your turn: pbem turn t" in waiter.text()

    stopped = Waiter(homes[mover], "t")  # Ctrl-C in IDLE: out at once, exit 130
    stopped.waiting()
    time.sleep(0.3)
    stopped.proc.send_signal(signal.SIGINT)
    asked = time.monotonic()
    code, err = stopped.end(30)
    assert code == EXIT_INTERRUPTED and err.strip() == "error: interrupted", (code, err)
    assert time.monotonic() - asked < 5

    # a server without IDLE (pbem told not to use it): the watch looks every `poll` seconds
    polling = ImapWatch(ImapFolder(ImapUrl.parse(s.imap.url(nxt)), lambda: ("password", f"pw-{nxt}"), idle=False),
                        poll=0.3)
    try:
        started = time.monotonic()
        assert polling.wait(10) is False and 0.3 <= time.monotonic() - started < 5
    finally:
        polling.close()


@pytest.mark.slow
def test_a_trustless_folder_wait_sends_what_the_table_owes_and_ends_at_the_seats_move(tmp_path: Path, here) -> None:
    """A trustless game in a shared folder (the blind host a real process, two bot seats in
    threads of this process): ann's `pbem turn --wait` (a real process) joins, sends her shuffle
    and deal tokens as the table asks for them, and ends when the table waits for her move (or
    another seat's wait times out)."""
    from cli_games import bots_here, cli_game, start_host

    from pbem.host import blind

    db, folder, homes = cli_game(tmp_path, trustless=True, here=here)
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log")
    bots = bots_here(folder, homes, tmp_path, ["bob", "cat"])
    try:
        waiter = Waiter(homes["ann"], folder, "--as", "ann", "--timeout", "240")
        code, err = waiter.end(240)
        assert code == 0, (err, waiter.text(), (tmp_path / "host.log").read_text()[-2000:])
        assert f"your turn: pbem turn {folder} --as ann" in waiter.text(), waiter.text()
        # what she sent on the way were her shuffle and tokens: never called a move while waited for
        assert "take your move" not in waiter.text(), waiter.text()
        sent = re.findall(r"sent your [a-z ]+ block for packet (\d+)( again)?: \S+/(\S+)", waiter.text())
        assert sent, waiter.text()
        for seq, _, name in sent:  # each block named by the packet it answers, as its file is
            assert name.startswith(f"ann-{int(seq):06d}-"), waiter.text()
        names = [name for _, again, name in sent if not again]
        assert len(names) == len(set(names)), waiter.text()  # a block sent once more says so
        with blind.BlindHost(db) as h:
            waits = h.table()[0].waiting()
        assert (waits.step, waits.seats) == ("move", ["ann"]), waits
        for p in bots.values():  # nobody plays for ann: bob's wait is not over in 2 s
            p.terminate()
            p.wait(30)
        late = Waiter(homes["bob"], folder, "--as", "bob", "--timeout", "2")
        code, err = late.end(60)
        one_error_line(subprocess.CompletedProcess([], code, "", err), EXIT_TIMED_OUT, "not your turn after 2 s")
    finally:
        for p in [host, *bots.values()]:
            if p.poll() is None:
                p.terminate()
                p.wait(30)


@pytest.mark.slow
def test_a_maildir_wait_wakes_when_the_hosts_mail_is_delivered(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """`pbem turn GAME --maildir DIR --wait`: the seat reads its mail from a Maildir on disk (the
    test's SMTP server delivers into it) and wakes when the host's packet that makes it its
    turn lands there; a seat whose turn it is not times out with exit 12."""
    s = mail_servers
    db, homes, host_pass = dealt_mail_game(here, s, tmp_path)
    mover = H.Host(db).status()["to_move"]
    nxt = _next(mover)
    other = _next(nxt)
    waiter = Waiter(homes[nxt], "t", "--maildir", s.imap.maildir(nxt), "--timeout", "60")
    loser = Waiter(homes[other], "t", "--maildir", s.imap.maildir(other), "--timeout", "2")
    waiter.waiting()
    assert f"{WAITING}: {mover} is to move" in waiter.text()
    game = next((homes[mover] / "invitations").glob("*.pbem")).stem
    here("turn", "t", home=homes[mover], ok=True)
    here("turn", "t", _legal(homes[mover], mover, game)[0], home=homes[mover], ok=True)
    time.sleep(0.5)
    assert waiter.proc.poll() is None, waiter.text()  # the move is the host's to take first
    assert f"applied {mover}'s move" in host_pass()
    mailed = time.monotonic()
    code, err = waiter.end(30)
    assert code == 0, (err, waiter.text())
    assert time.monotonic() - mailed < 10
    assert "your turn: pbem turn t" in waiter.text() and "packet: 2" in waiter.text(), waiter.text()
    code, err = loser.end(30)
    one_error_line(subprocess.CompletedProcess([], code, "", err), EXIT_TIMED_OUT, "not your turn after 2 s")

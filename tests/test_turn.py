"""`pbem turn` is one command for every transport: it reads what came, shows the table, asks
for a move when it is the seat's (in a terminal), and sends it: into a shared folder's inbox,
mailed to the host (IMAP in, SMTP out: real pymap and aiosmtpd servers), or written to a file.
After the seat answered, it says so ("answered; waiting for the host", and `"answered": true`
in --json) instead of "to move: SEAT". `mail-move` is its mail alias."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from folder_games import SEATS, make_homes, new_game
from mailservers import MailServers
from process_tools import read_until
from processes import PBEM, cli_env, one_error_line, pbem

from engine.rules import legal_moves
from pbem.auto.host_runner import FolderHost
from pbem.errors import StaleMove, UsageError
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.protocol.documents import read_file
from pbem.seat import keys
from pbem.seat import player as P
from pbem.seat.home import latest_saved_packet


def _script(path: Path, secret: str) -> Path:
    path.write_text(f"#!/bin/sh\necho {secret}\n")
    path.chmod(0o700)
    return path


def _mail_game(here, s: MailServers, root: Path, set_up: list[str]) -> tuple[Path, dict[str, Path]]:
    """Game t of SEATS hosted by "host", everyone with an address; those in `set_up` have set
    up their mail profile (IMAP and SMTP on the test servers, the password from a command)."""
    homes = make_homes(root, ["host", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = root / "saves" / "t.db"
    H.create_game(db, "t", ids["host"], "classic", [(p, ids[p].public) for p in SEATS], [],
                  {n: s.address(n) for n in ["host", *SEATS]})
    for n in set_up:
        here("mail", "setup", "--smtp-server", "127.0.0.1", "--smtp-port", s.smtp_port, "--smtp-security", "none",
             "--from", s.address(n), "--imap", s.imap.url(n), "--password-command",
             _script(root / f"secret-{n}.sh", f"pw-{n}"), home=homes[n], ok=True)
    return db, homes


def dealt_mail_game(here, s: MailServers, root: Path, languages: dict[str, str] | None = None,
                    ) -> tuple[Path, dict[str, Path], Callable[[], str]]:
    """_mail_game with every seat's mail set up and joined by `pbem turn t`, round 1 dealt and
    mailed (`languages`: seats that read their mail in another language): (db, homes, one
    pass of the host, `host run --once`, which returns its log)."""
    db, homes = _mail_game(here, s, root, ["host", *SEATS])
    if languages:
        host = H.Host(db, keys.load_identity(homes["host"], "host", None))
        host.set_settings(languages=languages)
        host.close()

    def host_pass() -> str:
        return here("host", "run", "t", "--db", db, "--once", "--no-idle", home=homes["host"], ok=True).stdout

    host_pass()
    for p in SEATS:
        here("turn", "t", home=homes[p], ok=True)
    assert "round 1 dealt, packet 1" in host_pass()
    return db, homes, host_pass


def _legal(home: Path, name: str, game: str) -> list[str]:
    me = keys.load_identity(home, name, None)
    sp = P.open_packet(read_file(latest_saved_packet(home, game))[0], me, home)
    return [str(m) for m in legal_moves(sp.view)]


def _json(output: str) -> dict:
    """The JSON document of `turn --json` (the test runner mixes in stderr's line about the mail read)."""
    return json.loads(output[output.index("{"):])


def _in_a_terminal(args: list[str], home: Path, cwd: Path, answers: list[tuple[str, str]], done: str) -> str:
    """Run `pbem ARGS` on a pseudo-terminal: for each (prompt seen, line typed), wait and type;
    then wait for `done`; everything the terminal showed."""
    main, sub = pty.openpty()
    proc = subprocess.Popen([*PBEM, *args], stdin=sub, stdout=sub, stderr=sub, cwd=cwd, close_fds=True,
                            env=cli_env(home, COLUMNS="120", LINES="80", TERM="xterm"))
    os.close(sub)
    shown = ""
    try:
        for seen, line in answers:
            shown += read_until(main, seen)
            os.write(main, line.encode() + b"\r")
        shown += read_until(main, done)
        assert proc.wait(timeout=30) == 0, shown[-800:]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    return shown


@pytest.mark.slow
def test_a_mail_game_is_played_with_turn_alone(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """Over IMAP and SMTP: `pbem turn NAME` joins by mail, shows the packet, mails the move
    given (or asked for at the prompt), and says the seat answered until the host moves on."""
    s = mail_servers
    db, homes = _mail_game(here, s, tmp_path, ["host", *SEATS])

    def host_pass() -> str:
        return here("host", "run", "t", "--db", db, "--once", "--no-idle", home=homes["host"], ok=True).stdout

    assert "mailed invitation to ann" in host_pass()
    for p in SEATS:  # the game's name is enough: turn reads the invitation and mails the join
        out = here("turn", "t", home=homes[p], ok=True).stdout
        assert "read 1 new block of mail: 1 new" in out and f"join of {p} for t-" in out, out
        assert "sent to host@example.org" in out and "the game has not started" in out, out
    assert "round 1 dealt, packet 1" in host_pass()
    game = next((homes["ann"] / "invitations").glob("*.pbem")).stem
    mover = H.Host(db).status()["to_move"]
    home = homes[mover]

    shown = _json(here("turn", "t", "--json", home=home, ok=True).stdout)
    assert shown["my_turn"] and shown["answered"] is False and shown["transport"] == "mail", shown
    legal = _legal(home, mover, game)
    first, other = legal[0], legal[-1]
    out = here("turn", "t", first, home=home, ok=True).stdout  # was: "t is not a game folder"
    assert "move for packet 1: sent to host@example.org" in out, out

    # answered: the seat's own screen and --json say so, not "to move: MOVER", until the host moves on
    out = here("turn", "t", home=home, ok=True).stdout
    assert "answered; waiting for the host" in out and f"to move: {mover}" not in out, out
    assert f"you already answered packet 1 with “{first}”; waiting for the host" in out
    assert _json(here("turn", "t", "--json", home=home, ok=True).stdout)["answered"] is True
    other_seat = next(p for p in SEATS if p != mover)
    theirs = _json(here("turn", "t", "--json", home=homes[other_seat], ok=True).stdout)
    assert theirs["answered"] is False and theirs["to_move"] == mover

    # mail-move is the same path: the kept move goes again, a different one is refused
    again = here("mail-move", "t", other, home=home)
    assert again.returncode == StaleMove.exit_code and "mailing that move again" in again.stdout + again.stderr, again
    assert "answered; waiting for the host" not in again.stdout + again.stderr  # a one-line command: no table drawn
    out = host_pass()
    assert f"applied {mover}'s move" in out and "packet 2" in out, out

    # the next seat to move, in a terminal: asked, an illegal answer refused, a legal one mailed
    mover2 = H.Host(db).status()["to_move"]
    here("inbox", home=homes[mover2], ok=True)
    legal2 = _legal(homes[mover2], mover2, game)
    shown_tty = _in_a_terminal(["turn", "t"], homes[mover2], tmp_path,
                               [("your move (empty: later)", "steal nobody"), ("your move (empty: later)", legal2[0])],
                               "move for packet 2: sent to host@example.org")
    assert "not legal" in shown_tty or "not a move" in shown_tty or "error" in shown_tty.lower(), shown_tty[-600:]
    out = host_pass()
    assert f"applied {mover2}'s move" in out, out

    # mail-move with the packet still unread in the IMAP folder: it reads the mail first (before:
    # "no packet ... read your mail first with 'pbem inbox MAILDIR'")
    mover3 = H.Host(db).status()["to_move"]
    out = here("mail-move", "t", "discard 1", home=homes[mover3], ok=True).stdout
    assert re.search(r"read \d+ new blocks? of mail", out) and "move for packet 3: sent to host@example.org" in out, out
    assert f"applied {mover3}'s move" in host_pass()


def folder_game(here, tmp_path: Path) -> tuple[Path, Path, dict[str, Path], H.Host]:
    """Game t of SEATS in the shared folder tmp_path/shared, every seat joined with `turn` and
    packet 1 dealt: (db, folder, homes, host)."""
    db, homes = new_game(tmp_path)
    folder = tmp_path / "shared"
    here("folder", "init", "t", folder, "--db", db, home=homes["referee"], ok=True)
    for s in SEATS:
        here("turn", folder, "--as", s, home=homes[s], ok=True)
    host = H.Host(db, keys.load_identity(homes["referee"], "referee", None))
    FolderHost(host, folder, lambda line: None).step()  # deals packet 1
    return db, folder, homes, host


def test_turn_in_a_folder_and_on_a_packet_file_says_answered(tmp_path: Path, here) -> None:
    """A folder game: `turn DIR --json` has `answered`; after the move the screen says the seat
    answered. A packet file: `turn FILE MOVE` writes the move file, which the host applies."""
    db, folder, homes, host = folder_game(here, tmp_path)
    gf = GameFolder.open(folder)
    mover = FolderSeat.open(folder, keys.load_identity(homes["ann"], "ann", None), homes["ann"]).latest().doc.to_move
    home = homes[mover]
    me = keys.load_identity(home, mover, None)
    sp = FolderSeat.open(folder, me, home).latest()
    move = str(legal_moves(sp.view)[0])

    before = json.loads(here("turn", folder, "--as", mover, "--json", home=home, ok=True).stdout)
    assert before["my_turn"] and before["answered"] is False and before["transport"] == "folder"
    here("turn", folder, "--as", mover, move, home=home, ok=True)
    after = json.loads(here("turn", folder, "--as", mover, "--json", home=home, ok=True).stdout)
    assert after["answered"] is True and after["to_move"] == mover
    out = here("turn", folder, "--as", mover, home=home, ok=True).stdout
    assert "answered; waiting for the host" in out and f"to move: {mover}" not in out, out
    FolderHost(host, folder, lambda line: None).step()  # packet 2
    assert json.loads(here("turn", folder, "--as", mover, "--json", home=home, ok=True).stdout)["answered"] is False

    # file by file: the packet file itself is a target, and its move a file to send by hand
    mover2 = FolderSeat.open(folder, me, home).latest().doc.to_move
    home2 = homes[mover2]
    packet_file = next(gf.packets_newest_first(mover2))[1]
    sp2 = FolderSeat.open(folder, keys.load_identity(home2, mover2, None), home2).latest()
    proc = pbem("turn", packet_file, "--as", mover2, str(legal_moves(sp2.view)[0]), home=home2, cwd=tmp_path)
    written = tmp_path / f"move-{mover2}-000002.pbem"
    assert proc.returncode == 0 and f"move file: {written.name}" in proc.stdout, proc.stderr
    out = here("apply", "t", written, "--db", db, home=homes["referee"], ok=True).stdout
    assert "packet 3" in out, out
    host.close()

    # a target that is nothing pbem knows: one line, and no mail read or sent
    bad = here("turn", "no-such-game", "--as", mover, home=home)
    one_error_line(bad, UsageError.exit_code, "no game 'no-such-game'")
    assert "\nhint: " in bad.stderr and "pbem mail setup --imap" in bad.stderr.split("\nhint: ", 1)[1], bad.stderr
    joined = here("turn", "no-such-game", "--as", mover, "--join", home=home)
    one_error_line(joined, UsageError.exit_code, "--join is for a game folder")


def test_mail_logs_name_a_message_short_and_spam_once(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """An IMAP message is named `INBOX #N` in the host's log and a player's inbox lines (not
    `imap://...;UIDVALIDITY=...;UID=N`), and a mail that is not pbem's, left in the host's
    INBOX, is logged once: a restarted host only counts it among those read before."""
    from pbem.mail.message import SmtpSettings, compose, send

    s = mail_servers
    db, homes = _mail_game(here, s, tmp_path, ["host", "ann"])
    send(compose(sender="spam@example.net", to=s.address("host"), subject="cheap watches", body_text="hi",
                 attachment_name="x.txt", attachment=b"nothing"),
         SmtpSettings("127.0.0.1", s.smtp_port, "none", None, "spam@example.net"), None)
    first = here("host", "run", "t", "--db", db, "--once", "--no-idle", home=homes["host"], ok=True).stdout
    assert re.search(r"ignored INBOX #\d+: not a pbem mail \(from spam@example.net", first), first
    assert "UIDVALIDITY" not in first and "imap://" not in first.split("serving", 1)[1].split("\n", 1)[1], first
    again = here("host", "run", "t", "--db", db, "--once", "--no-idle", home=homes["host"], ok=True).stdout
    assert "not a pbem mail" not in again and "skipped 1 message(s) read before" in again, again
    assert s.imap.count("host") == 1  # still there: not ours to move
    out = here("inbox", home=homes["ann"], ok=True).stdout
    assert "INBOX #1: invitation to t-" in out and "UIDVALIDITY" not in out, out

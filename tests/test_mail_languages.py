"""Each reader's mail in that reader's language, in one game and one run: the language is passed
to each mail's words, never switched for the whole process (pbem.mail.host_mail). Sent through
a real SMTP server (aiosmtpd) and read back from the bytes it delivered."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from pathlib import Path

import processes
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from process_tools import free_port
from table_games import make_table

ADDRESSES = {"ann": "ann@example.org", "bob": "bob@example.org", "cat": "cat@example.org"}


def _delivered(maildir: Path) -> dict[str, list]:
    by_reader: dict[str, list] = {}
    for sub in ("new", "cur"):
        for path in sorted((maildir / sub).iterdir()):
            mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
            by_reader.setdefault(str(mail["To"]), []).append(mail)
    return by_reader


def test_two_seats_get_their_own_words_in_one_mail_game(tmp_path: Path) -> None:
    table = make_table(tmp_path, list(ADDRESSES))
    table.host.close()
    db, home = tmp_path / "game.db", table.homes["referee"]
    maildir = tmp_path / "Maildir"
    port = free_port()
    smtp = Controller(Mailbox(str(maildir)), hostname="127.0.0.1", port=port)
    smtp.start()
    try:
        pbem = lambda *args: processes.pbem(*args, home=home, ok=True)  # noqa: E731
        pbem("game", "email", "test", "--db", db, *(f"{n}={a}" for n, a in ADDRESSES.items()),
             "--lang", "ann=zh-Hans", "--lang", "bob=zh-Hant")
        pbem("game", "smtp", "test", "--db", db, "--server", "127.0.0.1", "--port", port, "--security", "none",
             "--from", "referee@example.org")
        pbem("mail", "test", "--db", db, "--seq", "0", "--send")  # the invitations
        pbem("mail", "test", "--db", db, "--send")  # the latest packet: the deal
    finally:
        smtp.stop()
    got = _delivered(maildir)
    assert sorted(got) == sorted(ADDRESSES.values()) and all(len(m) == 2 for m in got.values()), got.keys()

    def said(reader: str) -> str:
        return "\n".join(f"{m['Subject']}\n{m.get_body(('plain',)).get_content()}" for m in got[ADDRESSES[reader]])

    ann, bob, cat = said("ann"), said("bob"), said("cat")
    assert "邀请你玩一局矮人矿坑" in ann and "邀請" not in ann and "invites you" not in ann
    assert "邀請你玩一局矮人礦坑" in bob and "邀请" not in bob and "invites you" not in bob
    assert "invites you to a game of Saboteur" in cat and not any("\u4e00" <= c <= "\u9fff" for c in cat)
    # the deal's mail too: its subject and its words
    assert "牌包 1" in ann and "牌包 1" in bob and "packet 1" in cat

"""IMAP in, against a real IMAP server (pymap) and a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import imaplib
import threading
import time
from pathlib import Path

import pytest
from mailservers import MailServers, mail_servers  # noqa: F401  (the fixture)

from pbem.errors import PbemError, UsageError
from pbem.mail.imap import ImapFolder, ImapUrl, MailboxDown, credential_source
from pbem.mail.message import SmtpSettings, compose, send
from pbem.mail.secrets import run_command


def _mail(servers: MailServers, to: str, subject: str, sender: str = "ann") -> None:
    msg = compose(sender=servers.address(sender), to=servers.address(to), subject=subject, body_text="hello",
                  attachment_name="x.txt", attachment=b"x")
    send(msg, SmtpSettings("127.0.0.1", servers.smtp_port, "none", None, servers.address(sender)), None)


def _folder(servers: MailServers, user: str, **kw) -> ImapFolder:
    return ImapFolder(ImapUrl.parse(servers.imap.url(user)), lambda: ("password", f"pw-{user}"), **kw)


def test_imap_urls() -> None:
    u = ImapUrl.parse("imaps://me%40example.org@imap.example.org/Games/pbem")
    assert (u.secure, u.user, u.host, u.port, u.folder) == (True, "me@example.org", "imap.example.org", 993, "Games/pbem")
    assert str(u) == "imaps://me%40example.org@imap.example.org:993/Games/pbem"
    u = ImapUrl.parse("imap://bob@127.0.0.1:1143")
    assert (u.secure, u.port, u.folder) == (False, 1143, "INBOX")
    for bad, says in [("imaps://me:secret@host/INBOX", "must not hold the password"),
                      ("pop3://me@host", "imaps://"), ("imaps://host/INBOX", "needs a user"),
                      ("imaps://me@host:99999/", "bad IMAP URL")]:
        with pytest.raises(UsageError, match=says) as err:
            ImapUrl.parse(bad)
        assert "secret" not in str(err.value)


def test_imap_reads_new_mail_then_moves_it_to_done_or_rejected(mail_servers: MailServers) -> None:
    s = mail_servers
    for n in range(3):
        _mail(s, "host", f"number {n}")
    box = _folder(s, "host")
    try:
        got = sorted(box.new_messages(), key=lambda lm: lm[1]["Subject"])  # pymap numbers new files in any order
        assert [m["Subject"] for _, m in got] == ["number 0", "number 1", "number 2"]
        box.settle(got[0][0], "done")
        box.settle(got[1][0], "rejected")
        box.leave(got[2][0])
        assert list(box.new_messages()) == []  # left once is not read again this session
    finally:
        box.close()
    assert (s.imap.count("host"), s.imap.count("host", "pbem/done"), s.imap.count("host", "pbem/rejected")) == (1, 1, 1)
    # a new session sees what was left (its memory lives elsewhere), flags set on the done one
    conn = imaplib.IMAP4("127.0.0.1", s.imap.port)
    conn.login("host", "pw-host")
    conn.select('"pbem/done"')
    typ, data = conn.fetch("1", "(FLAGS)")
    assert b"\\Seen" in data[0]
    conn.logout()
    box = _folder(s, "host")
    assert [m["Subject"] for _, m in box.new_messages()] == ["number 2"]
    box.close()


def test_imap_idle_wakes_on_new_mail_and_polling_without_it(mail_servers: MailServers) -> None:
    s = mail_servers
    box = _folder(s, "bob", idle_max=20)
    try:
        assert list(box.new_messages()) == []
        assert "IDLE" in box.caps
        threading.Timer(0.5, _mail, (s, "bob", "wake up")).start()
        started = time.monotonic()
        assert box.wait(0.01) is True
        assert time.monotonic() - started < 10  # woken by the server, not by the 20 s limit
        assert [m["Subject"] for _, m in box.new_messages()] == ["wake up"]
    finally:
        box.close()
    polling = _folder(s, "bob", idle=False)
    started = time.monotonic()
    assert polling.wait(0.2) is False and time.monotonic() - started >= 0.2
    polling.close()


def test_imap_login_failures_and_a_server_that_is_down(mail_servers: MailServers, tmp_path: Path) -> None:
    s = mail_servers
    wrong = ImapFolder(ImapUrl.parse(s.imap.url("ann")), lambda: ("password", "not-it"))
    with pytest.raises(PbemError, match="IMAP login of ann .* failed") as err:
        list(wrong.new_messages())
    assert "not-it" not in str(err.value) and "not-it" not in (err.value.hint or "")
    missing = ImapFolder(ImapUrl.parse(s.imap.url("ann", "Nowhere")), lambda: ("password", "pw-ann"))
    with pytest.raises(UsageError, match="no IMAP folder 'Nowhere'"):
        list(missing.new_messages())
    box = _folder(s, "ann")
    list(box.new_messages())
    s.imap.stop()
    with pytest.raises(MailboxDown):
        box.wait(0.01) if box.conn is None else list(box.new_messages())
    with pytest.raises(MailboxDown, match="cannot reach IMAP server"):
        list(box.new_messages())
    s.imap.start()
    _mail(s, "ann", "after the restart", sender="bob")
    assert [m["Subject"] for _, m in box.new_messages()] == ["after the restart"]
    box.close()


def test_imap_password_command_is_run_each_connect_and_never_shown(tmp_path: Path) -> None:
    script = tmp_path / "secret.sh"
    script.write_text("#!/bin/sh\necho pw-from-command\necho second-line\n")
    script.chmod(0o755)
    source = credential_source(password_command=str(script))
    assert source() == ("password", "pw-from-command")
    oauth = credential_source(oauth2_command=f"{script} --token")
    assert oauth() == ("xoauth2", "pw-from-command")
    fail = tmp_path / "fail.sh"
    fail.write_text("#!/bin/sh\necho half-a-secret\necho locked >&2\nexit 3\n")
    fail.chmod(0o755)
    with pytest.raises(UsageError) as err:
        run_command(str(fail), "IMAP password")
    assert "exit code 3: locked" in str(err.value) and "half-a-secret" not in str(err.value)
    with pytest.raises(UsageError, match="not found"):
        run_command("/nonexistent/pass show x", "IMAP password")
    with pytest.raises(UsageError, match="not both"):
        credential_source(password_command="a", oauth2_command="b")

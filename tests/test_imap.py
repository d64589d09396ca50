"""IMAP in, against a real IMAP server (pymap) and a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import imaplib
import mailbox
import threading
import time
from pathlib import Path

import pytest
from mailservers import MailServers
from processes import pbem

from pbem.errors import CertificateFailure, PbemError, UsageError
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


def test_imap_mail_that_came_during_a_step_does_not_wait_for_the_idle_limit(mail_servers: MailServers) -> None:
    """A mail that arrives while the reader works on another (after its SEARCH) is told of in
    the server's answer to a later command (here the MOVE to pbem/done); IDLE then reports
    only what changes after that, so `wait()` must return at once instead of idling to its
    limit (minutes, with a real server) with the mail unread."""
    s = mail_servers
    _mail(s, "bob", "first")
    box = _folder(s, "bob", idle_max=20)
    try:
        [(label, _)] = box.new_messages()
        _mail(s, "bob", "second")  # while the first is being processed
        box.settle(label, "done")
        started = time.monotonic()
        assert box.wait(0.01) is True
        assert time.monotonic() - started < 10  # not the 20 s limit
        assert [m["Subject"] for _, m in box.new_messages()] == ["second"]
        threading.Timer(0.5, _mail, (s, "bob", "third")).start()
        assert box.wait(0.01) is True  # told once: the next wait idles until the next mail
        assert [m["Subject"] for _, m in box.new_messages()] == ["second", "third"]
    finally:
        box.close()


def test_imap_login_failures_and_a_server_that_is_down(mail_servers: MailServers, tmp_path: Path) -> None:
    s = mail_servers
    wrong = ImapFolder(ImapUrl.parse(s.imap.url("ann")), lambda: ("password", "not-it"))
    with pytest.raises(PbemError, match="IMAP login of ann .* failed") as err:
        list(wrong.new_messages())
    assert "not-it" not in str(err.value) and "not-it" not in str(err.value.hint or "")
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


# --- the CLI: a mail profile, IMAP in, one short command to answer ---------------------------


def _script(path: Path, secret: str) -> Path:
    path.write_text(f"#!/bin/sh\necho {secret}\n")
    path.chmod(0o700)
    return path


def test_imap_profile_inbox_join_and_a_one_line_move(mail_servers: MailServers, tmp_path: Path, here) -> None:
    from folder_games import SEATS, make_homes

    from engine.rules import legal_moves
    from pbem.host import referee as H
    from pbem.seat import keys
    from pbem.seat import player as P
    from pbem.seat.home import latest_saved_packet

    s = mail_servers
    homes = make_homes(tmp_path, ["host", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = tmp_path / "saves" / "t.db"
    emails = {n: s.address(n) for n in ["host", *SEATS]}
    H.create_game(db, "t", ids["host"], "classic", [(p, ids[p].public) for p in SEATS], [], emails)
    secrets = {n: _script(tmp_path / f"secret-{n}.sh", f"pw-{n}") for n in ["host", *SEATS]}
    for n in ["host", *SEATS]:  # everyone, the host too, sets up their mail once
        out = here("mail", "setup", "--smtp-server", "127.0.0.1", "--smtp-port", s.smtp_port, "--smtp-security",
                   "none", "--from", s.address(n), "--imap", s.imap.url(n), "--password-command", secrets[n], home=homes[n], ok=True).stdout
        assert "saved in" in out and "(no password)" in out
    out = here("mail", "setup", home=homes["ann"], ok=True).stdout
    assert f"IMAP: imap://ann@127.0.0.1:{s.imap.port}/INBOX" in out and f"password from: {secrets['ann']}" in out

    def host_pass() -> str:
        return here("host", "run", "t", "--db", db, "--once", "--no-idle", home=homes["host"], ok=True).stdout

    assert "mailed invitation to ann" in host_pass()
    for p in SEATS:
        out = here("inbox", home=homes[p], ok=True).stdout  # IMAP from the profile
        assert "invitation to t-" in out and "pbem mail-join t-" in out
        assert s.imap.count(p) == 0 and s.imap.count(p, "pbem/done") == 1
        game = next((homes[p] / "invitations").glob("*.pbem")).stem
        out = here("mail-join", game, home=homes[p], ok=True).stdout  # host address learnt from the mail
        assert f"join of {p} for {game}: sent to host@example.org" in out
    out = host_pass()
    assert "round 1 dealt, packet 1" in out and "(their turn)" in out

    # the seat to move: 'pbem turn GAME' reads the mail, then one short command answers
    mover = H.Host(db).status()["to_move"]
    out = here("turn", game, home=homes[mover], ok=True).stdout
    assert "read " in out and "1 new" in out
    sp = P.open_packet(__import__("pbem.protocol.documents", fromlist=["read_file"]).read_file(
        latest_saved_packet(homes[mover], game))[0], ids[mover], homes[mover])
    move = str(legal_moves(sp.view)[0])
    out = here("mail-move", game, move, home=homes[mover], ok=True).stdout
    assert "move for packet 1: sent to host@example.org" in out
    out = host_pass()
    assert f"applied {mover}'s move" in out and "packet 2" in out
    assert s.imap.count("host") == 0 and s.imap.count("host", "pbem/rejected") == 0

    # no password in any file of any key home
    for n, h in homes.items():
        for f in h.rglob("*"):
            if f.is_file():
                assert f"pw-{n}".encode() not in f.read_bytes(), f


def test_imap_inbox_reports_only_new_mail_and_counts_the_rest(tmp_path: Path, here) -> None:
    import mailbox

    from pbem.seat import keys

    home = tmp_path / "home"
    keys.create_identity(home, "ann", None)
    md = mailbox.Maildir(tmp_path / "Maildir", create=True)
    for n in range(3):
        md.add(compose(sender="x@example.org", to="ann@example.org", subject=f"hello {n}", body_text=f"hi {n}",
                       attachment_name="x.txt", attachment=b"x").as_bytes())
    out = here("inbox", tmp_path / "Maildir", home=home, ok=True).stdout
    assert out.count("not a pbem mail") == 3 and "read before" not in out
    md.add(compose(sender="y@example.org", to="ann@example.org", subject="news", body_text="new",
                   attachment_name="x.txt", attachment=b"y").as_bytes())
    out = here("inbox", tmp_path / "Maildir", home=home, ok=True).stdout
    assert out.count("not a pbem mail") == 1 and "'news'" in out
    assert "skipped 3 messages read before" in out
    # the same mail in another place is recognised by Message-ID and content
    copy = tmp_path / "copy.eml"
    copy.write_bytes(next(iter(md.values())).as_bytes())
    out = here("inbox", copy, home=home, ok=True).stdout
    assert "no new mail" in out and "skipped 1 message read before" in out
    out = here("inbox", tmp_path / "Maildir", "--again", home=home, ok=True).stdout
    assert out.count("not a pbem mail") == 4


def test_imap_starttls_is_used_and_the_certificate_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mailservers import ImapServer, self_signed

    cert, key = self_signed(tmp_path)
    server = ImapServer(tmp_path / "imap", {"ann": "pw-ann"}, tls=(cert, key))
    server.start()
    try:
        url = ImapUrl.parse(server.url("ann"))
        # a certificate nobody vouches for: refused before the password is sent
        box = ImapFolder(url, lambda: ("password", "pw-ann"))
        with pytest.raises(CertificateFailure, match=r"^certificate verify failed: self[- ]signed certificate for 127\.0\.0\.1:\d+$"):
            list(box.new_messages())
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now trusted, as a CA bundle would
        box = ImapFolder(url, lambda: ("password", "pw-ann"))
        assert list(box.new_messages()) == []
        assert isinstance(box.conn.sock, __import__("ssl").SSLSocket)  # the session went over TLS
        box.close()
    finally:
        server.stop()


@pytest.mark.people("ann")
def test_imaps_is_tls_from_the_first_byte_and_the_certificate_checked(
        mail_servers: MailServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """imaps:// (implicit TLS, as providers offer on port 993) against pymap behind a TLS
    front with a self-signed certificate on loopback: refused until trusted, then a real
    mailbox read over TLS, moved to pbem/done."""
    from mailservers import TlsFront, self_signed

    cert, key = self_signed(tmp_path)
    server = mail_servers.imap
    front = TlsFront(server.port, cert, key)
    try:
        mailbox.Maildir(server.maildir("ann"), create=False).add(
            compose(sender="h@example.org", to="ann@example.org", subject="hello", body_text="not pbem\n",
                    attachment_name="x.txt", attachment=b"x"))
        url = ImapUrl.parse(f"imaps://ann@127.0.0.1:{front.port}/INBOX")
        assert (url.secure, url.port) == (True, front.port)
        asked = []

        def password() -> tuple[str, str]:
            asked.append(1)
            return "password", "pw-ann"

        box = ImapFolder(url, password)
        with pytest.raises(CertificateFailure, match=r"^certificate verify failed: self[- ]signed certificate for 127\.0\.0\.1:\d+$"):
            list(box.new_messages())
        assert not asked and front.handshakes == 0  # no password before the server is known
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now trusted, as a CA bundle would
        box = ImapFolder(url, password)
        found = list(box.new_messages())
        assert [m["Subject"] for _, m in found] == ["hello"] and asked
        assert isinstance(box.conn.sock, __import__("ssl").SSLSocket) and front.handshakes == 1
        box.settle(found[0][0], "done")
        box.close()
        assert server.count("ann", "pbem/done") == 1 and server.count("ann") == 0
    finally:
        front.close()


def test_imap_xoauth2_with_a_token_from_a_command(tmp_path: Path) -> None:
    """XOAUTH2 against pymap with that mechanism switched on (tests/pymap_xoauth2.py): the
    token comes from --oauth2-command at every login (an expired one is renewed by
    reconnecting); a wrong token is a failed login, said without the token."""
    from mailservers import ImapServer

    server = ImapServer(tmp_path / "imap", {"ann": "token-1"}, xoauth2=True)
    server.start()
    try:
        mailbox.Maildir(server.maildir("ann"), create=False).add(
            compose(sender="h@example.org", to="ann@example.org", subject="hello", body_text="not pbem\n",
                    attachment_name="x.txt", attachment=b"x"))
        url = ImapUrl.parse(server.url("ann"))
        calls = tmp_path / "calls"
        token = tmp_path / "token.sh"
        token.write_text(f"#!/bin/sh\necho run >> {calls}\necho token-1\n")
        token.chmod(0o700)
        box = ImapFolder(url, credential_source(oauth2_command=str(token), url=url))
        assert [m["Subject"] for _, m in box.new_messages()] == ["hello"]
        assert "AUTH=XOAUTH2" in box.conn.capabilities and calls.read_text().count("run") == 1
        server.restart()
        try:
            again = list(box.new_messages())
        except MailboxDown:  # the old connection is gone; the runner steps again
            again = list(box.new_messages())
        assert [m["Subject"] for _, m in again] == ["hello"]  # a new login with a new token
        assert calls.read_text().count("run") == 2
        box.close()
        wrong = ImapFolder(url, credential_source(oauth2_command="echo token-0", url=url))
        with pytest.raises(UsageError, match="IMAP login of ann") as err:
            list(wrong.new_messages())
        assert "token-0" not in str(err.value) and "token-0" not in str(err.value.hint)
    finally:
        server.stop()


def test_imap_bad_login_or_url_is_one_line_on_stderr(mail_servers: MailServers, tmp_path: Path) -> None:
    import subprocess

    s = mail_servers
    for args, says, code in [(["inbox", "--imap", s.imap.url("ann")], "error: IMAP login of ann to 127.0.0.1", 2),
                             (["inbox", "--imap", "imaps://ann:pw@example.org/"], "error: an IMAP URL must not hold", 2),
                             (["host", "run", "t", "--db", str(tmp_path / "none.db"), "--imap", "ftp://x"],
                              "error: no store at", 9)]:
        done = pbem(*args, home=tmp_path / "home", env={"PBEM_IMAP_PASSWORD": "wrong-secret"}, stdin=subprocess.DEVNULL)
        assert done.returncode == code, (args, done.stderr)
        assert done.stderr.startswith(says) and "Traceback" not in done.stderr, done.stderr
        assert "wrong-secret" not in done.stderr + done.stdout


def test_a_bot_started_again_resumes_its_game_from_the_key_home(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """`pbem bot run` stopped after joining and started again with the same command: its
    invitation mail is in pbem/done, yet it plays the seat (before: it waited for ever)."""
    from folder_games import SEATS, make_homes

    from pbem.host import referee as H
    from pbem.seat import keys

    s = mail_servers
    homes = make_homes(tmp_path, ["host", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = tmp_path / "saves" / "t.db"
    H.create_game(db, "t", ids["host"], "classic", [(p, ids[p].public) for p in SEATS], [],
                  {n: s.address(n) for n in ["host", *SEATS]})
    for n in ["host", *SEATS]:
        here("mail", "setup", "--smtp-server", "127.0.0.1", "--smtp-port", s.smtp_port, "--smtp-security", "none",
             "--from", s.address(n), "--imap", s.imap.url(n), "--password-command",
             _script(tmp_path / f"secret-{n}.sh", f"pw-{n}"), home=homes[n], ok=True)

    def host_pass() -> str:
        return here("host", "run", "t", "--db", db, "--once", "--no-idle", home=homes["host"], ok=True).stdout

    def bot(p: str) -> str:  # the same command each time, a new process' worth of state each time
        return here("bot", "run", "--as", p, "--once", "--no-idle", home=homes[p], ok=True).stdout

    host_pass()
    for p in SEATS:
        assert "joined t-" in bot(p)
        assert s.imap.count(p, "pbem/done") == 1 and s.imap.count(p) == 0  # the invitation mail is settled
    assert "round 1 dealt, packet 1" in host_pass()
    mover = H.Host(db).status()["to_move"]
    out = bot(mover)
    assert "resuming t-" in out and "joined before" in out and "packet 1: " in out, out
    assert f"applied {mover}'s move" in host_pass()
    assert H.Host(db).status()["seq"] == 2

"""pbem against Debian's own Dovecot and Postfix (tests/realmail.py), in both folder layouts.

Mail goes in through Postfix (submission, STARTTLS, AUTH) and out of Dovecot (IMAP with
STARTTLS, IMAPS), every certificate signed by a private CA: pbem's folders take the
server's separator, a certificate nobody vouches for is named as such (exit 11), a profile's
CA file makes it trusted, and a server that refuses pbem's folders is said in one line
(exit 10), never a retry loop.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import one_error_line, pbem
from realmail import Dovecot, RealMail, private_ca, start_real_mail, stop_real_mail
from run_here import main_here

from pbem.errors import EXIT_CERTIFICATE, EXIT_MAIL_SERVER
from pbem.mail.imap import ImapFolder, ImapUrl
from pbem.mail.message import SmtpSettings, compose, send

pytestmark = pytest.mark.slow  # the tests start a Dovecot and a Postfix (~3 s each time)


@pytest.fixture(scope="module", params=[".", "/"], ids=["sep-dot", "sep-slash"])
def real_mail(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealMail]:
    """Dovecot (either separator) + Postfix, shared by the tests of this file that take it: each
    reads and writes only its own person's mailbox (host and ann, bob)."""
    servers = start_real_mail(Path(tempfile.gettempdir()), ["host", "ann", "bob"], request.param)
    try:
        yield servers
    finally:
        stop_real_mail(servers, tmp_path_factory.mktemp("real-mail-logs"))


def _settings(s: RealMail, user: str, ca: Path | None) -> SmtpSettings:
    return SmtpSettings("127.0.0.1", s.postfix.port, "starttls", user, s.address(user),
                        str(ca) if ca else None)


def _arrived(s: RealMail, user: str, n: int = 1, folder: str = "INBOX") -> None:
    deadline = time.monotonic() + 20
    while s.dovecot.count(user, folder) < n:
        assert time.monotonic() < deadline, (Path(s.postfix.base / "postfix.log").read_text()[-3000:])
        time.sleep(0.05)


def test_folders_take_the_server_separator_and_the_ca_file_is_trusted(real_mail: RealMail, tmp_path: Path):
    s = real_mail
    mail = compose(sender=s.address("host"), to=s.address("ann"), subject="hello", body_text="not pbem\n",
                   attachment_name="x.txt", attachment=b"x")
    # a certificate nobody vouches for: named, before any password is sent
    with pytest.raises(Exception) as refused:
        send(mail, _settings(s, "host", None), "pw-host")
    assert re.fullmatch(rf"certificate verify failed: self[- ]signed certificate in certificate chain for "
                        rf"127\.0\.0\.1:{s.postfix.port}", str(refused.value)), refused.value
    assert refused.value.exit_code == EXIT_CERTIFICATE  # type: ignore[attr-defined]
    send(mail, _settings(s, "host", s.ca), "pw-host")  # Postfix: STARTTLS, AUTH, LMTP into Dovecot
    _arrived(s, "ann")

    for imaps in (False, True):  # IMAP with STARTTLS, then IMAPS
        box = ImapFolder(ImapUrl.parse(s.dovecot.url("ann", imaps=imaps)), lambda: ("password", "pw-ann"),
                         ca_file=str(s.ca))
        got = list(box.new_messages())
        if not imaps:
            assert [m["Subject"] for _, m in got] == ["hello"]
            box.settle(got[0][0], "done")
        else:
            assert got == []
            # IDLE: woken by the next mail Postfix delivers
            later = threading.Timer(0.3, send, (mail, _settings(s, "host", s.ca), "pw-host"))
            later.start()
            started = time.monotonic()
            assert box.wait(20) is True and time.monotonic() - started < 10
            later.join()
            assert [m["Subject"] for _, m in box.new_messages()] == ["hello"]
        box.close()
    sep = s.dovecot.sep
    # the server's own names: "pbem.done" on stock Debian ('.'), "pbem/done" with '/'
    assert box.folders == {"pbem/done": f"pbem{sep}done", "pbem/rejected": f"pbem{sep}rejected"}
    assert s.dovecot.count("ann") == 1 and s.dovecot.count("ann", "pbem/done") == 1
    on_disk = s.dovecot.maildir("ann") / "Maildir" / (".pbem.done" if sep == "." else "pbem/done")
    assert on_disk.is_dir()


def test_a_certificate_failure_names_its_cause_and_the_profile_names_the_ca(real_mail: RealMail, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str],
                                                                            monkeypatch: pytest.MonkeyPatch, here):
    """`pbem inbox` over IMAPS and over STARTTLS: exit 11 naming the cause; after `pbem mail
    setup --ca-file`, the same command reads the mailbox. The first as a real process, the others
    through the same entry (pbem.cli.main) in this process."""
    s = real_mail
    home = tmp_path / "home-bob"
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "pw-bob")
    for url in (s.dovecot.url("bob", imaps=True), s.dovecot.url("bob")):
        here("mail", "setup", "--imap", url, home=home, ok=True)  # in this process: `inbox` is the point
        if url.startswith("imaps:"):
            run = pbem("inbox", home=home)
        else:
            code, err = main_here(["inbox"], home, capsys, monkeypatch)
            run = subprocess.CompletedProcess(["pbem", "inbox"], code, "", err)
        port = url.rsplit(":", 1)[1].split("/")[0]
        one_error_line(run, EXIT_CERTIFICATE, f"certificate verify failed: self-signed certificate in certificate "
                                              f"chain for 127.0.0.1:{port}")
        assert "--ca-file" in run.stderr  # the hint says how to trust a club's own CA
    out = here("mail", "setup", "--ca-file", s.ca, home=home, ok=True).stdout
    assert f"trusted CA file: {s.ca}" in out
    code, err = main_here(["inbox"], home, capsys, monkeypatch)
    assert code == 0 and "certificate" not in err, err


def test_a_ca_file_that_is_not_one_is_refused_and_nothing_is_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch, here):
    """Refused when it is named, by the command itself: no server is asked. The first as a real
    process, the rest through the same entry in this process."""
    home = tmp_path / "home-ann"
    here("mail", "setup", "--imap", "imaps://ann@127.0.0.1:1/INBOX", home=home, ok=True)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    one_error_line(pbem("mail", "setup", "--ca-file", junk, home=home), 2, "holds no PEM certificate")
    code, err = main_here(["mail", "setup", "--ca-file", tmp_path], home, capsys, monkeypatch)
    one_error_line(subprocess.CompletedProcess(["pbem"], code, "", err), 2, "not a regular file")
    shown = here("mail", "setup", home=home, ok=True)
    assert "CA file" not in shown.stdout + shown.stderr


@pytest.mark.people("ann")
def test_a_server_that_refuses_pbems_folders_is_one_line_exit_10(tmp_path: Path):
    """Dovecot whose ACL grants no right to create folders: CREATE is answered NO [NOPERM]; pbem
    says so once (exit 10) instead of failing every MOVE after it."""
    s = start_real_mail(Path(os.environ.get("TMPDIR", "/tmp")), ["ann"], ".", no_create=True)
    try:
        home = tmp_path / "home-ann"
        pbem("mail", "setup", "--imap", s.dovecot.url("ann"), "--ca-file", s.ca, home=home, ok=True)
        run = pbem("inbox", home=home, env={"PBEM_IMAP_PASSWORD": "pw-ann"})
        one_error_line(run, EXIT_MAIL_SERVER, f"the IMAP server 127.0.0.1:{s.dovecot.port} refuses CREATE pbem.done: "
                                              "[NOPERM]")
    finally:
        stop_real_mail(s, tmp_path)


def test_a_server_that_cannot_start_fails_the_test_with_its_log(tmp_path: Path):
    """Dovecot given a port another socket holds exits at once: RuntimeError with its log."""
    base = Path(tempfile.mkdtemp(prefix="pbem-mailsrv-", dir=os.environ.get("TMPDIR", "/tmp")))
    try:
        base.chmod(0o755)
        _, cert, key = private_ca(base)
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            server = Dovecot(base / "dovecot", {"ann": "pw-ann"}, "/", (cert, key), port=taken.getsockname()[1])
            with pytest.raises(RuntimeError, match=r"dovecot exited with \d+ while starting(.|\n)*Address already in use"):
                server.start()
            assert server.proc is None
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.people("ann")
def test_folders_go_under_the_personal_namespace_prefix(tmp_path: Path):
    """A server that keeps every folder under "INBOX." (NAMESPACE (("INBOX." "."))): pbem's
    folders are INBOX.pbem.done and INBOX.pbem.rejected, and settling works."""
    s = start_real_mail(Path(os.environ.get("TMPDIR", "/tmp")), ["host", "ann"], ".", prefix="INBOX.")
    try:
        send(compose(sender=s.address("host"), to=s.address("ann"), subject="hello", body_text="x\n",
                     attachment_name="x.txt", attachment=b"x"), _settings(s, "host", s.ca), "pw-host")
        _arrived(s, "ann")
        box = ImapFolder(ImapUrl.parse(s.dovecot.url("ann")), lambda: ("password", "pw-ann"), ca_file=str(s.ca))
        (label, _), = list(box.new_messages())
        box.settle(label, "rejected")
        box.close()
        assert box.folders == {"pbem/done": "INBOX.pbem.done", "pbem/rejected": "INBOX.pbem.rejected"}
        assert s.dovecot.count("ann") == 0 and s.dovecot.count("ann", "pbem/rejected") == 1
    finally:
        stop_real_mail(s, tmp_path)

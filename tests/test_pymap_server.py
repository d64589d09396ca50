"""The tests' IMAP server itself (tests/pymap_server.py): an idling client is told of each mail
within moments, two mails delivered at once included, and a message moved away leaves the
folder's uid list, as it leaves a real server's index (pymap kept it, and each look at the
folder then listed its files again once per message ever moved: whole games spent most of
their CPU there)."""

from __future__ import annotations

import imaplib
import mailbox
import time

import pytest
from mailservers import MailServers

TOLD_WITHIN = 0.5  # seconds; pymap's own look comes once a second


def _told(conn: imaplib.IMAP4, exists: int) -> float:
    """Seconds until the server says `* EXISTS` with this count, during an IDLE started now."""
    conn.send(b"I1 IDLE\r\n")
    assert conn.readline().startswith(b"+")
    started = time.monotonic()
    conn.sock.settimeout(5)
    while not conn.readline().startswith(b"* %d EXISTS" % exists):
        pass
    took = time.monotonic() - started
    conn.send(b"DONE\r\n")
    while not conn.readline().startswith(b"I1 OK"):
        pass
    return took


@pytest.mark.people("bob")
def test_an_idling_client_is_told_of_each_mail_and_a_moved_one_leaves_the_uid_list(mail_servers: MailServers) -> None:
    s = mail_servers
    conn = imaplib.IMAP4("127.0.0.1", s.imap.port)
    try:
        conn.login("bob", "pw-bob")
        assert conn.create('"pbem/done"')[0] == "OK"
        assert conn.select("INBOX")[0] == "OK"
        inbox = mailbox.Maildir(s.imap.maildir("bob"), create=False)
        for n in range(4):
            conn.send(b"I0 IDLE\r\n")
            assert conn.readline().startswith(b"+")
            time.sleep(0.1)  # the folder settles: the next look is a changed folder's
            conn.send(b"DONE\r\n")
            while not conn.readline().startswith(b"I0 OK"):
                pass
            for _ in range(2):  # two at once: within one tick of the folder's time stamp
                inbox.add(f"Subject: {n}\r\n\r\nhello\r\n".encode())
            assert _told(conn, 2) < TOLD_WITHIN
            typ, data = conn.uid("SEARCH", "ALL")
            for uid in data[0].split():
                assert conn.uid("MOVE", uid, '"pbem/done"')[0] == "OK"
        assert conn.select("INBOX")[1] == [b"0"] and conn.select('"pbem/done"')[1] == [b"8"]
    finally:
        conn.logout()
    records = (s.imap.maildir("bob") / "dovecot-uidlist").read_text().splitlines()[1:]
    assert records == []  # 8 mails moved: none left behind


@pytest.mark.people("bob")
def test_a_message_is_fetched_as_its_file_holds_it(mail_servers: MailServers) -> None:
    """What was delivered comes back byte for byte, a long header unfolded as it was written
    (pymap wrote each message out anew with the email package, folding it); pymap ends the
    lines it sends with LF, whatever the file holds."""
    s = mail_servers
    subject = "Subject: " + " ".join(f"word{n}" for n in range(40))  # far past 78 characters
    stored = f"From: ann@example.org\r\nTo: bob@example.org\r\n{subject}\r\n\r\nhello\r\n".encode()
    mailbox.Maildir(s.imap.maildir("bob"), create=False).add(stored)
    conn = imaplib.IMAP4("127.0.0.1", s.imap.port)
    try:
        conn.login("bob", "pw-bob")
        assert conn.select("INBOX")[0] == "OK"
        typ, got = conn.uid("FETCH", "1", "(BODY.PEEK[])")
        assert typ == "OK"
    finally:
        conn.logout()
    assert next(part[1] for part in got if isinstance(part, tuple)) == stored.replace(b"\r\n", b"\n")

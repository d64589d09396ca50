"""A trustless game in the club's store (SQLite and PostgreSQL) served by mail with a deadline:
`pbem host run` reads its mailbox on a real IMAP server (pymap) and sends through a real SMTP
server (aiosmtpd). The three seats join by mail; the table then waits for the first shuffle,
which never comes: the seat is mailed its reminder at half the deadline, and every seat the
late notice at the deadline, each notice signed and attached, each mailed once. The host is a
process of its own; `game new` and `game smtp` run as processes for the SQLite store and through
the command line's own entry in this process for the PostgreSQL one."""

from __future__ import annotations

import smtplib
import time
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from cli_games import start_imap
from folder_games import SEATS, keys_here
from mailservers import MailServers
from processes import pbem

from pbem.host.blind import BlindHost
from pbem.mail.player_mail import block_mail
from pbem.protocol.documents import Notice, read_blocks
from pbem.seat import keys, player


def _notices(s: MailServers, who: str) -> list[str]:
    """The notice attachments `who` was mailed (their file names), in no particular order."""
    out = []
    for f in s.imap.maildir(who).rglob("*"):
        if f.is_file() and f.parent.name in ("cur", "new"):
            mail = message_from_bytes(f.read_bytes(), policy=policy.default)
            out += [str(p.get_filename()) for p in mail.iter_attachments()
                    if str(p.get_filename() or "").startswith("notice-")]
    return out


@pytest.mark.slow
def test_a_trustless_game_in_the_store_mails_its_reminder_and_late_notice(mail_servers: MailServers,
                                                                         store_url: str, tmp_path: Path, here) -> None:
    s = mail_servers
    run = pbem if store_url.startswith("sqlite") else here  # the set-up as processes once
    homes = {n: tmp_path / f"home-{n}" for n in ["host", *SEATS]}
    pubs = keys_here({"referee" if n == "host" else n: h for n, h in homes.items()})
    args = [a for p in SEATS for a in ("--player", f"{p}={pubs[p]}", "--email", f"{p}={s.address(p)}")]
    run("game", "new", "t", "--host", "referee", *args, "--email", f"host={s.address('host')}", "--store", store_url,
        "--trustless", "--deadline", "4s", "--remind", "50%", home=homes["host"], cwd=tmp_path, ok=True)
    run("game", "smtp", "t", "--store", store_url, "--server", "127.0.0.1", "--port", s.smtp_port, "--security",
        "none", "--from", s.address("host"), home=homes["host"], cwd=tmp_path, ok=True)
    with BlindHost(store_url, game="t") as h:
        inv = read_blocks(h.invitation())[0]
    log = tmp_path / "host.log"
    host = start_imap(s, "host", ["host", "run", "t", "--store", store_url, "--send"], homes["host"], log)
    try:
        with smtplib.SMTP("127.0.0.1", s.smtp_port) as smtp:  # each seat's join, by mail
            for p in SEATS:
                joined = player.join(inv, keys.load_identity(homes[p], p, None), homes[p])
                smtp.send_message(block_mail(joined, sender=s.address(p), to=s.address("host")))
        until = time.monotonic() + 90
        while time.monotonic() < until and not all(any(n.endswith("-late.pbem") for n in _notices(s, p))
                                                   for p in SEATS):
            assert host.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        time.sleep(1)  # nothing more is due: a second pass must not mail a notice again
    finally:
        host.terminate()
        host.wait(30)
    text = log.read_text()
    with BlindHost(store_url, game="t") as h:
        status, notices = h.status(), h.notices()
    first = status["waiting"]["seats"][0]
    assert status["seq"] == 1 and status["waiting"]["step"] == "shuffle", (status, text[-3000:])
    kept = [read_blocks(n.armored)[0].expect(Notice).doc for n in notices]
    assert [(d.notice, d.seat, d.step) for d in kept] == [("reminder", first, "shuffle"), ("late", first, "shuffle")]
    for p in SEATS:  # the reminder to the seat waited for, the late notice to every seat, each once
        want = ["notice-000001-late.pbem"] + (["notice-000001-reminder.pbem"] if p == first else [])
        assert sorted(_notices(s, p)) == sorted(want), (p, _notices(s, p), text[-3000:])
    assert "Traceback" not in text

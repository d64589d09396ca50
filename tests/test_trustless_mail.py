"""A whole three-round trustless game by mail alone: the blind host and three bot seats, each a
separate process with its own mailbox on a real IMAP server (pymap), sending through a real
SMTP server (aiosmtpd), set up with the commands of docs/playing.md (`pbem game new
--trustless --email`, `pbem game smtp`, `pbem host run`, `pbem bot run`). Midway, a junk mail,
a mail of another game and a forged block reach the host: each is refused or passed over in
one log line, nothing is stored, the game goes on. Then every round is audited twice from the
chain alone: from the host's file, and from what one seat's `pbem inbox` kept of its mail.
"""

from __future__ import annotations

import json
import smtplib
import time
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
from pathlib import Path

import msgspec
import pytest
from cli_games import imap_game, start_imap
from folder_games import SEATS
from mailservers import MailServers
from process_tools import wait_all
from processes import pbem

from pbem.host.settings import Settings
from pbem.mail.player_mail import block_mail
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Mental, Packet, Signed, parse_relayed, read_blocks, sign


def mail_to_host(s: MailServers, msg: EmailMessage) -> None:
    with smtplib.SMTP("127.0.0.1", s.smtp_port) as smtp:
        smtp.send_message(msg)


def bad_mail(s: MailServers, packet: Signed[Packet]) -> list[EmailMessage]:
    """A junk mail, a seat's real block re-signed by a stranger, and the same for another game."""
    junk = EmailMessage()
    junk["From"], junk["To"], junk["Subject"] = "spam@example.org", s.address("host"), "cheap gold"
    junk.set_content("-----BEGIN PBEM MENTAL-----\nnot base64 at all\n-----END PBEM MENTAL-----\n")
    stranger = Identity.generate("mallory")
    relayed = packet.doc.relayed or []
    real = parse_relayed(relayed[-1], "a block").expect(Mental).doc
    forged = sign(real, stranger)
    other = sign(msgspec.structs.replace(real, game="other-12345678"), stranger)
    return [junk, block_mail(other, sender="mallory@example.org", to=s.address("host")),
            block_mail(forged, sender="mallory@example.org", to=s.address("host"))]


def mail_sizes(s: MailServers, who: str) -> list[int]:
    """The size of every mail `who` received (read ones are in pbem/done, refused ones in pbem/rejected)."""
    root = s.imap.maildir(who)
    return [f.stat().st_size for f in root.rglob("*") if f.is_file() and f.parent.name in ("cur", "new")]


@pytest.mark.slow
@pytest.mark.game
def test_a_whole_trustless_game_by_mail_with_bad_mail_midway(tmp_path: Path, mail_servers: MailServers, here) -> None:
    s = mail_servers
    # the commands of docs/playing.md §4, in this process (test_imap_game.py runs them as processes)
    db, homes = imap_game(tmp_path, s, "--trustless", here=here)
    started = time.monotonic()
    procs = [start_imap(s, "host", ["host", "run", "t", "--db", str(db), "--send"], homes["host"],
                        tmp_path / "host.log")]
    procs += [start_imap(s, p, ["bot", "run", "--as", p, "--seed", f"seed-{p}", "--send", "--smtp-server", "127.0.0.1",
                           "--smtp-port", str(s.smtp_port), "--smtp-security", "none", "--from", s.address(p)],
                    homes[p], tmp_path / f"bot-{p}.log") for p in SEATS]
    from pbem.host.blind import BlindHost

    deadline, injected = time.monotonic() + 600, None
    with BlindHost(db) as h:  # one reader, its table followed on from packet to packet
        while time.monotonic() < deadline and injected is None:  # in round 1's play, the bad mail comes in
            if any(p.poll() is not None for p in procs):
                break
            st = h.status()
            if st["waiting"]["step"] == "move" and st["seq"] >= 10:
                before = (st["seq"], h.packets())
                packet = read_blocks(h.packet(st["seq"]) or "")[0]
                for msg in bad_mail(s, packet.expect(Packet)):
                    mail_to_host(s, msg)
                injected = before
            time.sleep(0.2)
    wait_all(procs, timeout=1200)  # a few minutes on this shared machine
    wall = time.monotonic() - started
    logs = {p.name: p.read_text() for p in tmp_path.glob("*.log")}
    assert injected is not None, {k: v[-3000:] for k, v in logs.items()}
    assert all(p.returncode == 0 for p in procs), {k: v[-3000:] for k, v in logs.items()}
    host_log = logs["host.log"]
    # the bad mail: each refused or passed over in one line, the game went on
    rejected = [line for line in host_log.splitlines() if "rejected" in line]
    # bad mail only: the junk and the forgery, one line each (no seat's real block)
    assert len(rejected) == 2 and sum("signed by key" in line for line in rejected) == 1, rejected
    assert "ignored" in host_log and "for game other-12345678" in host_log, host_log[-4000:]
    assert "not signed by" in host_log or "signed by key" in host_log, host_log[-4000:]
    assert s.imap.count("host", "pbem/rejected") == 2  # the junk and the forgery; the other game's is left
    assert "Traceback" not in host_log and " is over after packet " in host_log
    with BlindHost(db) as h:
        chain = h.packets()
        game = h.game_id()
    seq, kept = injected
    assert chain[:len(kept)] == kept  # nothing the host had was changed by the bad mail
    # every round audited from the chain alone: the host's file, and what ann received by mail
    # the host's file by a process of its own; ann's files meanwhile in this process (the same command)
    with ThreadPoolExecutor(max_workers=1) as pool:
        by_process = pool.submit(pbem, "audit", "--db", db, "--json", home=homes["host"], timeout=600)
        anns = here("audit", homes["ann"] / "games" / game, "--json", home=homes["ann"])
        audits = [by_process.result(), anns]  # ann's last: its report is the one the loop leaves
    for audit in audits:
        assert audit.returncode == 0, audit.stderr
        report = json.loads(audit.stdout)
        assert report["ok"] and report["step"] == "over" and report["packets"] == len(chain), report
        assert [r["round"] for r in report["rounds"]] == [1, 2, 3]
    assert report["anchored"]  # ann's audit trusts the invitation she joined
    for p in SEATS:
        assert "the game is over" in logs[f"bot-{p}.log"]
        assert s.imap.count(p) == 0 and s.imap.count(p, "pbem/rejected") == 0
    # what travelled: each seat's mail from the host (every packet once: the audit above), the
    # seats' blocks and the host's own copies in the host's mailbox
    copies = host_log.count(" to host <")
    sizes = {p: sorted(mail_sizes(s, p)) for p in [*SEATS, "host"]}
    for p in SEATS:
        assert len(sizes[p]) == s.handler.per_address[s.address(p)] and len(sizes[p]) < len(chain) / 2
    print(f"\ntrustless 3-round game by IMAP+SMTP: {len(chain)} packets, {wall:.0f} s wall (test {time.monotonic() - started:.0f} s)")
    for p, v in sizes.items():
        print(f"  {p}: {len(v)} mails received ({copies} the host's own copies)" if p == "host" else
              f"  {p}: {len(v)} mails received", f"{sum(v) / 1024:.0f} KiB in all, median {v[len(v) // 2] / 1024:.1f} KiB, "
              f"largest {', '.join(f'{x / 1024:.0f}' for x in v[-3:])} KiB")


def _tables(db: Path) -> list[tuple]:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return [*con.execute("SELECT * FROM trustless_joins ORDER BY seat"),
                *con.execute("SELECT * FROM trustless_packets ORDER BY seq")]
    finally:
        con.close()


@pytest.mark.slow
def test_bad_mail_to_the_blind_host_is_refused_in_one_line_and_nothing_is_stored(tmp_path: Path, here) -> None:
    """Mail read from files (`host run --maildir --to-dir --once`): a junk mail, a mail of another
    game and a join signed by a stranger are each refused or passed over in one line; the
    game's joins and packets are as they were; ann's real join is then taken; the invitation
    and later packets go out as mail (.eml), each to every seat with an address."""
    from folder_games import make_homes

    from pbem.host import blind
    from pbem.mail.message import write_eml
    from pbem.seat import keys
    from pbem.seat import player as P

    homes = make_homes(tmp_path, ["referee", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = tmp_path / "saves" / "t.db"
    inv = blind.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    with blind.BlindHost(db) as h:
        for s in SEATS:
            h.set_email(s, f"{s}@example.org")
    inbox, out = tmp_path / "maildir", tmp_path / "sent"
    junk = EmailMessage()
    junk["From"], junk["To"], junk["Subject"] = "spam@example.org", "host@example.org", "cheap gold"
    junk.set_content("-----BEGIN PBEM JOIN-----\nnot base64 at all\n-----END PBEM JOIN-----\n")
    write_eml(junk, inbox)
    real = P.join(inv, ids["ann"], homes["ann"])
    stranger = Identity.generate("mallory")
    forged = sign(real.doc, stranger)  # ann's join, signed by somebody else
    other = sign(msgspec.structs.replace(real.doc, game="other-12345678"), ids["ann"])
    for block in (forged, other):
        write_eml(block_mail(block, sender="mallory@example.org", to="host@example.org"), inbox)
    before = _tables(db)
    args = ["host", "run", "t", "--db", db, "--maildir", inbox, "--to-dir", out, "--once"]
    said = here(*args, home=homes["referee"], ok=True).stdout
    lines = [line for line in said.splitlines() if "pbem-" in line and (" rejected " in line or " ignored " in line)]
    assert len(lines) == 3, said
    assert any("not base64" in line or "truncated" in line or "join block" in line for line in lines), lines
    assert any("for game other-12345678" in line for line in lines) and any("not the seat's key" in line for line in lines)
    assert "Traceback" not in said and _tables(db) == before
    mailed = sorted(out.glob("*.eml"))
    assert len(mailed) == 3 and all("invitation" in p.read_text() for p in mailed)  # one per seat
    write_eml(block_mail(real, sender="ann@example.org", to="host@example.org"), inbox)
    said = here(*args, home=homes["referee"], ok=True).stdout
    assert "ann joined (key shares checked)" in said, said
    with blind.BlindHost(db) as h:
        assert h.status()["seats"][0]["joined"] and h.packets() == []
        assert h.delivered("mail") == 0  # the invitation is not mailed again by a restarted host
    assert len(sorted(out.glob("*.eml"))) == 3
    # `host run --all` serves it beside the store over the mail it was set up with
    for s in ("bob", "cat"):
        write_eml(block_mail(P.join(inv, ids[s], homes[s]), sender=f"{s}@example.org", to="host@example.org"), inbox)
    said = here("host", "run", "--all", "--once", "--store", tmp_path / "saves" / "pbem.db", home=homes["referee"], ok=True).stdout
    assert "everyone is in: packet 1" in said, said
    first = sorted(set(out.glob("*.eml")) - set(mailed))
    assert len(first) == 3 and all("packet-000001.pbem" in p.read_text() for p in first)  # ann's turn, the others' digests
    assert sum("the table waits for your shuffle" in p.read_text() for p in first) == 1
    # `pbem inbox` routes a trustless block to its blind host too: ann's shuffle, by --db and by saves/
    from pbem.protocol.documents import Packet, read_blocks
    from pbem.seat.trustless import TrustlessSeat

    with blind.BlindHost(db) as h:
        ann = TrustlessSeat(inv, ids["ann"], "ann")
        ann.follow(read_blocks(h.packet(1) or "")[0].expect(Packet))
    shuffle = ann.owed()
    assert shuffle is not None
    mailbox = tmp_path / "read-by-inbox"
    write_eml(block_mail(shuffle, sender="ann@example.org", to="host@example.org"), mailbox)
    # a player's inbox beside the host's file (one machine, one saves/) saves the invitation as a player's
    invited = tmp_path / "invited"
    from pbem.mail.host_mail import invitation_mail

    write_eml(invitation_mail(Settings(), "host@example.org", "ann", "ann@example.org", inv.armored()).message, invited)
    said = here("inbox", invited, "--db", db, home=homes["ann"], ok=True).stdout
    assert "invitation to t-" in said and "join with: pbem mail-join" in said and "our own game" not in said, said
    said = here("inbox", invited, "--again", "--db", db, home=homes["referee"], ok=True).stdout
    assert "our own game" in said, said
    said = here("inbox", mailbox, "--db", db, home=homes["referee"], ok=True).stdout
    assert "ann shuffled every stack (2 to go): packet 2" in said, said
    said = here("inbox", mailbox, "--again", "--saves", tmp_path / "saves", home=homes["referee"], ok=True).stdout
    assert "already relayed; nothing changed" in said, said
    with blind.BlindHost(db) as h:
        assert [s for s, _ in h.packets()] == [1, 2] and h.status()["waiting"]["seats"] == ["bob"]
    # deadlines by mail: bob is late with his shuffle; the late notice is mailed to every seat,
    # and a seat's `pbem inbox` keeps it (signed by the game's host) for `pbem turn`
    import time

    from pbem.host.deadlines import Timing
    from pbem.seat.home import saved_notices

    with blind.BlindHost(db) as h:
        h.set_timing(Timing(deadline=0.2, reminders=[]))  # bob's shuffle is due a moment from now
    time.sleep(0.3)
    before_late = set(out.glob("*.eml"))
    said = here(*args, home=homes["referee"], ok=True).stdout
    assert "bob is late with their shuffle" in said, said
    late = [p for p in sorted(set(out.glob("*.eml")) - before_late) if "bob is late with their shuffle" in p.read_text()]
    assert len(late) == 3  # one to each seat (beside packet 2's mail to bob, whose turn it is)
    said = here("inbox", *late, home=homes["ann"], ok=True).stdout
    assert "bob is late with their shuffle" in said, said
    assert [(n.notice, n.seat, n.step) for n in saved_notices(homes["ann"], inv.game)] == [("late", "bob", "shuffle")]
    assert here(*args, home=homes["referee"], ok=True).stdout.count("is late") == 0  # said once

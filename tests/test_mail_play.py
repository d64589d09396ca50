"""Mail play end to end: a real SMTP server (aiosmtpd) delivering into a real Maildir.

The host mails packets over SMTP; the seats (bots holding only their own key) read them
back from the Maildir, answer by mail through the same server, and the host reads the
answers. Real key files, a real SQLite file, real .eml files.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from folder_games import SEATS, make_homes
from process_tools import free_port
from processes import cli_env, one_error_line
from sqlalchemy import event

from engine.rules import legal_moves
from pbem.auto.host_runner import MailHost
from pbem.auto.seat_bot import MailBot
from pbem.errors import StaleMove, UsageError
from pbem.host import referee as H
from pbem.host.clock import FakeClock
from pbem.host.deadlines import Timing
from pbem.mail.courier import Courier, smtp_settings
from pbem.mail.incoming import MailScanner, message_blocks
from pbem.mail.message import SmtpSettings, compose, send
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import read_blocks, read_file
from pbem.seat import keys
from pbem.seat import player as P
from pbem.seat.home import latest_saved_packet, move_path

HOST_ADDR = "referee@example.org"
EMAILS = {**{s: f"{s}@example.org" for s in SEATS}, "host": HOST_ADDR}


@pytest.fixture
def smtp(tmp_path: Path):
    maildir = tmp_path / "Maildir"
    port = free_port()
    controller = Controller(Mailbox(str(maildir)), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield maildir, port
    finally:
        controller.stop()


def mail_game(root: Path, clock: FakeClock | None = None, timing: Timing | None = None) -> tuple[Path, dict[str, Path]]:
    homes = make_homes(root, ["referee", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = root / "saves" / "t.db"
    H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [], EMAILS,
                  timing=timing.to_config() if timing else None, **({"clock": clock} if clock else {}))
    return db, homes


@dataclass
class Polled:
    """A game by mail in one Maildir: its MailHost and a MailBot a seat, each stepped by hand."""

    db: Path
    homes: dict[str, Path]
    ids: dict[str, Identity]
    host: H.Host
    mail_host: MailHost
    host_log: list[str]
    bots: dict[str, MailBot]
    logs: dict[str, list[str]]


def polled_game(root: Path, smtp: tuple[Path, int], clock: FakeClock | None = None,
                timing: Timing | None = None) -> Polled:
    maildir, port = smtp
    db, homes = mail_game(root, clock, timing)
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    host = H.Host(db, ids["referee"], *([clock] if clock else []))
    host_log: list[str] = []
    mail_host = MailHost(host, MailScanner([maildir]), Courier(SmtpSettings("127.0.0.1", port, "none", None, HOST_ADDR)),
                         host_log.append)
    logs: dict[str, list[str]] = {s: [] for s in SEATS}
    bots = {s: MailBot(MailScanner([maildir]), ids[s], homes[s], HOST_ADDR,
                       Courier(SmtpSettings("127.0.0.1", port, "none", None, EMAILS[s])), EMAILS[s],
                       seed=f"mail-{s}", log=logs[s].append) for s in SEATS}
    return Polled(db, homes, ids, host, mail_host, host_log, bots, logs)


def joined_by_eml(here, db: Path, homes: dict[str, Path], outbox: Path) -> str:
    """Invitations mailed as .eml files into `outbox`, every seat joins by mail, and packet 1 is
    mailed to everyone: what `pbem mail` said of packet 1."""
    replies = outbox.parent / f"{outbox.name}-replies"
    here("mail", "t", "--db", db, "--to-dir", outbox, home=homes["referee"], ok=True)
    for s in SEATS:
        here("inbox", outbox, home=homes[s], ok=True)
        here("mail-join", next((homes[s] / "invitations").glob("*.pbem")), "--as", s, "--to", HOST_ADDR, "--to-dir",
             replies, home=homes[s], ok=True)
    here("inbox", replies, "--db", db, home=homes["referee"], ok=True)
    return here("mail", "t", "--db", db, "--to-dir", outbox, home=homes["referee"], ok=True).stdout


def messages(maildir: Path):
    out = []
    for sub in ("new", "cur"):
        for p in sorted((maildir / sub).iterdir()):
            with p.open("rb") as f:
                out.append(BytesParser(policy=policy.default).parse(f))
    return out


@pytest.mark.slow
def test_a_round_by_mail_through_a_real_smtp_server(tmp_path: Path, smtp, here) -> None:
    maildir, port = smtp
    db, homes = mail_game(tmp_path)
    out = here("game", "smtp", "t", "--db", db, "--server", "127.0.0.1", "--port", port, "--security", "none",
               "--from", HOST_ADDR, home=homes["referee"], ok=True).stdout
    assert f"127.0.0.1:{port} (none)" in out

    # the invitation goes out with 'pbem mail --send': one mail per seat, one to the host
    out = here("mail", "t", "--db", db, "--send", home=homes["referee"], ok=True).stdout
    assert out.count("invitation to ") == 4 and "sent to ann@example.org" in out
    invites = messages(maildir)
    assert sorted(m["To"] for m in invites) == sorted(EMAILS.values())
    ann_invite = next(m for m in invites if m["To"] == "ann@example.org")
    assert re.fullmatch(r"\[pbem t-[0-9a-f]{8}\] invitation to t \(classic\): you are seat ann", ann_invite["Subject"])

    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    host = H.Host(db, ids["referee"])
    host_log: list[str] = []
    mail_host = MailHost(host, MailScanner([maildir]), Courier(settings=smtp_settings(host.settings())), host_log.append)
    bot_log: list[str] = []
    bots = [MailBot(MailScanner([maildir]), ids[s], homes[s], HOST_ADDR,
                    Courier(settings=SmtpSettings("127.0.0.1", port, "none", None, EMAILS[s])), EMAILS[s],
                    kind="smart", seed=f"mail-{s}", log=bot_log.append) for s in SEATS]
    started = time.monotonic()
    for _ in range(400):
        for b in bots:
            b.step()
        mail_host.step()
        if host.status()["round"] >= 2:
            break
    for b in bots:  # the seats read the packet that closed the round (and do not answer yet)
        b.read()
    wall = time.monotonic() - started
    st = host.status()
    assert st["round"] == 2, (host_log[-5:], bot_log[-5:])
    mails = messages(maildir)
    print(f"\nround 1 by SMTP: {st['seq'] - 1} moves, {len(mails)} mails, {wall:.1f}s wall, "
          f"{(st['seq'] - 1) / wall:.1f} moves/s")
    n_moves = len(host.archives())  # round 1 is archived
    assert n_moves == 1
    applied = [line for line in host_log if "applied" in line]
    joined = [line for line in host_log if "joined" in line]
    assert len(joined) == 3 and len(applied) == st["seq"] - 1

    # what a person sees: the subject, the summary in words, the armour, the attachment
    subjects = [m["Subject"] for m in mails]
    assert any(re.fullmatch(r"\[pbem t-[0-9a-f]{8}\] your turn, \w+: round 1, packet 2", s) for s in subjects)
    closing = [s for s in subjects if " round 1 over; round 2, packet " in s]
    assert len(closing) == 4, subjects[-8:]
    last = next(m for m in mails if m["Subject"] == closing[0] and m["To"] == "ann@example.org")
    body = last.get_body(("plain",)).get_content()
    assert "Round 1 is over." in body and "Since your last mail, " in body
    assert "-----BEGIN PBEM PACKET-----" in body and "-----BEGIN PBEM ARCHIVE-----" in body
    names = [part.get_filename() for part in last.iter_attachments()]
    assert names == [f"packet-{st['seq']:06d}.pbem"]
    moves_mailed = [m for m in mails if ": move by " in m["Subject"]]
    answered = sorted(int(re.search(r"packet (\d+): move by", m["Subject"])[1]) for m in moves_mailed)
    assert answered[: st["seq"] - 1] == list(range(1, st["seq"]))  # one move per packet
    assert {m["To"] for m in moves_mailed} == {HOST_ADDR}

    # each seat's key home holds every packet; 'pbem turn GAME' shows the latest
    for s in SEATS:
        latest = latest_saved_packet(homes[s], st["game"])
        assert latest is not None and latest.name == f"packet-{st['seq']:06d}.pbem"
    out = here("turn", st["game"], "--as", "ann", "--json", home=homes["ann"], ok=True).stdout
    assert json.loads(out)["seq"] == st["seq"]

    # reading the whole mailbox again changes nothing: every join and move is a duplicate
    before = host.status()
    send(compose(sender="spam@example.net", to=HOST_ADDR, subject="cheap watches", body_text="hi",
                 attachment_name="x.txt", attachment=b"nothing"),
         SmtpSettings("127.0.0.1", port, "none", None, "spam@example.net"), None)
    out = here("inbox", maildir, "--db", db, home=homes["referee"], ok=True).stdout
    lines = out.splitlines()
    assert not [line for line in lines if "applied" in line and "already" not in line]
    assert sum("was already applied" in line for line in lines) == st["seq"] - 1 + 3 - 3 + 3
    assert sum("not a pbem mail" in line for line in lines) == 1
    assert host.status() == before
    # and a seat reading it saves nothing new
    out = here("inbox", maildir, "--saves", tmp_path / "nowhere", home=homes["bob"], ok=True).stdout
    assert "saved packet" not in out and "already saved" in out
    host.close()


def test_a_waiting_mail_bot_and_host_do_not_read_again_what_they_read(tmp_path: Path, smtp) -> None:
    """A bot polls its mail many times a second while the host's next packet is on its way.
    Its move went out: it does not read the kept move back at each poll (a signature check
    and a decryption each time). Damaged after it was mailed, it is not looked at again; the
    host applies the mailed move and the game goes on. The host's idle passes are cheap too."""
    g = polled_game(tmp_path, smtp)
    homes, host, mail_host, host_log, bots, logs = g.homes, g.host, g.mail_host, g.host_log, g.bots, g.logs
    for _ in range(10):  # the invitations, the joins, packet 1: ann's turn, her move mailed
        mail_host.step()
        for b in bots.values():
            b.step()
        if any("packet 1: " in line for line in logs["ann"]):
            break
    game = host.game_id()
    kept = move_path(homes["ann"], game, "ann", 1)
    assert kept.is_file() and host.head()[0] == 1, (host_log, logs["ann"])
    kept.write_text("damaged after it went out")
    for _ in range(3):
        assert bots["ann"].step() is False  # waits: nothing read back, nothing mailed again
    assert not [line for line in logs["ann"] if "mailed again" in line]
    mail_host.step()
    assert host.head()[0] == 2 and any("applied ann's move" in line for line in host_log), host_log
    # the host polls too: a pass with no mail and nothing due mails once, and asks the store
    # each thing once (21 statements a pass when it mailed twice and asked the head again)
    assert mail_host.step() is False  # reads its own packet 2 mail to bob (one mailbox for all here)
    asked: list[str] = []
    event.listen(host.store.engine, "before_cursor_execute", lambda *a: asked.append(a[2]))
    for _ in range(5):
        assert mail_host.step() is False
    assert len(asked) <= 5 * 12, sorted(set(asked))
    bots["bob"].step()
    assert any("packet 2: " in line for line in logs["bob"]), logs["bob"]
    host.close()


def test_a_polling_host_asks_the_store_nothing_until_it_changes_or_the_clock_is_due(tmp_path: Path, smtp) -> None:
    """A host polling its mailbox many times a second: while the store is as its last whole
    pass left it and nothing is due on the clock, a pass looks at the mailbox and asks the store
    nothing. A move applied by another host on the same store and a reminder coming due are each
    acted on at the next pass."""
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    g = polled_game(tmp_path, smtp, clock, Timing(deadline=3600))
    db, homes, ids, host, mail_host, host_log, bots = g.db, g.homes, g.ids, g.host, g.mail_host, g.host_log, g.bots
    for _ in range(10):  # the invitations, the joins, packet 1 mailed to ann
        mail_host.step()
        for s in ("bob", "cat"):
            bots[s].step()
        bots["ann"].read()
        if host.head()[0] == 1:
            break
    for _ in range(3):  # its own mails read and settled: as quiet as it gets
        mail_host.step()
    asked: list[str] = []
    event.listen(host.store.engine, "before_cursor_execute", lambda *a: asked.append(a[2]))
    for _ in range(5):
        assert mail_host.step() is False
        mail_host.wait(0)
    assert asked == []  # 11 statements a pass when every pass read the store
    # ann's move, taken by another host on the same store (it came to that one): this one's next
    # pass, with no mail to read, mails the packet that made to bob, whose turn it is
    latest = latest_saved_packet(homes["ann"], host.game_id())
    assert latest is not None
    sp = P.open_packet(read_file(latest)[0], ids["ann"], homes["ann"])
    with H.Host(db, ids["referee"], clock) as other:
        other.accept(P.make_move(sp, str(legal_moves(sp.view)[0])))
        assert other.head()[0] == 2
    del host_log[:]
    mail_host.step()
    assert asked and any("bob@example.org" in line for line in host_log), host_log
    # digests every 25 minutes from now on (set by another host): quiet until cat's is due on
    # the host's clock, then mailed at once; bob's reminder (at half his hour) likewise
    with H.Host(db, ids["referee"], clock) as other:
        other.set_settings(digest="25m")
    for _ in range(3):
        mail_host.step()
    del asked[:], host_log[:]
    mail_host.step()
    assert asked == [] and host_log == []
    clock.advance(1550)
    mail_host.step()
    assert [line for line in host_log if "cat@example.org" in line and "(digest)" in line], host_log
    assert not [line for line in host_log if "reminder" in line]
    for _ in range(3):
        mail_host.step()
    del asked[:]
    mail_host.step()
    assert asked == []
    clock.advance(300)
    mail_host.step()
    assert [line for line in host_log if "reminder" in line], host_log[-3:]
    host.close()


def test_mail_by_eml_files_without_smtp(tmp_path: Path, here) -> None:
    """Players who use their own mail client: .eml files out, .eml files in."""
    db, homes = mail_game(tmp_path)
    out = here("game", "email", "t", "--db", db, "cat=cat@example.net", "bob=", home=homes["referee"], ok=True).stdout
    assert "cat: cat@example.net" in out and "bob:" not in out
    outbox = tmp_path / "outbox"
    out = here("mail", "t", "--db", db, "--to-dir", outbox, home=homes["referee"], ok=True).stdout
    assert out.count("invitation to ") == 3  # ann, cat and the host; bob has no address now
    inv_mail = next(p for p in outbox.glob("*.eml") if b"To: ann@example.org" in p.read_bytes())

    # the seats read the invitation and mail their joins (bob got his by other means)
    replies = tmp_path / "replies"
    for s in SEATS:
        out = here("inbox", inv_mail, home=homes[s], ok=True).stdout
        assert "invitation to t-" in out
        inv = next((homes[s] / "invitations").glob("*.pbem"))
        out = here("mail-join", inv, "--as", s, "--to", HOST_ADDR, "--to-dir", replies, home=homes[s], ok=True).stdout
        assert f"join of {s}" in out
    out = here("inbox", replies, "--db", db, home=homes["referee"], ok=True).stdout
    assert "round 1 dealt, packet 1" in out
    game = H.Host(db).game_id()

    # packet 1 by mail to everyone with an address; bob reads ann's copy (content, not address)
    here("mail", "t", "--db", db, "--to-dir", outbox, home=homes["referee"], ok=True)
    packet_mail = sorted(p for p in outbox.glob("*.eml") if b"round 1, packet 1" in p.read_bytes())[0]
    for s in SEATS:
        out = here("inbox", packet_mail, home=homes[s], ok=True).stdout
        assert "saved packet 1" in out
    sp = P.open_packet(read_file(latest_saved_packet(homes["ann"], game))[0],
                       keys.load_identity(homes["ann"], "ann", None), homes["ann"])
    mover = sp.doc.to_move
    msp = P.open_packet(read_file(latest_saved_packet(homes[mover], game))[0],
                        keys.load_identity(homes[mover], mover, None), homes[mover])
    text = str(legal_moves(msp.view)[0])
    moves = tmp_path / "moves"
    out = here("mail-move", game, text, "--as", mover, "--to", HOST_ADDR, "--to-dir", moves, home=homes[mover], ok=True).stdout
    assert "move for packet 1" in out
    # asking again mails the same move, never a second one (and a different one is refused: exit 5)
    result = here("mail-move", game, "pass", "--as", mover, "--to", HOST_ADDR, "--to-dir", moves, home=homes[mover], ok=text == "pass")
    assert result.returncode == (0 if text == "pass" else StaleMove.exit_code), result.stderr
    assert "already answered packet 1" in result.stdout + result.stderr
    # the automatic host, one pass over a folder of .eml: applies it, mails packet 2
    out = here("host", "run", "t", "--db", db, "--maildir", moves, "--once", "--to-dir", outbox, home=homes["referee"], ok=True).stdout
    # packet 2 would go to the seat whose turn it is, bob, who has no address; the others had
    # packet 1 and wait for a digest (12 hours by default)
    assert "applied" in out and "mailed packet" not in out, out
    out = here("mail", "t", "--db", db, "--to-dir", outbox, home=homes["referee"], ok=True).stdout  # by hand: the latest, to everyone
    assert "packet 2 to ann" in out and "packet 2 to cat" in out
    assert any(b"round 1, packet 2" in p.read_bytes() for p in outbox.glob("*.eml"))
    # the host's key home remembers what 'host run' read: 'pbem inbox' skips it, and reads it
    # again when asked to, as duplicates
    said = here("inbox", moves, "--db", db, home=homes["referee"], ok=True).stdout
    assert "no new mail" in said and "skipped 2 messages read before" in said, said
    out = here("inbox", moves, "--db", db, "--json", "--again", home=homes["referee"], ok=True).stdout
    kinds = [r["outcome"] for r in json.loads(out)]
    assert kinds == ["duplicate", "duplicate"]
    out = here("mail", "t", "--db", db, "--pending", "--to-dir", outbox, home=homes["referee"], ok=True).stdout
    assert out.strip() == "nothing new to mail"

    # a bot on a seat by mail: it finds its invitation in the mailbox, joins, writes an .eml
    db2, homes2 = mail_game(tmp_path / "second")
    here("mail", "t", "--db", db2, "--to-dir", tmp_path / "box2", home=homes2["referee"], ok=True)
    out = here("bot", "run", "--as", "bob", "--maildir", tmp_path / "box2", "--to", HOST_ADDR, "--to-dir",
               tmp_path / "bob-out", "--once", home=homes2["bob"], ok=True).stdout
    assert "joined t-" in out and "as bob" in out
    out = here("inbox", tmp_path / "bob-out", "--db", db2, home=homes2["referee"], ok=True).stdout
    assert "bob joined; waiting for ann and cat" in out
    # the mail's blocks really are the move, sealed: the text is not readable in the mail
    eml = sorted(moves.glob("*.eml"))[0]
    assert text.encode() not in eml.read_bytes()
    blocks, errors = message_blocks(next(iter(MailScanner([eml]).new_messages()))[1])
    assert [b.kind for b in blocks] == ["move"] and not errors


@pytest.mark.slow
def test_away_and_handover_by_mail(tmp_path: Path, here) -> None:
    """A seat of a mail game sends its away request and hands its seat over by mail, naming
    only the game; the host applies both from its mailbox."""

    db, homes = mail_game(tmp_path)
    outbox = tmp_path / "outbox"
    joined_by_eml(here, db, homes, outbox)
    game = H.Host(db).game_id()
    for s in SEATS:
        here("inbox", outbox, home=homes[s], ok=True)
    asks = tmp_path / "asks"
    out = here("away", game, "--until", "3d", "--as", "ann", "--to", HOST_ADDR, "--to-dir", asks, home=homes["ann"], ok=True).stdout
    assert "request of ann: wrote " in out
    new_key = keys.create_identity(tmp_path / "home-eve", "eve", None).public.encode()
    out = here("handover", game, "--key", new_key, "--as", "bob", "--to", HOST_ADDR, "--to-dir", asks, home=homes["bob"], ok=True).stdout
    assert "handover of bob: wrote " in out
    subjects = sorted(BytesParser(policy=policy.default).parse(p.open("rb"))["Subject"] for p in asks.glob("*.eml"))
    assert subjects == [f"[pbem {game}] away: ann", f"[pbem {game}] handover: bob"]
    results = json.loads(here("inbox", asks, "--db", db, "--json", home=homes["referee"], ok=True).stdout)
    assert len(results) == 2 and not [r for r in results if r["outcome"] == "refused"], results
    host = H.Host(db)
    try:
        st = host.status()
        bob = next(x for x in st["seats"] if x["name"] == "bob")
        assert bob["fingerprint"] == PublicKey.decode(new_key).fingerprint()
        assert [h["by"] for h in st["handovers"]] == ["bob"]
        assert host.standings()["ann"].away_until
    finally:
        host.close()
    assert "away" in [r["outcome"] for r in results], results

    # eve, who never saw the game, gets it by mail once the host has her address for seat bob:
    # the invitation and the packet that handed her the seat, and she plays bob from her key alone
    eve_home, welcome = tmp_path / "home-eve", tmp_path / "welcome"
    here("mail", "t", "--db", db, "--pending", "--to-dir", outbox, home=homes["referee"], ok=True)
    here("game", "email", "t", "bob=eve@example.org", "--db", db, home=homes["referee"], ok=True)
    said = here("mail", "t", "--db", db, "--pending", "--to-dir", welcome, home=homes["referee"], ok=True).stdout
    (mail,) = [BytesParser(policy=policy.default).parse(p.open("rb")) for p in welcome.glob("*.eml")]
    assert mail["To"] == "eve@example.org" and "(a new reader)" in said, said
    kinds = [b.kind for b in read_blocks(mail.get_body(("plain",)).get_content())]
    assert kinds == ["invitation", "packet"], kinds  # the invitation first: her key home checks the packet by it
    stranger = here("inbox", welcome, "--json", home=tmp_path / "home-cat2", ok=True).stdout  # no key holds a seat
    assert "not a game you joined" in stranger
    keys.create_identity(tmp_path / "home-cat2", "cat2", None)
    assert "not a game you joined" in here("inbox", welcome, "--again", home=tmp_path / "home-cat2", ok=True).stdout
    assert not (tmp_path / "home-cat2" / "games").exists()
    said = here("inbox", welcome, home=eve_home, ok=True).stdout
    assert "hands seat bob to your key (host referee, key " in said and f"pbem mail-join {game}" in said, said
    assert not (eve_home / "games" / game / "invitation.pbem").exists()  # offered, not taken
    said = here("mail-join", game, "--as", "eve", home=eve_home, ok=True).stdout
    assert f"you took seat bob of {game}, handed to your key at packet 2" in said, said
    shown = here("turn", game, "--as", "eve", home=eve_home, ok=True).stdout
    assert "seat bob" in shown or "bob *" in shown, shown
    again = here("mail", "t", "--db", db, "--pending", "--to-dir", welcome, home=homes["referee"], ok=True).stdout
    assert len(list(welcome.glob("*.eml"))) == 1, again  # welcomed once
    # a target that is neither a folder, a packet file nor a joined game: one line
    bad = here("resign", "no-such-game", "--as", "ann", "--to-dir", asks, home=homes["ann"])
    one_error_line(bad, UsageError.exit_code, "no packet of game 'no-such-game'")


def test_a_seat_reading_its_mail_loads_no_store_code(tmp_path: Path) -> None:
    """`pbem inbox` for a player (no host store about), `pbem turn GAME` and a seat's bot route
    mail into the key home only: the host's store code (SQLAlchemy: about 0.2 s of CPU at each
    start) is not loaded. The real command line, in a fresh interpreter."""
    home = make_homes(tmp_path, ["ann"])["ann"]
    box = tmp_path / "mail"
    box.mkdir()
    (box / "1.eml").write_bytes(bytes(compose(sender="host@example.org", to="ann@example.org", subject="hello",
                                              body_text="not pbem", attachment_name="x.txt", attachment=b"x")))
    probe = ("import atexit, runpy, sys\n"
             "atexit.register(lambda: print('store code loaded:', 'sqlalchemy' in sys.modules))\n"
             "sys.argv = ['pbem', *sys.argv[1:]]\n"
             "runpy.run_module('pbem', run_name='__main__')\n")
    run = subprocess.run([sys.executable, "-c", probe, "inbox", str(box)], env=cli_env(home), cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "not a pbem mail" in run.stdout and "store code loaded: False" in run.stdout, run.stdout


def test_an_address_changed_while_its_seat_is_up_to_date_gets_the_latest_packet(tmp_path: Path, here) -> None:
    """`pbem game email` gives a seat a new address after it had the newest packet at the old
    one: the new address gets the invitation and that packet (it may be a new key home), once."""
    db, homes = mail_game(tmp_path)
    welcome = tmp_path / "welcome"
    said = joined_by_eml(here, db, homes, tmp_path / "outbox")
    assert "packet 1 to cat" in said, said  # cat is up to date at cat@example.org
    here("game", "email", "t", "cat=cat@example.net", "--db", db, home=homes["referee"], ok=True)
    said = here("mail", "t", "--db", db, "--pending", "--to-dir", welcome, home=homes["referee"], ok=True).stdout
    assert "packet 1 to cat <cat@example.net> (a new reader)" in said, said
    (mail,) = [BytesParser(policy=policy.default).parse(p.open("rb")) for p in welcome.glob("*.eml")]
    kinds = [b.kind for b in read_blocks(mail.get_body(("plain",)).get_content())]
    assert mail["To"] == "cat@example.net" and kinds == ["invitation", "packet"], kinds
    again = here("mail", "t", "--db", db, "--pending", "--to-dir", welcome, home=homes["referee"], ok=True).stdout
    assert again.strip() == "nothing new to mail" and len(list(welcome.glob("*.eml"))) == 1, again

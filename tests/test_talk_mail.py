"""Table talk by mail (docs/protocol.md, "Table talk"): the host's mails carry each line to the
seats it is for, at each seat's mail pace (a mail per line under "every", else with the next
packet mail or digest); a seat's `pbem inbox` keeps them and its table shows them; the whisper's
text is in no mail the host sends nor in the host's store."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from mailservers import MailServers
from table_games import mailed_table, play_until
from test_turn import _json, dealt_mail_game

from pbem.host.publish import publish_pending
from pbem.mail.courier import Courier
from pbem.mail.incoming import Router
from pbem.mail.publisher import MailPublisher
from pbem.protocol.armor import dearmor_all
from pbem.seat import player as P
from pbem.seat import talk as seat_talk

SEATS = ["ann", "bob", "cat"]
PUBLIC = "cat broke my lamp: cat is a saboteur"
SECRET = "I saw the map: the top one is stone"


def _mails(outbox: Path, seen: set[Path]) -> list[tuple[str, object, bytes]]:
    """The mails written since the last call: (to, message, its bytes)."""
    out = []
    for p in sorted(outbox.glob("*.eml")):
        if p in seen:
            continue
        seen.add(p)
        data = p.read_bytes()
        mail = BytesParser(policy=policy.default).parsebytes(data)
        out.append((mail["To"].split("@")[0], mail, data))
    return out


def _decoded(data: bytes) -> bytes:
    """A mail's bytes and every armoured block in its text decoded (base64 armour hides nothing)."""
    msg = BytesParser(policy=policy.default).parsebytes(data)
    text = "".join(part.get_content() for part in msg.walk() if part.get_content_type() == "text/plain")
    return data + b"".join(payload for _, payload in dearmor_all(text))


def test_mail_carries_talk_at_each_seats_pace(tmp_path: Path) -> None:
    table = mailed_table(tmp_path, SEATS, digest="every", languages={"cat": "zh-Hans"})
    host = table.host
    outbox = tmp_path / "outbox"
    clock = [1_000_000.0]
    mail = MailPublisher(host, Courier(to_dir=outbox), now=lambda: clock[0])
    seen: set[Path] = set()
    publish_pending(host, mail)  # the invitation and packet 1
    _mails(outbox, seen)

    def opened(seat: str) -> P.SeatPacket:
        _, packet = table.latest()
        return P.open_packet(packet, table.ids[seat], table.homes[seat])

    at = "2026-12-05T00:00:00+00:00"
    host.accept(seat_talk.say(opened("ann"), table.homes["ann"], PUBLIC, [], at))
    host.accept(seat_talk.say(opened("bob"), table.homes["bob"], SECRET, ["ann"], at))
    said = publish_pending(host, mail)
    assert any("mailed table talk to cat" in where for _, where in said)
    mails = _mails(outbox, seen)
    # a mail per seat (and the host's copy) with the lines it is for, at once: "every"
    assert sorted(to for to, _, _ in mails) == ["ann", "bob", "cat", "referee"]
    for to, msg, data in mails:
        body = msg.get_body(("plain",)).get_content()
        assert SECRET.encode() not in _decoded(data), to
        assert PUBLIC in body
        assert ("whispered to ann" in body or "对 ann 的悄悄话" in body) == (to in ("ann", "referee"))  # bob keeps his own
        if to == "cat":
            assert "牌桌交谈" in msg["Subject"] and "牌桌交谈" in body
        # the seat's inbox keeps the lines; its table shows what it may read
        if to in SEATS:
            router = Router(table.homes[to])
            kinds = [k for k, _, _ in router.route_message(to, msg)]
            router.close()
            assert "talk" in kinds
    assert [ln.text for ln in seat_talk.heard(opened("ann"), table.homes["ann"])] == [PUBLIC, SECRET]
    assert [ln.text for ln in seat_talk.heard(opened("cat"), table.homes["cat"])] == [PUBLIC]

    # under a digest a line waits for the reader's next mail: none now, then the digest carries it
    host.set_settings(digest="12h")
    host.accept(seat_talk.say(opened("cat"), table.homes["cat"], "bob lies", [], at))
    publish_pending(host, mail)
    assert _mails(outbox, seen) == []
    clock[0] += 13 * 3600
    publish_pending(host, mail)
    mails = _mails(outbox, seen)
    assert sorted(to for to, _, _ in mails) == ["ann", "bob", "cat", "referee"]
    assert all("bob lies" in msg.get_body(("plain",)).get_content() for _, msg, _ in mails)

    # a packet mail carries the lines since the reader's last mail
    host.accept(seat_talk.say(opened("ann"), table.homes["ann"], "no, cat lies", [], at))
    play_until(table, lambda packet: packet.doc.seq > 2)
    publish_pending(host, mail)
    turn = [(to, msg) for to, msg, _ in _mails(outbox, seen) if "packet-" in str(msg)]
    assert turn and all("no, cat lies" in msg.get_body(("plain",)).get_content() for _, msg in turn)
    store = (tmp_path / "game.db").read_bytes()
    assert SECRET.encode() not in store
    host.close()


@pytest.mark.slow
def test_a_mail_game_carries_said_lines_through_real_servers(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """As players meet it: `pbem say GAME` mails a line to the host over SMTP, the host's pass
    (IMAP in, SMTP out) relays it, and each seat's `pbem turn GAME` reads it from its own IMAP
    folder. The public line reaches every seat; the whisper reaches bob (and ann, who said it),
    never cat, and its text is in no byte of the host's store."""
    db, homes, _ = dealt_mail_game(here, mail_servers, tmp_path)
    here("say", "t", PUBLIC, home=homes["ann"], ok=True)
    here("say", "t", SECRET, "--to", "bob", home=homes["ann"], ok=True)
    # under "every" each line is mailed at once (under a digest: with the next packet mail)
    relayed = here("host", "run", "t", "--db", db, "--once", "--no-idle", "--digest", "every", home=homes["host"], ok=True).stdout
    assert "ann whispered to bob at packet 1" in relayed and "ann said a line at packet 1" in relayed, relayed
    assert "mailed table talk to bob" in relayed and "mailed table talk to cat" in relayed, relayed
    seen = {s: _json(here("turn", "t", "--json", home=homes[s], ok=True).stdout) for s in SEATS}
    heard = {s: [(line["from"], line["to"], line["text"]) for line in seen[s]["talk"]] for s in SEATS}
    assert ("ann", None, PUBLIC) in heard["cat"] and ("ann", None, PUBLIC) in heard["bob"], heard
    assert ("ann", ["bob"], SECRET) in heard["bob"], heard
    assert all(SECRET not in text for _, _, text in heard["cat"]), heard
    assert SECRET.encode() not in db.read_bytes()
    assert SECRET.encode() not in b"".join(p.read_bytes() for p in (homes["cat"]).rglob("*") if p.is_file())

"""A packet's mails to all its readers: what every reader sees alike (the table, a trustless
game's gold) is read from the host once for the packet (pbem.mail.host_mail.packet_table), and
each reader's mail is still, part for part and byte for byte, the mail built for that reader
alone: in their language, their turn marked in theirs only, a trustless seat's chain in its own."""

from __future__ import annotations

from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from blind_game import BlindGame
from table_games import mailed_table, play_until

from pbem.host.publish import publish_pending
from pbem.mail.courier import Courier
from pbem.mail.host_mail import mails_for, packet_mail, recipients
from pbem.mail.message import POLICY
from pbem.mail.publisher import MailPublisher
from pbem.protocol.documents import Packet, read_blocks

LANGUAGES = {"ann": "zh-Hans", "bob": "zh-Hant"}  # cat and the host: English


def parts(mail: EmailMessage) -> list[tuple[object, ...]]:
    """A mail's headers (but its date, id and MIME boundary) and each part's type, name and bytes."""
    again = BytesParser(policy=POLICY).parsebytes(mail.as_bytes())  # as a reader gets it
    head: list[tuple[object, ...]] = [(k, str(v)) for k, v in again.items()
                                      if k not in ("Date", "Message-ID", "Content-Type")]
    return head + [(p.get_content_type(), p.get_filename(), p.get_payload(decode=True))
                   for p in again.walk() if not p.is_multipart()]


def alone(host, seq: int) -> dict[str, list[tuple[object, ...]]]:
    """Packet `seq`'s mail to each reader built for that reader alone (the table read for each)."""
    settings = host.settings()
    armored = host.packet(seq)
    doc = read_blocks(armored)[0].expect(Packet).doc
    return {n: parts(packet_mail(host, settings, n, a, armored, [doc], None).message) for n, a in recipients(host)}


def test_a_classic_packet_mails_each_reader_what_that_reader_alone_would_get(tmp_path: Path) -> None:
    table = mailed_table(tmp_path, ["ann", "bob", "cat"], languages=LANGUAGES)
    play_until(table, lambda packet: packet.doc.seq >= 5, seed=4)
    host = table.host
    for seq in (1, 5):  # the deal and a move
        mails = {out.name: parts(out.message) for out in mails_for(host, seq)}
        assert mails == alone(host, seq) and sorted(mails) == ["ann", "bob", "cat", "host"]
        subjects = {n: dict((k, v) for k, v, *_ in m if k == "Subject")["Subject"] for n, m in mails.items()}
        assert "牌包" in subjects["ann"] and "packet" in subjects["cat"], subjects
        assert len({m[-1] for m in mails.values()}) == 1  # one packet attached to all alike
        assert len({m[-2] for m in mails.values()}) == 4  # each one's table in HTML, in their words


def test_a_trustless_packets_mails_are_each_readers_own_as_the_host_mails_them(tmp_path: Path) -> None:
    game = BlindGame(tmp_path)
    game.host.set_settings(emails={n: f"{n}@example.org" for n in ("ann", "bob", "cat", "host")},
                           languages=LANGUAGES, digest="every")
    outbox = tmp_path / "outbox"
    mail = MailPublisher(game.host, Courier(to_dir=outbox))
    publish_pending(game.host, mail)  # the invitation
    checked = 0
    while game.table.step() != "over" and checked < 8:
        game.send(game.table.waiting().seats[0])
        seq = game.host.status()["seq"]
        before = set(outbox.iterdir())
        publish_pending(game.host, mail)  # as `pbem host run` does after each block it takes
        sent = {}
        for path in set(outbox.iterdir()) - before:
            got = BytesParser(policy=POLICY).parsebytes(path.read_bytes())
            sent[str(got["To"]).partition("@")[0]] = parts(got)
        assert sorted(sent) == ["ann", "bob", "cat", "host"], (seq, sorted(sent))
        # each reader had every packet before this one: its mail carries this packet alone
        assert sent == alone(game.host, seq), seq
        checked += 1
    assert checked == 8

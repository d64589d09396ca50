"""Mail worth reading: a seat's turn, round ends and game over to everyone, otherwise one digest
per period listing every move since that seat's last mail. A whole 4-seat game, mailed as .eml
files after every move with a clock that moves five hours per move."""

from __future__ import annotations

import re
from email.parser import BytesParser
from pathlib import Path

import pytest
from table_games import mailed_table, play_until

from pbem.errors import UsageError
from pbem.host.publish import publish_pending
from pbem.mail.courier import Courier
from pbem.mail.message import POLICY
from pbem.mail.publisher import MailPublisher, digest_seconds
from pbem.protocol.documents import read_blocks

SEATS = ["ann", "bob", "cat", "dan"]


def test_digest_periods() -> None:
    assert digest_seconds("every") == 0
    assert digest_seconds("12h") == 12 * 3600 and digest_seconds("30m") == 1800 and digest_seconds("1d") == 86400
    assert digest_seconds("1d12h") == 36 * 3600  # as --deadline reads it
    for bad in ("", "12", "h", "-1h", "0h", "soon"):
        with pytest.raises(UsageError, match="--digest"):
            digest_seconds(bad)


def packet_seq(mail) -> int:
    """The packet number a mail carries (0: the invitation)."""
    names = [a.get_filename() or "" for a in mail.iter_attachments()]
    found = [int(n[len("packet-"):-len(".pbem")]) for n in names if n.startswith("packet-")]
    return found[0] if found else 0


@pytest.mark.slow
def test_mails_per_seat_for_a_three_round_four_seat_game(tmp_path: Path) -> None:
    table = mailed_table(tmp_path, SEATS, languages={"bob": "zh-Hans"})
    host = table.host
    outbox = tmp_path / "outbox"
    courier = Courier(to_dir=outbox)
    clock = [1_000_000.0]
    log: list[tuple[float, str]] = []

    def note(line: str) -> None:
        log.append((clock[0], line))

    mail = MailPublisher(host, courier, now=lambda: clock[0])
    publish_pending(host, mail, log=note)  # the invitation

    def mail_after_each_move(packet) -> bool:
        clock[0] += 5 * 3600  # a move every five hours: a seat waits 20 hours between turns
        publish_pending(host, mail, log=note)
        return packet.doc.phase == "game-over"

    play_until(table, mail_after_each_move, seed=3, limit=3000)
    packets = [read_blocks(a)[0].doc for _, a in host.packets()]
    mails = []
    for p in sorted(outbox.glob("*.eml")):  # read as pbem reads a mail (policy.default, each header parsed once)
        with p.open("rb") as f:
            mails.append(BytesParser(policy=POLICY).parse(f))
    # each mail's packet and reader, looked up once (a header is parsed again at each look); sorted
    # by packet, as mails written within the same second are not ordered by their file names
    sent = sorted(((packet_seq(m), str(m["To"]), m) for m in mails), key=lambda x: x[0])
    per = {s: [m for seq, to, m in sent if to == f"{s}@example.org" and seq > 0] for s in [*SEATS, "referee"]}
    # the invitation too is in its reader's language: the first mail a newcomer reads
    invited = {to: m for seq, to, m in sent if seq == 0}
    assert "invites you to a game of Saboteur" in invited["ann@example.org"].get_body(("plain",)).get_content()
    bob_invited = invited["bob@example.org"]
    assert "邀请" in bob_invited["Subject"] and "你是玩家 bob" in bob_invited["Subject"]
    assert "邀请你玩一局矮人矿坑" in bob_invited.get_body(("plain",)).get_content()
    assert "invites you" not in bob_invited.get_body(("plain",)).get_content()
    before = len(packets)  # one mail per packet per seat, as every packet used to be mailed
    after = {s: len(ms) for s, ms in per.items()}
    turns = {s: sum(1 for d in packets if d.to_move == s and d.phase == "playing" and d.result is None)
             for s in SEATS}
    print(f"\n3 rounds, 4 seats, {len(packets)} packets: mails per seat before {before}, after {after} "
          f"(turns {turns})")
    rounds = sum(1 for d in packets if d.result is not None)
    assert rounds == 3
    for s in SEATS:
        assert turns[s] + rounds <= after[s] < before * 0.6
    # a digest only when 12 hours passed since that seat's last mail
    for s in [*SEATS, "referee"]:
        last = None
        for at, line in log:
            if f" to {s} <" in line and line.startswith("mailed packet"):
                if "(digest)" in line and last is not None:
                    assert at - last >= 12 * 3600, (s, line)
                last = at
    # the subject says whose turn it is and the game; bob reads Chinese
    ann = per["ann"]
    assert any(re.fullmatch(r"\[pbem test-[0-9a-f]{8}\] your turn, ann: round \d, packet \d+", m["Subject"]) for m in ann)
    assert any("moves; " in m["Subject"] and " to move (round " in m["Subject"] for m in ann)  # a digest
    assert "game over, won by" in ann[-1]["Subject"]
    assert any("轮到你了，bob" in m["Subject"] for m in per["bob"])
    assert "游戏结束" in per["bob"][-1]["Subject"]
    # plain text first, then the packet armoured and attached
    body = ann[-1].get_body(("plain",)).get_content()
    assert body.index("The game is over.") < body.index("-----BEGIN PBEM PACKET-----")
    assert [a.get_filename() for a in ann[-1].iter_attachments()] == [f"packet-{packets[-1].seq:06d}.pbem"]
    # each mail lists every move since that seat's last mail: together, every move of the game
    total = sum(len(d.moves) for d in packets)
    for s in ["ann", "cat", "dan", "referee"]:
        listed = 0
        for m in per[s]:
            found = re.search(r"Since your last mail, (\d+) moves?:", m.get_body(("plain",)).get_content())
            listed += int(found[1]) if found else 0
        assert listed == total, s
    # nothing more is owed once everything is out
    assert publish_pending(host, MailPublisher(host, courier, now=lambda: clock[0] + 10 * 86400)) == []

"""Deadlines, reminders, late notices and timeouts, with the host's clock passed in.

A fake clock plays a whole 4-seat game of deadlines in about a second: real key files, a
real store (a SQLite file, and a database of a real PostgreSQL server: the `store_url`
fixture), a real shared folder, real bots on three seats and a silent fourth.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from folder_games import SEATS4, clocked_game, four_seat_game, make_homes
from on_disk import store_dump

from engine.rules import legal_moves
from pbem.auto.host_runner import FolderHost
from pbem.auto.seat_bot import FolderBot
from pbem.errors import BadPacket, UsageError
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.host.clock import FakeClock, parse_time
from pbem.host.deadlines import Timing, parse_days, parse_duration, parse_when
from pbem.protocol.documents import read_blocks, sign
from pbem.replay.audit import audit
from pbem.replay.rounds import build, verify_archive
from pbem.seat import keys
from pbem.seat.home import saved_notices
from pbem.seat.screen import news_lines
from pbem.ui import when, words
from pbem.ui.words import render

UTC = UTC


def test_durations_days_and_words() -> None:
    assert parse_duration("48h", "--deadline") == 48 * 3600
    assert parse_duration("1d12h", "--deadline") == 36 * 3600
    assert parse_duration("2.5s", "--deadline") == 2.5
    for bad in ("", "h", "48", "-3h", "3 weeks", "0s"):
        with pytest.raises(UsageError):
            parse_duration(bad, "--deadline")
    assert parse_days("mon-fri") == [0, 1, 2, 3, 4]
    assert parse_days("sat,sun") == [5, 6]
    assert parse_days("fri-mon") == [0, 4, 5, 6]
    with pytest.raises(UsageError):
        parse_days("mon-funday")
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert parse_when("2026-12-10", now) == datetime(2026, 12, 10, tzinfo=UTC)
    assert parse_when("3d", now) == datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    with pytest.raises(UsageError, match="in the past"):
        parse_when("2026-11-30", now)


def test_weekdays_only_count_the_days_given() -> None:
    timing = Timing(deadline=48 * 3600, days=[0, 1, 2, 3, 4])
    friday_noon = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)  # a Friday
    # 12 h of Friday count, the weekend does not, 24 h of Monday, 12 h of Tuesday
    assert timing.due(friday_noon) == datetime(2026, 12, 8, 12, 0, tzinfo=UTC)
    assert Timing(deadline=3600).due(friday_noon) == datetime(2026, 12, 4, 13, 0, tzinfo=UTC)
    start, due = friday_noon, datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
    assert Timing(deadline=1).reminder_times(start, due) == [datetime(2026, 12, 5, 0, 0, tzinfo=UTC),
                                                              datetime(2026, 12, 5, 10, 0, tzinfo=UTC)]


def test_due_in_words_in_three_languages() -> None:
    now = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)
    deadline = ("ann", "2026-12-03T18:00:00+00:00")
    assert when.due_line(*deadline, "ann", now) == "your move, due Thu 3 Dec 18:00 UTC, in 1 day 4 hours"
    assert when.due_line(*deadline, "bob", now) == "ann to move, due Thu 3 Dec 18:00 UTC, in 1 day 4 hours"
    assert words.left("2026-12-02T10:30:00+00:00", now) == "3 hours 30 minutes late"
    with words.using("zh-Hans"):
        assert when.due_line(*deadline, "ann", now) == "轮到你了，截止 12月3日（周四）18:00 UTC，还有1天4小时"
    with words.using("zh-Hant"):
        assert when.due_line(*deadline, "ann", now) == "輪到你了，截止 12月3日（週四）18:00 UTC，還有1天4小時"


def check_archives(host: H.Host) -> list[str]:
    """Every round's archive passes the audit; returns the notes of all reports."""
    notes = []
    previous = None
    archives = host.archives()
    assert sorted(archives) == [1, 2, 3]
    for armored in archives.values():
        block = [b for b in read_blocks(armored) if b.kind == "archive"][0]
        report = audit(block.payload, previous_final=previous)
        assert report.ok, [f.line() for f in report.faults]
        notes += [render(n) for n in report.notes]
        previous = block.doc.final
    return notes


@pytest.mark.slow
def test_a_silent_seat_is_played_for_and_the_game_finishes(tmp_path: Path, store_url: str) -> None:
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    timing = Timing(deadline=3600, grace=1800, on_timeout="bot", absent_after=2, bot_turns=50)  # (a quick bot)
    db, homes, ids = four_seat_game(tmp_path, clock, timing, store_url)
    shared = tmp_path / "shared"
    host = H.Host(db, ids["referee"], clock)
    lines: list[str] = []
    fh = FolderHost(host, shared, lines.append)
    bots = [FolderBot(shared, ids[s], homes[s], "smart", 1, lines.append) for s in ("ann", "bob", "cat")]
    dan = FolderSeat.open(shared, ids["dan"], homes["dan"])
    dan.join()  # dan joins, then never moves again
    seen_absent_screen = False
    for i in range(3000):
        for b in bots:
            b.step()
        before = host.head()[0]  # (the latest packet: what status() says as "seq", in one query)
        if fh.step():
            break
        if i == 40:  # the host is restarted mid-game: nothing is sent or played twice
            host.close()
            host = H.Host(db, ids["referee"], clock)
            fh = FolderHost(host, shared, lines.append)
        if host.head()[0] == before:
            clock.advance(600)  # nobody moved: ten minutes pass
        sp = dan.latest()
        if sp is not None and not seen_absent_screen and "dan" in (sp.doc.absent or []):
            seen_absent_screen = True
            news = "\n".join(news_lines(sp, dan.notices(), clock.now()))
            assert "absent (the host plays for them): dan" in news
    else:
        raise AssertionError("the game did not finish:\n" + "\n".join(lines[-20:]))
    assert seen_absent_screen
    assert host.status()["status"] == "over"
    # a whole game of bots and of moves the host made for dan: nobody said a word at the table
    assert host.talk(0) == [] and not list((shared / "talk").glob("*"))
    # the notices: reminders and a late notice for dan's first packets, then dan is absent
    kinds = Counter(d.notice for d in dan.notices())
    assert kinds["reminder"] >= 2 and kinds["late"] == 2 and kinds["absent"] == 1, kinds
    rows = [(n.seq, n.kind, n.seat) for n in host.notices()]
    assert len(rows) == len(set(rows)), "a notice was made twice"
    files = list((shared / "notices").iterdir())
    assert len(files) == len(rows)
    notes = check_archives(host)
    assert any("played by the host for dan (no move in time)" in n for n in notes)
    assert any("played by the host for dan (absent)" in n for n in notes)
    # every one of dan's moves was made by the host, nobody else's
    for armored in host.archives().values():
        archive = [b for b in read_blocks(armored) if b.kind == "archive"][0]
        for m in archive.doc.moves:
            assert (m.by == "host") == (m.seat == "dan")
        replay = build(*verify_archive(archive.payload))
        dan_moves = [n for n, st in enumerate(replay.steps, 1) if st.seat == "dan"]
        assert "(played by the host: " in replay.sentences(dan_moves[0], "all")[0]
    host.close()


def test_wait_policy_only_reminds_and_a_move_resets_the_count(tmp_path: Path, store_url: str) -> None:
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    db, homes, ids = four_seat_game(tmp_path, clock, Timing(deadline=3600), store_url)
    shared = tmp_path / "shared"
    host = H.Host(db, ids["referee"], clock)
    fh = FolderHost(host, shared, lambda line: None)
    seats = {s: FolderSeat.open(shared, ids[s], homes[s]) for s in SEATS4}
    for s in seats.values():
        s.join()
    fh.step()
    st = host.status()
    first = st["to_move"]
    assert st["deadline"] == {"seat": first, "due": "2026-12-01T13:00:00+00:00"}
    sp = seats[first].latest()
    assert sp.doc.deadline.due == "2026-12-01T13:00:00+00:00"  # signed inside the packet
    assert when.packet_news(sp.doc, first, clock.now())[0] == "your move, due Tue 1 Dec 13:00 UTC, in 1 hour"
    wakes = [host.next_tick()]  # when a host that waits for mail must wake for the clock
    for minutes in (29, 1, 60, 60, 600):
        clock.advance(minutes * 60)
        fh.step()
        fh.step()  # a second look at the same time sends nothing more
        wakes.append(host.next_tick())
    half, due = parse_time("2026-12-01T12:30:00+00:00"), parse_time("2026-12-01T13:00:00+00:00")
    assert wakes == [half, half, due, None, None, None]  # late said: under "wait" nobody plays for the seat
    kinds = [d.notice for d in seats[first].notices()]
    assert kinds == ["reminder", "late"]  # half-way (2 h before would be before the start), late once
    assert host.status()["seq"] == 1  # wait: nobody plays for the seat
    assert host.status()["absent"] == []  # one missed deadline; absent after two
    from engine.rules import legal_moves

    seats[first].move(sp, str(legal_moves(sp.view)[0]))
    fh.step()
    assert host.standings()[first].missed == 0
    assert parse_time(host.status()["deadline"]["due"]) == clock.now() + timedelta(hours=1)
    host.close()


def test_a_seat_cannot_mark_its_own_move_as_the_hosts(tmp_path: Path, store_url: str) -> None:
    """Only the host marks the moves it made (by: host): a seat's move saying so is refused,
    and nothing changes (an audit would otherwise blame the host for it)."""
    from pbem.seat import player

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="discard"), store_url)
    first = host.status()["to_move"]
    sp = seats[first].latest()
    honest = player.make_move(sp, str(legal_moves(sp.view)[0]))
    forged = sign(msgspec.structs.replace(honest.doc, by="host", why="timeout", signer=""), ids[first])
    before = store_dump(host.store.url)
    with pytest.raises(BadPacket, match="only the host marks its own moves"):
        host.accept(forged)
    assert store_dump(host.store.url) == before
    assert host.accept(honest).kind == "applied"
    host.close()


def test_pause_stops_the_clock_and_resume_gives_the_time_back(tmp_path: Path, store_url: str) -> None:
    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="discard"), store_url)
    first = host.status()["to_move"]
    clock.advance(20 * 60)
    host.pause()
    with pytest.raises(UsageError, match="already paused"):
        host.pause()
    clock.advance(10 * 3600)  # a long pause: nothing is late, nobody is played for
    fh.step()
    assert host.status()["seq"] == 1 and host.status()["paused"]
    host.resume()
    assert host.status()["deadline"]["due"] == "2026-12-01T23:00:00+00:00"  # 40 minutes were left
    fh.step()
    kinds = [d.notice for d in seats[first].notices()]
    assert kinds == ["reminder", "paused", "resumed", "due"] or kinds == ["paused", "resumed", "due"], kinds
    clock.advance(41 * 60)
    fh.step()
    assert host.status()["seq"] == 2  # the discard policy played one card face down
    archive_moves = host.packets()[-1][1]
    doc = read_blocks(archive_moves)[0].doc
    assert doc.moves[0].seat == first and doc.moves[0].by == "host"
    assert doc.moves[0].text.startswith("discard 1")
    host.close()


def test_away_stretches_the_deadline_and_resign_hands_the_seat_to_the_policy(tmp_path: Path, store_url: str) -> None:
    from pbem.seat import player

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="bot"), store_url)
    first = host.status()["to_move"]
    me = seats[first]
    request = player.make_request(me.invitation, first, ids[first], "away", until="2026-12-05T00:00:00+00:00")
    out = host.accept(request)
    assert out.kind == "away"
    assert host.accept(request).kind == "duplicate"
    assert host.status()["deadline"]["due"] == "2026-12-05T01:00:00+00:00"
    # an away notice for another seat, signed by this one: refused, nothing changes
    other = next(s for s in SEATS4 if s != first)
    forged = player.make_request(me.invitation, other, ids[first], "away", until="2026-12-05T00:00:00+00:00")
    before = store_dump(host.store.url)
    with pytest.raises(Exception, match="not the seat's key"):
        host.accept(forged)
    assert store_dump(host.store.url) == before
    clock.advance(3 * 3600)
    fh.step()
    assert host.status()["seq"] == 1  # still within the stretched deadline
    host.accept(player.make_request(me.invitation, first, ids[first], "resign"))
    fh.step()
    assert host.status()["seq"] >= 2  # played at once by the bot policy
    sp = seats[other].latest()
    assert first in sp.doc.absent
    assert any(m.by == "host" and m.why == "resigned" for m in sp.doc.recent)
    host.close()


def test_notices_by_mail_are_short_mails_sent_once(tmp_path: Path, store_url: str, here) -> None:
    """Over mail a reminder goes to the seat it reminds (and the host's copy), a late notice
    to everyone; the packet mails say the deadline in words; nothing is mailed twice."""
    import email
    from email import policy

    from pbem.host.publish import publish_pending
    from pbem.mail.courier import Courier
    from pbem.mail.publisher import MailPublisher
    from pbem.seat import player

    clock = FakeClock("2026-12-01T12:00:00+00:00")
    homes = make_homes(tmp_path, ["referee", *SEATS4])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = store_url
    emails = {s: f"{s}@example.org" for s in SEATS4} | {"host": "ref@example.org"}
    invitation = H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS4], [], emails,
                               Timing(deadline=4 * 3600).to_config(), clock)
    host = H.Host(db, ids["referee"], clock)
    for s in SEATS4:
        host.accept(player.join(invitation, ids[s], homes[s]))
    out = tmp_path / "mail"
    mail = MailPublisher(host, Courier(to_dir=out))
    publish_pending(host, mail)
    first = host.status()["to_move"]

    def mails(skip: frozenset = frozenset()) -> list:
        return [email.message_from_bytes(p.read_bytes(), policy=policy.default) for p in out.glob("*.eml")
                if p not in skip]

    packet_mail = next(m for m in mails() if m["To"] == emails[first] and "packet 1" in m["Subject"])
    assert "your move, due Tue 1 Dec 16:00 UTC, in 4 hours" in packet_mail.get_body(("plain",)).get_content()
    before = frozenset(out.glob("*.eml"))
    clock.advance(2 * 3600)  # half-way and 2 h before: one reminder
    host.tick()
    publish_pending(host, mail)
    clock.advance(2 * 3600)
    host.tick()
    publish_pending(host, mail)
    assert publish_pending(host, mail) == []  # again: nothing new
    new = mails(before)
    reminders = [m for m in new if "reminder" in m["Subject"]]
    late = [m for m in new if "is late" in m["Subject"]]
    assert sorted(m["To"] for m in reminders) == sorted([emails[first], emails["host"]])
    assert sorted(m["To"] for m in late) == sorted(emails.values())
    assert len(new) == len(reminders) + len(late)
    assert f"{first} is late: packet 1 was due Tue 1 Dec 16:00 UTC" in late[0].get_body(("plain",)).get_content()
    assert "BEGIN PBEM NOTICE" in late[0].get_body(("plain",)).get_content()
    for m in reminders + late:  # on a phone: the notice over the table it is about (tests/test_mail_board.py)
        shown = m.get_body(("html",)).get_content()
        assert "<svg" in shown and "<script" not in shown and "BEGIN PBEM" not in shown
    assert f"{first} is late: packet 1 was due Tue 1 Dec 16:00 UTC" in late[0].get_body(("html",)).get_content()
    # the seat to move reads them with 'pbem inbox' (once) and sees them with 'pbem turn GAME'
    said = here("inbox", out, home=homes[first], ok=True).stdout
    assert f"reminder: {first} to move in packet 1" in said and f"{first} is late: packet 1" in said
    assert "read before" in here("inbox", out, home=homes[first], ok=True).stdout
    game = host.game_id()
    shown = json.loads(here("turn", game, "--json", home=homes[first], ok=True).stdout)
    assert [n["notice"] for n in shown["notices"]] == ["reminder", "late"]
    assert f"{first} is late" in here("turn", game, home=homes[first], ok=True).stdout
    other = next(s for s in SEATS4 if s != first)  # a late notice goes to everyone, a reminder not
    here("inbox", *[p for p in out.glob("*.eml") if emails[other] in p.read_text()], home=homes[other], ok=True)
    assert [n.notice for n in saved_notices(homes[other], game)] == ["late"]
    host.close()


def _answered(host) -> list[tuple[str, str | None]]:
    """The requests the game remembers having answered: (hash, until)."""
    from sqlalchemy import select

    from pbem.host.settings import memo_of
    from pbem.host.tables import games

    with host.store.read() as c:
        return [(r.hash, r.until) for r in memo_of(c.execute(select(games.c.memo)).scalar_one()).requests]


def test_answered_requests_are_forgotten_once_a_replay_changes_nothing(tmp_path: Path, store_url: str) -> None:
    """An away request is remembered (a replay is a duplicate) until it ends, then forgotten with
    the next packet: its replay is refused as in the past and changes nothing. A second resign
    of a resigned seat is a duplicate without being remembered. So the memo does not only grow."""
    from pbem.errors import BadPacket
    from pbem.seat import player

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="bot"), store_url)
    first = host.status()["to_move"]
    other = next(s for s in SEATS4 if s != first)
    away = player.make_request(seats[other].invitation, other, ids[other], "away", until="2026-12-01T14:00:00+00:00")
    assert host.accept(away).kind == "away"
    assert _answered(host) == [(away.hash, "2026-12-01T14:00:00+00:00")]
    assert host.accept(away).kind == "duplicate"
    clock.advance(3 * 3600)  # the away time is over; the host plays the late seat's move: a packet
    assert [o.kind for o in host.tick()][-1] == "applied"
    assert _answered(host) == []
    before = store_dump(host.store.url)
    with pytest.raises(BadPacket, match="in the past"):
        host.accept(away)
    assert store_dump(host.store.url) == before
    resign = player.make_request(seats[other].invitation, other, ids[other], "resign")
    assert host.accept(resign).kind == "resigned"
    again = player.make_request(seats[other].invitation, other, ids[other], "resign", at="2026-12-01T15:00:00+00:00")
    for block in (resign, again):
        assert host.accept(block).kind == "duplicate"
    assert _answered(host) == []
    host.close()

"""The host's moves for a seat, attacked: a host that plays for a seat when the rules allow
none, or plays another move than its timeout policy makes, is refused by its own library and
faulted by the audit; the seat's own client says when the host played a packet it had
answered. And a seat's move with an empty nonce (its words guessable from its commitment)
is refused. Real keys, a real store (SQLite and PostgreSQL), a real shared folder.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import msgspec
import pytest
from folder_games import bots_end_the_round, clocked_game
from on_disk import store_dump
from sqlalchemy import select, update

from engine.rules import legal_moves
from pbem.errors import BadPacket
from pbem.host.clock import stamp
from pbem.host.deadlines import Timing
from pbem.host.tables import games
from pbem.names import HOST
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import SealedMove, b64, move_commitment, seal_info, seal_json, sign
from pbem.ui import failures


def test_a_move_with_an_empty_nonce_is_refused(tmp_path, store_url: str) -> None:
    """A nonce of no bytes makes the commitment a hash of the move's words alone: anyone who
    reads the move file finds the words by trying each legal move. Refused, nothing changes."""
    from pbem.seat import player

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600), store_url)
    first = host.status()["to_move"]
    sp = seats[first].latest()
    text = str(legal_moves(sp.view)[0])
    honest = player.make_move(sp, text)
    key = PublicKey.decode(sp.invitation.doc.host.key)
    info = seal_info(sp.packet.game, sp.doc.seq, first, HOST, "move")
    for nonce in (b"", b"\0" * 15):
        doc = msgspec.structs.replace(honest.doc, commit=move_commitment(nonce, text), signer="",
                                      sealed=seal_json(SealedMove(move=text, nonce=b64(nonce)), key, info, pad="move"))
        before = store_dump(host.store.url)
        with pytest.raises(BadPacket, match=f"nonce has {len(nonce)} bytes, not 16"):
            host.accept(sign(doc, ids[first]))
        assert store_dump(host.store.url) == before
    assert host.accept(honest).kind == "applied"
    host.close()


def test_away_is_bounded_rate_limited_and_a_far_date_says_its_year(tmp_path, store_url: str) -> None:
    """`away --until 9000-01-01` under a 1 h deadline would freeze the game: refused beyond the
    game's --max-away (14 days unless set), nothing changes. Each away notice goes to every
    seat: a fourth in a day is refused. A date of another year is said with its year."""
    from pbem.errors import Conflict
    from pbem.seat import player
    from pbem.ui import words

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="bot"), store_url)
    first = host.status()["to_move"]
    me = seats[first]

    def away(until: str):
        return player.make_request(me.invitation, first, ids[first], "away", until=until)

    before = store_dump(host.store.url)
    with pytest.raises(BadPacket) as refused:
        host.accept(away("9000-01-01T00:00:00+00:00"))
    assert "ends Wed 1 Jan 9000 00:00 UTC, more than 14 days from now" in failures.message(refused.value)
    assert "at most 14 days" in str(failures.hint(refused.value))
    assert store_dump(host.store.url) == before
    assert host.status()["deadline"]["due"] == "2026-12-01T13:00:00+00:00"
    for day in (5, 6, 7):  # three changes of mind in a day are taken
        assert host.accept(away(f"2026-12-{day:02}T00:00:00+00:00")).kind == "away"
    before = store_dump(host.store.url)
    with pytest.raises(Conflict) as refused:
        host.accept(away("2026-12-08T00:00:00+00:00"))
    assert "sent 3 away notices in the last 1 day" in failures.message(refused.value)
    assert store_dump(host.store.url) == before
    assert [n.kind for n in host.notices()].count("away") == 3
    clock.advance(86400)  # a day later the seat may say so again
    assert host.accept(away("2026-12-09T00:00:00+00:00")).kind == "away"
    now = clock.now()
    assert words.date("2026-12-09T00:00:00+00:00", now) == "Wed 9 Dec 00:00 UTC"
    assert words.date("2027-01-01T00:00:00+00:00", now) == "Fri 1 Jan 2027 00:00 UTC"
    with words.using("zh-Hans"):
        assert words.date("2027-01-01T00:00:00+00:00", now) == "2027年1月1日（周五）00:00 UTC"
    with words.using("zh-Hant"):
        assert words.date("2027-01-01T00:00:00+00:00", now) == "2027年1月1日（週五）00:00 UTC"
    host.close()


def test_max_away_is_a_game_setting(tmp_path, here) -> None:
    """`game new --max-away` and `game config --max-away` set the bound; `game config` says it."""
    from folder_games import make_homes

    from pbem.seat import keys

    homes = make_homes(tmp_path, ["referee", "ann", "bob", "cat"])
    players = [a for s in ("ann", "bob", "cat")
               for a in ("--player", f"{s}={keys.load_identity(homes[s], s, None).public.encode()}")]
    db = str(tmp_path / "g.db")
    here("game", "new", "t", "--host", "referee", *players, "--db", db, "--deadline", "48h", "--max-away",
                "3d", home=homes["referee"], ok=True)
    said = here("game", "config", "t", "--db", db, home=homes["referee"], ok=True)
    assert said.stdout.rstrip().endswith("away at most 3 days"), said.stdout
    changed = here("game", "config", "t", "--db", db, "--max-away", "1d12h", home=homes["referee"], ok=True)
    assert changed.stdout.rstrip().endswith("away at most 1 day 12 hours"), changed.stdout
    from processes import one_error_line, pbem

    before = Path(db).read_bytes()
    bad = pbem("game", "config", "t", "--db", db, "--max-away", "forever", home=homes["referee"])
    one_error_line(bad, 2, "bad --max-away 'forever'")
    assert Path(db).read_bytes() == before


def _play_for(host, seat: str, why: str, text: str | None = None):
    """Ask the host's library to play for `seat`, as the timekeeper does."""
    with host._change() as change:
        return change.play_for(host.facts.seat(seat), why, text)


def rogue_play(host, seat: str, text: str, why: str = "timeout"):
    """What a misbehaving host does: its own signed move for a seat, applied without the
    library's checks (a patched pbem), stamped with the time it was made."""
    from pbem.host import moving
    from pbem.protocol.documents import SeatMove

    with host._change() as change:
        g = change.g
        f, me = host.facts, change.signer()
        nonce = os.urandom(16)
        info = seal_info(f.id, g["seq"], seat, HOST, "move")
        block = sign(SeatMove(game=f.id, seat=seat, seq=g["seq"], packet=g["head"], commit=move_commitment(nonce, text),
                          by=HOST, why=why, at=host.now(),
                          sealed=seal_json(SealedMove(move=text, nonce=b64(nonce)), me.public, info, pad="move")), me)
        return moving.apply(change, f.seat(seat), change.state(), text, nonce, block, by=why)


def test_the_host_library_refuses_to_play_for_a_seat_in_a_game_without_deadline(tmp_path, store_url: str) -> None:
    from pbem.errors import Conflict

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(on_timeout="bot"), store_url)  # no deadline at all
    first = host.status()["to_move"]
    before = store_dump(host.store.url)
    with pytest.raises(Conflict, match=f"may not play for {first} at packet 1: the game has no deadline"):
        _play_for(host, first, "timeout")
    for why in ("absent", "resigned", "because"):
        with pytest.raises(Conflict, match=f"{first} is neither absent nor resigned"):
            _play_for(host, first, why)
    other = next(s for s in seats if s != first)
    with pytest.raises(Conflict, match="the packet waits for another seat"):
        _play_for(host, other, "timeout")
    clock.advance(30 * 86400)
    with pytest.raises(Conflict, match="the game has no deadline"):
        _play_for(host, first, "timeout")
    assert store_dump(host.store.url) == before
    host.close()


def test_the_host_library_plays_only_after_the_deadline_and_only_the_policys_move(tmp_path, store_url: str) -> None:
    from engine.views import view
    from pbem.errors import Conflict
    from pbem.protocol.timeout import TAKEOVER_TURNS, policy_move

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, grace=1800, on_timeout="bot"), store_url)
    first = host.status()["to_move"]
    before = store_dump(host.store.url)
    with pytest.raises(Conflict) as refused:
        _play_for(host, first, "timeout")
    assert "its deadline and grace run until Tue 1 Dec 13:30 UTC" in failures.message(refused.value)
    clock.advance(3600)  # due, but the grace runs
    with pytest.raises(Conflict, match="its deadline and grace run until"):
        _play_for(host, first, "timeout")
    clock.advance(1800)
    state = host.live_state()
    # the packet names the bot's budget; the move is the search bot's within it, every time
    assert seats[first].latest().packet.doc.deadline.bot_turns == TAKEOVER_TURNS
    chosen = policy_move(view(state, first), first, "bot", host.game_id(), 1, TAKEOVER_TURNS)
    assert policy_move(view(state, first), first, "bot", host.game_id(), 1, TAKEOVER_TURNS) == chosen
    other = next(str(m) for m in legal_moves(view(state, first)) if str(m) != chosen)
    with pytest.raises(Conflict, match=f"only its timeout policy's move for {first}: bot plays"):
        _play_for(host, first, "timeout", other)
    assert store_dump(host.store.url) == before
    assert _play_for(host, first, "timeout", chosen).kind == "applied"
    fh.step()
    packet = seats[next(s for s in seats if s != first)].latest()
    [made] = [m for m in packet.doc.recent if m.seat == first]
    assert made.by == "host" and made.why == "timeout"
    host.close()


@pytest.mark.slow  # a round played to its end by four bots: ~3 s
def test_a_rogue_hosts_moves_are_faulted_by_the_audit_and_the_seat_is_warned(tmp_path, store_url: str, here) -> None:
    """A host that bypasses its library's checks plays for seat A before its deadline, for
    seat B (who had answered in time) another move than its discard policy makes, and, with
    no deadline, for E "for lack of time"; it edits its store so that C's deadline seems past
    and its library plays for C. B's `pbem turn` warns; once the round is over `pbem audit`
    faults the four moves (exit 8), and `audit --as B` also the move B had answered. (The
    commands read the folder, not the store: as processes of their own once, on SQLite; the
    other runs through the command line's entry in this process.)"""
    from processes import pbem as process

    pbem = here if store_url.startswith("postgresql") else process

    from engine.views import view
    from pbem.protocol.timeout import policy_move

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="discard"), store_url)
    shared = tmp_path / "shared"
    a = host.status()["to_move"]
    state = host.live_state()
    rogue_play(host, a, policy_move(view(state, a), a, "discard", host.game_id(), 1))  # at once: nobody is late
    fh.step()
    b = host.status()["to_move"]
    sp = seats[b].latest()
    seats[b].move(sp, str(legal_moves(sp.view)[0]))  # b answers in time; the host does not look
    made = clock.now().timestamp()  # (the host's clock is a fake one: b's file is dated by it)
    os.utime(seats[b].move_file(2), (made, made))
    clock.advance(3601)
    state = host.live_state()
    chosen = policy_move(view(state, b), b, "discard", host.game_id(), 2)
    rogue_play(host, b, next(str(m) for m in legal_moves(view(state, b)) if str(m) != chosen))
    fh.step()
    told = pbem("turn", shared, "--as", b, home=seats[b].home)
    assert told.returncode == 0, told.stderr
    assert "warning: the host played for you at packet 2 (no move in time), though you had answered it" \
        in " ".join(told.stdout.split())
    shown = json.loads(here("turn", shared, "--as", b, "--json", home=seats[b].home).stdout)
    assert [(m["seat"], m["seq"], m["by"]) for m in shown["played_over"]] == [(b, 2, "host")]
    quiet = here("turn", shared, "--as", a, home=seats[a].home)
    assert "warning" not in quiet.stdout  # a had not answered: the host's move is only marked
    c = host.status()["to_move"]  # packet 3: the host edits its store so that c's deadline seems past
    with host.store.write() as conn:
        memo = json.loads(conn.execute(select(games.c.memo)).scalar_one())
        past = stamp(clock.now() - timedelta(seconds=1))  # and the deadline it recorded the packet named
        memo["clock"]["due"] = memo["clock"]["deadline"]["due"] = memo["clock"]["deadline"]["grace_until"] = past
        conn.execute(update(games).values(memo=json.dumps(memo)))
    assert [o.kind for o in host.tick()][-1] == "applied"  # its library believes the store
    fh.step()
    host.set_timing(Timing(on_timeout="discard"))  # no deadline from the next packet on
    d = host.status()["to_move"]
    sp = seats[d].latest()
    seats[d].move(sp, str(legal_moves(sp.view)[0]))
    fh.step()
    e = host.status()["to_move"]  # packet 5 has no deadline: the host plays "for lack of time"
    state = host.live_state()
    rogue_play(host, e, policy_move(view(state, e), e, "discard", host.game_id(), 5))
    fh.step()
    bots_end_the_round(host, fh, seats)
    host.close()
    audit = pbem("audit", shared, "--round", 1, home=seats[a].home)
    assert audit.returncode == 8, audit.stdout + audit.stderr
    said = " ".join((audit.stdout + audit.stderr).split())
    assert f"move 1: the host played for {a} at Tue 1 Dec 12:00 UTC, before packet 1's deadline and grace ran out " \
           "(Tue 1 Dec 13:00 UTC)" in said, said
    assert "move 2: the host played '" in said and f"for {b}, but its timeout policy discard plays '{chosen}'" in said
    assert "had answered" not in said  # only b's own key home knows
    assert f"move 3: the host played for {c} at Tue 1 Dec 13:00 UTC, before packet 3's deadline and grace ran out " \
           "(Tue 1 Dec 14:00 UTC)" in said, said
    assert f"move 5: the host played for {e} at packet 5 for lack of time, but that packet has no deadline" in said
    assert "4 faults in round 1" in said, said
    mine = here("audit", shared, "--round", 1, "--as", b, home=seats[b].home)
    assert mine.returncode == 8
    assert f"move 2: the host played for {b} at packet 2, which {b} had answered at" in " ".join(mine.stdout.split())


@pytest.mark.slow
def test_pbem_away_to_the_year_9000_is_refused_by_pbem_apply(tmp_path, store_url: str, here) -> None:
    """The attack through the CLI, file by file: `pbem away PACKET --until 9000-01-01` writes
    the request; the host's `pbem apply` refuses it with one line (exit 3), changing nothing.
    (The attack as processes of their own on SQLite; the rest through the command line's entry
    in this process.)"""
    from processes import one_error_line
    from processes import pbem as process

    pbem = here if store_url.startswith("postgresql") else process

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=48 * 3600), store_url)
    first = host.status()["to_move"]
    packet = tmp_path / "packet-000001.pbem"
    packet.write_text(host.packet(1))
    host.close()
    made = pbem("away", packet, "--until", "9000-01-01", "--as", first, "-o", tmp_path / "far.pbem",
                home=seats[first].home, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    before = store_dump(store_url)
    refused = pbem("apply", "t", tmp_path / "far.pbem", "--store", store_url, "--out", tmp_path / "out",
                   home=tmp_path / "home-referee")
    one_error_line(refused, 3, "away notice ends Wed 1 Jan 9000 00:00 UTC, more than 14 days from now")
    assert store_dump(store_url) == before
    here("away", packet, "--until", "3d", "--as", first, "-o", tmp_path / "near.pbem", home=seats[first].home, ok=True)
    taken = here("apply", "t", tmp_path / "near.pbem", "--store", store_url, "--out", tmp_path / "out",
                 home=tmp_path / "home-referee", ok=True)
    assert f"{first} is away until" in taken.stdout

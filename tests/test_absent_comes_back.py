"""An absent seat can come back: a move of its own for a packet the host already played for
it, or `pbem back`, makes it present again, and the host waits for its next deadline. The
miss that makes a seat absent still has its grace period. A fake clock and the library, then
a real folder game with real (short) deadlines and real processes.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from folder_games import clocked_game
from process_tools import stop_all

from engine.rules import check, legal_moves
from pbem.errors import StaleMove
from pbem.host.deadlines import Timing
from pbem.protocol.documents import read_blocks
from pbem.seat import player


def _old_packet(host, seq: int, identity, home: Path):
    return player.open_packet(read_blocks(host.packet(seq))[0], identity, home, remember=False)


def test_an_absent_seat_comes_back_with_a_move_for_a_packet_the_host_played(tmp_path, store_url: str) -> None:
    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, grace=1800, on_timeout="bot", absent_after=1),
                                       store_url)
    me = host.status()["to_move"]
    others = [s for s in seats if s != me]
    clock.advance(3601)  # the miss that makes `me` absent: late and absent, but the grace runs
    fh.step()
    assert host.status()["absent"] == [me] and host.status()["seq"] == 1
    clock.advance(1798)
    fh.step()
    assert host.status()["seq"] == 1  # still in the grace period (until 13:30)
    clock.advance(1)
    fh.step()
    assert host.status()["seq"] == 2  # played: no move in time

    def others_play_until_mine_is_played() -> int:
        for _ in range(20):
            st = host.status()
            if st["to_move"] in others:
                sp = seats[st["to_move"]].latest()
                seats[st["to_move"]].move(sp, str(legal_moves(sp.view)[0]))
            fh.step()
            last = read_blocks(host.packet(host.status()["seq"]))[0].doc
            played = [m for m in last.moves if m.seat == me]
            if played:
                assert played[0].by == "host" and played[0].why == "absent"
                return last.seq - 1
        raise AssertionError("the host did not play for the absent seat")

    seq = others_play_until_mine_is_played()  # at once, the instant its packet was published
    sp = _old_packet(host, seq, ids[me], seats[me].home)
    late = player.sign_move(sp, check(sp.view, str(legal_moves(sp.view)[0])))
    with pytest.raises(StaleMove, match=f"{me} is present again: the host waits for their next deadline"):
        host.accept(late)
    assert host.status()["absent"] == []
    assert [n.kind for n in host.notices()][-1] == "back"
    # back, though another seat is to move, `me` sees every move made while it was away and
    # every notice since (the packet's `recent` reaches back to the last move of its own)
    fh.step()  # (publishes the back notice)
    now = seats[me].latest()
    assert now.doc.to_move != me
    assert [m.why for m in now.since_my_turn() if m.seat == me] == ["timeout", "absent"]
    assert len({m.seat for m in now.since_my_turn()}) == 4
    from pbem.seat.screen import news_lines

    news = "\n".join(news_lines(now, seats[me].notices(), clock.now()))
    assert f"{me} is late: packet 1" in news and f"{me} is back" in news, news
    assert f"{me} is now absent after 1 missed deadline: the host plays for them" in news
    with pytest.raises(StaleMove) as again:  # the same file counts once
        host.accept(late)
    assert "present again" not in str(again.value)
    for _ in range(12):  # the others play on; at `me`'s packet the host waits
        st = host.status()
        if st["to_move"] == me:
            break
        sp = seats[st["to_move"]].latest()
        seats[st["to_move"]].move(sp, str(legal_moves(sp.view)[0]))
        fh.step()
    assert host.status()["to_move"] == me
    for _ in range(3):
        fh.step()
    assert host.status()["to_move"] == me  # no instant move: `me` has a deadline again
    sp = seats[me].latest()
    seats[me].move(sp, str(legal_moves(sp.view)[0]))
    fh.step()
    mine = [m for m in read_blocks(host.packet(host.status()["seq"]))[0].doc.moves if m.seat == me]
    assert mine and mine[0].by is None
    host.close()


def test_pbem_back_makes_an_absent_seat_present(tmp_path, store_url: str) -> None:
    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="bot", absent_after=1), store_url)
    me = host.status()["to_move"]
    clock.advance(3601)
    fh.step()
    assert me in host.status()["absent"]
    assert host.standings()[me].absent is not None
    back = player.make_request(seats[me].invitation, me, ids[me], "back", at="2026-12-01T13:05:00+00:00")
    assert "present again" in str(host.accept(back).message)
    assert host.status()["absent"] == []
    assert host.accept(back).kind == "duplicate"
    again = player.make_request(seats[me].invitation, me, ids[me], "back", at="2026-12-01T13:06:00+00:00")
    assert "was not absent" in str(host.accept(again).message)
    host.close()


def _until(what, check, timeout: float = 60.0, poll: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(poll)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow  # real deadlines: ~20 s
def test_in_a_real_folder_game_an_absent_player_comes_back_with_pbem_back(tmp_path: Path, here) -> None:
    """`pbem host run` with a 4 s deadline and 3 s of grace, three bots and ann, who
    joins and falls silent: her first miss makes her absent, yet the host moves for her only
    after the grace; then it plays her packets at once. `pbem back` makes her present: her next
    packet waits for her, her `pbem turn` lists what happened meanwhile, and her own move is
    applied. (The keys, the game, its folder and ann's join are made in this process, through
    the command line's entry, and the bots play in threads of it: the host's process and ann's
    commands are the point.)"""
    from cli_games import bots_here
    from folder_games import keys_here
    from processes import PBEM, cli_env, pbem, start

    from pbem.host import referee as H
    from pbem.host.clock import parse_time

    seats = ["ann", "bob", "cat", "dan"]
    homes = {n: tmp_path / f"home-{n}" for n in ["referee", *seats]}
    pubs = keys_here(homes)
    db, folder = tmp_path / "t.db", tmp_path / "shared"
    players = [a for s in seats for a in ("--player", f"{s}={pubs[s]}")]
    # 4 s and 3 s of grace: her miss and its grace are seen apart on a loaded machine.
    here("game", "new", "t", "--host", "referee", *players, "--db", db, "--deadline", "4s", "--grace", "3s",
         "--on-timeout", "bot", "--absent-after", "1", "--remind", "none", home=homes["referee"], cwd=tmp_path, ok=True)
    here("folder", "init", "t", folder, "--db", db, home=homes["referee"], ok=True)
    here("turn", folder, "--as", "ann", home=homes["ann"], ok=True)  # ann joins
    log = tmp_path / "host.log"
    host = start([*PBEM, "host", "run", "t", "--db", db, "--poll", "0.2"], env=cli_env(homes["referee"]),
                 stdout=log.open("ab"), stderr=subprocess.STDOUT)
    bots = bots_here(folder, homes, tmp_path, ["bob", "cat", "dan"])  # the players in threads of this process
    try:
        with H.Host(db) as watch:
            def packet(seq: int):
                return read_blocks(watch.packet(seq) or "")[0].doc

            def host_moves_for_ann():
                found = []
                for seq in range(2, watch.head()[0] + 1):
                    found += [(seq, m) for m in packet(seq).moves if m.seat == "ann" and m.by == "host"]
                return found

            first = _until("the host's first move for ann", host_moves_for_ann, 30)
            seq, m = first[0]
            assert m.why == "timeout"  # the miss that made her absent waited out its grace...
            grace_until = parse_time(packet(seq - 1).deadline.grace_until)
            [absent] = [n for n in watch.notices() if n.kind == "absent" and n.seat == "ann"]
            marked = parse_time(read_blocks(absent.armored)[0].doc.at)
            assert marked < grace_until  # ...though she was marked absent before it ran out
            _until("an instant move for absent ann", lambda: any(m.why == "absent" for _, m in host_moves_for_ann()))
            # Her packets from now on name a minute: time for her two commands after `pbem back` on a
            # machine however loaded (4 s + 3 s of grace were missed at a load of 15 on 2 cores).
            here("game", "config", "t", "--db", db, "--deadline", "60s", home=homes["referee"], cwd=tmp_path, ok=True)
            back = pbem("back", folder, "--as", "ann", home=homes["ann"])
            assert back.returncode == 0 and "request of ann submitted" in back.stdout, back.stdout + back.stderr
            _until("ann's back notice", lambda: any(n.kind == "back" and n.seat == "ann" for n in watch.notices()))
            played_before = len(host_moves_for_ann())
            _until("ann's next packet", lambda: watch.status()["to_move"] == "ann", 30, 0.02)
            time.sleep(0.5)
            assert watch.status()["to_move"] == "ann" and len(host_moves_for_ann()) == played_before
            shown = pbem("turn", folder, "--as", "ann", home=homes["ann"])
            said = " ".join(shown.stdout.split())
            assert "(played by the host: absent)" in said and "(played by the host: no move in time)" in said, said
            assert "ann is now absent" in said and "ann is back" in said, said
            moved = pbem("turn", folder, "--as", "ann", "discard 1", home=homes["ann"])
            assert moved.returncode == 0, moved.stdout + moved.stderr
            mine = _until("ann's own move applied", lambda: [
                m for s in range(2, watch.head()[0] + 1) for m in packet(s).moves if m.seat == "ann" and m.by is None])
            assert mine
    finally:
        stop_all([host, *bots.values()])

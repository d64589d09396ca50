"""An absent seat can come back: a move of its own for a packet the host already played for
it, or `pbem back`, makes it present again, and the host waits for its next deadline. The
miss that makes a seat absent still has its grace period. A fake clock and the library, then
a real folder game with real (short) deadlines and real processes.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from test_deadlines import dealt

from engine.rules import check, legal_moves
from pbem.errors import StaleMove
from pbem.host.deadlines import Timing
from pbem.protocol.documents import read_blocks
from pbem.seat import player


def _old_packet(host, seq: int, identity, home: Path):
    return player.open_packet(read_blocks(host.packet(seq))[0], identity, home, remember=False)


def test_an_absent_seat_comes_back_with_a_move_for_a_packet_the_host_played(tmp_path, store_url: str) -> None:
    clock, host, fh, seats, ids = dealt(tmp_path, Timing(deadline=3600, grace=1800, on_timeout="bot", absent_after=1),
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
    clock, host, fh, seats, ids = dealt(tmp_path, Timing(deadline=3600, on_timeout="bot", absent_after=1), store_url)
    me = host.status()["to_move"]
    clock.advance(3601)
    fh.step()
    assert me in host.status()["absent"]
    assert host.config()["seats"][me]["absent"]
    back = player.make_request(seats[me].invitation, me, ids[me], "back", at="2026-12-01T13:05:00+00:00")
    assert "present again" in host.accept(back).message
    assert host.status()["absent"] == []
    assert host.accept(back).kind == "duplicate"
    again = player.make_request(seats[me].invitation, me, ids[me], "back", at="2026-12-01T13:06:00+00:00")
    assert "was not absent" in host.accept(again).message
    host.close()

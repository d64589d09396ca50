"""A host that lies inside its packets is caught at the packet where it
lied, and an audit is anchored to the invitation the auditor joined.

The lying host is the real host with two lies added: it tells the first seat that looks at a
goal with a map the opposite of what it showed (gold for stone, stone for gold), and it
announces the wrong winners. It signs an
honest archive, so the archive alone passes; the packets do not.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from processes import pbem
from table_games import PASS, Table, make_table, play_until

from engine.bots import RandomBot
from engine.rules import legal_moves
from pbem.host import moving, round_store  # where the host records moves, builds parts and results
from pbem.host import referee as H
from pbem.protocol.documents import parse, read_blocks, unb64
from pbem.seat import player as P
from pbem.ui.words import render

SEATS = ["ann", "bob", "cat", "dan"]


def _audit(*args: str, home: Path, here: Callable[..., subprocess.CompletedProcess] | None = None
           ) -> subprocess.CompletedProcess:
    """`pbem audit ARGS` as a process of its own; given `here`, through the command line's entry in
    this process (the file's further audits: its first runs as a process)."""
    env = {"PBEM_PASSPHRASE": PASS.decode()}
    return pbem("audit", *args, home=home, env=env, timeout=300) if here is None else \
        here("audit", *args, home=home, env=env)


def _flip(card: str) -> str:
    return "goal-stone-ne" if card == "goal-gold" else "goal-gold"


def _lying_part(real, target: list[str]):
    def part(state, seat, events):
        out = real(state, seat, events)
        if not target and any(f[0] == "map" for f in out.knowledge):
            target.append(seat)
        if target and seat == target[0]:
            knowledge = [[f[0], f[1], _flip(f[2])] if f[0] == "map" else f for f in out.knowledge]
            told = [{**e, "card": _flip(e["card"])} if e.get("event") == "map" else e for e in out.events]
            return msgspec.structs.replace(out, knowledge=knowledge, events=told)
        return out
    return part


def _lying_result(real):
    def result(state, secret):
        out = real(state, secret)
        return msgspec.structs.replace(out, winners=[p for p in state.players if p not in state.winners])
    return result


@dataclass
class Lied:
    table: Table
    target: str  # the seat lied to about its map


@pytest.fixture(scope="module")
def lied(tmp_path_factory) -> Lied:
    """Round 1 played by bots through a lying host; every bot plays a map whenever it can."""
    target: list[str] = []
    mp = pytest.MonkeyPatch()
    mp.setattr(round_store, "seat_part", _lying_part(round_store.seat_part, target))
    mp.setattr(round_store, "round_result", _lying_result(round_store.round_result))
    try:
        table = make_table(tmp_path_factory.mktemp("liar"), SEATS)
        bots = {s: RandomBot(f"7-{s}") for s in SEATS}
        for _ in range(2000):
            _, packet = table.latest()
            if packet.doc.round > 1:
                break
            seat = packet.doc.to_move
            sp = P.open_packet(packet, table.ids[seat], table.homes[seat])
            maps = [m for m in legal_moves(sp.view) if str(m).startswith("play map")]
            move = maps[0] if maps else bots[seat].choose(sp.view)
            table.apply_file(table.move_file(seat, str(move), packet))
    finally:
        mp.undo()
    assert target, "nobody played a map in round 1"
    return Lied(table, target[0])


def _first_lie(table: Table, seat: str) -> int:
    """The packet right after the seat's first map: the first that lies to it."""
    archive = read_blocks(table.host.archives()[1])[0]
    first = next(m for m in archive.doc.moves if m.seat == seat and m.text.startswith("play map"))
    return parse("move", unb64(first.envelope, "e")).doc.seq + 1


def _closing(table: Table) -> int:
    archive = read_blocks(table.host.archives()[1])[0]
    return archive.doc.chain[-1].seq


def test_a_lie_in_a_seats_part_is_caught_by_that_seat_at_its_packet(lied: Lied, here) -> None:
    table, who = lied.table, lied.target
    folder, first = table.root / "out", _first_lie(table, who)
    run = _audit(str(folder), "--round", "1", "--as", who, home=table.homes[who])
    assert run.returncode == 8, run.stdout + run.stderr
    faults = [line for line in run.stdout.splitlines() if line.startswith("FAULT")]
    part_faults = [f for f in faults if f"in {who}'s sealed part" in f]
    assert part_faults[0].startswith(f"FAULT round 1 packet {first}: in {who}'s sealed part, the packet differs "
                                     f"from the replay: what {who} was told: events is")
    assert "knowledge is" in part_faults[0] and "goal-" in part_faults[0]
    # Every later packet of the round repeats the lie (the seat's knowledge), and says so.
    lied_packets = sorted({int(f.split()[4].rstrip(":")) for f in part_faults})
    assert lied_packets[0] == first and lied_packets == list(range(first, lied_packets[-1] + 1))
    assert run.stderr.startswith("error: audit failed")
    # Another seat was told the truth: its audit finds only the public lie (the winners).
    other = next(s for s in SEATS if s != who)
    run = _audit(str(folder), "--round", "1", "--as", other, home=table.homes[other], here=here)
    assert run.returncode == 8 and "sealed part" not in run.stdout and "winners is" in run.stdout


def test_false_winners_are_caught_by_every_audit_at_the_closing_packet(lied: Lied, here) -> None:
    lied_table = lied.table
    closing = _closing(lied_table)
    run = _audit(str(lied_table.root / "out"), "--round", "1", "--json", home=lied_table.homes["cat"], here=here)
    assert run.returncode == 8
    report = json.loads(run.stdout)
    assert report["anchored"] is True
    faults = report["rounds"][0]["faults"]
    assert [(f["packet"], f["check"]) for f in faults] == [(closing, "result")]
    assert "winners is" in faults[0]["text"]
    # The host's own database holds the same lying packets: the audit there says so too.
    db = _audit(str(lied_table.root / "game.db"), "--round", "1", home=lied_table.homes["cat"], here=here)
    assert db.returncode == 8 and f"FAULT round 1 packet {closing}: closing the round" in db.stdout


@pytest.fixture(scope="module")
def forged(lied: Lied, tmp_path_factory) -> Table:
    """Round 1 of a game a forger made and hosted honestly under the real game's id, with its own keys."""
    real_game = lied.table.host.game_id()
    real_urandom = os.urandom
    mp = pytest.MonkeyPatch()
    mp.setattr(os, "urandom", lambda n: bytes.fromhex(real_game[-8:]) if n == 4 else real_urandom(n))
    try:
        table = make_table(tmp_path_factory.mktemp("forger"), ["ann", "bob", "cat"])
    finally:
        mp.undo()
    assert table.host.game_id() == real_game
    play_until(table, lambda p: p.doc.round > 1, seed=4)
    return table


def test_an_honest_host_passes_with_parts_checked(forged: Table, here) -> None:
    """The forger's own game, audited by its own ann: honest within itself."""
    table = forged
    run = _audit(str(table.root / "out"), "--round", "1", "--as", "ann", home=table.homes["ann"], here=here)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "of ann's sealed parts opened and checked" in run.stdout and "anchored to the invitation you joined" in run.stdout
    assert "packets' tables" in run.stdout and run.stderr == ""


# --- 17.8 anchoring ------------------------------------------------------------------------


def test_a_forged_archive_with_other_keys_fails_against_the_joined_invitation(lied: Lied, forged: Table,
                                                                            tmp_path: Path, here) -> None:
    real = lied.table
    real_game = real.host.game_id()
    # The forger makes a whole game of its own under the same game id, with its own keys.
    archive = tmp_path / "forged-r1.pbem"
    archive.write_text(forged.host.archives()[1])
    # Alone, the forged archive agrees with itself; the audit says it is not anchored.
    empty = tmp_path / "stranger-home"
    run = _audit(str(archive), home=empty, here=here)
    assert run.returncode == 0 and "audit ok" in run.stdout
    assert run.stderr.startswith("warning: not anchored: you did not join game " + real_game)
    # ann joined the real game: against her invitation, the forgery fails.
    run = _audit(str(archive), home=real.homes["ann"], here=here)
    assert run.returncode == 8, run.stdout + run.stderr
    assert "FAULT round 1 archive: the archive holds another invitation than the one you trust" in run.stdout
    assert "this is not the game you joined" in run.stdout and "warning" not in run.stderr
    # So does a stranger who was given the real invitation.
    run = _audit(str(archive), "--invitation", str(real.root / "invitation.pbem"), home=empty, here=here)
    assert run.returncode == 8 and "another invitation than the one you trust" in run.stdout
    # --as without any invitation to trust is a usage error.
    run = _audit(str(archive), "--as", "ann", home=empty, here=here)
    assert run.returncode == 2 and run.stderr.startswith("error: --as needs the invitation")


# --- moves the host made for a silent seat (deadlines, --on-timeout) -------------------------


@pytest.mark.slow
def test_moves_made_by_the_host_audit_clean_and_a_packet_hiding_one_is_caught(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 1: every fifth turn the seat is silent and the host discards for it on timeout;
    the audit (with ann's parts) passes. Round 2: the host also passes its own moves off as the
    seats' in its packets (no `by: host`): caught at each such packet, and only there."""
    from pbem.host.clock import FakeClock
    from pbem.host.deadlines import Timing
    from pbem.protocol.documents import PublicMove
    from pbem.replay.audit import audit_source
    from pbem.replay.sources import open_source
    from pbem.replay.trust import Trust
    from pbem.seat.home import load_invitation

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    table.host.close()
    clock = FakeClock()
    table.host = H.Host(tmp_path / "game.db", table.ids["referee"], clock)
    table.host.set_timing(Timing(deadline=3600, on_timeout="discard"))
    bots = {s: RandomBot(f"9-{s}") for s in table.seats}
    timed_out: dict[int, list[int]] = {1: [], 2: []}  # round -> packets published after a host move

    def play_round(round_no: int) -> None:
        for turn in range(2000):
            _, packet = table.latest()
            if packet.doc.round > round_no or packet.doc.phase == "game-over":
                return
            if turn % 5 == 4:
                clock.advance(3601)  # nobody answers: the deadline passes
                assert any(o.kind == "applied" for o in table.host.tick())
                timed_out[round_no].append(packet.doc.seq + 1)
                continue
            seat = packet.doc.to_move
            sp = P.open_packet(packet, table.ids[seat], table.homes[seat])
            table.apply_file(table.move_file(seat, str(bots[seat].choose(sp.view)), packet))
            clock.advance(60)
        raise AssertionError("the round did not end")

    play_round(1)
    real = PublicMove
    monkeypatch.setattr(moving, "PublicMove", lambda **kw: real(**{**kw, "by": None, "why": None}))
    play_round(2)
    monkeypatch.undo()
    game = table.host.game_id()
    trust = Trust(load_invitation(table.homes["ann"], game), "ann's invitation", ("ann", table.ids["ann"]))
    one, two = audit_source(open_source(str(tmp_path / "game.db")), game, [1, 2], trust)
    assert one.ok, [f.line() for f in one.faults]
    assert one.counts["host-move"] == len(timed_out[1]) > 0
    assert one.counts["packet-moves"] >= one.moves and one.counts["part"] >= one.moves
    assert sum("played by the host for" in render(n) for n in one.notes) == len(timed_out[1])
    # the archive of round 2 is honest; its packets are not, exactly where the host moved
    assert {f.check for f in two.faults} == {"moves"}, [f.line() for f in two.faults]
    closing = max(link.seq for link in read_blocks(table.host.archives()[2])[0].doc.chain)
    lied_at = [seq for seq in timed_out[2] if seq <= closing]
    assert sorted(f.packet for f in two.faults) == lied_at
    for f in two.faults:  # the packet's move has no `by`; the replay's (from the archive) is the host's
        assert "the moves is" in render(f.message) and 'the replay has [{"by": "host"' in render(f.message), render(f.message)

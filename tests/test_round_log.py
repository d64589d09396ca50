"""A round's archive, whether the Host kept the round in memory or reads it from the store.

A Host keeps the round in play (its dealt state and its moves, as the archive lists them, and
the last public moves, as packets list them) from one change to the next, so a round's last move does not read and open every move again; a
Host that did not make every change of the round (a fresh process, another daemon on the same
store) reads the round from the store. Both give the same archive.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import pytest

from engine.bots import RandomBot
from pbem.host import referee as H
from pbem.host.clock import FakeClock
from pbem.host.deadlines import Timing
from pbem.protocol.documents import Archive, read_blocks
from pbem.replay.audit import audit_source
from pbem.replay.sources import open_source, pick_game
from pbem.seat import keys
from pbem.seat import player as P

pytestmark = pytest.mark.slow  # a whole round, twice: seconds each

SEATS = ["ann", "bob", "cat"]


def _game(root: Path, store: str, clock: FakeClock):
    ids = {n: keys.create_identity(root / f"home-{n}", n, None) for n in ["referee", *SEATS]}
    inv = H.create_game(store, "kept", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [], None,
                        Timing(deadline=3600, on_timeout="discard").to_config(), clock)
    host = H.Host(store, ids["referee"], clock)
    for s in SEATS:
        host.accept(P.join(inv, ids[s], root / f"home-{s}"))
    return ids, host  # the Host that dealt the round


def _next_move(host: H.Host, ids, root: Path, bots):
    seq, _ = host.head()
    packet = read_blocks(host.packet(seq) or "")[0]
    seat = packet.doc.to_move
    sp = P.open_packet(packet, ids[seat], root / f"home-{seat}", remember=False)
    return read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0]


def _but_the_last_move(armored: str) -> dict:
    """The archive's document but what the round's last move made afresh: its packet's hash
    (the seats' parts are sealed anew) and, when the host made that move, its nonce and its
    signed move file."""
    doc = msgspec.to_builtins(read_blocks(armored)[0].expect(Archive).doc)
    doc["chain"] = doc["chain"][:-1]
    if doc["moves"][-1].get("by"):
        del doc["moves"][-1]["nonce"], doc["moves"][-1]["envelope"]
    return doc


def test_the_round_kept_and_the_round_read_again_give_one_archive(tmp_path: Path) -> None:
    """One Host plays a round from its deal to its end (its own moves and the host's for silent
    seats); before each move the store is copied. The round's last move applied again, on the
    copy, by a fresh Host (which reads and opens the whole round) signs the same archive."""
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    ids, host = _game(tmp_path, str(db), clock)
    bots = {s: RandomBot(f"3-{s}") for s in SEATS}
    with host:
        for n in range(1, 500):
            with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
                src.backup(dst)  # the store as it was before this move (the WAL's changes too)
            if n % 4 == 0:  # a silent seat: the host plays for it
                clock.advance(3601)
                host.tick()
            else:
                clock.advance(60)
                block = _next_move(host, ids, tmp_path, bots)
                host.accept(block)
            if host.archives():
                break
            assert host._kept is not None and host._kept.log is not None  # the round so far, kept
        kept = host.archives()[1]
        last = read_blocks(host.packet(host.head()[0]) or "")[0].doc
    assert any(m.by == "host" for m in read_blocks(kept)[0].doc.moves)
    with H.Host(copy, ids["referee"], clock) as fresh:  # at the same moment
        fresh.tick() if n % 4 == 0 else fresh.accept(block)
        again = fresh.archives()[1]
        last_again = read_blocks(fresh.packet(fresh.head()[0]) or "")[0].doc
    assert again != kept and _but_the_last_move(again) == _but_the_last_move(kept)
    # the moves the packet lists since the seat to move last moved: kept, and read again
    assert last.recent and last_again.recent == last.recent and last_again.to_move == last.to_move


def test_two_hosts_taking_turns_on_one_store_archive_every_move(tmp_path: Path, store_url: str) -> None:
    """Two Hosts of one game (two daemons, or a daemon and 'pbem apply') take the moves in turn:
    neither may archive the round from what it kept, which misses the other's moves. The
    round's archive lists every move and its audit passes."""
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    ids, dealer = _game(tmp_path, store_url, clock)
    bots = {s: RandomBot(f"5-{s}") for s in SEATS}
    hosts = [dealer, H.Host(store_url, ids["referee"], clock)]
    try:
        for n in range(500):
            host = hosts[(n // 3) % 2]  # three moves each
            host.accept(_next_move(host, ids, tmp_path, bots))
            if host.archives():
                break
        archive = read_blocks(hosts[0].archives()[1])[0].doc
        assert [m.n for m in archive.moves] == list(range(1, n + 2))
    finally:
        for h in hosts:
            h.close()
    src = open_source(store_url)
    assert all(r.ok for r in audit_source(src, pick_game(src, None), [1]))


def test_a_kept_round_chains_the_packets_the_store_holds(tmp_path: Path) -> None:
    """The archive's chain, as one Host kept it round after round (from the packet before each
    round's first to its last), is the chain of the packets in the store."""
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    db = tmp_path / "a.db"
    ids, host = _game(tmp_path, str(db), clock)
    bots = {s: RandomBot(f"7-{s}") for s in SEATS}
    with host:
        for _ in range(500):
            clock.advance(60)
            host.accept(_next_move(host, ids, tmp_path, bots))
            assert host._kept is not None and host._kept.log is not None and host._kept.log.chain is not None  # kept, chain and all
            if len(host.archives()) == 2:
                break
        archives = {r: read_blocks(a)[0].expect(Archive).doc for r, a in host.archives().items()}
    with sqlite3.connect(db) as con:
        stored = {seq: (h, prev) for seq, h, prev in con.execute("SELECT seq, hash, prev FROM packets")}
        first = dict(con.execute("SELECT round_no, first_seq FROM rounds").fetchall())
    for r, archive in archives.items():
        seqs = [link.seq for link in archive.chain]
        assert seqs == list(range(max(first[r] - 1, 1), seqs[-1] + 1))
        assert [(link.hash, link.prev) for link in archive.chain] == [stored[s] for s in seqs]

"""A club under load (`scripts/bench-club [--games N] [--seats S] [--seconds T]`).

N games of S seats in one store, SQLite and then PostgreSQL (a real server on loopback,
tests/pg_server.py, fsync on). Bot seats play every game through the API: the driver opens
each new packet with the seat's key, picks a random legal move, signs and seals it, and hands
it to the daemons. The daemons are separate processes applying moves with `Host.accept`;
with two daemons each move is handed to both (as when two daemons watch one inbox), so the
row locks (PostgreSQL) and BEGIN IMMEDIATE (SQLite) must keep every move applied once.

Reports applied moves per second and the median and 99th percentile time from a move being
handed over to its packet being committed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("PBEM_SCRYPT_N", "1024")

from engine.bots import RandomBot  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.host.store import Store  # noqa: E402
from pbem.protocol.crypto import Identity  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import player as P  # noqa: E402


def daemon(url: str, me: Identity, inbox: mp.Queue, done: mp.Queue, stop) -> None:
    hosts: dict[str, H.Host] = {}
    with Store(url) as store:
        while True:
            item = inbox.get()
            if item is None or stop.is_set():  # the run is over: the moves still queued are not applied
                return
            game, armored, sent = item
            host = hosts.get(game) or hosts.setdefault(game, H.Host(store, me, game=game))
            try:
                out = host.accept(read_blocks(armored)[0])
            except Exception as exc:  # a stale copy, say: the other daemon was first
                done.put((game, "refused", str(exc)[:80], sent, time.perf_counter()))
                continue
            done.put((game, out.kind, out.seq, sent, time.perf_counter()))


def setup(url: str, root: Path, games: int, seats: int):
    from pbem.seat import keys

    names = [f"p{i}" for i in range(seats)]
    homes = {n: root / "homes" / n for n in ["host", *names]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    with Store(url, create=True) as store:
        for g in range(games):
            inv = H.create_game(store, f"g{g:04d}", ids["host"], "classic", [(n, ids[n].public) for n in names], [])
            host = H.Host(store, ids["host"], game=inv.game)
            for n in names:
                host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[n], homes[n]).armored())[0])
    return ids, homes


def drive(url: str, ids, homes, daemons: int, seconds: float) -> dict[str, float]:
    ctx = mp.get_context("fork")
    inbox: mp.Queue = ctx.Queue()
    done: mp.Queue = ctx.Queue()
    stop = ctx.Event()
    procs = [ctx.Process(target=daemon, args=(url, ids["host"], inbox, done, stop)) for _ in range(daemons)]
    for p in procs:
        p.start()
    bots: dict[str, RandomBot] = {}
    latencies: list[float] = []
    applied = 0
    with Store(url) as store:
        hosts = {g: H.Host(store, game=g) for g in store.game_ids()}

        def hand_over(game: str) -> bool:
            seq, status = hosts[game].head()
            if status != "playing":
                return False
            packet = read_blocks(hosts[game].packet(seq) or "")[0]
            seat = packet.doc.to_move
            sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
            bot = bots.setdefault(f"{game}/{seat}", RandomBot(f"{game}/{seat}"))
            armored = P.make_move(sp, str(bot.choose(sp.view))).armored()
            sent = time.perf_counter()
            for _ in range(daemons):  # each daemon sees every move, as two watching one inbox would
                inbox.put((game, armored, sent))
            return True

        live = [g for g in hosts if hand_over(g)]
        started = time.perf_counter()
        while time.perf_counter() - started < seconds and live:
            try:
                game, kind, seq, sent, at = done.get(timeout=5)
            except queue.Empty:
                break
            if kind != "applied":
                continue
            applied += 1
            latencies.append(at - sent)
            hand_over(game)
        elapsed = time.perf_counter() - started
    stop.set()
    for _ in procs:
        inbox.put(None)
    for p in procs:
        p.join(30)
        if p.is_alive():
            p.kill()
    # Moves still queued are dropped: without this the queue's feeder thread would wait at exit
    # for a reader that is gone (the run hung after printing its table).
    inbox.cancel_join_thread()
    done.cancel_join_thread()
    latencies.sort()
    return {"moves_per_s": applied / elapsed, "median_ms": statistics.median(latencies) * 1000,
            "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000, "moves": applied}


def check_once(url: str) -> None:
    """Every move was applied once: per game, move numbers run 1..n with no gap or repeat."""
    from sqlalchemy import select

    from pbem.host.store import moves

    with Store(url) as store, store.read() as c:
        rows = c.execute(select(moves.c.game_id, moves.c.round_no, moves.c.n)).all()
    seen: dict[tuple[str, int], list[int]] = {}
    for g, r, n in rows:
        seen.setdefault((g, r), []).append(n)
    for ns in seen.values():
        assert sorted(ns) == list(range(1, len(ns) + 1)), "a move was applied twice or lost"


def main() -> None:
    args = sys.argv[1:]

    def opt(name: str, default: float) -> float:
        return float(args[args.index(name) + 1]) if name in args else default

    games, seats, seconds = int(opt("--games", 200)), int(opt("--seats", 5)), opt("--seconds", 20)
    from pg_server import PgServer

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pg = PgServer(fsync=True)
        try:
            for kind, url in (("SQLite", f"sqlite:///{Path(tmp) / 'club.db'}"), ("PostgreSQL", pg.new_database())):
                t = time.perf_counter()
                ids, homes = setup(url, Path(tmp) / kind, games, seats)
                print(f"{kind}: {games} games of {seats} seats created and dealt in {time.perf_counter() - t:.0f}s",
                      flush=True)
                for daemons in (1, 2):
                    r = drive(url, ids, homes, daemons, seconds)
                    rows.append((kind, daemons, r))
                    print(f"{kind}, {daemons} daemon(s): {r['moves_per_s']:.1f} moves/s, median {r['median_ms']:.1f} ms, "
                          f"p99 {r['p99_ms']:.1f} ms ({r['moves']} moves)", flush=True)
                check_once(url)
        finally:
            pg.stop()
    print(f"\n{'store':<11} {'daemons':>7} {'moves/s':>8} {'median ms':>10} {'p99 ms':>8}")
    for kind, daemons, r in rows:
        print(f"{kind:<11} {daemons:>7} {r['moves_per_s']:>8.1f} {r['median_ms']:>10.1f} {r['p99_ms']:>8.1f}")


if __name__ == "__main__":
    main()

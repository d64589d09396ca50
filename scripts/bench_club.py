"""A club under load (`scripts/bench-club [--games N] [--seats S] [--seconds T] [--lease L] [--dir DIR]
[--profile PREFIX] [--store sqlite|postgresql] [--daemons 1,2,3] [--no-restart]`).

For each store (a SQLite file; PostgreSQL, a real server on loopback started as the suite starts
it, tests/pg_server.py, fsync on) and for 1, 2 and 3 daemons: a fresh store of N games of S seats,
each game served over a shared folder, and that many real `pbem host run --all` daemons
(`--lease L`, a look at every game each second, a move taken as it arrives) sharing its games.
Bot seats, in two processes on the same cores, play every game through its folder as `pbem bot
run` would: each new packet (the kernel says which table folder had one arrive) opened with the
seat's key, a random legal move signed, sealed and dropped into the inbox. The load stays
steady: when a game ends, its bots' process makes a new one in the store (dealt, its folder laid
out) and plays it, so N games are in play all through the window.

The measured window is T seconds of play. With two daemons and more, at half time the daemon
holding the most games is killed with SIGKILL and (as a service manager would, unless
--no-restart) started again; the takeover is the time from the kill until every game it held is
held again by a live daemon (a lease row of a running process, not expired), or is over.

Reports, per run: moves applied a second over the whole window (kill included), and before and
after the kill; the daemons' CPU (user + system, the killed one's up to its death) per move;
"already applied" lines (a move seen by two daemons) as a share of the moves; moves applied
twice (per game and round, move numbers run 1..n; must be 0); games finished (and so replaced)
in the window; the killed daemon's games and their takeover, against the lease period. Where
the cores went while the seats played, in cores busy (the machine has `nproc`): the daemons, the
bots, PostgreSQL's server processes, and the rest of the machine (/proc/stat: other users of a
shared machine). --profile PREFIX: every daemon runs under cProfile (PREFIX-PostgreSQL-2-0.prof,
...; a killed one writes none).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from script_args import at_least_one, duration, numbers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("PBEM_SCRYPT_N", "1024")

from sqlalchemy import func, select  # noqa: E402

from engine.bots import RandomBot  # noqa: E402
from pbem.folder.layout import GameFolder  # noqa: E402
from pbem.folder.play import init_folder  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.host.leases import store_now  # noqa: E402
from pbem.host.settings import TransportSetting  # noqa: E402
from pbem.host.store import Store  # noqa: E402
from pbem.host.tables import games as games_table  # noqa: E402
from pbem.host.tables import leases, moves  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import player as P  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PLAYERS = 2  # processes of bot seats, each playing its part of the games
# A daemon under cProfile counting CPU time (not wall time: a wait on the server is no work)
PROFILED = """import cProfile, runpy, sys, time
out = sys.argv.pop(1)
sys.argv[0] = "pbem"
profile = cProfile.Profile(time.process_time)
try:
    profile.runcall(runpy.run_module, "pbem", run_name="__main__", alter_sys=True)
finally:
    profile.dump_stats(out)
"""
POLL = 1.0  # the daemons' look at every game (`--poll`; the default): a move that arrives wakes them at once


class Club:
    """The keys of a host and its seats, and how to make a dealt game served over a folder."""

    def __init__(self, root: Path, seats: int) -> None:
        from pbem.seat import keys

        self.root = root
        self.names = [f"p{i}" for i in range(seats)]
        self.homes = {n: root / "homes" / n for n in ["host", *self.names]}
        self.ids = {n: keys.create_identity(h, n, None) for n, h in self.homes.items()}

    def new_game(self, store: Store, name: str) -> tuple[str, GameFolder]:
        """A game every seat joined (dealt), its folder laid out, and only then its transport set:
        a daemon starts serving it once it can."""
        inv = H.create_game(store, name, self.ids["host"], "classic", [(n, self.ids[n].public) for n in self.names], [])
        host = H.Host(store, self.ids["host"], game=inv.game)
        for n in self.names:
            host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], self.ids[n], self.homes[n]).armored())[0])
        where = self.root / "shared" / name
        folder, _ = init_folder(where, host)
        host.set_settings(transport=TransportSetting(folder=str(where)))
        return inv.game, folder


def cpu(pid: int) -> float:
    """A process's CPU seconds (user + system), from /proc (a zombie's too: its last count)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def children_cpu(pid: int | None) -> float:
    """CPU seconds of a server and its children now running (PostgreSQL's backends)."""
    if pid is None:
        return 0.0
    total = cpu(pid)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) == pid:
                total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def machine_cpu() -> tuple[float, float]:
    """(busy, all) CPU seconds of the whole machine, every core, from /proc/stat."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / TICKS, sum(ticks) / TICKS


def moves_in(store: Store) -> tuple[int, int]:
    """(moves applied, moves applied twice): per game and round, numbers that are not 1..n."""
    with store.read() as c:
        rows = c.execute(select(moves.c.game_id, moves.c.round_no, moves.c.n)).all()
    seen: dict[tuple[str, int], list[int]] = {}
    for g, r, n in rows:
        seen.setdefault((g, r), []).append(n)
    twice = sum(len(ns) - len(set(ns)) + len(set(ns) - set(range(1, len(ns) + 1))) for ns in seen.values())
    return len(rows), twice


def finished(store: Store) -> int:
    with store.read() as c:
        return int(c.execute(select(func.count()).select_from(games_table).where(games_table.c.status == "over")).scalar_one())


def holder_pid(holder: str) -> int:
    """The process id in a lease holder's name (host:pid:random)."""
    parts = holder.split(":")
    return int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else -1


def held(store: Store) -> dict[int, set[str]]:
    """The games each daemon (by process id) holds a live lease on."""
    with store.read() as c:
        now = store_now(c)
        rows = c.execute(select(leases.c.game_id, leases.c.holder).where(leases.c.expires >= now)).all()
    out: dict[int, set[str]] = {}
    for game_id, holder in rows:
        out.setdefault(holder_pid(holder), set()).add(str(game_id))
    return out


def unserved(store: Store, wanted: set[str], live: set[int]) -> set[str]:
    """The games of `wanted` that no running daemon (of the process ids `live`) holds and that are not over."""
    now_held = set().union(*(g for pid, g in held(store).items() if pid in live))
    with store.read() as c:
        over = {str(g) for g in c.execute(select(games_table.c.id).where(games_table.c.id.in_(sorted(wanted)),
                                                                        games_table.c.status == "over")).scalars()}
    return wanted - now_held - over


class Bots:
    """Every seat of every game, playing through the folders."""

    def __init__(self, club: Club, folders: dict[str, GameFolder]) -> None:
        self.club, self.folders = club, folders
        self.answered: dict[str, int] = {}
        self.bots: dict[str, RandomBot] = {}
        self.over: list[str] = []

    def play(self, only: set[str] | None = None) -> int:
        """Answer each game's (of `only`'s) newest packet once; the number answered. A game seen
        over is moved to `over`."""
        n = 0
        for game, folder in list(self.folders.items()):
            if only is not None and game not in only:
                continue
            latest = folder.latest_packet(None)
            if latest is None or latest[0] <= self.answered.get(game, 0):
                continue
            seq, data = latest
            packet = read_blocks(data.decode())[0]
            seat = packet.doc.to_move
            if seat is None:
                self.over.append(game)
                del self.folders[game]
                continue
            ids, homes = self.club.ids, self.club.homes
            sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
            bot = self.bots.setdefault(f"{game}/{seat}", RandomBot(f"{game}/{seat}"))
            folder.submit_move(seat, seq, P.make_move(sp, str(bot.choose(sp.view))).armored().encode())
            self.answered[game] = seq
            n += 1
        return n


def _players(bots: Bots, url: str, seconds: float) -> list:
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    games = sorted(bots.folders)

    def play(i: int, part: list[str]) -> None:
        """As `pbem bot run` waits: the kernel says which games' table folders had a packet
        arrive (pbem.watch), and every game is looked at once a second. A game that ends is
        replaced by a new one, dealt and played at once."""
        from pbem.watch import arrivals

        bots.folders = {g: bots.folders[g] for g in part}
        watch = arrivals()
        assert watch is not None
        tables: dict[Path, str] = {}
        table_of: dict[str, Path] = {}

        def follow(game: str) -> None:
            table_of[game] = bots.folders[game].dir / "packets" / "table"
            tables[table_of[game]] = game
            assert watch.watch(table_of[game])

        for g in part:
            follow(g)
        end = time.perf_counter() + seconds
        only: set[str] | None = None
        full = 0.0
        made = 0
        with Store(url) as store:
            while time.perf_counter() < end:
                if only is None:
                    full = time.perf_counter() + 1.0
                bots.play(only)
                if bots.over:  # one new game a turn: the other games are answered between two
                    watch.unwatch(tables.pop(table_of.pop(bots.over.pop(0))))
                    game, folder = bots.club.new_game(store, f"n{i}-{made:03d}")
                    made += 1
                    bots.folders[game] = folder
                    follow(game)
                    only = None
                    if bots.over:
                        continue
                changed = watch.wait(min(end, full) - time.perf_counter())
                only = None if not changed or time.perf_counter() >= full else {tables[d] for d in changed if d in tables}

    procs = [ctx.Process(target=play, args=(i, games[i::PLAYERS])) for i in range(PLAYERS)]
    for p in procs:
        p.start()
    return procs


class Daemons:
    """The `pbem host run --all` daemons of one run, their logs, and their CPU."""

    def __init__(self, club: Club, url: str, lease: float, profile: str | None) -> None:
        self.club, self.url, self.lease, self.profile = club, url, lease, profile
        self.env = {**os.environ, "PBEM_HOME": str(club.homes["host"]), "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.spent = 0.0  # CPU seconds of the daemons killed, up to their death
        self.start0: dict[int, float] = {}

    def start(self) -> subprocess.Popen:
        n = len(self.logs)
        log = self.club.root / f"daemon-{n}.log"
        python = [sys.executable, *(["-c", PROFILED, f"{self.profile}-{n}.prof"] if self.profile else ["-m", "pbem"])]
        p = subprocess.Popen([*python, "host", "run", "--all", "--store", self.url, "--poll", str(POLL),
                              "--lease", str(self.lease), "--home", str(self.club.homes["host"])], env=self.env,
                             stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=self.club.root)
        self.procs.append(p)
        self.logs.append(log)
        self.start0[p.pid] = 0.0
        return p

    def live(self) -> list[subprocess.Popen]:
        return [p for p in self.procs if p.poll() is None]

    def mark(self) -> None:
        """Count CPU from now on."""
        self.spent = 0.0
        self.start0 = {p.pid: cpu(p.pid) for p in self.live()}

    def used(self) -> float:
        return self.spent + sum(cpu(p.pid) - self.start0.get(p.pid, 0.0) for p in self.live())

    def kill(self, p: subprocess.Popen) -> None:
        p.send_signal(signal.SIGKILL)
        while Path(f"/proc/{p.pid}/stat").exists() and Path(f"/proc/{p.pid}/stat").read_text().split(") ", 1)[1][0] != "Z":
            time.sleep(0.001)
        self.spent += cpu(p.pid) - self.start0.get(p.pid, 0.0)  # a zombie keeps its last count until reaped
        p.wait()

    def text(self) -> str:
        return "".join(log.read_text() for log in self.logs)

    def stop(self) -> None:
        for p in self.live():
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:  # its stack into its log, for whoever looks
                p.send_signal(signal.SIGABRT)
                p.wait(10)


def _kill_one(store: Store, daemons: Daemons, restart: bool, lease: float) -> dict:
    """Kill the daemon holding the most games (started again unless not `restart`); how long
    until every game it held is held by a running daemon again."""
    by_pid = held(store)
    victim = max(daemons.live(), key=lambda p: len(by_pid.get(p.pid, ())))
    its = by_pid.get(victim.pid, set())
    daemons.kill(victim)
    killed = time.monotonic()
    if restart:
        daemons.start()
    left = set(its)
    while left and time.monotonic() - killed < 4 * lease:
        left = unserved(store, left, {p.pid for p in daemons.live()})
        time.sleep(0.02)
    return {"victim_games": len(its), "takeover": time.monotonic() - killed, "left": len(left)}


def run(kind: str, url: str, root: Path, count: int, games: int, seats: int, seconds: float, lease: float,
        profile: str | None = None, server: int | None = None, restart: bool = True) -> dict:
    club = Club(root, seats)
    folders: dict[str, GameFolder] = {}
    with Store(url, create=True) as store:
        for g in range(games):
            game, folders[game] = club.new_game(store, f"g{g:04d}")
    daemons = Daemons(club, url, lease, f"{profile}-{kind}-{count}" if profile else None)
    for _ in range(count):
        daemons.start()
    bots = Bots(club, folders)
    share = f"of {games} active games; {count} daemon(s) share the store"
    out: dict = {"kind": kind, "daemons": count, "takeover": None}
    with Store(url) as store:
        deadline = time.monotonic() + 120
        while (sum(len(g) for g in held(store).values()) < games
               or not all(share in log.read_text() for log in daemons.logs)):
            assert time.monotonic() < deadline and len(daemons.live()) == count, "the daemons did not start"
            time.sleep(0.1)
        before, _ = moves_in(store)
        finished0 = finished(store)
        daemons.mark()
        db0, machine0 = children_cpu(server), machine_cpu()
        bots0, own0 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        players = _players(bots, url, seconds)  # the seats, in processes of their own: bots never the bottleneck
        if count > 1:  # at half time, in the window
            time.sleep(max(0.0, started + seconds / 2 - time.perf_counter()))
            at_kill, halfway, cpu_at_kill = moves_in(store)[0], time.perf_counter(), daemons.used()
            out |= _kill_one(store, daemons, restart, lease)
        for p in players:
            p.join()
        elapsed = time.perf_counter() - started
        used = daemons.used()
        db = children_cpu(server) - db0
        bots1, own1 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
        machine = [b - a for a, b in zip(machine0, machine_cpu(), strict=True)]
        after, _ = moves_in(store)
        out["finished"] = finished(store) - finished0
        moved = after - before
        if count > 1:
            out["before_kill"] = (at_kill - before) / (halfway - started)
            out["cpu_ms_before_kill"] = 1000 * cpu_at_kill / max(at_kill - before, 1)
            out["after_kill"] = (after - at_kill) / (started + elapsed - halfway)
        bots_used = bots1.ru_utime + bots1.ru_stime - bots0.ru_utime - bots0.ru_stime  # the seats' processes, reaped
        own = own1.ru_utime + own1.ru_stime - own0.ru_utime - own0.ru_stime
        out |= {"moves_per_s": moved / elapsed, "cpu_ms": 1000 * used / max(moved, 1), "moves": moved,
                "already": daemons.text().count("already applied"),
                # where the cores went while the seats played, in cores busy (2.0: both, all the time)
                "cores": {"daemons": used / elapsed, "bots": bots_used / elapsed, "db": db / elapsed,
                          "bench": own / elapsed, "busy": machine[0] / elapsed, "all": machine[1] / elapsed}}
        daemons.stop()
        out["twice"] = moves_in(store)[1]
    return out


@contextmanager
def _kept(path: str) -> Iterator[str]:
    Path(path).mkdir(parents=True, exist_ok=True)
    yield path


def _line(r: dict, lease: float) -> str:
    left = f", {r['left']} still not" if r.get("left") else ""
    took = "" if r["takeover"] is None else (
        f"; at half time the one holding {r['victim_games']} games killed: all held again in {r['takeover']:.1f}s "
        f"(lease {lease:g}s{left}); {r['before_kill']:.1f} moves/s and {r['cpu_ms_before_kill']:.1f} ms CPU/move "
        f"before, {r['after_kill']:.1f} moves/s after")
    c = r["cores"]
    return (f"{r['kind']}, {r['daemons']} daemon(s): {r['moves_per_s']:.1f} moves/s, {r['cpu_ms']:.1f} ms CPU/move, "
            f"already applied {r['already']}, applied twice {r['twice']} ({r['moves']} moves, "
            f"{r['finished']} games finished and replaced){took}\n"
            f"  cores busy: daemons {c['daemons']:.2f}, bots {c['bots']:.2f}, PostgreSQL {c['db']:.2f}, "
            f"bench {c['bench']:.2f}; the machine {c['busy']:.2f} of {c['all']:.2f} (others: "
            f"{c['busy'] - c['daemons'] - c['bots'] - c['db'] - c['bench']:.2f})")


def _table(rows: list[dict], lease: float) -> None:
    print(f"\n{'store':<11} {'daemons':>7} {'moves/s':>8} {'x one':>6} {'before':>7} {'after':>6} {'CPU ms/move':>12} "
          f"{'before':>7} {'already %':>10} {'twice':>6} {'finished':>9} {'killed held':>12} {'takeover s':>11} "
          f"{'cores: daemons':>14} {'bots':>5} {'db':>5} {'other':>5}\n"
          f"(moves/s and CPU over the whole window, the kill and the restart in it; before/after: the halves around "
          f"the kill; killed held: its games; takeover: from kill -9 until all are held again, lease {lease:g} s)")
    one: dict[str, float] = {}
    for r in rows:
        one.setdefault(r["kind"], r["moves_per_s"])
        killed = r["takeover"] is not None
        took = f"{r['takeover']:.1f}" + ("+" if r["left"] else "") if killed else "-"
        halves = ((f"{r['before_kill']:.1f}", f"{r['after_kill']:.1f}", f"{r['cpu_ms_before_kill']:.1f}") if killed
                  else ("-", "-", "-"))
        c = r["cores"]
        print(f"{r['kind']:<11} {r['daemons']:>7} {r['moves_per_s']:>8.1f} {r['moves_per_s'] / one[r['kind']]:>6.2f} "
              f"{halves[0]:>7} {halves[1]:>6} {r['cpu_ms']:>12.1f} {halves[2]:>7} "
              f"{100 * r['already'] / max(r['moves'], 1):>10.2f} {r['twice']:>6} {r['finished']:>9} "
              f"{r['victim_games'] if killed else '-':>12} {took:>11} "
              f"{c['daemons']:>14.2f} {c['bots']:>5.2f} {c['db']:>5.2f} "
              f"{c['busy'] - c['daemons'] - c['bots'] - c['db'] - c['bench']:>5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(prog="scripts/bench-club", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=at_least_one, default=12, help="games in play all through (default 12)")
    ap.add_argument("--seats", type=int, choices=range(3, 11), default=4, metavar="3..10",
                    help="seats a game, a classic table (default 4)")
    ap.add_argument("--seconds", type=duration, default=20.0, help="the measured window (default 20)")
    ap.add_argument("--lease", type=duration, default=5.0, help="the daemons' lease, seconds (default 5)")
    ap.add_argument("--dir", metavar="DIR", help="keep the stores and folders here (default: a temporary folder)")
    ap.add_argument("--profile", metavar="PREFIX", help="every daemon under cProfile, to PREFIX-STORE-N-I.prof")
    ap.add_argument("--store", choices=("sqlite", "postgresql"), type=str.lower, help="one store only (default both)")
    ap.add_argument("--daemons", type=numbers(1), default=[1, 2, 3], metavar="N,...",
                    help="daemon counts, one run each (default 1,2,3)")
    ap.add_argument("--no-restart", action="store_true", help="the killed daemon is not started again")
    args = ap.parse_args()
    games, seats, seconds, lease = args.games, args.seats, args.seconds, args.lease
    kinds = [k for k in ("SQLite", "PostgreSQL") if args.store is None or k.lower() == args.store]
    counts: list[int] = args.daemons
    from pg_server import PgServer

    rows = []
    keep: str | None = args.dir
    with tempfile.TemporaryDirectory() if keep is None else _kept(keep) as tmp:
        pg = PgServer(fsync=True)
        try:
            for kind in kinds:
                for daemons in counts:
                    root = Path(tmp) / f"{kind}-{daemons}"
                    url = f"sqlite:///{root / 'club.db'}" if kind == "SQLite" else pg.new_database()
                    r = run(kind, url, root, daemons, games, seats, seconds, lease, args.profile,
                            pg.proc.pid if kind == "PostgreSQL" else None, restart=not args.no_restart)
                    rows.append(r)
                    print(_line(r, lease), flush=True)
        finally:
            pg.stop()
    _table(rows, lease)


if __name__ == "__main__":
    main()

"""A club under load (`scripts/bench-club [--games N] [--seats S] [--seconds T] [--lease L] [--dir DIR]
[--profile PREFIX]`).

For each store (a SQLite file; PostgreSQL, a real server on loopback started as the suite starts
it, tests/pg_server.py, fsync on) and for 1, 2 and 3 daemons: a fresh store of N games of S seats,
each game served over a shared folder, and that many real `pbem host run --all` daemons
(`--lease L`, a look at every game each second, a move taken as it arrives) sharing its games.
Bot seats, in two processes on the same cores, play every game through its folder as `pbem bot
run` would: each new packet (the kernel says which table folder had one arrive) opened with the
seat's key, a random legal move signed, sealed and dropped into the inbox.

Reports, per run: moves applied a second; the daemons' CPU (user + system) per move; "already
applied" lines (a move seen by two daemons) as a share of the moves; moves applied twice
(per game and round, move numbers run 1..n; must be 0). With two daemons and more, one daemon is
then killed with SIGKILL and the time until the others hold all its games is measured against
the lease period. Where the cores went while the seats played, in cores busy (the machine has
`nproc`): the daemons, the bots, PostgreSQL's server processes, and the rest of the machine
(/proc/stat: other users of a shared machine). --profile PREFIX: the one daemon runs under cProfile (PREFIX-SQLite.prof, ...).
"""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("PBEM_SCRYPT_N", "1024")

from engine.bots import RandomBot  # noqa: E402
from pbem.folder.layout import GameFolder  # noqa: E402
from pbem.folder.play import init_folder  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.host.settings import TransportSetting  # noqa: E402
from pbem.host.store import Store  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import player as P  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def setup(url: str, root: Path, games: int, seats: int):
    """N dealt games in the store at `url`, each with its folder under `root` as its transport."""
    from pbem.seat import keys

    names = [f"p{i}" for i in range(seats)]
    homes = {n: root / "homes" / n for n in ["host", *names]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    folders: dict[str, GameFolder] = {}
    with Store(url, create=True) as store:
        for g in range(games):
            inv = H.create_game(store, f"g{g:04d}", ids["host"], "classic", [(n, ids[n].public) for n in names], [])
            host = H.Host(store, ids["host"], game=inv.game)
            for n in names:
                host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[n], homes[n]).armored())[0])
            where = root / "shared" / f"g{g:04d}"
            host.set_settings(transport=TransportSetting(folder=str(where)))
            folders[inv.game], _ = init_folder(where, host)
    return ids, homes, folders


def cpu(pid: int) -> float:
    """A process's CPU seconds (user + system), from /proc."""
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


def moves_in(url: str) -> tuple[int, int]:
    """(moves applied, moves applied twice): per game and round, numbers that are not 1..n."""
    from sqlalchemy import select

    from pbem.host.tables import moves

    with Store(url) as store, store.read() as c:
        rows = c.execute(select(moves.c.game_id, moves.c.round_no, moves.c.n)).all()
    seen: dict[tuple[str, int], list[int]] = {}
    for g, r, n in rows:
        seen.setdefault((g, r), []).append(n)
    twice = sum(len(ns) - len(set(ns)) + len(set(ns) - set(range(1, len(ns) + 1))) for ns in seen.values())
    return len(rows), twice


class Bots:
    """Every seat of every game, playing through the folders."""

    def __init__(self, ids, homes, folders: dict[str, GameFolder]) -> None:
        self.ids, self.homes, self.folders = ids, homes, folders
        self.answered: dict[str, int] = {}
        self.bots: dict[str, RandomBot] = {}
        self.over: set[str] = set()

    def play(self, only: set[str] | None = None) -> int:
        """Answer each game's (of `only`'s) newest packet once; the number answered."""
        n = 0
        for game, folder in self.folders.items():
            if game in self.over or (only is not None and game not in only):
                continue
            latest = folder.latest_packet(None)
            if latest is None or latest[0] <= self.answered.get(game, 0):
                continue
            seq, data = latest
            packet = read_blocks(data.decode())[0]
            seat = packet.doc.to_move
            if seat is None:
                self.over.add(game)
                continue
            sp = P.open_packet(packet, self.ids[seat], self.homes[seat], remember=False)
            bot = self.bots.setdefault(f"{game}/{seat}", RandomBot(f"{game}/{seat}"))
            folder.submit_move(seat, seq, P.make_move(sp, str(bot.choose(sp.view))).armored().encode())
            self.answered[game] = seq
            n += 1
        return n


PLAYERS = 2  # processes of bot seats, each playing its part of the games
POLL = 1.0  # the daemons' look at every game (`--poll`; the default): a move that arrives wakes them at once


def _players(bots: Bots, seconds: float) -> list:
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    games = sorted(bots.folders)

    def play(part: list[str]) -> None:
        """As `pbem bot run` waits: the kernel says which games' table folders had a packet
        arrive (pbem.watch), and every game is looked at once a second."""
        from pbem.watch import arrivals

        bots.folders = {g: bots.folders[g] for g in part}
        watch = arrivals()
        tables = {bots.folders[g].dir / "packets" / "table": g for g in part}
        for d in tables:
            assert watch is not None and watch.watch(d)
        end = time.perf_counter() + seconds
        only: set[str] | None = None
        full = 0.0
        while time.perf_counter() < end:
            if only is None:
                full = time.perf_counter() + 1.0
            bots.play(only)
            changed = watch.wait(min(end, full) - time.perf_counter())
            only = None if not changed or time.perf_counter() >= full else {tables[d] for d in changed}

    procs = [ctx.Process(target=play, args=(games[i::PLAYERS],)) for i in range(PLAYERS)]
    for p in procs:
        p.start()
    return procs


def held_by(url: str, pid: int) -> int:
    """How many live leases a daemon (by its process id) holds."""
    from sqlalchemy import func, select

    from pbem.host.leases import store_now
    from pbem.host.tables import leases

    with Store(url) as store, store.read() as c:
        now = store_now(c)
        return int(c.execute(select(func.count()).select_from(leases)
                             .where(leases.c.holder.like(f"%:{pid}:%"), leases.c.expires >= now)).scalar_one())


def run(kind: str, url: str, root: Path, daemons: int, games: int, seats: int, seconds: float, lease: float,
        profile: str | None = None, server: int | None = None) -> dict:
    ids, homes, folders = setup(url, root, games, seats)
    python = [sys.executable, *(["-m", "cProfile", "-o", f"{profile}-{kind}.prof"] if profile and daemons == 1 else [])]
    env = {**os.environ, "PBEM_HOME": str(homes["host"]), "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}
    logs = [root / f"daemon-{i}.log" for i in range(daemons)]
    procs = [subprocess.Popen([*python, "-m", "pbem", "host", "run", "--all", "--store", url, "--poll", str(POLL),
                               "--lease", str(lease), "--home", str(homes["host"])], env=env,
                              stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=root) for log in logs]
    bots = Bots(ids, homes, folders)
    share = f"of {games} active games; {daemons} daemon(s) share the store"
    deadline = time.monotonic() + 120
    while sum(held_by(url, p.pid) for p in procs) < games or not all(share in log.read_text() for log in logs):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "the daemons did not start"
        time.sleep(0.1)
    before, _ = moves_in(url)
    cpu0, db0, machine0 = sum(cpu(p.pid) for p in procs), children_cpu(server), machine_cpu()
    bots0, own0 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    players = _players(bots, seconds)  # the seats, in processes of their own: bots never the bottleneck
    for p in players:
        p.join()
    elapsed = time.perf_counter() - started
    used = sum(cpu(p.pid) for p in procs) - cpu0
    db = children_cpu(server) - db0
    bots1, own1 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    bots_used = bots1.ru_utime + bots1.ru_stime - bots0.ru_utime - bots0.ru_stime  # the seats' processes, reaped
    own = own1.ru_utime + own1.ru_stime - own0.ru_utime - own0.ru_stime
    machine = [b - a for a, b in zip(machine0, machine_cpu())]
    after, _ = moves_in(url)
    moved = after - before
    already = "".join(log.read_text() for log in logs).count("already applied")
    out = {"kind": kind, "daemons": daemons, "moves_per_s": moved / elapsed, "cpu_ms": 1000 * used / max(moved, 1),
           "moves": moved, "takeover": None, "already_running": already,
           # where the cores went while the seats played, in cores busy (2.0: both, all the time)
           "cores": {"daemons": used / elapsed, "bots": bots_used / elapsed, "db": db / elapsed,
                     "bench": own / elapsed, "busy": machine[0] / elapsed, "all": machine[1] / elapsed}}
    if daemons > 1:  # kill one mid-run: its games are served again within a lease period
        victim = procs[-1]
        held = held_by(url, victim.pid)
        victim.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        victim.wait()
        while held_by(url, victim.pid) and time.monotonic() - killed < 3 * lease:
            bots.play()
            time.sleep(0.01)
        out["takeover"] = time.monotonic() - killed
        out["victim_games"] = held
        served = moves_in(url)[0]
        settle = time.monotonic() + lease
        while time.monotonic() < settle:  # its games move again
            if not bots.play():
                time.sleep(0.01)
        out["moved_after"] = moves_in(url)[0] - served
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:  # its stack into its log, for whoever looks
            p.send_signal(signal.SIGABRT)
            p.wait(10)
    text = "".join(log.read_text() for log in logs)
    out["already"] = text.count("already applied")  # with the killed daemon's leftovers
    out["twice"] = moves_in(url)[1]
    return out


@contextmanager
def _kept(path: str) -> Iterator[str]:
    Path(path).mkdir(parents=True, exist_ok=True)
    yield path


def main() -> None:
    args = sys.argv[1:]

    def opt(name: str, default: float) -> float:
        return float(args[args.index(name) + 1]) if name in args else default

    games, seats, seconds = int(opt("--games", 12)), int(opt("--seats", 4)), opt("--seconds", 20)
    lease = opt("--lease", 5)
    kinds = [k for k in ("SQLite", "PostgreSQL") if "--store" not in args or k.lower() == args[args.index("--store") + 1].lower()]
    counts = [int(n) for n in (args[args.index("--daemons") + 1] if "--daemons" in args else "1,2,3").split(",")]
    from pg_server import PgServer

    rows = []
    keep = args[args.index("--dir") + 1] if "--dir" in args else None
    with tempfile.TemporaryDirectory() if keep is None else _kept(keep) as tmp:
        pg = PgServer(fsync=True)
        try:
            for kind in kinds:
                for daemons in counts:
                    root = Path(tmp) / f"{kind}-{daemons}"
                    url = f"sqlite:///{root / 'club.db'}" if kind == "SQLite" else pg.new_database()
                    r = run(kind, url, root, daemons, games, seats, seconds, lease,
                            args[args.index("--profile") + 1] if "--profile" in args else None,
                            pg.proc.pid if kind == "PostgreSQL" else None)
                    rows.append(r)
                    took = "" if r["takeover"] is None else (f"; one killed: its {r['victim_games']} games taken over "
                                                             f"in {r['takeover']:.1f}s (lease {lease:g}s), "
                                                             f"{r['moved_after']} moves after")
                    print(f"{kind}, {daemons} daemon(s): {r['moves_per_s']:.1f} moves/s, {r['cpu_ms']:.1f} ms CPU/move, "
                          f"already applied {r['already_running']} ({r['already']} with the kill), "
                          f"applied twice {r['twice']} ({r['moves']} moves){took}",
                          flush=True)
                    c = r["cores"]
                    print(f"  cores busy: daemons {c['daemons']:.2f}, bots {c['bots']:.2f}, PostgreSQL {c['db']:.2f}, "
                          f"bench {c['bench']:.2f}; the machine {c['busy']:.2f} of {c['all']:.2f} (others: "
                          f"{c['busy'] - c['daemons'] - c['bots'] - c['db'] - c['bench']:.2f})", flush=True)
        finally:
            pg.stop()
    print(f"\n{'store':<11} {'daemons':>7} {'moves/s':>8} {'x one':>6} {'CPU ms/move':>12} {'already %':>10} "
          f"{'twice':>6} {'takeover s':>11} {'cores: daemons':>14} {'bots':>5} {'db':>5} {'other':>5}"
          f"   (already %: while all ran; takeover: after kill -9, lease {lease:g} s)")
    one: dict[str, float] = {}
    for r in rows:
        one.setdefault(r["kind"], r["moves_per_s"])
        take = "-" if r["takeover"] is None else f"{r['takeover']:.1f}"
        c = r["cores"]
        print(f"{r['kind']:<11} {r['daemons']:>7} {r['moves_per_s']:>8.1f} {r['moves_per_s'] / one[r['kind']]:>6.2f} "
              f"{r['cpu_ms']:>12.1f} {100 * r['already_running'] / max(r['moves'], 1):>10.2f} {r['twice']:>6} {take:>11} "
              f"{c['daemons']:>14.2f} {c['bots']:>5.2f} {c['db']:>5.2f} "
              f"{c['busy'] - c['daemons'] - c['bots'] - c['db'] - c['bench']:>5.2f}")


if __name__ == "__main__":
    main()
